// How results come in, whichever way they are sent: a batch posted to an iteration (all or
// nothing), or the results spans carry (each applied if it can be, never refusing the spans). Both
// find the version the rows are of, resolve the rows against it, write them inside the project's
// gate, and report each durable batch (the service announces it on the event feed).
import type { ProjectGates } from '../actors/project-gates.ts';
import type { Clock } from '../clock.ts';
import type { Limits } from '../config.ts';
import type { Dataset, JobIteration } from '../domain/records.ts';
import { invalid, invalidPk, Rejected } from '../domain/rejection.ts';
import { pinnedElsewhere, resolveAllRows, resolveRows, rosterOf, type ResolvedRow, type Roster } from '../domain/result-batch.ts';
import type { ResultInput } from '../domain/result-row.ts';
import type { ReadModel } from '../read-model.ts';
import type { SpanEvaluation } from '../traces/span-evaluation.ts';
import { canonicalUuidOf, type Validator } from '../validation/validator.ts';
import type { ResultKeeper } from './result-keeper.ts';
import type { Written } from './result-writer.ts';

export interface ResultIntakeOptions {
  results: ResultKeeper;
  readModel: ReadModel;
  gates: ProjectGates;
  clock: Clock;
  limits: Readonly<Limits>;
  /** Checks a span's row as a posted one is checked. */
  validator: Validator;
  /** Called after each durable batch (it is announced on the event feed, and what reading it needs readied). */
  written(iteration: JobIteration, written: Written): void;
}

/** What became of the results spans reported, since the service started (GET /metrics). */
export interface SpanResultCounts {
  applied: number;
  notApplied: number;
}

export class ResultIntake {
  readonly fromSpans: SpanResultCounts = { applied: 0, notApplied: 0 };

  constructor(private readonly options: ResultIntakeOptions) {}

  /**
   * The version a batch is of: the one named (the first batch pins the iteration to it: it must
   * be a dataset version of the job's live agent that `visible` accepts), else the one pinned.
   */
  rosterFor(iteration: JobIteration, named: string | null | undefined, visible: (dataset: Dataset) => boolean): Roster {
    const { results, readModel } = this.options;
    const pinned = results.store.table(iteration.id)?.roster;
    if (named === null || named === undefined) {
      if (pinned) return pinned;
      throw invalid({ dataset: ['This field is required.'] });
    }
    if (pinned) {
      if (pinned.dataset === named) return pinned;
      throw invalid({ dataset: [pinnedElsewhere(pinned)] });
    }
    const dataset = readModel.datasets.get(named);
    if (!dataset || !visible(dataset)) throw invalid({ dataset: [invalidPk(named)] });
    const agent = readModel.jobs.get(iteration.job)?.agent ?? null;
    if (agent === null || dataset.agent !== agent || !readModel.agents.get(agent)) {
      throw invalid({ dataset: ["Must be a dataset version of the job's agent."] });
    }
    return results.store.roster(dataset.id) ?? rosterOf(dataset);
  }

  /** Writes a posted batch: every row resolves or nothing is written. */
  writeAll(iteration: JobIteration, roster: Roster, inputs: readonly ResultInput[]): Promise<Written> {
    const { limits } = this.options;
    if (inputs.length > limits.resultRowsPerBatchMax) {
      throw invalid({ results: { non_field_errors: [`Ensure this field has no more than ${limits.resultRowsPerBatchMax} elements.`] } });
    }
    return this.write(iteration, roster, resolveAllRows(roster, this.options.results.store.indexOfId(roster), canonical(inputs), limits));
  }

  /** Writes rows a run resolved itself (its rescoring): the run that writes the iteration's results now may. */
  writeForRun(run: string, iteration: JobIteration, roster: Roster, rows: readonly ResolvedRow[]): Promise<Written> {
    return this.write(iteration, roster, rows, run);
  }

  /**
   * Applies the results spans report, grouped by the iteration each span links to (one of its own
   * project): rows that cannot be applied (no such iteration or datapoint, no version to pin, a
   * malformed value, a second row for the same datapoint and attempt) are counted, never refused.
   * Resolves once the rows applied are durable. `unlinked` spans reported a result without a link
   * to an iteration of their project: they are counted as not applied.
   */
  async applySpanResults(byIteration: ReadonlyMap<string, readonly SpanEvaluation[]>, unlinked: number): Promise<void> {
    this.fromSpans.notApplied += unlinked;
    await Promise.all([...byIteration].map(([id, evaluations]) => this.applyToIteration(id, evaluations)));
  }

  private async applyToIteration(id: string, evaluations: readonly SpanEvaluation[]): Promise<void> {
    const iteration = this.options.readModel.iterations.get(id);
    const rows = evaluations.map((evaluation) => evaluation.row).filter((row) => this.isWellFormed(row));
    let applied = 0;
    try {
      if (iteration && rows.length > 0) {
        const named = evaluations.find((evaluation) => evaluation.dataset !== null)?.dataset ?? null;
        const dataset = named === null ? null : (canonicalUuidOf(named) ?? named);
        const roster = this.rosterFor(iteration, dataset, (found) => found.project === iteration.project);
        const { rows: resolved } = resolveRows(roster, this.options.results.store.indexOfId(roster), canonical(rows), this.options.limits);
        if (resolved.length > 0) await this.write(iteration, roster, resolved);
        applied = resolved.length;
      }
    } catch (error) {
      if (!(error instanceof Rejected)) throw error;
    } finally {
      this.fromSpans.applied += applied;
      this.fromSpans.notApplied += evaluations.length - applied;
    }
  }

  /** Whether a span's row passes the checks a posted row passes. */
  private isWellFormed(row: ResultInput): boolean {
    try {
      this.options.validator.body('results.results-write', { results: [{ ...row }] });
      return true;
    } catch (error) {
      if (error instanceof Rejected) return false;
      throw error;
    }
  }

  /** Writes resolved rows in batches; the results' writer refuses them while a run other than `writer` writes the iteration's results. */
  private write(iteration: JobIteration, roster: Roster, rows: readonly ResolvedRow[], writer: string | null = null): Promise<Written> {
    if (rows.length > this.options.limits.resultRowsPerBatchMax) {
      // Spans of one export may report more rows than a posted batch holds: written in batches.
      const size = this.options.limits.resultRowsPerBatchMax;
      const parts = Array.from({ length: Math.ceil(rows.length / size) }, (_, i) => rows.slice(i * size, (i + 1) * size));
      return Promise.all(parts.map((part) => this.write(iteration, roster, part, writer))).then((written) => written.at(-1)!);
    }
    const { results, gates, clock } = this.options;
    const write = { iteration: iteration.id, roster, rows, nowMs: clock.nowMs(), run: writer };
    return gates.pass([iteration.project], () => results.write(write)).then((written) => {
      this.options.written(iteration, written);
      return written;
    });
  }
}

/** Datapoint ids in canonical form (a body's nested ids are not rewritten by the validator). */
function canonical(inputs: readonly ResultInput[]): ResultInput[] {
  return inputs.map((input) => {
    const id = typeof input.datapoint === 'string' ? canonicalUuidOf(input.datapoint) : undefined;
    return id === undefined || id === input.datapoint ? input : { ...input, datapoint: id };
  });
}
