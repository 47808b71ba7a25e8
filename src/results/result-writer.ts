// The one path that changes results. Commits are decided one at a time, each when its transaction
// begins (src/store/batch-writer.ts): whether a row is new or replaces one, and the iteration's
// pin, depend on what is already stored, and batches waiting together share one commit.
// Decisions run ahead of durability (the next commit is decided while the one before is flushed),
// so each sees the committed store plus what the commits decided before it make (`InFlight`);
// readers see committed tables only.
//
// A decision returns what its commit writes and what to apply once it is durable; the writer
// notes it in flight until the commit settles, then applies it to the store (durable) or drops it
// (failed). The counts it keeps are asserted at every change.
import assert from 'node:assert/strict';
import { decideResults, storedRowOfResolved, type IterationLimits, type IterationResultsView, type ResolvedRow, type Roster } from '../domain/result-batch.ts';
import { conflict, notFound, Rejected } from '../domain/rejection.ts';
import { BatchWriter, type Decision } from '../store/batch-writer.ts';
import type { KvOp } from '../store/kv.ts';
import type { PutRow, ResultStore } from './result-store.ts';

/** One batch of rows for one iteration, resolved against its version. */
export interface ResultsWrite {
  iteration: string;
  roster: Roster;
  rows: readonly ResolvedRow[];
  /** When it is written (epoch ms): new rows' created_at, every row's updated_at. */
  nowMs: number;
  /** The run that writes it (its rescoring), which may while it writes the iteration's results; null for any other writer. */
  run?: string | null;
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
  /** The run that writes an iteration's results now (live, or being rescored), if one does: rows from anyone else are refused meanwhile. */
  writingRun(iteration: string): string | undefined;
  /** A durable batch whose iteration went meanwhile: its rows must be purged. */
  orphaned(iteration: string): void;
  /** Every commit's outcome (store health). */
  outcome(ok: boolean, error?: unknown): void;
}

type Write = { kind: 'write'; weight: number; request: ResultsWrite; resolve(written: Written): void; reject(error: unknown): void };
type Purge = { kind: 'purge'; weight: 0; alone: true; iteration: string; limit: number; resolve(done: boolean): void; reject(error: unknown): void };
type Task = Write | Purge;

/** A write as decided: its rows as stored, and what the batch did once durable. */
interface WriteCommit {
  readonly iteration: string;
  readonly roster: Roster;
  readonly rows: readonly (PutRow & { readonly hasOutput: boolean })[];
  readonly written: Written;
}

/** A purge as decided: rows removed, and the pin with them once none is left. */
interface PurgeCommit {
  readonly iteration: string;
  readonly done: boolean;
  readonly unpin: { readonly dataset: string; readonly lastPin: boolean } | null;
}

export class ResultWriter {
  private readonly writer: BatchWriter<Task>;
  private readonly inFlight: InFlight;

  constructor(private readonly store: ResultStore, private readonly options: ResultWriterOptions) {
    this.inFlight = new InFlight(options.limits.attemptsPerDatapointMax);
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

  // ---- writes ----

  private decideWrites(tasks: Write[]): Decision {
    const ops: KvOp[] = [];
    const rostersStored = new Set<string>();
    const decided = tasks.map((task) => {
      const outcome = this.decideWrite(task.request, ops, rostersStored);
      if ('commit' in outcome) this.inFlight.addWrite(outcome.commit);
      return { task, ...outcome };
    });
    const settle = (durable: boolean) => {
      for (const one of decided) {
        if ('refusal' in one) one.task.reject(one.refusal);
        else this.settleWrite(one.task, one.commit, durable);
      }
    };
    return { ops, answer: () => settle(true), abandon: () => settle(false) };
  }

  /** One batch's ops (appended to `ops`; `rostersStored`: the rosters the commit stores so far) and what it does once durable, or its refusal. */
  private decideWrite(request: ResultsWrite, ops: KvOp[], rostersStored: Set<string>): { commit: WriteCommit } | { refusal: unknown } {
    const { iteration, roster } = request;
    if (!this.options.isLive(iteration, roster)) return { refusal: notFound() };
    // Checked as the commit is decided, not when the batch was sent: a run created while the
    // batch waited is seen here, and the batch does not land beside its rows. A pin (no rows) is
    // the job's to refuse (a new run's iterations).
    const writer = request.rows.length > 0 ? this.options.writingRun(iteration) : undefined;
    if (writer !== undefined && writer !== request.run) return { refusal: writtenByRun(writer) };
    let decision;
    try {
      decision = decideResults(this.viewOf(iteration), { roster, rows: request.rows, nowMs: request.nowMs }, this.options.limits);
    } catch (error) {
      if (error instanceof Rejected) return { refusal: error };
      throw error;
    }
    // Until the iteration's first rows are durable, every batch pins it (the same pin, again):
    // rows are never stored without their pin, whichever of the commits in flight fails.
    if (!this.store.table(iteration)) ops.push(...this.store.pinOps(iteration, roster, rostersStored));
    const rows = decision.rows.map(({ row, createdMs }) => {
      const put = { index: row.index, attempt: row.attempt, stored: storedRowOfResolved(row, createdMs, request.nowMs), hasOutput: row.output !== 'null' };
      this.store.rowOps(iteration, put, row.output, this.keepsOutput(iteration, row.index, row.attempt), ops);
      return put;
    });
    const written = { roster, created: decision.created, replaced: decision.replaced, results: decision.rowsAfter };
    return { commit: { iteration, roster, rows, written } };
  }

  /** A write's commit settled: the store takes its rows (if durable), and it is no longer in flight. */
  private settleWrite(task: Write, commit: WriteCommit, durable: boolean): void {
    this.inFlight.removeWrite(commit);
    if (!durable) return; // the batch writer refuses the task
    const live = this.options.isLive(commit.iteration, commit.roster);
    this.store.applyWritten(commit.iteration, commit.roster, commit.rows, live);
    if (live) task.resolve(commit.written);
    else {
      this.options.orphaned(commit.iteration);
      task.reject(notFound());
    }
  }

  /** The iteration as a decision sees it: committed rows, and those of the commits in flight. */
  private viewOf(iteration: string): IterationResultsView {
    const table = this.store.table(iteration);
    const pending = this.inFlight.of(iteration);
    return {
      pinned: table?.roster ?? pending?.roster,
      rows: (table?.rows ?? 0) + (pending?.created ?? 0),
      dimensions: new Set([...(table?.dimensionNames() ?? []), ...(pending?.dimensions ?? [])]),
      existing: (index, attempt) => {
        const decided = pending?.rows.get(this.inFlight.keyOf(index, attempt));
        if (decided) return { createdMs: decided.createdMs };
        const slot = table ? table.slotOf(index, attempt) : -1;
        return slot < 0 ? undefined : { createdMs: table!.valueAt('created_at', slot)! };
      },
    };
  }

  /** Whether the row at (index, attempt) keeps an output now (one replacing it without must remove it). */
  private keepsOutput(iteration: string, index: number, attempt: number): boolean {
    const decided = this.inFlight.of(iteration)?.rows.get(this.inFlight.keyOf(index, attempt));
    if (decided) return decided.hasOutput;
    const table = this.store.table(iteration);
    const slot = table ? table.slotOf(index, attempt) : -1;
    return slot >= 0 && table!.hasOutput(slot);
  }

  // ---- purges ----

  private decidePurge(task: Purge): Decision {
    const commit = this.decidePurgeOf(task.iteration, task.limit);
    const ops = [...commit.ops];
    if (commit.unpin) ops.push(...this.store.unpinOps(task.iteration, commit.unpin.dataset, commit.unpin.lastPin));
    this.inFlight.addPurge(commit);
    const settle = (durable: boolean) => {
      this.inFlight.removePurge(commit);
      if (!durable) return;
      if (commit.unpin) this.store.applyUnpinned(commit.iteration, commit.unpin.dataset, commit.unpin.lastPin);
      task.resolve(commit.done);
    };
    return { ops, answer: () => settle(true), abandon: () => settle(false) };
  }

  /**
   * Up to `limit` of an iteration's rows; once none are left, its pin too (committed or in
   * flight), and its roster when no other pin, committed or in flight, names that version.
   */
  private decidePurgeOf(iteration: string, limit: number): PurgeCommit & { ops: KvOp[] } {
    const { ops, removed } = this.store.rowRemovalOps(iteration, limit);
    if (removed === limit) return { iteration, done: false, unpin: null, ops };
    const dataset = this.store.pinOf(iteration) ?? this.inFlight.of(iteration)?.roster.dataset;
    if (dataset === undefined) return { iteration, done: true, unpin: null, ops };
    const others = [...this.store.pinnedTo(dataset), ...this.inFlight.pinningTo(dataset)].filter(
      (other) => other !== iteration && !this.inFlight.isUnpinning(other),
    );
    return { iteration, done: true, unpin: { dataset, lastPin: others.length === 0 }, ops };
  }
}

/** A row decided by a commit in flight. */
interface InFlightRow {
  readonly createdMs: number;
  readonly hasOutput: boolean;
  /** The commit that wrote it last. */
  readonly by: WriteCommit;
}

/** What the commits in flight make of one iteration. */
interface InFlightIteration {
  roster: Roster;
  /** Rows they create. */
  created: number;
  dimensions: Set<string>;
  rows: Map<number, InFlightRow>;
  /** Write commits in flight. */
  commits: number;
}

/**
 * What commits decided and not settled yet make, on top of the committed store: per iteration,
 * its version, the rows created and the rows written; and the pins being removed.
 */
class InFlight {
  private readonly iterations = new Map<string, InFlightIteration>();
  private readonly unpinning = new Map<string, number>();

  constructor(private readonly attemptsMax: number) {}

  of(iteration: string): Readonly<InFlightIteration> | undefined {
    return this.iterations.get(iteration);
  }

  /** A row's key among an iteration's rows. */
  keyOf(index: number, attempt: number): number {
    return index * this.attemptsMax + attempt;
  }

  addWrite(commit: WriteCommit): void {
    let held = this.iterations.get(commit.iteration);
    if (!held) this.iterations.set(commit.iteration, (held = { roster: commit.roster, created: 0, dimensions: new Set(), rows: new Map(), commits: 0 }));
    assert.equal(held.roster.dataset, commit.roster.dataset, 'commits in flight for one iteration are of one version');
    held.created += commit.written.created;
    held.commits++;
    for (const row of commit.rows) {
      held.rows.set(this.keyOf(row.index, row.attempt), { createdMs: row.stored.created_at, hasOutput: row.hasOutput, by: commit });
      for (const name in row.stored.dimension_scores ?? {}) held.dimensions.add(name);
    }
  }

  removeWrite(commit: WriteCommit): void {
    const held = this.iterations.get(commit.iteration);
    assert.ok(held, 'a write settles while it is in flight');
    held.created -= commit.written.created;
    held.commits--;
    assert.ok(held.created >= 0, 'rows created in flight are never negative');
    assert.ok(held.commits >= 0, 'write commits in flight are never negative');
    for (const row of commit.rows) {
      const key = this.keyOf(row.index, row.attempt);
      if (held.rows.get(key)?.by === commit) held.rows.delete(key);
    }
    if (held.commits > 0) return;
    assert.equal(held.created, 0, 'no row is created in flight once no write is');
    assert.equal(held.rows.size, 0, 'no row is written in flight once no write is');
    this.iterations.delete(commit.iteration);
  }

  /** Iterations a write in flight pins to `dataset`. */
  *pinningTo(dataset: string): Generator<string> {
    for (const [iteration, held] of this.iterations) if (held.roster.dataset === dataset) yield iteration;
  }

  isUnpinning(iteration: string): boolean {
    return this.unpinning.has(iteration);
  }

  addPurge(commit: PurgeCommit): void {
    if (commit.unpin) this.unpinning.set(commit.iteration, (this.unpinning.get(commit.iteration) ?? 0) + 1);
  }

  removePurge(commit: PurgeCommit): void {
    if (!commit.unpin) return;
    const count = (this.unpinning.get(commit.iteration) ?? 0) - 1;
    assert.ok(count >= 0, 'a purge settles while it is in flight');
    if (count === 0) this.unpinning.delete(commit.iteration);
    else this.unpinning.set(commit.iteration, count);
  }
}

/** The refusal of rows for an iteration whose results a run writes now. */
function writtenByRun(run: string): Rejected {
  return conflict(`This iteration's results are being written by run ${run}: they can be written again once it has ended.`);
}
