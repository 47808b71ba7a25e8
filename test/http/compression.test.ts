// Answers and static files of 1 KiB or more are compressed (gzip or br) when the client accepts it,
// and decompress to what an uncompressed answer holds; smaller answers, and the event stream
// whatever it accepts, are sent as they are. Requests go over node:http, which neither asks for
// compression nor undoes it, so the test sees the bytes sent.
import { request } from 'node:http';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { createAgent } from '../helpers/agent-fixtures.ts';
import { EventStreamReader } from '../helpers/event-stream.ts';
import { memberWithProject } from '../helpers/fixtures.ts';
import { withService } from '../helpers/service.ts';

interface Raw {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  bytes: Buffer;
}

function get(url: string, headers: Record<string, string> = {}): Promise<Raw> {
  return new Promise((resolve, reject) => {
    const outgoing = request(url, { headers }, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () => resolve({ status: response.statusCode ?? 0, headers: response.headers, bytes: Buffer.concat(chunks) }));
      response.on('error', reject);
    });
    outgoing.on('error', reject);
    outgoing.end();
  });
}

/** The body as sent, undone per its Content-Encoding. */
function decoded(raw: Raw): Buffer {
  const encoding = raw.headers['content-encoding'];
  if (encoding === 'gzip') return gunzipSync(raw.bytes);
  if (encoding === 'br') return brotliDecompressSync(raw.bytes);
  assert.is(encoding, undefined, 'an encoding this test knows');
  return raw.bytes;
}

const varies = (raw: Raw) => String(raw.headers.vary ?? '').toLowerCase().split(/\s*,\s*/).includes('accept-encoding');

const swaggerUiDir = dirname(createRequire(import.meta.url).resolve('swagger-ui-dist/package.json'));

test('a large answer is compressed as the client asks, decompresses to the same JSON, and says it varies', () =>
  withService(async ({ url }) => {
    const plain = await get(`${url}/api/schema/`);
    assert.is(plain.status, 200);
    assert.is(plain.headers['content-encoding'], undefined, 'no Accept-Encoding, no compression');
    assert.ok(plain.bytes.length > 100_000);
    const document = JSON.parse(plain.bytes.toString('utf8'));
    for (const [accept, encoding] of [['gzip', 'gzip'], ['br', 'br'], ['gzip, deflate, br', 'br'], ['br;q=0.5, gzip', 'gzip'], ['identity', undefined]] as const) {
      const answer = await get(`${url}/api/schema/`, { 'accept-encoding': accept });
      assert.is(answer.status, 200, accept);
      assert.is(answer.headers['content-encoding'], encoding, accept);
      assert.ok(varies(answer), accept);
      assert.match(String(answer.headers['content-type']), /^application\/json/);
      assert.equal(JSON.parse(decoded(answer).toString('utf8')), document, accept);
      if (encoding) assert.ok(answer.bytes.length < plain.bytes.length / 5, `${accept}: ${answer.bytes.length} of ${plain.bytes.length} bytes`);
    }
  }));

test('an authenticated list answer over 1 KiB is compressed; an agent under it and /health are not', () =>
  withService(async ({ client, url }) => {
    const { member, project } = await memberWithProject(client);
    const auth = { authorization: `Bearer ${member.access}` };
    const agent = await createAgent(member.client, project.id, { model: 'claude', description: 'An agent to retrieve' });
    for (let i = 0; i < 5; i++) await createAgent(member.client, project.id);

    const list = await get(`${url}/api/agents/`, { ...auth, 'accept-encoding': 'gzip' });
    assert.is(list.headers['content-encoding'], 'gzip');
    const plainList = await get(`${url}/api/agents/`, auth);
    assert.ok(plainList.bytes.length >= 1024, `${plainList.bytes.length} bytes`);
    assert.equal(JSON.parse(decoded(list).toString('utf8')), JSON.parse(plainList.bytes.toString('utf8')));

    for (const path of [`/api/agents/${agent.id}/`, '/health/']) {
      const small = await get(`${url}${path}`, { ...auth, 'accept-encoding': 'gzip, deflate, br' });
      assert.is(small.status, 200, path);
      assert.ok(small.bytes.length < 1024, `${path}: ${small.bytes.length} bytes`);
      assert.is(small.headers['content-encoding'], undefined, path);
      assert.is(Number(small.headers['content-length']), small.bytes.length, path);
      JSON.parse(small.bytes.toString('utf8'));
    }
  }));

test('the event stream is never compressed and delivers each event as it happens', () =>
  withService(async ({ client, url }) => {
    const { member, project } = await memberWithProject(client);
    const stream = await EventStreamReader.open(`${url}/api/events/`, {
      authorization: `Bearer ${member.access}`,
      'accept-encoding': 'gzip, deflate, br',
    });
    try {
      assert.is(stream.status, 200);
      assert.match(String(stream.response.headers['content-type']), /^text\/event-stream/);
      assert.is(stream.response.headers['content-encoding'], undefined);
      // The opening comment arrives at once: nothing holds the stream's bytes back.
      await stream.waitFor(() => stream.comments.includes('stream open'), 'the opening comment', 1000);
      for (const description of ['first', 'second']) {
        const sent = performance.now();
        await member.client.patch(`/api/projects/${project.id}/`, { description });
        await stream.waitFor(
          () => stream.ofType('project.updated').some((event) => event.data.description === description),
          `the ${description} update`,
          1000,
        );
        assert.ok(performance.now() - sent < 1000);
      }
    } finally {
      stream.close();
    }
  }));

test('static files are compressed: the Swagger UI bundle and stylesheet, the console\'s scripts', () =>
  withService(async ({ url }) => {
    for (const [name, accept] of [['swagger-ui-bundle.js', 'gzip'], ['swagger-ui.css', 'br']] as const) {
      const answer = await get(`${url}/static/swagger-ui/${name}`, { 'accept-encoding': accept });
      assert.is(answer.status, 200, name);
      assert.is(answer.headers['content-encoding'], accept, name);
      assert.ok(varies(answer), name);
      const file = readFileSync(join(swaggerUiDir, name));
      assert.ok(decoded(answer).equals(file), name);
      assert.ok(answer.bytes.length < file.length / 3, `${name}: ${answer.bytes.length} of ${file.length} bytes`);
    }
    const page = (await get(`${url}/`)).bytes.toString('utf8');
    const script = /<script[^>]+src="([^"]+\.js)"/.exec(page)?.[1];
    assert.ok(script, 'the console page loads a script');
    const plain = await get(new URL(script, `${url}/`).href);
    const compressed = await get(new URL(script, `${url}/`).href, { 'accept-encoding': 'gzip' });
    if (plain.bytes.length >= 1024) assert.is(compressed.headers['content-encoding'], 'gzip');
    assert.ok(decoded(compressed).equals(plain.bytes));
  }));

test.run();
