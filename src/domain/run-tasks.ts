// The tasks of one run, as columns: a run of a million tasks is not a million records. A task is
// a position p = (iteration · N + datapoint) · A + attempt over the run's I iterations, the
// version's N datapoints and A attempts, with its state and tries in typed columns; what only a
// few tasks have at a time (a lease, a pending retry, a last error) is kept in maps and a heap.
// Tasks are handed out along a sequence of ranks: through the run's datapoint order a block of
// datapoints at a time, each iteration's tasks of the block together (every attempt), iteration
// after iteration, so that results of one datapoint on every candidate complete close together. A
// race's block is one datapoint (its pairs complete together); other runs take `handOutBlock`.
//
// This is the state both the job's actor (deciding) and the read model (answering) hold; it is
// changed only by `apply` with a run's events (run.ts), the same way in both, so that a restart
// replays to the same columns. Counts by state are kept as tasks move and asserted.
import assert from 'node:assert/strict';

export const taskStates = ['queued', 'leased', 'done', 'dead', 'skipped', 'cancelled'] as const;
export type TaskState = (typeof taskStates)[number];

const queued = 0;
const leased = 1;
const done = 2;
const dead = 3;
const skipped = 4;
const cancelled = 5;
/** Task state codes, by name. */
export const taskCode: Readonly<Record<TaskState, number>> = { queued, leased, done, dead, skipped, cancelled };

/**
 * Datapoints a block of the hand-out sequence holds, for runs that do not race. A commit of a
 * lease's completions writes one result row per task, and rows are keyed by iteration first: a
 * block of one datapoint spreads a 100-task commit over every iteration of the run, each a page of
 * the store rewritten, where a block of 16 keeps it to a few (60 iterations, 100 a lease: 34,000 ->
 * ~50,000 task lifecycles a second, `npm run bench -- runs`), and candidates still stand within 16
 * datapoints of each other at every moment of a run.
 */
export const handOutBlock = 16;

/** A run's shape: how many iterations, datapoints and attempts its tasks are made of. */
export interface RunShape {
  readonly iterations: number;
  readonly datapoints: number;
  readonly attempts: number;
  /** The datapoint indexes in the order their tasks are handed out. */
  readonly datapointOrder: readonly number[];
  /** Datapoints of the order a block of the hand-out sequence holds (absent: 1, datapoint by datapoint). */
  readonly block?: number;
}

/** A task leased to a worker: who holds it, and the token that must come back with its result. */
export interface TaskLease {
  readonly worker: string;
  readonly token: string;
}

export type TaskCounts = { [S in TaskState]: number } & { total: number };

/** A task's coordinates in its run. */
export interface TaskAt {
  readonly iteration: number;
  readonly datapoint: number;
  readonly attempt: number;
}

export class RunTasks {
  readonly total: number;
  /** The shape's datapoint order, as a column. */
  private readonly order: Uint32Array;
  /** State code per position (taskCode). */
  readonly state: Uint8Array;
  /** Failed tries per position (an error result; a rate-limited one is not a try). */
  readonly tries: Uint8Array;
  /** The next rank of the hand-out sequence no task was leased from yet. */
  nextRank = 0;
  readonly leases = new Map<number, TaskLease>();
  /** Each worker's leased positions. */
  readonly byWorker = new Map<string, Set<number>>();
  /** When each worker's leases in this run expire (epoch ms); a heartbeat moves it on. */
  readonly leaseExpiry = new Map<string, number>();
  /** The last error of each task that failed a try. */
  readonly lastErrors = new Map<number, string>();
  /** Tasks queued again (retries, expired or released leases), by when they are ready: a binary min-heap of [readyAt, position]. */
  private readonly retryAt: number[] = [];
  private readonly retryPosition: number[] = [];
  /** The readyAt each queued-again task was last pushed with (heap entries with another are stale). */
  private readonly readyAt = new Map<number, number>();
  readonly counts: TaskCounts;

  /** Datapoints a block of the hand-out sequence holds. */
  private readonly block: number;

  constructor(readonly shape: RunShape) {
    this.total = shape.iterations * shape.datapoints * shape.attempts;
    this.block = shape.block ?? 1;
    assert.ok(Number.isInteger(this.block) && this.block >= 1, 'a block holds one datapoint or more');
    this.order = Uint32Array.from(shape.datapointOrder);
    this.state = new Uint8Array(this.total);
    this.tries = new Uint8Array(this.total);
    this.counts = { total: this.total, queued: this.total, leased: 0, done: 0, dead: 0, skipped: 0, cancelled: 0 };
  }

  positionOf({ iteration, datapoint, attempt }: TaskAt): number {
    return (iteration * this.shape.datapoints + datapoint) * this.shape.attempts + attempt;
  }

  taskAt(position: number): TaskAt {
    const { datapoints, attempts } = this.shape;
    const attempt = position % attempts;
    const rest = (position - attempt) / attempts;
    return { iteration: Math.floor(rest / datapoints), datapoint: rest % datapoints, attempt };
  }

  /**
   * The position handed out at a rank of the sequence: its block (every block before the last is
   * whole), then its iteration within the block, then its datapoint and attempt.
   */
  positionAtRank(rank: number): number {
    const { iterations, datapoints, attempts } = this.shape;
    const perBlock = this.block * iterations * attempts;
    const blockIndex = Math.floor(rank / perBlock);
    const first = blockIndex * this.block;
    const perIteration = Math.min(this.block, datapoints - first) * attempts;
    const within = rank - blockIndex * perBlock;
    const iteration = Math.floor(within / perIteration);
    const rest = within - iteration * perIteration;
    const attempt = rest % attempts;
    return this.positionOf({ iteration, datapoint: this.order[first + (rest - attempt) / attempts]!, attempt });
  }

  stateOf(position: number): TaskState {
    return taskStates[this.state[position]!]!;
  }

  /** Whether every task has ended (done, dead, skipped or cancelled). */
  get finished(): boolean {
    return this.counts.queued === 0 && this.counts.leased === 0;
  }

  // ---- what a lease would take (read only: decisions call these) ----

  /**
   * Up to `count` queued tasks ready at `nowMs`: those queued again and ready first (earliest
   * first), then the sequence from `nextRank`. Reads the heap without changing it.
   */
  ready(count: number, nowMs: number): { positions: number[]; rankAfter: number } {
    const positions = this.readyAgain(count, nowMs);
    let rank = this.nextRank;
    const sequence = this.total;
    while (positions.length < count && rank < sequence) {
      const position = this.positionAtRank(rank++);
      if (this.state[position] === queued) positions.push(position);
    }
    return { positions, rankAfter: rank };
  }

  /** When the next task queued again becomes ready (epoch ms), if one waits. */
  nextReadyAt(): number | undefined {
    for (const [at, position] of this.heapInOrder()) if (this.isLive(at, position)) return at;
    return undefined;
  }

  /** Whether some task could be leased at `nowMs`. */
  hasReady(nowMs: number): boolean {
    return this.ready(1, nowMs).positions.length > 0;
  }

  // ---- changes (run.ts's apply only) ----

  lease(positions: readonly number[], tokens: readonly string[], worker: string, rankAfter: number, expiresAt: number): void {
    assert.equal(positions.length, tokens.length, 'a token per task leased');
    let held = this.byWorker.get(worker);
    if (!held) this.byWorker.set(worker, (held = new Set()));
    positions.forEach((position, i) => {
      this.move(position, queued, leased);
      this.readyAt.delete(position);
      this.leases.set(position, { worker, token: tokens[i]! });
      held.add(position);
    });
    this.nextRank = Math.max(this.nextRank, rankAfter);
    this.leaseExpiry.set(worker, expiresAt);
    this.dropStaleHeapTop();
  }

  extend(worker: string, expiresAt: number): void {
    if (this.byWorker.has(worker)) this.leaseExpiry.set(worker, expiresAt);
  }

  /** A leased task ends: done, dead (its last try failed: counted), or out of the run's wish (skipped, cancelled). */
  end(position: number, to: 'done' | 'dead' | 'skipped' | 'cancelled'): void {
    this.move(position, leased, taskCode[to]);
    this.unlease(position);
    if (to === 'dead') this.tries[position] = Math.min(255, this.tries[position]! + 1);
  }

  /** A leased task goes back to the queue, ready at `readyAt`; `failed` counts a try. */
  requeue(position: number, readyAt: number, failed: boolean): void {
    this.move(position, leased, queued);
    this.unlease(position);
    if (failed) this.tries[position] = Math.min(255, this.tries[position]! + 1);
    this.pushReady(position, readyAt);
  }

  /**
   * Every task a worker holds goes back to the queue, ready at `readyAt` (its leases expired or it
   * left), but those `skip` names end skipped; returns those queued again.
   */
  releaseWorker(worker: string, readyAt: number, skip: (position: number) => boolean = () => false): number[] {
    const queued: number[] = [];
    for (const position of [...(this.byWorker.get(worker) ?? [])]) {
      if (skip(position)) {
        this.end(position, 'skipped');
        continue;
      }
      this.requeue(position, readyAt, false);
      queued.push(position);
    }
    this.leaseExpiry.delete(worker);
    return queued;
  }

  noteError(position: number, error: string): void {
    this.lastErrors.set(position, error);
  }

  /** Ended tasks queued again (a retry of what failed): their tries start over. */
  queueAgain(positions: readonly number[], readyAt: number): void {
    for (const position of positions) {
      this.move(position, this.state[position]!, queued);
      this.tries[position] = 0;
      this.pushReady(position, readyAt);
    }
  }

  /** How many of an iteration's tasks are queued. */
  queuedOf(iteration: number): number {
    let count = 0;
    this.forEachOf(iteration, (position) => this.state[position] === queued && count++);
    return count;
  }

  /** An iteration's queued tasks are skipped (a race stopped it; its leased ones finish); returns how many. */
  skipQueuedOf(iteration: number): number {
    let skipped = 0;
    this.forEachOf(iteration, (position) => {
      if (this.state[position] !== queued) return;
      this.move(position, queued, taskCode.skipped);
      this.readyAt.delete(position);
      skipped++;
    });
    this.dropStaleHeapTop();
    return skipped;
  }

  private forEachOf(iteration: number, visit: (position: number) => void): void {
    const first = this.positionOf({ iteration, datapoint: 0, attempt: 0 });
    const end = first + this.shape.datapoints * this.shape.attempts;
    for (let position = first; position < end; position++) visit(position);
  }

  /** Every task still queued or leased ends as `to` (a cancel, a budget reached, a failure); returns those that were leased. */
  endUnfinished(to: 'skipped' | 'cancelled'): number[] {
    const revoked = [...this.leases.keys()];
    for (const position of revoked) this.end(position, to);
    for (let position = 0; position < this.total; position++) if (this.state[position] === queued) this.move(position, queued, taskCode[to]);
    this.readyAt.clear();
    this.retryAt.length = 0;
    this.retryPosition.length = 0;
    this.leaseExpiry.clear();
    assert.ok(this.finished, 'no task is left queued or leased');
    return revoked;
  }

  /**
   * Moves a task between states, keeping the counts. (The asserts' messages are made only when one
   * fails: this runs two or three times a task, and messages built every time stood out in a
   * profile of leases.)
   */
  private move(position: number, from: number, to: number): void {
    if (this.state[position] !== from) assert.fail(`task ${position} is ${taskStates[this.state[position]!]} when it becomes ${taskStates[to]} (from ${taskStates[from]})`);
    this.state[position] = to;
    const counts = this.counts;
    if (--counts[taskStates[from]!] < 0) assert.fail(`the ${taskStates[from]} count is never negative`);
    counts[taskStates[to]!]++;
  }

  private unlease(position: number): void {
    const lease = this.leases.get(position);
    if (!lease) assert.fail(`task ${position} was leased`);
    this.leases.delete(position);
    const held = this.byWorker.get(lease.worker)!;
    held.delete(position);
    if (held.size === 0) {
      this.byWorker.delete(lease.worker);
      this.leaseExpiry.delete(lease.worker);
    }
  }

  // ---- the heap of tasks queued again ----

  private pushReady(position: number, at: number): void {
    this.readyAt.set(position, at);
    let i = this.retryAt.length;
    this.retryAt.push(at);
    this.retryPosition.push(position);
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!this.before(i, parent)) break;
      this.swap(i, parent);
      i = parent;
    }
  }

  /** Removes stale entries (tasks leased or ended since they were pushed) from the top. */
  private dropStaleHeapTop(): void {
    while (this.retryAt.length > 0 && !this.isLive(this.retryAt[0]!, this.retryPosition[0]!)) this.popTop();
  }

  private isLive(at: number, position: number): boolean {
    return this.state[position] === queued && this.readyAt.get(position) === at;
  }

  private popTop(): void {
    const last = this.retryAt.length - 1;
    this.swap(0, last);
    this.retryAt.pop();
    this.retryPosition.pop();
    let i = 0;
    for (;;) {
      const left = 2 * i + 1;
      const right = left + 1;
      let least = i;
      if (left < this.retryAt.length && this.before(left, least)) least = left;
      if (right < this.retryAt.length && this.before(right, least)) least = right;
      if (least === i) return;
      this.swap(i, least);
      i = least;
    }
  }

  /** Heap order: earlier first, then lower position (the same order in every replay). */
  private before(a: number, b: number): boolean {
    const at = this.retryAt[a]! - this.retryAt[b]!;
    return at < 0 || (at === 0 && this.retryPosition[a]! < this.retryPosition[b]!);
  }

  private swap(a: number, b: number): void {
    [this.retryAt[a], this.retryAt[b]] = [this.retryAt[b]!, this.retryAt[a]!];
    [this.retryPosition[a], this.retryPosition[b]] = [this.retryPosition[b]!, this.retryPosition[a]!];
  }

  /** Up to `count` live heap entries ready at `nowMs`, earliest first, read without changing the heap. */
  private readyAgain(count: number, nowMs: number): number[] {
    const positions: number[] = [];
    for (const [at, position] of this.heapInOrder()) {
      if (positions.length >= count || at > nowMs) break;
      if (this.isLive(at, position)) positions.push(position);
    }
    return positions;
  }

  /** The heap's entries in order, found best-first from the root (a frontier of candidates; nothing changes). */
  private *heapInOrder(): Generator<[at: number, position: number]> {
    if (this.retryAt.length === 0) return;
    const frontier = [0];
    while (frontier.length > 0) {
      let best = 0;
      for (let k = 1; k < frontier.length; k++) if (this.before(frontier[k]!, frontier[best]!)) best = k;
      const i = frontier[best]!;
      frontier[best] = frontier[frontier.length - 1]!;
      frontier.pop();
      yield [this.retryAt[i]!, this.retryPosition[i]!];
      const left = 2 * i + 1;
      if (left < this.retryAt.length) frontier.push(left);
      if (left + 1 < this.retryAt.length) frontier.push(left + 1);
    }
  }

  // ---- a snapshot ----

  toPlain(): RunTasksPlain {
    const { iterations, datapoints, attempts, block } = this.shape;
    return {
      // The order as its bytes: a snapshot writes a buffer at once, a list of numbers one by one.
      shape: { iterations, datapoints, attempts, ...(block === undefined ? {} : { block }), datapointOrder: Buffer.from(this.order.buffer, this.order.byteOffset, this.order.byteLength) },
      // Copies: a snapshot kept in memory (MemoryKv) must not change with the run.
      state: this.state.slice(),
      tries: this.tries.slice(),
      nextRank: this.nextRank,
      leases: [...this.leases].map(([position, lease]) => [position, lease.worker, lease.token]),
      leaseExpiry: [...this.leaseExpiry],
      lastErrors: [...this.lastErrors],
      retry: [...this.readyAt],
    };
  }

  static fromPlain(plain: RunTasksPlain): RunTasks {
    const order = plain.shape.datapointOrder;
    const bytes = Uint8Array.from(order);
    const tasks = new RunTasks({ ...plain.shape, datapointOrder: Array.from(new Uint32Array(bytes.buffer, 0, bytes.length / 4)) });
    tasks.state.set(plain.state);
    tasks.tries.set(plain.tries);
    tasks.nextRank = plain.nextRank;
    for (const key of taskStates) tasks.counts[key] = 0;
    for (const code of tasks.state) tasks.counts[taskStates[code]!]++;
    for (const [position, worker, token] of plain.leases) {
      tasks.leases.set(position, { worker, token });
      let held = tasks.byWorker.get(worker);
      if (!held) tasks.byWorker.set(worker, (held = new Set()));
      held.add(position);
    }
    for (const [worker, at] of plain.leaseExpiry) tasks.leaseExpiry.set(worker, at);
    for (const [position, error] of plain.lastErrors) tasks.lastErrors.set(position, error);
    for (const [position, at] of plain.retry) tasks.pushReady(position, at);
    return tasks;
  }
}

/** RunTasks as a snapshot holds it (typed columns as they are, the datapoint order as its bytes). */
export interface RunTasksPlain {
  shape: Omit<RunShape, 'datapointOrder'> & { datapointOrder: Uint8Array };
  state: Uint8Array;
  tries: Uint8Array;
  nextRank: number;
  leases: [position: number, worker: string, token: string][];
  leaseExpiry: [worker: string, at: number][];
  lastErrors: [position: number, error: string][];
  retry: [position: number, readyAt: number][];
}
