// Slow and broken clients at the socket level, below Koa: stalled headers, stalled bodies, idle
// keep-alive connections, oversized headers and bytes that are not HTTP. Each gets the JSON error
// shape every other error has (or a closed idle connection), within a second of its limit, and
// none of them holds up anyone else or changes anything.
import { connect, type Socket } from 'node:net';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { createProject, registerUser } from '../helpers/fixtures.ts';
import { withService } from '../helpers/service.ts';

const limits = { headersTimeoutSeconds: 1, requestTimeoutSeconds: 2, keepAliveTimeoutSeconds: 1 };
/** Node checks for expired requests once a second (connectionsCheckingInterval). */
const slackMs = 1500;

interface Exchange {
  /** Everything the service sent before it closed the connection. */
  text: string;
  /** Milliseconds from connecting to the close. */
  closedAfterMs: number;
}

/** Connects, writes `chunks` (a number is a pause in ms), then waits for the service to close. */
function exchange(url: string, chunks: readonly (string | number)[], waitMs = 10_000): Promise<Exchange> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const socket: Socket = connect(Number(port), hostname);
    let text = '';
    const giveUp = setTimeout(() => {
      socket.destroy();
      reject(new Error(`the service kept the connection open for ${waitMs} ms; received: ${text}`));
    }, waitMs);
    socket.setEncoding('utf8');
    socket.on('data', (data: string) => (text += data));
    socket.on('error', () => {});
    socket.on('close', () => {
      clearTimeout(giveUp);
      resolve({ text, closedAfterMs: performance.now() - started });
    });
    socket.once('connect', async () => {
      for (const chunk of chunks) {
        if (socket.destroyed) return;
        if (typeof chunk === 'number') await new Promise((wake) => setTimeout(wake, chunk));
        else socket.write(chunk);
      }
    });
  });
}

function parseAnswer(text: string): { status: number; headers: string; body: any } {
  const [head, body] = text.split('\r\n\r\n', 2) as [string, string];
  return { status: Number(head.split(' ')[1]), headers: head.toLowerCase(), body: JSON.parse(body) };
}

test('headers that stall are cut off after headersTimeoutSeconds with a JSON 408', () =>
  withService(
    async ({ url }) => {
      const stalled = await exchange(url, ['GET /api/health/ HTTP/1.1\r\nHost: x\r\n']);
      const answer = parseAnswer(stalled.text);
      assert.is(answer.status, 408);
      assert.ok(answer.headers.includes('content-type: application/json'));
      assert.equal(answer.body, { detail: 'The request was not received in time.', code: 'request_timeout' });
      assert.ok(stalled.closedAfterMs >= 900 && stalled.closedAfterMs < 1000 + slackMs, `closed after ${stalled.closedAfterMs} ms`);
    },
    { limits },
  ));

test('a body that stalls is cut off after requestTimeoutSeconds, writes nothing, and holds up no one', () =>
  withService(
    async ({ url, client }) => {
      const member = await registerUser(client);
      const body = JSON.stringify({ name: 'slow', slug: 'slow' });
      const request =
        `POST /api/projects/ HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${member.access}\r\n` +
        `Content-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n`;
      // A trickle: a byte every 300 ms never finishes inside 2 s.
      const trickle = [request, ...[...body].flatMap((char) => [300, char])];
      const pending = exchange(url, trickle);
      // Meanwhile everyone else is answered at once.
      const before = performance.now();
      assert.is((await member.client.get('/api/projects/')).status, 200);
      assert.ok(performance.now() - before < 500);
      const slow = await pending;
      const answer = parseAnswer(slow.text);
      assert.is(answer.status, 408);
      assert.is(answer.body.code, 'request_timeout');
      assert.ok(slow.closedAfterMs >= 1900 && slow.closedAfterMs < 2000 + slackMs, `closed after ${slow.closedAfterMs} ms`);
      assert.is((await member.client.get('/api/projects/')).body.count, 0);
      // The service is still whole: the next write lands.
      await createProject(member.client, { slug: 'after' });
      assert.is((await member.client.get('/api/projects/')).body.count, 1);
    },
    { limits },
  ));

test('an idle keep-alive connection is closed after keepAliveTimeoutSeconds', () =>
  withService(
    async ({ url }) => {
      const idle = await exchange(url, ['GET /api/health/ HTTP/1.1\r\nHost: x\r\n\r\n']);
      assert.is(parseAnswer(idle.text).status, 200);
      assert.ok(idle.closedAfterMs >= 900 && idle.closedAfterMs < 1000 + slackMs, `closed after ${idle.closedAfterMs} ms`);
    },
    { limits },
  ));

test('oversized headers are a JSON 431 and bytes that are not HTTP a JSON 400', () =>
  withService(async ({ url }) => {
    const huge = await exchange(url, [`GET /api/health/ HTTP/1.1\r\nHost: x\r\nX-Padding: ${'a'.repeat(20_000)}\r\n\r\n`]);
    const tooLarge = parseAnswer(huge.text);
    assert.is(tooLarge.status, 431);
    assert.is(tooLarge.body.code, 'request_header_fields_too_large');
    const garbage = await exchange(url, ['\u0000\u0001 not http at all\r\n\r\n']);
    const bad = parseAnswer(garbage.text);
    assert.is(bad.status, 400);
    assert.equal(bad.body, { detail: 'The request is not valid HTTP.', code: 'bad_request' });
  }));

test.run();
