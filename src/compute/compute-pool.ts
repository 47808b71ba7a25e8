// Work that can take more than a few milliseconds (a comparison's bootstrap, a cold dataset diff
// and its hashing, a large summary) runs on worker threads (piscina), never on the event loop that
// answers every other request; smaller work runs in place, where a worker's round trip would cost
// more than the work. The queue of waiting tasks is bounded: past it a heavy request gets 503 with
// Retry-After. Answers are the callers' to keep (each kind has its own cache).
import { extname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Piscina } from 'piscina';
import { Unavailable } from '../unavailable.ts';
import { expectedMicros, runTask, type ComputeAnswers, type ComputeTask, type TaskOf } from './compute-tasks.ts';

export interface ComputeLimits {
  /** Worker threads at most (started when first needed; all but one stopped after a minute idle). */
  computeThreadsMax: number;
  /** Tasks waiting for a worker before further heavy requests get 503. */
  computeQueueMax: number;
  /** Work expected to take longer than this (microseconds) runs on a worker thread. */
  computeInlineMicrosMax: number;
}

/** The worker's module, beside this one: compiled (.js) or from source under tsx (.ts). */
const workerFile = new URL(`./compute-worker${extname(fileURLToPath(import.meta.url))}`, import.meta.url).href;
const idleTimeoutMs = 60_000;

export class ComputePool {
  private pool: Piscina | undefined;
  private closed = false;
  /** Tasks run on workers since start (GET /metrics). */
  offloaded = 0;

  constructor(private readonly limits: ComputeLimits) {}

  /** Runs a task where it belongs; resolves with its answer. A full queue refuses it (503). */
  run<K extends ComputeTask['kind']>(task: TaskOf<K>): Promise<ComputeAnswers[K]> {
    return this.dispatch(task, true);
  }

  /**
   * Runs a further task of work already admitted by `run` (a comparison's bootstrap chunks): it
   * queues whatever the queue holds, so that work let in is finished rather than refused midway.
   */
  runPart<K extends ComputeTask['kind']>(task: TaskOf<K>): Promise<ComputeAnswers[K]> {
    return this.dispatch(task, false);
  }

  /**
   * Lets `count` heavy tasks in at once, or none: refuses them all (503) when the queue cannot
   * take every one. The caller then runs them with runPart (an answer made of several, such as a
   * job's summaries, is computed whole or not at all).
   */
  admit(count: number): void {
    if (count === 0) return;
    if (this.closed) throw new Unavailable('stopped', 5);
    if (this.started().queueSize + count > this.limits.computeQueueMax) throw new Unavailable('busy', 1);
  }

  /** Whether work expected to take `micros` runs on a worker thread rather than in place. */
  offloads(micros: number): boolean {
    return micros > this.limits.computeInlineMicrosMax;
  }

  /**
   * Starts a worker thread now, in the background, and keeps one from then on: called once the
   * service holds data whose answers will be offloaded, so that the first of them does not wait
   * for a thread to start and load its modules (about half a second here, ten times a 100,000-row
   * summary's own time), nor does one after a quiet minute.
   */
  keepReady(): void {
    if (!this.closed) this.started();
  }

  /** Worker threads running now (0 before any heavy work or keepReady). */
  get threads(): number {
    return this.pool?.threads.length ?? 0;
  }

  private started(): Piscina {
    return (this.pool ??= new Piscina({
      filename: workerFile,
      // One thread stays (started with the pool); the others stop after a minute idle.
      minThreads: 1,
      maxThreads: this.limits.computeThreadsMax,
      idleTimeout: idleTimeoutMs,
    }));
  }

  private dispatch<K extends ComputeTask['kind']>(task: TaskOf<K>, bounded: boolean): Promise<ComputeAnswers[K]> {
    if (!this.offloads(expectedMicros(task))) return Promise.resolve(runTask(task));
    if (this.closed) return Promise.reject(new Unavailable('stopped', 5));
    const pool = this.started();
    if (bounded && pool.queueSize >= this.limits.computeQueueMax) return Promise.reject(new Unavailable('busy', 1));
    this.offloaded++;
    // Copied now (a task may read a table's live columns, which change while it waits for a
    // worker), and the copy's buffers moved to the worker rather than copied again.
    const copy = ownedCopy(task) as TaskOf<K>;
    return pool.run(copy, { transferList: buffersOf(copy) }) as Promise<ComputeAnswers[K]>;
  }

  /** Stops the worker threads (after the tasks they run). */
  async close(): Promise<void> {
    this.closed = true;
    await this.pool?.close();
  }
}

/**
 * A copy of a task's data that owns its buffers: each typed array copied with only its own bytes
 * (structuredClone copied a view's whole buffer, a column's spare capacity or a request body's
 * pool with it, at ~300 MB/s: 15-30 ms for a 5 MB OTLP/JSON body), plain data walked, anything
 * else (a Map, a Date) structured-cloned.
 */
function ownedCopy(value: unknown): unknown {
  if (ArrayBuffer.isView(value)) {
    if (value instanceof DataView) return structuredClone(value);
    // A Buffer's own slice() is a view: copied as a Uint8Array, which is what a worker receives of one anyway.
    return Buffer.isBuffer(value) ? new Uint8Array(value) : (value as unknown as Float64Array).slice();
  }
  if (Array.isArray(value)) return value.map(ownedCopy);
  if (typeof value !== 'object' || value === null) return value;
  if (value instanceof Map || value instanceof Set || value instanceof Date || value instanceof RegExp) return structuredClone(value);
  // Without a prototype, so that a key named "__proto__" (a dimension may be) is a field, as
  // structuredClone keeps it, rather than the copy's prototype.
  const copy: Record<string, unknown> = Object.create(null);
  for (const [key, item] of Object.entries(value)) copy[key] = ownedCopy(item);
  return copy;
}

/** The buffers of every typed array in a task (each its own, after ownedCopy). */
function buffersOf(value: unknown, found: ArrayBuffer[] = []): ArrayBuffer[] {
  if (ArrayBuffer.isView(value)) {
    if (value.buffer instanceof ArrayBuffer && !found.includes(value.buffer)) found.push(value.buffer);
  } else if (typeof value === 'object' && value !== null) {
    for (const child of Object.values(value)) buffersOf(child, found);
  }
  return found;
}
