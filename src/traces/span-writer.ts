// The one path that changes spans. Changes are decided one commit at a time against the store
// (an ingest's duplicates, counters and trace heads depend on what is already stored), and
// exports waiting together share one commit, so durable throughput comes from batching, not from
// deciding in parallel.
//
// The writer is pipelined: a commit's changes are decided when the store begins its transaction,
// where reads see every earlier commit, so the next commit can be requested while the one before
// is still being made durable. One request waits behind the commit in flight and takes everything
// that arrived meanwhile; the main thread never idles through a sync. Each export is answered
// once its own commit is durable. The queue is bounded: past it an export gets 503 with
// Retry-After.
import { ActorUnavailable } from '../actors/actor-unavailable.ts';
import type { KvOp } from '../store/kv.ts';
import type { SpanRecord } from './span-record.ts';
import type { Ingested, SpanStore } from './span-store.ts';
import type { TracePlaceRef } from './trace-places.ts';

export interface SpanWriterOptions {
  /** Spans waiting to be written before new exports are refused. */
  queueSpansMax: number;
  /** Spans of waiting exports written together in one commit. */
  commitSpansMax: number;
  /** Every commit's outcome (store health). */
  outcome(ok: boolean, error?: unknown): void;
}

type Ingest = { kind: 'ingest'; spans: readonly SpanRecord[]; resolve(ingested: Ingested): void; reject(error: unknown): void };
type Removal = { kind: 'remove'; project: string; before: string | null; limit: number; resolve(removed: number): void; reject(error: unknown): void };
type Task = Ingest | Removal;

/** What one commit decided: its ops, and how to answer its tasks once it is durable. */
interface Decision {
  ops: KvOp[];
  answer(): void;
}

export class SpanWriter {
  /** Tasks no commit has taken yet, oldest first. */
  private readonly waiting: Task[] = [];
  private waitingSpans = 0;
  /** A write is requested whose transaction has not begun: it takes what is waiting then. */
  private requested = false;
  /** Writes requested and not settled yet. */
  private unsettled = 0;
  private stopped = false;
  private idleWaiters: (() => void)[] = [];

  constructor(private readonly store: SpanStore, private readonly options: SpanWriterOptions) {}

  /** Stores the spans not stored yet; resolves with how many were stored and refused, once durable. */
  ingest(spans: readonly SpanRecord[]): Promise<Ingested> {
    if (this.stopped) return Promise.reject(new ActorUnavailable('stopped', 5));
    if (this.waitingSpans > 0 && this.waitingSpans + spans.length > this.options.queueSpansMax) {
      return Promise.reject(new ActorUnavailable('mailbox_full', 1));
    }
    return new Promise((resolve, reject) => this.enqueue({ kind: 'ingest', spans, resolve, reject }));
  }

  /** Removes up to `limit` of a project's oldest spans starting before `before` (all when null). */
  remove(project: string, before: string | null, limit: number): Promise<number> {
    if (this.stopped) return Promise.reject(new ActorUnavailable('stopped', 5));
    return new Promise((resolve, reject) => this.enqueue({ kind: 'remove', project, before, limit, resolve, reject }));
  }

  /** Refuses new work and resolves once the queued work is written. */
  stop(): Promise<void> {
    this.stopped = true;
    if (this.unsettled === 0 && this.waiting.length === 0) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  private enqueue(task: Task): void {
    this.waiting.push(task);
    if (task.kind === 'ingest') this.waitingSpans += task.spans.length;
    this.request();
  }

  /**
   * Requests a write unless one is waiting to begin already; it decides when it begins. Only the
   * answers wait for the commit: the spans and the ops are let go once they are put, so that the
   * exports in flight do not survive garbage collections and get copied by each.
   */
  private request(): void {
    if (this.requested || this.waiting.length === 0) return;
    this.requested = true;
    this.unsettled++;
    let decided: { wrote: boolean; answer(): void } | undefined;
    let rejects: ((error: unknown) => void)[] = [];
    let placesAdded: readonly TracePlaceRef[] = [];
    const written = this.store.kv.write(() => {
      this.requested = false;
      const taken = this.take();
      rejects = taken.map((task) => task.reject);
      // More waits than one commit takes: the next write begins as soon as this one commits. It is
      // requested once this transaction's callbacks are done, or it would join this transaction.
      if (this.waiting.length > 0) queueMicrotask(() => this.request());
      try {
        const { ops, answer } = this.decide(taken);
        decided = { wrote: ops.length > 0, answer };
        return { ops };
      } finally {
        placesAdded = this.store.places.decisionAdded();
      }
    });
    written.then(
      () => {
        if (decided!.wrote) this.options.outcome(true);
        decided!.answer();
      },
      (error: unknown) => {
        // A decision that threw wrote nothing and answers with its own error; a failed commit
        // wrote nothing either, and its exports get 503. Neither stored the trace places it added.
        this.store.places.notStored(placesAdded);
        if (decided) this.options.outcome(false, error);
        const answer = decided ? new ActorUnavailable('store_failed', 1) : error;
        for (const reject of rejects) reject(answer);
      },
    ).finally(() => this.settled());
  }

  /** The oldest waiting tasks for one commit: a removal alone, or ingests up to commitSpansMax spans. */
  private take(): Task[] {
    const head = this.waiting[0]!;
    if (head.kind === 'remove') return [this.waiting.shift()!];
    const taken: Task[] = [];
    let spans = 0;
    while (this.waiting[0]?.kind === 'ingest') {
      const next = this.waiting[0];
      if (taken.length > 0 && spans + next.spans.length > this.options.commitSpansMax) break;
      this.waiting.shift();
      taken.push(next);
      spans += next.spans.length;
    }
    this.waitingSpans -= spans;
    return taken;
  }

  private decide(tasks: Task[]): Decision {
    const head = tasks[0]!;
    if (head.kind === 'remove') {
      const { ops, removed } = this.store.removalOps(head.project, head.before, head.limit);
      const { resolve } = head;
      return { ops, answer: () => resolve(removed) };
    }
    const ingests = tasks as Ingest[];
    const { ops, stored, refused } = this.store.ingestOps(ingests.map((task) => task.spans));
    const resolves = ingests.map((task) => task.resolve);
    return { ops, answer: () => resolves.forEach((resolve, i) => resolve({ stored: stored[i]!, refused: refused[i]! })) };
  }

  private settled(): void {
    this.unsettled--;
    if (this.unsettled > 0 || this.waiting.length > 0) return;
    const waiters = this.idleWaiters;
    this.idleWaiters = [];
    for (const wake of waiters) wake();
  }
}
