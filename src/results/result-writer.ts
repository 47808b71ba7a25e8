// The one path that changes results. Batches are decided one commit at a time (src/store/
// batch-writer.ts): whether a row is new or replaces one, and the iteration's pin, depend on what
// is already stored, and batches waiting together share one commit. Decisions run ahead of
// durability (the next commit is decided while the one before is flushed), so each decision sees
// the committed tables plus what the decisions before it made (`Pending`); readers see committed
// tables only.
import { decideResults, type IterationLimits, type IterationResultsView, type ResolvedRow, type Roster } from '../domain/results.ts';
import { notFound, Rejected } from '../domain/rejection.ts';
import { BatchWriter, type Decision } from '../store/batch-writer.ts';
import type { KvOp } from '../store/kv.ts';
import type { ResultStore } from './result-store.ts';
import type { StoredRow } from './stored-row.ts';
import type { ResultTable } from './result-table.ts';

/** One batch of rows for one iteration, resolved against its version. */
export interface ResultsWrite {
  iteration: string;
  roster: Roster;
  rows: readonly ResolvedRow[];
  now: string;
}

/** What a durable batch did. */
export interface Written {
  roster: Roster;
  created: number;
  replaced: number;
  /** The iteration's rows once this batch was written. */
  results: number;
}

export interface ResultWriterOptions {
  /** Rows waiting to be written before new batches are refused. */
  queueRowsMax: number;
  /** Rows of waiting batches written together in one commit. */
  commitRowsMax: number;
  limits: IterationLimits & { attemptsPerDatapointMax: number };
  /** Whether an iteration's results are still wanted (its iteration and its version's agent live). */
  isLive(iteration: string, roster: Roster): boolean;
  /** A durable batch whose iteration went meanwhile: its rows must be purged. */
  orphaned(iteration: string): void;
  /** Every commit's outcome (store health). */
  outcome(ok: boolean, error?: unknown): void;
}

type Write = { kind: 'write'; weight: number; request: ResultsWrite; resolve(written: Written): void; reject(error: unknown): void };
type Purge = { kind: 'purge'; weight: 0; alone: true; iteration: string; limit: number; resolve(done: boolean): void; reject(error: unknown): void };
type Task = Write | Purge;

interface PendingRow {
  created_at: string;
  hasOutput: boolean;
  /** The decision that wrote it last. */
  by: object;
}

/** What decisions not yet settled made of one iteration. */
interface Pending {
  pinned: Roster | undefined;
  created: number;
  dimensions: Set<string>;
  rows: Map<number, PendingRow>;
  decisions: number;
}

/** A write decided into a commit, or refused. */
type Decided =
  | { task: Write; refusal: unknown }
  | { task: Write; rows: readonly { index: number; attempt: number; stored: StoredRow }[]; written: Written; by: object };

export class ResultWriter {
  private readonly writer: BatchWriter<Task>;
  private readonly pending = new Map<string, Pending>();

  constructor(private readonly store: ResultStore, private readonly options: ResultWriterOptions) {
    this.writer = new BatchWriter<Task>(store.kv, {
      queueWeightMax: options.queueRowsMax,
      commitWeightMax: options.commitRowsMax,
      decide: (tasks) => (tasks[0]!.kind === 'purge' ? this.decidePurge(tasks[0]!) : this.decideWrites(tasks as Write[])),
      outcome: options.outcome,
    });
  }

  /** Writes a batch; resolves once it is durable and readable. */
  write(request: ResultsWrite): Promise<Written> {
    return new Promise((resolve, reject) => this.writer.submit({ kind: 'write', weight: request.rows.length, request, resolve, reject }));
  }

  /** Removes up to `limit` of an iteration's rows; resolves true once nothing of it is left. */
  purge(iteration: string, limit: number): Promise<boolean> {
    return new Promise((resolve, reject) => this.writer.submit({ kind: 'purge', weight: 0, alone: true, iteration, limit, resolve, reject }));
  }

  stop(): Promise<void> {
    return this.writer.stop();
  }

  private decidePurge(task: Purge): Decision {
    const { ops, done } = this.store.purgeOps(task.iteration, task.limit);
    return { ops, answer: () => task.resolve(done) };
  }

  private decideWrites(tasks: Write[]): Decision {
    const ops: KvOp[] = [];
    const decided = tasks.map((task) => this.decideWrite(task, ops));
    return {
      ops,
      answer: () => {
        for (const one of decided) this.settle(one, true);
      },
      abandon: () => {
        for (const one of decided) this.settle(one, false);
      },
    };
  }

  /** One batch's ops (appended to `ops`), or its refusal; what it made is pending until it settles. */
  private decideWrite(task: Write, ops: KvOp[]): Decided {
    const { iteration, roster } = task.request;
    if (!this.options.isLive(iteration, roster)) return { task, refusal: notFound() };
    const table = this.store.table(iteration);
    const pending = this.pending.get(iteration);
    let decision;
    try {
      decision = decideResults(this.viewOf(iteration, pending), task.request, this.options.limits);
    } catch (error) {
      if (error instanceof Rejected) return { task, refusal: error };
      throw error;
    }
    // Until the iteration's first rows are durable, every batch pins it (the same pin, again):
    // rows are never stored without their pin, whichever of the commits in flight fails.
    if (!table) ops.push(...this.store.pinOps(iteration, roster));
    const by = {};
    const held = pending ?? { pinned: undefined, created: 0, dimensions: new Set<string>(), rows: new Map(), decisions: 0 };
    this.pending.set(iteration, held);
    held.pinned ??= roster;
    held.created += decision.created;
    held.decisions++;
    const nowMs = Date.parse(task.request.now);
    const rows = decision.rows.map((decided) => {
      const { index, attempt } = decided.row;
      const key = this.keyOf(index, attempt);
      const stored = this.store.rowOps(iteration, decided, nowMs, this.keptOutput(table, held, key, index, attempt), ops);
      held.rows.set(key, { created_at: decided.created_at, hasOutput: stored.has_output, by });
      const dimensions = stored.dimension_scores;
      if (dimensions) for (const name in dimensions) held.dimensions.add(name);
      return { index, attempt, stored };
    });
    const written = { roster, created: decision.created, replaced: decision.replaced, results: decision.rowsAfter };
    return { task, rows, written, by };
  }

  /** The iteration as a decision sees it: committed rows, and those decided before. */
  private viewOf(iteration: string, pending: Pending | undefined): IterationResultsView {
    const table = this.store.table(iteration);
    return {
      pinned: table?.roster ?? pending?.pinned,
      rows: (table?.rows ?? 0) + (pending?.created ?? 0),
      dimensions: new Set([...(table?.dimensionNames() ?? []), ...(pending?.dimensions ?? [])]),
      existing: (index, attempt) => {
        const decided = pending?.rows.get(this.keyOf(index, attempt));
        if (decided) return decided;
        const slot = table ? table.slotOf(index, attempt) : -1;
        return slot < 0 ? undefined : { created_at: table!.createdAt(slot) };
      },
    };
  }

  /** Whether the row at a key keeps an output, as decided so far (a row replacing it without one removes it). */
  private keptOutput(table: ResultTable | undefined, pending: Pending, key: number, index: number, attempt: number): boolean {
    const decided = pending.rows.get(key);
    if (decided) return decided.hasOutput;
    const slot = table ? table.slotOf(index, attempt) : -1;
    return slot >= 0 && table!.hasOutput(slot);
  }

  /** A decided batch's commit settled: readers get its rows (if durable), and it stops being pending. */
  private settle(decided: Decided, durable: boolean): void {
    const { task } = decided;
    if ('refusal' in decided) {
      task.reject(decided.refusal);
      return;
    }
    const { iteration, roster } = task.request;
    const live = durable && this.options.isLive(iteration, roster);
    if (live) this.store.applyCommitted(iteration, roster, decided.rows);
    this.release(iteration, decided);
    if (!durable) return; // the writer refuses the task
    if (live) task.resolve(decided.written);
    else {
      this.options.orphaned(iteration);
      task.reject(notFound());
    }
  }

  private release(iteration: string, decided: Extract<Decided, { written: Written }>): void {
    const pending = this.pending.get(iteration)!;
    pending.created -= decided.written.created;
    for (const { index, attempt } of decided.rows) {
      const key = this.keyOf(index, attempt);
      if (pending.rows.get(key)?.by === decided.by) pending.rows.delete(key);
    }
    if (--pending.decisions === 0) this.pending.delete(iteration);
  }

  private keyOf(index: number, attempt: number): number {
    return index * this.options.limits.attemptsPerDatapointMax + attempt;
  }
}
