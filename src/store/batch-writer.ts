// One writer for stores whose changes are decided against what is already stored (spans,
// results): tasks wait in a bounded queue, and each commit takes those waiting, up to a weight,
// and decides their ops when the store begins its transaction, where reads see every earlier
// commit. So the next commit can be requested while the one before is still being made durable:
// one request waits behind the commit in flight and takes everything that arrived meanwhile, and
// the main thread never idles through a sync. Each task is answered once its own commit is
// durable. Past the queue's bound a task is refused (503 with Retry-After).
//
// What it relies on is asserted, as the actor asserts its own: the store begins one transaction
// per write requested, with something waiting to take; no task is taken twice; the weight waiting
// is what the waiting tasks weigh (never negative, none once nothing waits); commits settle in the
// order they were requested (answers, and what a writer makes readable with them, follow that
// order); a write that succeeded was decided.
import assert from 'node:assert/strict';
import { Unavailable } from '../unavailable.ts';
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
  /** Writes requested so far, and the number of the last one settled: they settle in that order. */
  private writesRequested = 0;
  private writesSettled = 0;
  /** Tasks some commit has taken: none is taken twice. */
  private readonly taken = new WeakSet<Task>();

  constructor(private readonly kv: Kv, private readonly options: BatchWriterOptions<Task>) {}

  /** Queues a task, or refuses it (Unavailable) when stopped or when the queue is full. */
  submit(task: Task): void {
    if (this.stopped) throw new Unavailable('stopped', 5);
    assert.ok(Number.isSafeInteger(task.weight) && task.weight >= 0, 'a task weighs a whole, non-negative amount');
    if (this.waitingWeight > 0 && this.waitingWeight + task.weight > this.options.queueWeightMax) {
      throw new Unavailable('queue_full', 1);
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
    const number = ++this.writesRequested;
    let decided: Decision | undefined;
    let wrote = false;
    let rejects: ((error: unknown) => void)[] = [];
    const written = this.kv.write(() => {
      assert.ok(this.requested, 'the store begins one transaction per write requested');
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
        this.settling(number);
        assert.ok(decided, 'a write that succeeded was decided when its transaction began');
        if (wrote) this.options.outcome(true);
        decided.answer();
      },
      (error: unknown) => {
        this.settling(number);
        // A decision that threw wrote nothing and answers with its own error; a failed commit
        // wrote nothing either, and its tasks get 503.
        decided?.abandon?.();
        if (decided) this.options.outcome(false, error);
        const answer = decided ? new Unavailable('store_failed', 1) : error;
        for (const reject of rejects) reject(answer);
        // Nothing was taken: the writer's own assert failed when the transaction began. It is
        // nobody's answer, so it is left unhandled, which stops the process.
        if (!decided && rejects.length === 0) throw error;
      },
    ).finally(() => this.settled());
  }

  /** The oldest waiting tasks for one commit: one that goes alone, or others up to commitWeightMax. */
  private take(): Task[] {
    assert.ok(this.waiting.length > 0, 'a write begins with something waiting to take');
    const head = this.waiting[0]!;
    if (head.alone) {
      this.waiting.shift();
      this.waitingWeight -= head.weight;
      return this.took([head]);
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
    return this.took(taken);
  }

  /** Tasks taken for one commit, checked: each taken once, and the weight left is what waits. */
  private took(tasks: Task[]): Task[] {
    for (const task of tasks) {
      assert.ok(!this.taken.has(task), 'no task is taken twice');
      this.taken.add(task);
    }
    assert.ok(this.waitingWeight >= 0, 'the weight waiting is never negative');
    if (this.waiting.length === 0) assert.equal(this.waitingWeight, 0, 'nothing weighs once nothing waits');
    return tasks;
  }

  /** A write settles: the one after the last settled, as they were requested. */
  private settling(number: number): void {
    assert.equal(number, this.writesSettled + 1, 'commits settle in the order they were requested');
    this.writesSettled = number;
  }

  private settled(): void {
    this.unsettled--;
    assert.ok(this.unsettled >= 0, 'a write settles once');
    if (this.unsettled > 0 || this.waiting.length > 0) return;
    const waiters = this.idleWaiters;
    this.idleWaiters = [];
    for (const wake of waiters) wake();
  }
}
