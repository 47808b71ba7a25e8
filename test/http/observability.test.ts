import { Writable } from 'node:stream';
import { pino } from 'pino';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { memberWithProject } from '../helpers/fixtures.ts';
import { withService } from '../helpers/service.ts';

/** A pino logger writing JSON lines into an array. */
function capturingLogger() {
  const lines: Record<string, any>[] = [];
  const sink = new Writable({
    write(chunk, _encoding, done) {
      for (const line of String(chunk).split('\n').filter(Boolean)) lines.push(JSON.parse(line));
      done();
    },
  });
  return { logger: pino({ level: 'info' }, sink), lines };
}

test('every request is logged once as JSON with a request id that the response echoes', async () => {
  const { logger, lines } = capturingLogger();
  await withService(
    async ({ client }) => {
      const { member, project } = await memberWithProject(client);
      const reply = await member.client.request('GET', `/api/projects/${project.id}/`, undefined, { 'x-request-id': 'trace-me-123' });
      assert.is(reply.headers.get('x-request-id'), 'trace-me-123');
      const line = lines.find((entry) => entry.request_id === 'trace-me-123');
      assert.ok(line, 'no log line for the request');
      assert.equal(
        { msg: line!.msg, method: line!.method, route: line!.route, status: line!.status },
        { msg: 'request', method: 'GET', route: '/api/projects/:id', status: 200 },
      );
      assert.type(line!.ms, 'number');
      const generated = await client.get('/health');
      assert.match(generated.headers.get('x-request-id') ?? '', /^[0-9a-f]{12}-[0-9a-z]+$/);
      const hostile = await client.request('GET', '/health', undefined, { 'x-request-id': 'bad id with spaces' });
      assert.is.not(hostile.headers.get('x-request-id'), 'bad id with spaces');
    },
    { logger },
  );
});

test('an unexpected error is logged with its error id, request id and stack', async () => {
  const { logger, lines } = capturingLogger();
  await withService(
    async ({ client, service }) => {
      const { member, project } = await memberWithProject(client);
      service.deps.readModel.projects.get = () => {
        throw new Error('boom for the log');
      };
      const reply = await member.client.get(`/api/projects/${project.id}/`);
      const entry = lines.find((line) => line.error_id === reply.body.error_id);
      assert.ok(entry, 'the 500 was not logged with its error id');
      assert.is(entry!.level, 50);
      assert.is(entry!.request_id, reply.headers.get('x-request-id'));
      assert.match(entry!.err.stack, /boom for the log/);
    },
    { logger },
  );
});

test.run();
