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

test('a worker with an OTLP endpoint of its own gets the token alone; without a token, commands run without and it is said once', async () => {
  const lines: string[] = [];
  const failing = protocolAnswering([async () => Promise.reject(new Error('the service answered 404'))]);
  const spans = new SpanExport(failing.protocol, true, (line) => lines.push(line));
  assert.equal(await spans.env(), {});
  assert.equal(await spans.env(), {});
  assert.equal(lines, ['no span token (commands run without one; their spans are not exported): the service answered 404']);
  const own = new SpanExport(protocolAnswering([async () => ({ token: 't', expires_at: new Date(Date.now() + 3_600_000).toISOString() })]).protocol, true, () => {});
  assert.equal(await own.env(), { OVERMIND_SPAN_TOKEN: 't' });
});

test.run();
