// A trace's answer past a slice of spans: made a slice at a time, the event loop free between
// slices, and the same JSON as made at once.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { createApiKey, memberWithProject } from '../helpers/fixtures.ts';
import { withService } from '../helpers/service.ts';
import { pack, type SpanRecord } from '../../src/traces/span-record.ts';
import type { SpanStore } from '../../src/traces/span-store.ts';
import { spansPerSlice, traceAnswerBytes, traceAnswerChunks, traceSpansInTurns } from '../../src/traces/trace-answer.ts';
import { visibleTraceKeys } from '../../src/traces/span-reads.ts';
import type { SpanQuery } from '../../src/traces/span-query.ts';
import { baseNs, ms, otlpJson, postJson, spanId, traceId } from './helpers.ts';

function record(n: number): SpanRecord {
  const start = (0x18873e4d00000000n + BigInt(n)).toString(16).padStart(16, '0');
  return {
    trace_id: traceId(1), span_id: spanId(n + 1), parent_span_id: n === 0 ? '' : spanId(1), project: 'p', agent: null, job: null, iteration: null,
    name: `span "${n}"`, kind: 1, operation: '', service_name: 'svc', start_time_ns: start, end_time_ns: start,
    duration_ns: 0, status_code: 0, tokens: n, received_at: 0,
    detail: pack({ status_message: '', attributes: { n, big: 9223372036854775807n, nul: '\u0000' }, events: [], links: [], scope_name: 's', scope_version: '1' }),
    resource: pack({ 'service.name': 'svc' }),
  };
}

test('the answer in slices is the answer made at once, and each slice waits for a turn of the event loop', async () => {
  for (const count of [1, spansPerSlice, spansPerSlice + 1, 2 * spansPerSlice + 17]) {
    const answer = { head: { trace_id: traceId(1), root: null, span_count: count }, spans: Array.from({ length: count }, (_, n) => record(n)) };
    const chunks: Buffer[] = [];
    let turnsTaken = 0;
    const generator = traceAnswerChunks(answer);
    for (;;) {
      let turned = false;
      setImmediate(() => (turned = true));
      const next = await generator.next();
      if (next.done) break;
      if (turned) turnsTaken++;
      chunks.push(next.value);
    }
    const whole = traceAnswerBytes(answer).toString();
    assert.is(Buffer.concat(chunks).toString(), whole, `${count} spans`);
    assert.is(turnsTaken, Math.ceil(count / spansPerSlice), `a turn of the event loop before each of the ${count} spans' slices`);
    const parsed = JSON.parse(whole);
    assert.is(parsed.spans.length, count);
    assert.ok(whole.includes('"big":9223372036854775807'), 'bigints written exactly');
  }
});

test('the spans of a trace are read a slice a turn of the event loop, those removed meanwhile left out', async () => {
  const count = 2 * spansPerSlice + 1;
  const stored = new Map(Array.from({ length: count }, (_, n) => [n, record(n)]));
  const readsAtTurn: number[] = [];
  let reads = 0;
  const store = {
    spanAt(key: [string, number]) {
      reads++;
      return stored.get(key[1]);
    },
  } as unknown as SpanStore;
  const tick = () => setImmediate(() => {
    readsAtTurn.push(reads);
    stored.delete(count - 1); // retention removes the last span before its slice is read
    if (reads < count) tick();
  });
  tick();
  const spans = await traceSpansInTurns(store, Array.from({ length: count }, (_, n) => ['p', n]));
  assert.is(reads, count);
  assert.equal(readsAtTurn, [spansPerSlice, 2 * spansPerSlice], 'a turn of the event loop between slices');
  assert.equal(spans.map((span) => span.tokens), Array.from({ length: count - 1 }, (_, n) => n));
});

test('only the keys of a visible project within the bounds are read: a trace of another project reads no span', () => {
  const at = (n: number) => n.toString(16).padStart(16, '0');
  const keys = [['mine', at(5), 't', 'a'], ['theirs', at(6), 't', 'b'], ['mine', at(9), 't', 'c'], ['mine', at(12), 't', 'd']];
  const query = (projects: string[], bounds: SpanQuery['bounds']) => ({ projects, filters: [], bounds, searchTerms: [], searchFields: [], ordering: null }) as SpanQuery;
  const full = { min: at(0), max: 'f'.repeat(16) };
  assert.equal(visibleTraceKeys(keys, query(['mine'], full)).map((key) => key[3]), ['a', 'c', 'd']);
  assert.equal(visibleTraceKeys(keys, query(['mine'], { min: at(6), max: at(9) })).map((key) => key[3]), ['c'], 'bounds inclusive');
  assert.equal(visibleTraceKeys(keys, query(['elsewhere'], full)), [], 'another project: nothing to read');
  assert.equal(visibleTraceKeys(keys, query(['mine', 'theirs'], null)), [], 'bounds no span can fall within: nothing to read');
});

test('GET of a trace longer than a slice answers every span in start order, chunked', () =>
  withService(async ({ client, url }) => {
    const { member, project } = await memberWithProject(client);
    const key = (await createApiKey(member.client, project.id)).key as string;
    const count = 2 * spansPerSlice + 3;
    const spans = Array.from({ length: count }, (_, n) => ({
      traceId: traceId(7), spanId: spanId(n + 1), parentSpanId: n === 0 ? undefined : spanId(1), name: `s${count - n}`,
      start: baseNs + ms(count - n), end: baseNs + ms(count - n) + 1n,
    }));
    assert.is((await postJson(client.as({ apiKey: key }), otlpJson({ 'service.name': 'svc' }, spans))).status, 200);
    for (const encoding of ['identity', 'gzip']) {
      const response = await fetch(`${url}/api/traces/${traceId(7)}/`, { headers: { 'x-api-key': key, 'accept-encoding': encoding } });
      assert.is(response.status, 200);
      assert.is(response.headers.get('transfer-encoding'), 'chunked');
      assert.is(response.headers.get('content-type'), 'application/json; charset=utf-8');
      assert.is(response.headers.get('content-encoding'), encoding === 'gzip' ? 'gzip' : null);
      const text = await response.text();
      const body = JSON.parse(text);
      assert.is(body.span_count, count);
      assert.is(body.root.span_id, spanId(1));
      assert.equal(body.spans.map((span: { name: string }) => span.name), spans.map((span) => span.name).reverse());
      assert.ok(text.includes(`"start_time_ns":${baseNs + ms(1)},`), 'times exact');
    }
  }));

test.run();
