// The pure pieces of the trace module, and the span store's own bookkeeping.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { rmSync } from 'node:fs';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { ActorUnavailable } from '../../src/actors/actor-unavailable.ts';
import { LmdbKv } from '../../src/store/lmdb-kv.ts';
import { MemoryKv } from '../../src/store/memory-kv.ts';
import { jsonText } from '../../src/traces/json-text.ts';
import { hexToNanos, int64ToExact, nanosToHex, uint64Difference, uint64ToHex } from '../../src/traces/nanos.ts';
import { decodeExportRequest, OtlpDecodeError } from '../../src/traces/otlp.ts';
import { slugify } from '../../src/traces/slug.ts';
import { pack, shownDetail, spanJson, type SpanRecord } from '../../src/traces/span-record.ts';
import { SpanStore } from '../../src/traces/span-store.ts';
import { SpanWriter } from '../../src/traces/span-writer.ts';
import { FaultyKv } from '../helpers/faulty-kv.ts';
import { until } from '../helpers/wait.ts';
import { draftSpans } from '../../src/traces/spans.ts';
import { fullBounds } from '../../src/traces/span-query.ts';
import { tempDataDir } from '../helpers/service.ts';

test('slugify folds accents, drops punctuation and joins words with hyphens, as Django does', () => {
  assert.is(slugify('  Support Bot — Ünïcode! '), 'support-bot-unicode');
  assert.is(slugify('already-a_slug'), 'already-a_slug');
  assert.is(slugify('--Trim me__'), 'trim-me');
  assert.is(slugify('***'), '');
  assert.is(slugify('Ａgent ２'), 'agent-2');
});

test('jsonText writes bigints as exact integers and non-finite numbers as null', () => {
  assert.is(jsonText({ a: 1767225600123456789n, b: [1.5, NaN, Infinity], c: 'q"uote', d: null, e: true }),
    '{"a":1767225600123456789,"b":[1.5,null,null],"c":"q\\"uote","d":null,"e":true}');
  assert.is(jsonText([]), '[]');
});

test('nanosecond times keep all 64 bits through hex', () => {
  const nanos = 18_446_744_073_709_551_615n;
  assert.is(nanosToHex(nanos), 'ffffffffffffffff');
  assert.is(hexToNanos(nanosToHex(1767225600123456789n)), 1767225600123456789n);
  assert.is(nanosToHex(-5n), '0000000000000000');
  assert.is(uint64ToHex({ high: 0x18873e4d, low: -1 }), '18873e4dffffffff');
  assert.is(uint64Difference({ high: 2, low: 5 }, { high: 1, low: -1 }), 6);
  assert.is(uint64Difference({ high: 1, low: 0 }, { high: 2, low: 0 }), 0);
  assert.is(int64ToExact({ high: -1, low: -2 }), -2);
  assert.is(int64ToExact({ high: 0x7fffffff, low: -1 }), 9223372036854775807n);
});

test('OTLP/JSON accepts snake_case field names, enum names and 64-bit integers as strings', () => {
  const body = JSON.stringify({
    resource_spans: [{
      resource: { attributes: [{ key: 'service.name', value: { string_value: 'svc' } }] },
      scope_spans: [{
        spans: [{
          trace_id: '0102030405060708090a0b0c0d0e0f10', span_id: '0102030405060708', name: 'snake',
          kind: 'SPAN_KIND_CLIENT', start_time_unix_nano: '1767225600123456789', end_time_unix_nano: '1767225600223456789',
          attributes: [{ key: 'big', value: { int_value: '9007199254740993' } }, { key: 'list', value: { array_value: { values: [{ bool_value: true }] } } }],
          status: { code: 'STATUS_CODE_ERROR' },
        }],
      }],
    }],
  });
  const [span] = draftSpans(decodeExportRequest(Buffer.from(body), 'json'), 8).spans;
  assert.is(span!.trace_id, '0102030405060708090a0b0c0d0e0f10');
  assert.is(span!.kind, 3);
  assert.is(span!.status_code, 2);
  assert.is(span!.start_time_ns, nanosToHex(1767225600123456789n));
  assert.is(span!.duration_ns, 100_000_000);
  assert.equal(shownDetail({ otlp: span!.otlp, scope_name: '', scope_version: '' }).attributes, { big: 9007199254740993n, list: [true] });
  assert.is(span!.resource.serviceName, 'svc');
});

test('an empty body is an empty export; anything else undecodable is an OtlpDecodeError', () => {
  assert.equal(decodeExportRequest(Buffer.alloc(0), 'json').resourceSpans, []);
  assert.equal(decodeExportRequest(Buffer.alloc(0), 'protobuf').resourceSpans, []);
  assert.throws(() => decodeExportRequest(Buffer.from('{'), 'json'), (error: unknown) => error instanceof OtlpDecodeError);
  assert.throws(() => decodeExportRequest(Buffer.from([0x0a, 0x05, 0x01]), 'protobuf'), (error: unknown) => error instanceof OtlpDecodeError);
});

const project = 'project-a';

function span(n: number, fields: Partial<SpanRecord> = {}): SpanRecord {
  return {
    trace_id: 'trace-1', span_id: `span-${n}`, parent_span_id: 'parent', project, agent: null, job: 'job-1', iteration: null,
    name: `span ${n}`, kind: 1, operation: '', service_name: 'svc', start_time_ns: nanosToHex(BigInt(n)), end_time_ns: nanosToHex(BigInt(n)),
    duration_ns: 0, status_code: 0, tokens: 0, received_at: 0,
    detail: pack({ status_message: '', attributes: {}, events: [], links: [], scope_name: '', scope_version: '' }),
    resource: pack({}),
    ...fields,
  };
}

async function apply(store: SpanStore, decided: { ops: Parameters<MemoryKv['write']>[0] }) {
  await store.kv.write(decided.ops);
}

test("a trace's head is its earliest span until its root arrives, and the next one when its head is removed", async () => {
  const store = new SpanStore(new MemoryKv());
  await apply(store, store.ingestOps([[span(5), span(3)]]));
  assert.equal(store.head(project, 'trace-1')?.[0], 'span-3');
  await apply(store, store.ingestOps([[span(9, { parent_span_id: '' }), span(1)]]));
  assert.equal(store.head(project, 'trace-1')?.[0], 'span-9');
  assert.equal([...store.headsOf(project, fullBounds, false)].map((head) => head.span_id), ['span-9']);
  assert.is(store.traceCount(project), 1);
  await apply(store, store.removalOps(project, nanosToHex(9n), 10));
  assert.equal(store.head(project, 'trace-1')?.[0], 'span-9');
  await apply(store, store.removalOps(project, null, 10));
  assert.is(store.head(project, 'trace-1'), undefined);
  assert.is(store.traceCount(project), 0);
  assert.equal([...store.projects()], []);
  for (const db of [store.spans, store.traces, store.order, store.links, store.counts]) assert.equal([...db.keys({})], []);
});

test('an ingest stores each span once: repeats within and across batches and decisions are skipped', async () => {
  const store = new SpanStore(new MemoryKv());
  const first = store.ingestOps([[span(1), span(2), span(1)], [span(2), span(3)]]);
  assert.equal(first.stored, [2, 1]);
  await apply(store, first);
  const again = store.ingestOps([[span(3), span(4)]]);
  assert.equal(again.stored, [1]);
  await apply(store, again);
  assert.is(store.spanCount(project, 'all', ''), 4);
  assert.is(store.spanCount(project, 'job', 'job-1'), 4);
  assert.equal([...store.linkedSpans(project, 'job', 'job-1', fullBounds, true)].map((stored) => stored.span_id), ['span-4', 'span-3', 'span-2', 'span-1']);
  const elsewhere = store.ingestOps([[span(4, { project: 'project-b' })]]);
  assert.equal(elsewhere.stored, [0]);
});

test('a new trace is told from a stored one by the ids the store holds, across a failed commit, removals and a restart', async () => {
  const kv = new MemoryKv();
  const store = new SpanStore(kv);
  const traces = (count: number) => Array.from({ length: count }, (_, i) => span(i, { trace_id: `trace-${i}` }));
  await apply(store, store.ingestOps([traces(4)]));
  // A decision whose commit never happened leaves an id that was not stored: the span is new next time.
  assert.equal(store.ingestOps([[span(9, { trace_id: 'trace-9' })]]).stored, [1]);
  const retried = store.ingestOps([[span(9, { trace_id: 'trace-9' })]]);
  assert.equal(retried.stored, [1]);
  await apply(store, retried);
  assert.is(store.traceCount(project), 5);
  // A store opened again builds the ids from what is stored: a stored span is known in any project.
  const reopened = new SpanStore(kv);
  assert.equal(reopened.ingestOps([[span(2, { trace_id: 'trace-2', project: 'project-b' }), span(9, { trace_id: 'trace-9' })]]).stored, [0]);
  // Removed traces are forgotten by the next decision, and take spans as new ones.
  await apply(reopened, reopened.removalOps(project, nanosToHex(3n), 10));
  assert.is(reopened.traceCount(project), 2);
  const after = reopened.ingestOps([[span(0, { trace_id: 'trace-0' }), span(3, { trace_id: 'trace-3' }), span(11, { trace_id: 'trace-9' })]]);
  assert.equal(after.stored, [2]);
  await apply(reopened, after);
  assert.equal([...reopened.spansOfTrace('trace-9')].map((stored) => stored.span_id).sort(), ['span-11', 'span-9']);
  assert.is(reopened.traceCount(project), 3);
});

test("a trace's place is forgotten by the decision after its entry's removal, and kept while an entry is there", async () => {
  const kv = new MemoryKv();
  const store = new SpanStore(kv);
  const places = (traceId: string) => store.places.of(traceId).map((place) => place.at);
  await apply(store, store.ingestOps([[span(1, { trace_id: 'trace-a' }), span(2, { trace_id: 'trace-b' }), span(3, { trace_id: 'trace-c' })]]));
  // A removal whose commit failed: the next decision finds the entries still there and keeps their places.
  store.removalOps(project, null, 10);
  store.ingestOps([]);
  assert.equal([places('trace-a'), places('trace-b'), places('trace-c')], [[nanosToHex(1n)], [nanosToHex(2n)], [nanosToHex(3n)]]);
  // Committed, trace-a and trace-b's places stay until the next decision, which looks up those two only.
  await apply(store, store.removalOps(project, nanosToHex(3n), 10));
  assert.equal(places('trace-a'), [nanosToHex(1n)]);
  let lookups = 0;
  const has = store.traces.has.bind(store.traces);
  store.traces.has = (key) => (lookups++, has(key));
  // That decision stores trace-b again (a new entry at its start): its place is forgotten, then added.
  await apply(store, store.ingestOps([[span(2, { trace_id: 'trace-b' })]]));
  assert.is(lookups, 2);
  assert.equal([places('trace-a'), places('trace-b'), places('trace-c')], [[], [nanosToHex(2n)], [nanosToHex(3n)]]);
  assert.equal([...store.spansOfTrace('trace-b')].map((stored) => stored.span_id), ['span-2']);
  // A moved legacy entry's place goes the same way.
  const legacy = [...store.traces.range<unknown>({ start: [project, nanosToHex(3n)], end: [project, nanosToHex(4n)] })].flatMap(({ key, value }) => [
    { db: store.traces, key },
    { db: store.legacyTraces, key: [key[2]!, key[0]!], value },
  ]);
  await kv.write(legacy);
  const reopened = new SpanStore(kv);
  assert.equal(reopened.places.of('trace-c').map((place) => place.at), [null]);
  await apply(reopened, reopened.ingestOps([[span(4, { trace_id: 'trace-c' })]]));
  reopened.ingestOps([]);
  assert.equal(reopened.places.of('trace-c').map((place) => place.at), [nanosToHex(3n)]);
  assert.equal([...reopened.spansOfTrace('trace-c')].map((stored) => stored.span_id).sort(), ['span-3', 'span-4']);
});

test('the places a failed commit added are forgotten by the decision after it; a place stored meanwhile is kept', async () => {
  const kv = new FaultyKv(new MemoryKv());
  const store = new SpanStore(kv);
  const writer = new SpanWriter(store, { queueSpansMax: 100, commitSpansMax: 100, outcome: () => {} });
  const places = (traceId: string) => store.places.of(traceId).map((place) => place.at);
  await writer.ingest([span(1, { trace_id: 'trace-a' })]);
  kv.failWith = new Error('disk full');
  await writer.ingest([span(2, { trace_id: 'trace-b' }), span(3, { trace_id: 'trace-c' }), span(4, { trace_id: 'trace-a' })]).then(
    () => assert.unreachable('the commit failed'),
    (error: unknown) => assert.instance(error, ActorUnavailable),
  );
  // Until a decision looks, the failed commit's new places are still known (a superset reads nothing there).
  assert.equal([places('trace-a'), places('trace-b'), places('trace-c')], [[nanosToHex(1n)], [nanosToHex(2n)], [nanosToHex(3n)]]);
  kv.failWith = null;
  // The next decision stores trace-c again (its place is kept) and forgets trace-b's; trace-a's stored entry stays.
  assert.equal(await writer.ingest([span(3, { trace_id: 'trace-c' })]), { stored: 1, refused: 0 });
  assert.equal([places('trace-a'), places('trace-b'), places('trace-c')], [[nanosToHex(1n)], [], [nanosToHex(3n)]]);
  assert.equal([...store.spansOfTrace('trace-c')].map((stored) => stored.span_id), ['span-3']);
  assert.equal([...store.spansOfTrace('trace-b')], []);
  await writer.stop();
});

test('trace entries are keyed by their first start, and a reopened store finds every trace by its id', async () => {
  const kv = new MemoryKv();
  const ids = Array.from({ length: 5000 }, (_, i) => `trace-${4999 - i}`);
  await kv.write(new SpanStore(kv).ingestOps([ids.map((trace_id, i) => span(i, { trace_id }))]).ops);
  const reopened = new SpanStore(kv);
  // Appended in start order, whatever the ids: the first key is the earliest trace's.
  assert.equal([...reopened.traces.keys({ limit: 1 })], [[project, nanosToHex(0n), 'trace-4999']]);
  assert.equal(ids.filter((id) => reopened.head(project, id) === undefined), []);
  assert.equal(reopened.ingestOps([ids.map((trace_id, i) => span(i, { trace_id, project: 'project-b' }))]).stored, [0]);
  // A trace keeps its key when a span starting earlier than its head arrives.
  await apply(reopened, reopened.ingestOps([[span(-1 + 10_000, { trace_id: 'trace-0', span_id: 'late', start_time_ns: nanosToHex(1n) })]]));
  assert.equal([...reopened.traces.keys({})].filter((key) => key[2] === 'trace-0'), [[project, nanosToHex(4999n), 'trace-0']]);
  assert.equal([...reopened.spansOfTrace('trace-0')].map((stored) => stored.span_id).sort(), ['late', 'span-4999']);
});

test('a store written before keeps entries by trace id: they are read where they are, and move when their trace changes', async () => {
  const kv = new MemoryKv();
  const store = new SpanStore(kv);
  await apply(store, store.ingestOps([[span(1, { trace_id: 'trace-a' }), span(2, { trace_id: 'trace-a' }), span(3, { trace_id: 'trace-b' })]]));
  // Entries as a store written before keeps them: [trace_id, project] in the `traces` database.
  const legacy = [...store.traces.range<unknown>({})].flatMap(({ key, value }) => [
    { db: store.traces, key },
    { db: store.legacyTraces, key: [key[2]!, key[0]!], value },
  ]);
  await kv.write(legacy);
  const reopened = new SpanStore(kv);
  assert.equal([...reopened.traces.keys({})], []);
  assert.equal([...reopened.spansOfTrace('trace-a')].map((stored) => stored.span_id).sort(), ['span-1', 'span-2']);
  assert.is(reopened.head(project, 'trace-b')?.[0], 'span-3');
  const more = reopened.ingestOps([[span(1, { trace_id: 'trace-a' }), span(4, { trace_id: 'trace-a' })]]);
  assert.equal(more.stored, [1], 'a span of a legacy entry is known');
  await apply(reopened, more);
  assert.equal([...reopened.legacyTraces.keys({})], [['trace-b', project]], 'the changed trace moved');
  assert.equal([...reopened.traces.keys({})], [[project, nanosToHex(1n), 'trace-a']]);
  assert.equal([...reopened.spansOfTrace('trace-a')].map((stored) => stored.span_id).sort(), ['span-1', 'span-2', 'span-4']);
  assert.is(reopened.traceCount(project), 2);
  const again = new SpanStore(kv);
  assert.equal([...again.spansOfTrace('trace-a')].map((stored) => stored.span_id).sort(), ['span-1', 'span-2', 'span-4']);
  await apply(again, again.removalOps(project, null, 100));
  assert.equal([...again.legacyTraces.keys({})], []);
  assert.equal([...again.traces.keys({})], []);
  assert.is(again.traceCount(project), 0);
  assert.equal([...again.spansOfTrace('trace-b')], []);
});

test("the writer lets an export's spans go once they are decided: only the answer waits for the commit", async () => {
  const kv = new FaultyKv(new MemoryKv());
  kv.queueWrites();
  const writer = new SpanWriter(new SpanStore(kv), { queueSpansMax: 100, commitSpansMax: 100, outcome: () => {} });
  let spans: SpanRecord[] | undefined = [span(1), span(2)];
  const sent = new WeakRef(spans);
  const sentSpan = new WeakRef(spans[0]!);
  const ingested = writer.ingest(spans);
  spans = undefined;
  await until(() => kv.queued === 1, 'the commit is held');
  await collectGarbage();
  assert.is(sent.deref(), undefined, 'the spans array is held while its commit is in flight');
  assert.is(sentSpan.deref(), undefined, 'a span is held while its commit is in flight');
  await kv.settleNext();
  assert.equal(await ingested, { stored: 2, refused: 0 });
  await writer.stop();
});

test('a span reads the same from an LMDB store whichever way its detail was kept', async () => {
  const dir = tempDataDir();
  const kv = new LmdbKv(dir);
  try {
    const store = new SpanStore(kv);
    const sent = { status_message: 'slow', attributes: { k: 'v', n: 2 }, events: [], links: [], scope_name: 'scope', scope_version: '1' };
    const otlp = Buffer.from(draftedSpan().otlp);
    const kept = [
      { otlp, scope_name: 'scope', scope_version: '1' },
      pack({ otlp, scope_name: 'scope', scope_version: '1' }),
      pack(sent),
    ];
    await apply(store, store.ingestOps([kept.map((detail, n) => span(n + 1, { trace_id: `trace-${n}`, detail }))]));
    // Every span read before any is shown: a value must not share a buffer the next read reuses.
    const stored = [...store.spansOf(project, fullBounds, false)];
    const shown = stored.map((stored) => {
      const { attributes, status_message, scope_name, scope_version } = spanJson(stored);
      return { attributes, status_message, scope_name, scope_version };
    });
    assert.is(shown.length, 3);
    for (const one of shown) assert.equal(one, { attributes: { k: 'v', n: 2 }, status_message: 'slow', scope_name: 'scope', scope_version: '1' });
  } finally {
    await kv.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

/** A span drafted from OTLP/JSON with attributes k and n and status message "slow". */
function draftedSpan() {
  const body = JSON.stringify({
    resourceSpans: [{
      scopeSpans: [{
        scope: { name: 'scope', version: '1' },
        spans: [{
          traceId: '0102030405060708090a0b0c0d0e0f10', spanId: '0102030405060708', name: 'kept',
          attributes: [{ key: 'k', value: { stringValue: 'v' } }, { key: 'n', value: { intValue: 2 } }],
          status: { message: 'slow' },
        }],
      }],
    }],
  });
  return draftSpans(decodeExportRequest(Buffer.from(body), 'json'), 8).spans[0]!;
}

/** A full collection, then a turn: WeakRefs to what nothing holds are cleared after it. */
async function collectGarbage(): Promise<void> {
  setFlagsFromString('--expose-gc');
  (runInNewContext('gc') as () => void)();
  await new Promise((resolve) => setImmediate(resolve));
  (runInNewContext('gc') as () => void)();
}

test.run();
