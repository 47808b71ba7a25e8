// What the compute pool hands a worker thread: a copy of the task that owns its buffers, the same
// data as structuredClone would give, a dimension named "__proto__" included (a field, as in place).
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { ComputePool } from '../../src/compute/compute-pool.ts';
import { ResultTable } from '../../src/results/result-table.ts';

test('a summary computed on a worker thread is the one computed in place, a dimension named "__proto__" with it', async () => {
  const roster = { dataset: 'd', agent: 'a', version: 1, ids: ['x', 'y', 'z'], orders: [0, 1, 2] };
  const table = new ResultTable(roster as never, 4);
  // JSON.parse makes "__proto__" an own key, as the service's stored rows hold it.
  for (let i = 0; i < 3; i++) table.put(i, 0, JSON.parse(`{"status":"ok","score":${i / 3},"passed":true,"dimension_scores":{"__proto__":${i},"acc":${i}}}`));
  const task = { kind: 'summary' as const, columns: table.columns(), limits: { missingNamedMax: 10 } };
  const inPlace = new ComputePool({ computeThreadsMax: 1, computeQueueMax: 8, computeInlineMicrosMax: 1e9 });
  const onWorker = new ComputePool({ computeThreadsMax: 1, computeQueueMax: 8, computeInlineMicrosMax: -1 });
  try {
    const here = await inPlace.run(task);
    const there = await onWorker.run(task);
    assert.is(onWorker.offloaded, 1);
    assert.equal(here.dimensions.map((dimension) => dimension.name).sort(), ['__proto__', 'acc']);
    assert.equal(JSON.parse(JSON.stringify(there)), JSON.parse(JSON.stringify(here)));
  } finally {
    await onWorker.close();
    await inPlace.close();
  }
});

test.run();
