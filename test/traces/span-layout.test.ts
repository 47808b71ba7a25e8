// Stores written by earlier builds: their span layouts are migrated once, when the store opens.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { Journal, storeFormatVersion } from '../../src/store/journal.ts';
import { storeUpgrades } from '../../src/store-upgrades.ts';
import type { KvOp } from '../../src/store/kv.ts';
import { MemoryKv } from '../../src/store/memory-kv.ts';
import { nanosToHex } from '../../src/traces/nanos.ts';
import { fullBounds } from '../../src/traces/span-query.ts';
import { migrateSpanLayout } from '../../src/traces/span-layout.ts';
import { SpanStore } from '../../src/traces/span-store.ts';
import { apply, project, span } from './span-fixtures.ts';

test('a store written before with entries keyed by trace id is migrated when it opens: each entry keyed by its start, read and changed as any', async () => {
  const kv = new MemoryKv();
  const store = new SpanStore(kv);
  await apply(store, store.ingestOps([[span(1, { trace_id: 'trace-a' }), span(2, { trace_id: 'trace-a' }), span(3, { trace_id: 'trace-b' })]]));
  // Entries as a store written before keeps them: [trace_id, project] in the `traces` database.
  const legacy = [...store.traces.range<unknown>({})].flatMap(({ key, value }) => [
    { db: store.traces, key },
    { db: kv.db('traces'), key: [key[2]!, key[0]!], value },
  ]);
  await kv.write(legacy);
  assert.throws(() => new SpanStore(kv), /earlier layout/, 'a store is not opened on an earlier layout');
  assert.equal(await migrateSpanLayout(kv), { movedEntries: 2, completedEntries: 0, rekeyedLinks: 0 });
  const reopened = new SpanStore(kv);
  assert.equal([...kv.db('traces').keys({})], []);
  assert.equal([...reopened.traces.keys({})], [[project, nanosToHex(1n), 'trace-a'], [project, nanosToHex(3n), 'trace-b']]);
  assert.equal([...reopened.spansOfTrace('trace-a')].map((stored) => stored.span_id).sort(), ['span-1', 'span-2']);
  assert.is(reopened.head(project, 'trace-b')?.[0], 'span-3');
  const more = reopened.ingestOps([[span(1, { trace_id: 'trace-a' }), span(4, { trace_id: 'trace-a' })]]);
  assert.equal(more.stored, [1], 'a span of a migrated entry is known');
  await apply(reopened, more);
  assert.equal([...reopened.traces.keys({})], [[project, nanosToHex(1n), 'trace-a'], [project, nanosToHex(3n), 'trace-b']], 'the changed trace keeps its key');
  assert.equal([...reopened.spansOfTrace('trace-a')].map((stored) => stored.span_id).sort(), ['span-1', 'span-2', 'span-4']);
  assert.is(reopened.traceCount(project), 2);
  const again = new SpanStore(kv);
  assert.equal([...again.spansOfTrace('trace-a')].map((stored) => stored.span_id).sort(), ['span-1', 'span-2', 'span-4']);
  await apply(again, again.removalOps(project, null, 100));
  assert.equal([...again.traces.keys({})], []);
  assert.is(again.traceCount(project), 0);
  assert.equal([...again.spansOfTrace('trace-b')], []);
});

/** Two spans per trace, the later one its root, each linked to one of two agents. */
function spansOf(traces: number) {
  return Array.from({ length: traces }, (_, i) => [
    span(10 * i + 2, { trace_id: `trace-${i}`, agent: `agent-${i % 2}` }),
    span(10 * i + 1, { trace_id: `trace-${i}`, agent: `agent-${i % 2}`, parent_span_id: '' }),
  ]).flat();
}

/**
 * A store as the first builds wrote it: entries keyed by trace id without `tokens` or `since`, and
 * link entries keyed without `since`; trace-0's entry was moved to its start by a later build,
 * still without `since`.
 */
async function earliestLayout(kv: MemoryKv, traces: number): Promise<void> {
  const store = new SpanStore(kv);
  await apply(store, store.ingestOps([spansOf(traces)]));
  const ops: KvOp[] = [];
  for (const { key, value } of store.traces.range<{ head: unknown; spans: unknown }>({})) {
    const [, at, traceId] = key as string[];
    ops.push({ db: store.traces, key });
    const { head, spans: refs } = value;
    if (traceId === 'trace-0') ops.push({ db: store.traces, key: [project, at!, traceId], value: { head, spans: refs, tokens: 0 } });
    else ops.push({ db: kv.db('traces'), key: [traceId!, project], value: { head, spans: refs } });
  }
  for (const { key, value } of store.links.range<unknown>({})) {
    ops.push({ db: store.links, key }, { db: store.links, key: [key[0]!, key[1]!, key[2]!, key[4]!], value });
  }
  await kv.write(ops);
}

test('entries without `since` or `tokens` are completed and link entries keyed again, a few per commit; a migrated store is left as it is', async () => {
  const kv = new MemoryKv();
  await earliestLayout(kv, 5);
  const reference = new MemoryKv();
  const fresh = new SpanStore(reference);
  await apply(fresh, fresh.ingestOps([spansOf(5)]));
  let commits = 0;
  const write = kv.write.bind(kv);
  kv.write = (ops) => (commits++, write(ops));
  assert.equal(await migrateSpanLayout(kv, 4), { movedEntries: 4, completedEntries: 1, rekeyedLinks: 10 });
  assert.ok(commits >= 8, `${commits} commits of at most 4 ops`);
  // Laid out as this build lays out the same spans.
  for (const name of ['traces-by-start', 'span-links', 'trace-order', 'span-counts', 'traces']) {
    assert.equal([...kv.db(name).range({})], [...reference.db(name).range({})], name);
  }
  assert.equal(await migrateSpanLayout(kv, 4), { movedEntries: 0, completedEntries: 0, rekeyedLinks: 0 });
  const store = new SpanStore(kv);
  assert.equal([...store.linkedHeads(project, 'agent', 'agent-1', fullBounds, false)].map((head) => head.span_id), ['span-11', 'span-31']);
  await apply(store, store.ingestOps([[span(12, { trace_id: 'trace-1', span_id: 'late', agent: 'agent-1' })]]));
  assert.equal([...store.linkedSpans(project, 'agent', 'agent-1', fullBounds, false)].map((one) => one.span_id), ['span-11', 'late', 'span-12', 'span-31', 'span-32']);
});

test("a store's format check runs the migration once, and records it; a new store has nothing to migrate", async () => {
  const kv = new MemoryKv();
  const journal = new Journal(kv);
  await earliestLayout(kv, 2);
  await kv.write([{ db: journal.meta, key: ['format'], value: storeFormatVersion }]);
  await journal.checkFormat(storeUpgrades);
  assert.equal([...kv.db('traces').keys({})], []);
  assert.equal([...kv.db('span-links').keys({})].map((key) => key.length), [5, 5, 5, 5]);
  assert.is(journal.meta.get(['upgraded', 'span-layout']), true);
  // Recorded: the next check reads nothing of the spans (an entry of the earlier layout would stay).
  await kv.write([{ db: kv.db('traces'), key: ['trace-9', project], value: { head: ['s', nanosToHex(9n), true], spans: [] } }]);
  await journal.checkFormat(storeUpgrades);
  assert.is([...kv.db('traces').keys({})].length, 1);
  const empty = new Journal(new MemoryKv());
  await empty.checkFormat(storeUpgrades);
  assert.is(empty.meta.get(['upgraded', 'span-layout']), true);
});

test.run();
