// Rescoring: an ended run's results scored again from their stored outputs and traces (after the
// agent's eval spec or the run's scorers changed), without running the agent again. It works in
// the background, a chunk of rows at a time: each chunk is written (the same rows, the same ids,
// new scores) and then its progress journaled in the run, so a restart resumes after the last
// chunk (rows are rescored in one fixed order: iteration, datapoint, attempt). While it works the
// run is the iterations' only writer (a posted batch is 409, as during a live run).
import type { Registry } from '../actors/registry.ts';
import type { Clock } from '../clock.ts';
import { timestamp } from '../clock.ts';
import type { Limits } from '../config.ts';
import { resolveRowAt, type ResolvedRow } from '../domain/result-batch.ts';
import type { ResultInput } from '../domain/result-row.ts';
import type { Run, RunCommand, RunScoringConfig, RunState } from '../domain/run.ts';
import type { ReadModel } from '../read-model.ts';
import type { ResultIntake } from '../results/result-intake.ts';
import type { ResultKeeper } from '../results/result-keeper.ts';
import { ScoreOutOfBounds, ScorerUnusable, type RunScoring } from './run-scoring.ts';

export interface RunRescorerOptions {
  registry: Registry;
  readModel: ReadModel;
  results: ResultKeeper;
  intake: ResultIntake;
  scoring: RunScoring;
  clock: Clock;
  limits: Readonly<Limits>;
  /** A rescoring that could not go on (logged; it resumes at the next start). */
  failed(run: string, error: unknown): void;
}

/** A result row to score again. */
interface RowRef {
  readonly iteration: string;
  readonly index: number;
  readonly attempt: number;
}

/** Rows scored, written and journaled together: one results batch. */
const chunkRowsMax = 1000;

export class RunRescorer {
  private readonly working = new Map<string, Promise<void>>();
  private closed = false;

  constructor(private readonly options: RunRescorerOptions) {}

  /** Rows a rescoring of the run (or of one of its iterations) scores: its ok results, in order. */
  rowsOf(run: Run, iteration: string | null): RowRef[] {
    const rows: RowRef[] = [];
    for (const id of run.iterations) {
      if (iteration !== null && id !== iteration) continue;
      const table = this.options.results.store.table(id);
      if (!table || table.roster.dataset !== run.dataset) continue;
      for (const slot of table.slotsInOrder()) {
        if (!table.isError(slot)) rows.push({ iteration: id, index: table.indexAt(slot), attempt: table.attemptAt(slot) });
      }
    }
    return rows;
  }

  /** Starts rescoring an ended run with `scoring` (from now on its scoring); resolves once that is durable. */
  async start(state: RunState, scoring: RunScoringConfig, iteration: string | null): Promise<void> {
    const { run } = state;
    const total = this.rowsOf({ ...run, scoring }, iteration).length;
    const now = timestamp(this.options.clock);
    await this.ask(run, { type: 'StartRescore', run: run.id, scoring, iteration, total, now });
    this.continue(run.id);
  }

  /** Resumes every rescoring a stop interrupted (at start-up). */
  resumeAll(): void {
    for (const run of this.options.readModel.runs.values()) if (run.rescore?.status === 'running') this.continue(run.id);
  }

  /** Lets the chunk being written finish; the rest waits for the next start. */
  async close(): Promise<void> {
    this.closed = true;
    await Promise.all(this.working.values());
  }

  private continue(id: string): void {
    if (this.working.has(id) || this.closed) return;
    const work = this.rescore(id)
      .catch((error: unknown) => this.options.failed(id, error))
      .finally(() => this.working.delete(id));
    this.working.set(id, work);
  }

  private async rescore(id: string): Promise<void> {
    const first = this.runOf(id);
    if (!first?.rescore || first.rescore.status !== 'running') return;
    const rows = this.rowsOf(first, first.rescore.iteration);
    let done = first.rescore.done;
    while (!this.closed) {
      const run = this.runOf(id);
      if (!run?.rescore || run.rescore.status !== 'running') return;
      const chunk = rows.slice(done, done + chunkRowsMax);
      await this.rescoreRows(run, chunk);
      // Rows that went meanwhile (an iteration deleted) are counted as done: nothing is left of them.
      done = chunk.length === 0 ? run.rescore.total : done + chunk.length;
      await this.ask(run, { type: 'RescoreProgress', run: id, done, now: timestamp(this.options.clock) });
      if (done >= run.rescore.total) return;
    }
  }

  /** Scores the rows again and writes them, an iteration's at a time. */
  private async rescoreRows(run: Run, rows: readonly RowRef[]): Promise<void> {
    const { results, readModel, intake, scoring, limits } = this.options;
    const scorer = scoring.scorerOf(run);
    if (!scorer) return;
    // Its job's agent changed (or was taken from the job) since the rescoring began: it stops here (logged) and resumes at the next start.
    if (scorer instanceof ScorerUnusable) throw scorer;
    const byIteration = new Map<string, ResolvedRow[]>();
    for (const ref of rows) {
      const table = results.store.table(ref.iteration);
      const record = table && results.store.row(ref.iteration, table.roster, ref.index, ref.attempt);
      if (!record || record.status !== 'ok') continue;
      const output = JSON.parse(record.output) as unknown;
      const scored = scoring.score(run, scorer, ref.index, output, record.trace_id);
      // Figures a row cannot hold (its agent's spec changed since): the row keeps its old scores, as below.
      if (scored instanceof ScoreOutOfBounds) continue;
      const input = { ...record, ...scored, datapoint: undefined, output } as unknown as ResultInput;
      const resolved = resolveRowAt(ref.index, ref.attempt, input, limits);
      // A row the scoring cannot write (more dimensions than a row holds) keeps its old scores.
      if (!('row' in resolved)) continue;
      const list = byIteration.get(ref.iteration) ?? [];
      list.push(resolved.row);
      byIteration.set(ref.iteration, list);
    }
    for (const [id, resolved] of byIteration) {
      const iteration = readModel.iterations.get(id);
      const table = results.store.table(id);
      if (iteration && table) await intake.writeForRun(run.id, iteration, table.roster, resolved);
    }
  }

  private runOf(id: string): Run | undefined {
    return this.options.readModel.runStates.get(id)?.run;
  }

  private async ask(run: Run, command: Extract<RunCommand, { type: 'StartRescore' | 'RescoreProgress' }>): Promise<void> {
    await this.options.registry.ask(this.options.registry.actor('job', run.job), [run.project], command);
  }
}
