// Trace places: how the store knows where each trace's entry is, across failed commits,
// removals and a restart.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { Unavailable } from '../../src/unavailable.ts';
import { MemoryKv } from '../../src/store/memory-kv.ts';
import { nanosToHex } from '../../src/traces/nanos.ts';
import { migrateSpanLayout } from '../../src/traces/span-layout.ts';
import { SpanStore } from '../../src/traces/span-store.ts';
import { SpanWriter } from '../../src/traces/span-writer.ts';
import { FaultyKv } from '../helpers/faulty-kv.ts';
import { apply, project, span } from './span-fixtures.ts';

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
  // An entry keyed by trace id (a store written before) is migrated when the store opens: its place is its start from the first.
  const older = [...store.traces.range<unknown>({ start: [project, nanosToHex(3n)], end: [project, nanosToHex(4n)] })].flatMap(({ key, value }) => [
    { db: store.traces, key },
    { db: kv.db('traces'), key: [key[2]!, key[0]!], value },
  ]);
  await kv.write(older);
  await migrateSpanLayout(kv);
  const reopened = new SpanStore(kv);
  assert.equal(reopened.places.of('trace-c').map((place) => place.at), [nanosToHex(3n)]);
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
    (error: unknown) => assert.instance(error, Unavailable),
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

test.run();
