// A worker thread of the compute pool (piscina loads this file): runs one task at a time. It lowers
// its own scheduling priority first, so that on a busy machine the event loop, which answers every
// other request, is not slowed by it: a heavy answer delays only the caller who asked for it.
import { readlinkSync } from 'node:fs';
import { setPriority } from 'node:os';
import { bootstrapChunkMeans } from '../stats/bootstrap.ts';
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
 * Compiles the bootstrap's loop before the first task needs it: a cold worker's first chunks of a
 * comparison ran at half speed while V8 optimized it (~25 ms of small draws here saves ~100 ms).
 */
function warmUp(): void {
  const values = Float64Array.from({ length: 1001 }, (_, i) => i % 7);
  for (let i = 0; i < 20; i++) bootstrapChunkMeans(values, i, 10, 1);
}
