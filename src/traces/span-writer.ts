// The one path that changes spans. Changes are decided one at a time against committed state (an
// ingest's duplicates, counters and trace heads depend on what is already stored), and ingests
// waiting together share one commit, so durable throughput comes from batching, not from deciding
// in parallel. The queue is bounded: past it an export gets 503 with Retry-After.
import { ActorUnavailable } from '../actors/actor-unavailable.ts';
import { SerialQueue } from '../actors/serial-queue.ts';
import type { KvOp } from '../store/kv.ts';
import type { SpanRecord } from './span-record.ts';
import type { Ingested, SpanStore } from './span-store.ts';

export interface SpanWriterOptions {
  /** Spans waiting to be written before new exports are refused. */
  queueSpansMax: number;
  /** Spans of waiting exports written together in one commit. */
  commitSpansMax: number;
  /** Every commit's outcome (store health). */
  outcome(ok: boolean, error?: unknown): void;
}

type Task =
  | { kind: 'ingest'; spans: readonly SpanRecord[]; resolve(ingested: Ingested): void; reject(error: unknown): void }
  | { kind: 'remove'; project: string; before: string | null; limit: number; resolve(removed: number): void; reject(error: unknown): void };

export class SpanWriter {
  private readonly queue = new SerialQueue<Task>((waiting) => this.handleNext(waiting));
  private queuedSpans = 0;

  constructor(private readonly store: SpanStore, private readonly options: SpanWriterOptions) {}

  /** Stores the spans not stored yet; resolves with how many were stored and refused, once durable. */
  ingest(spans: readonly SpanRecord[]): Promise<Ingested> {
    if (this.queuedSpans > 0 && this.queuedSpans + spans.length > this.options.queueSpansMax) {
      return Promise.reject(new ActorUnavailable('mailbox_full', 1));
    }
    return new Promise((resolve, reject) => this.enqueue({ kind: 'ingest', spans, resolve, reject }));
  }

  /** Removes up to `limit` of a project's oldest spans starting before `before` (all when null). */
  remove(project: string, before: string | null, limit: number): Promise<number> {
    return new Promise((resolve, reject) => this.enqueue({ kind: 'remove', project, before, limit, resolve, reject }));
  }

  /** Refuses new work and resolves once the queued work is written. */
  stop(): Promise<void> {
    return this.queue.stop();
  }

  private enqueue(task: Task): void {
    this.queue.push(task);
    if (task.kind === 'ingest') this.queuedSpans += task.spans.length;
  }

  /** A removal commits alone; ingests waiting together share a commit. */
  private async handleNext(waiting: Task[]): Promise<void> {
    const head = waiting[0]!;
    if (head.kind === 'remove') {
      waiting.shift();
      await this.commitRemoval(head);
    } else {
      await this.commitIngests(this.takeIngests());
    }
  }

  /** Waiting ingests in order, as many as fit one commit (always at least one). */
  private takeIngests(): Extract<Task, { kind: 'ingest' }>[] {
    const taken: Extract<Task, { kind: 'ingest' }>[] = [];
    let spans = 0;
    const waiting = this.queue.items;
    while (waiting[0]?.kind === 'ingest') {
      const next = waiting[0];
      if (taken.length > 0 && spans + next.spans.length > this.options.commitSpansMax) break;
      waiting.shift();
      taken.push(next);
      spans += next.spans.length;
    }
    this.queuedSpans -= spans;
    return taken;
  }

  private async commitIngests(tasks: Extract<Task, { kind: 'ingest' }>[]): Promise<void> {
    let decided: { ops: KvOp[]; stored: number[]; refused: number[] };
    try {
      decided = this.store.ingestOps(tasks.map((task) => task.spans));
    } catch (error) {
      for (const task of tasks) task.reject(error);
      return;
    }
    if (await this.commit(decided.ops, tasks)) {
      tasks.forEach((task, index) => task.resolve({ stored: decided.stored[index]!, refused: decided.refused[index]! }));
    }
  }

  private async commitRemoval(task: Extract<Task, { kind: 'remove' }>): Promise<void> {
    let decided: { ops: KvOp[]; removed: number };
    try {
      decided = this.store.removalOps(task.project, task.before, task.limit);
    } catch (error) {
      task.reject(error);
      return;
    }
    if (await this.commit(decided.ops, [task])) task.resolve(decided.removed);
  }

  /** Writes `ops` durably; on failure every task of the commit fails with 503 (nothing was written). */
  private async commit(ops: KvOp[], tasks: readonly Task[]): Promise<boolean> {
    if (ops.length === 0) return true;
    try {
      await this.store.kv.write(ops);
      this.options.outcome(true);
      return true;
    } catch (error) {
      this.options.outcome(false, error);
      for (const task of tasks) task.reject(new ActorUnavailable('store_failed', 1));
      return false;
    }
  }
}
