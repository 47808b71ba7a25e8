// The span writer: what it holds while a commit is in flight.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { MemoryKv } from '../../src/store/memory-kv.ts';
import type { SpanRecord } from '../../src/traces/span-record.ts';
import { SpanStore } from '../../src/traces/span-store.ts';
import { SpanWriter } from '../../src/traces/span-writer.ts';
import { FaultyKv } from '../helpers/faulty-kv.ts';
import { until } from '../helpers/wait.ts';
import { span } from './span-fixtures.ts';

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

/** A full collection, then a turn: WeakRefs to what nothing holds are cleared after it. */
async function collectGarbage(): Promise<void> {
  setFlagsFromString('--expose-gc');
  (runInNewContext('gc') as () => void)();
  await new Promise((resolve) => setImmediate(resolve));
  (runInNewContext('gc') as () => void)();
}

test.run();
