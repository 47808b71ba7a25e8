// One writer for stores whose changes are decided against what is already stored (spans,
// results): tasks wait in a bounded queue, and each commit takes those waiting, up to a weight,
// and decides their ops when the store begins its transaction, where reads see every earlier
// commit. So the next commit can be requested while the one before is still being made durable:
// one request waits behind the commit in flight and takes everything that arrived meanwhile, and
// the main thread never idles through a sync. Each task is answered once its own commit is
// durable. Past the queue's bound a task is refused (503 with Retry-After).
import { ActorUnavailable } from '../actors/actor-unavailable.ts';
import type { Kv, KvOp } from './kv.ts';

/** A unit of work and how to refuse it. */
export interface WriterTask {
  /** What the task counts for against the queue and commit bounds (spans, rows). */
  readonly weight: number;
  /** Written in a commit of its own (a removal). */
  readonly alone?: boolean;
  reject(error: unknown): void;
}

/** What one commit decided: its ops, how to answer its tasks once durable, and what to undo if it is not. */
export interface Decision {
  ops: KvOp[];
  answer(): void;
  /** The commit failed: nothing of it is stored (its tasks are refused by the writer). */
  abandon?(): void;
}

export interface BatchWriterOptions<Task extends WriterTask> {
  /** Weight waiting to be written before new tasks are refused. */
  queueWeightMax: number;
  /** Weight of waiting tasks written together in one commit. */
  commitWeightMax: number;
  /** The ops of one commit's tasks, decided when its transaction begins. */
  decide(tasks: Task[]): Decision;
  /** Every commit's outcome (store health). */
  outcome(ok: boolean, error?: unknown): void;
}

export class BatchWriter<Task extends WriterTask> {
  /** Tasks no commit has taken yet, oldest first. */
  private readonly waiting: Task[] = [];
  private waitingWeight = 0;
  /** A write is requested whose transaction has not begun: it takes what is waiting then. */
  private requested = false;
  /** Writes requested and not settled yet. */
  private unsettled = 0;
  private stopped = false;
  private idleWaiters: (() => void)[] = [];

  constructor(private readonly kv: Kv, private readonly options: BatchWriterOptions<Task>) {}

  /** Queues a task, or refuses it (ActorUnavailable) when stopped or when the queue is full. */
  submit(task: Task): void {
    if (this.stopped) throw new ActorUnavailable('stopped', 5);
    if (this.waitingWeight > 0 && this.waitingWeight + task.weight > this.options.queueWeightMax) {
      throw new ActorUnavailable('mailbox_full', 1);
    }
    this.waiting.push(task);
    this.waitingWeight += task.weight;
    this.request();
  }

  /** Refuses new work and resolves once the queued work is written. */
  stop(): Promise<void> {
    this.stopped = true;
    if (this.unsettled === 0 && this.waiting.length === 0) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  /**
   * Requests a write unless one is waiting to begin already; it decides when it begins. Only the
   * answers wait for the commit: the tasks and the ops are let go once they are put, so that what
   * is in flight does not survive garbage collections and get copied by each.
   */
  private request(): void {
    if (this.requested || this.waiting.length === 0) return;
    this.requested = true;
    this.unsettled++;
    let decided: Decision | undefined;
    let wrote = false;
    let rejects: ((error: unknown) => void)[] = [];
    const written = this.kv.write(() => {
      this.requested = false;
      const taken = this.take();
      rejects = taken.map((task) => task.reject);
      // More waits than one commit takes: the next write begins as soon as this one commits. It is
      // requested once this transaction's callbacks are done, or it would join this transaction.
      if (this.waiting.length > 0) queueMicrotask(() => this.request());
      decided = this.options.decide(taken);
      wrote = decided.ops.length > 0;
      return { ops: decided.ops };
    });
    written.then(
      () => {
        if (wrote) this.options.outcome(true);
        decided!.answer();
      },
      (error: unknown) => {
        // A decision that threw wrote nothing and answers with its own error; a failed commit
        // wrote nothing either, and its tasks get 503.
        decided?.abandon?.();
        if (decided) this.options.outcome(false, error);
        const answer = decided ? new ActorUnavailable('store_failed', 1) : error;
        for (const reject of rejects) reject(answer);
      },
    ).finally(() => this.settled());
  }

  /** The oldest waiting tasks for one commit: one that goes alone, or others up to commitWeightMax. */
  private take(): Task[] {
    const head = this.waiting[0]!;
    if (head.alone) {
      this.waiting.shift();
      this.waitingWeight -= head.weight;
      return [head];
    }
    const taken: Task[] = [];
    let weight = 0;
    while (this.waiting.length > 0 && !this.waiting[0]!.alone) {
      const next = this.waiting[0]!;
      if (taken.length > 0 && weight + next.weight > this.options.commitWeightMax) break;
      this.waiting.shift();
      taken.push(next);
      weight += next.weight;
    }
    this.waitingWeight -= weight;
    return taken;
  }

  private settled(): void {
    this.unsettled--;
    if (this.unsettled > 0 || this.waiting.length > 0) return;
    const waiters = this.idleWaiters;
    this.idleWaiters = [];
    for (const wake of waiters) wake();
  }
}
