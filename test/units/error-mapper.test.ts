// The error mapper's last resort: a genuine 500 carries only a reference, and a failed assert
// (a broken invariant of our own) also stops the process, as the service runs it.
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import Koa from 'koa';
import { pino } from 'pino';
import { test } from 'uvu';
import * as expect from 'uvu/assert';
import { errorMiddleware } from '../../src/http/errors.ts';

async function serve(thrown: () => never, brokenInvariant: (error: Error) => void): Promise<{ url: string; server: Server }> {
  const app = new Koa();
  app.silent = true;
  app.use(errorMiddleware(pino({ level: 'silent' }), brokenInvariant));
  app.use(() => thrown());
  const server = createServer(app.callback());
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return { url: `http://127.0.0.1:${port}/`, server };
}

for (const [name, thrown, stops] of [
  ['a bug', () => { throw new Error('a bug'); }, false],
  ['a failed assert', () => assert.ok(false, 'an invariant'), true],
] as const) {
  test(`${name} is answered 500 with a reference${stops ? ', and stops the service' : ''}`, async () => {
    const broken: Error[] = [];
    const { url, server } = await serve(thrown as () => never, (error) => broken.push(error));
    try {
      const reply = await fetch(url);
      const body = (await reply.json()) as { code: string; error_id: string; detail: string };
      expect.is(reply.status, 500);
      expect.is(body.code, 'internal_error');
      expect.ok(body.detail.includes(body.error_id));
      expect.equal(broken.map((error) => error.message), stops ? ['an invariant'] : []);
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });
}

test.run();
