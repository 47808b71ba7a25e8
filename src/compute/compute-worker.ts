// A worker thread of the compute pool (piscina loads this file): runs one task at a time. It lowers
// its own scheduling priority first, so that on a busy machine the event loop, which answers every
// other request, is not slowed by it: a heavy answer delays only the caller who asked for it.
import { readlinkSync } from 'node:fs';
import { setPriority } from 'node:os';
import { rowFlags, type ResultColumns } from '../views/result-columns.ts';
import { bootstrapChunkMeans } from '../stats/bootstrap.ts';
import { comparisonRules } from '../views/comparison-rules.ts';
import { runTask, type ComputeTask } from './compute-tasks.ts';

/** nice(2) increment of the worker threads (0 is the event loop's; 19 the lowest). */
const niceness = 10;

lowerPriority();
warmUp();

export default function run(task: ComputeTask) {
  return runTask(task);
}

/** On Linux a thread is a task with its own id and niceness: /proc/thread-self names it. */
function lowerPriority(): void {
  try {
    const threadId = Number(readlinkSync('/proc/thread-self').split('/').pop());
    if (Number.isSafeInteger(threadId)) setPriority(threadId, niceness);
  } catch {
    // Another system, or not allowed: the worker runs at the process's priority.
  }
}

/**
 * Compiles the hot loops before the first task needs them: a cold worker's first chunks of a
 * comparison ran at half speed while V8 optimized them (~25 ms of small draws here saves ~100
 * ms), and its first summary of 100,000 results took half again as long as the next.
 */
function warmUp(): void {
  const values = Float64Array.from({ length: 1001 }, (_, i) => i % 7);
  for (let i = 0; i < 20; i++) bootstrapChunkMeans(values, i, 10, 1);
  const from = warmUpColumns(2000, 0);
  const to = warmUpColumns(2000, 3);
  const orders = Float64Array.from({ length: 2000 }, (_, i) => i);
  const settings = { confidence: 0.95, pairedMin: comparisonRules.pairedMin, listedMax: comparisonRules.listedMax };
  for (let i = 0; i < 10; i++) {
    runTask({ kind: 'summary', columns: from, limits: { missingNamedMax: 100 } });
    runTask({ kind: 'compare', input: { from, to, orders, dataset: { id: 'warm-up', version: 1 } }, settings });
  }
}

/** One scored, passed-or-failed row with a dimension on each of `datapoints` datapoints. */
function warmUpColumns(datapoints: number, shift: number): ResultColumns {
  const score = Float64Array.from({ length: datapoints }, (_, i) => ((i * 37 + shift) % 100) / 100);
  return {
    datapoints,
    rows: datapoints,
    errorRows: 0,
    head: Int32Array.from({ length: datapoints }, (_, i) => i),
    next: new Int32Array(datapoints).fill(-1),
    score,
    flags: Uint16Array.from(score, (value) => (value >= 0.5 ? rowFlags.passedKnown | rowFlags.passedTrue : rowFlags.passedKnown)),
    dimensions: { warm: score },
  };
}
