// The span token a worker hands its commands: asked for once, again past half its life, shared by
// commands starting together; without one, commands run without it, said once.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { SpanExport } from '../../src/worker/span-export.ts';
import type { WorkerProtocol } from '../../src/worker/worker-protocol.ts';

function protocolAnswering(answers: (() => Promise<{ token: string; expires_at: string }>)[]) {
  let asked = 0;
  const protocol = {
    tracesUrl: 'http://service:8000/v1/traces',
    spanToken: () => answers[Math.min(asked++, answers.length - 1)]!(),
  } as unknown as WorkerProtocol;
  return { protocol, asked: () => asked };
}

test('asked once for commands starting together, kept until half its life, then asked again', async () => {
  let now = Date.parse('2026-12-05T00:00:00Z');
  const expires = (hours: number) => new Date(now + hours * 3_600_000).toISOString();
  const { protocol, asked } = protocolAnswering([async () => ({ token: 't1', expires_at: expires(24) }), async () => ({ token: 't2', expires_at: expires(24) })]);
  const spans = new SpanExport(protocol, false, () => {}, () => now);
  const [a, b] = await Promise.all([spans.env(), spans.env()]);
  assert.equal(a, { OVERMIND_SPAN_TOKEN: 't1', OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://service:8000/v1/traces', OTEL_EXPORTER_OTLP_TRACES_HEADERS: 'Authorization=Bearer%20t1' });
  assert.is(b, a);
  now += 11.9 * 3_600_000;
  assert.is((await spans.env()).OVERMIND_SPAN_TOKEN, 't1');
  now += 0.2 * 3_600_000;
  assert.is((await spans.env()).OVERMIND_SPAN_TOKEN, 't2');
  assert.is(asked(), 2);
});

test('a worker with an OTLP endpoint of its own gets the token alone; without a token, commands run without, it is said once, and asked again a minute later', async () => {
  let now = 0;
  const lines: string[] = [];
  let failing = true;
  const answers = protocolAnswering([async () => (failing ? Promise.reject(new Error('the service answered 404')) : { token: 't', expires_at: new Date(now + 3_600_000).toISOString() })]);
  const spans = new SpanExport(answers.protocol, true, (line) => lines.push(line), () => now);
  assert.equal(await spans.env(), {});
  now += 59_000;
  assert.equal(await spans.env(), {});
  assert.is(answers.asked(), 1, 'not asked again within the minute');
  now += 2_000;
  assert.equal(await spans.env(), {});
  assert.is(answers.asked(), 2);
  assert.equal(lines, ['no span token (commands run without one; their spans are not exported; asked again each minute): the service answered 404']);
  failing = false;
  now += 61_000;
  assert.equal(await spans.env(), { OVERMIND_SPAN_TOKEN: 't' }, 'its own endpoint kept: the token alone');
});

test.run();
