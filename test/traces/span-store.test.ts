// The span store's decisions and reads: trace heads, each span stored once, entries keyed by
// their first start, and spans read back from LMDB.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { rmSync } from 'node:fs';
import { LmdbKv } from '../../src/store/lmdb-kv.ts';
import { MemoryKv } from '../../src/store/memory-kv.ts';
import { nanosToHex } from '../../src/traces/nanos.ts';
import { decodeExportRequest } from '../../src/traces/otlp.ts';
import { pack, spanJson } from '../../src/traces/span-record.ts';
import { SpanStore } from '../../src/traces/span-store.ts';
import { fullBounds } from '../../src/traces/span-query.ts';
import { draftSpans } from '../../src/traces/spans.ts';
import { tempDataDir } from '../helpers/service.ts';
import { apply, project, span } from './span-fixtures.ts';

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

test.run();
