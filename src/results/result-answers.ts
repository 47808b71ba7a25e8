// What results add up to, as the routes answer it: an iteration's summary, two iterations'
// comparison and their paired datapoints. The computations are the pure views of src/views/; this
// module runs them on the compute pool (off the event loop when heavy), keeps each answer while
// both tables are unchanged (a table's version changes with every write), shares one computation
// among concurrent requests for the same answer, and adds what needs the store (datapoint ids,
// traces) after the computation.
import type { ComputePool } from '../compute/compute-pool.ts';
import { summaryMicros } from '../compute/compute-tasks.ts';
import type { Roster } from '../domain/result-batch.ts';
import { bootstrapChunkSizes, percentileOfChunks } from '../stats/bootstrap.ts';
import type { Interval } from '../stats/intervals.ts';
import { comparisonRules } from '../views/comparison-rules.ts';
import { keptAnswer, LruCache } from '../views/lru-cache.ts';
import type { PairedDatapoints } from '../views/paired-datapoints.ts';
import { incomparability, type Moved, type ResultsComparison } from '../views/result-comparison.ts';
import { emptySummary, summaryOf, type ResultSummary } from '../views/result-summary.ts';
import type { ResultStore } from './result-store.ts';
import type { ResultTable } from './result-table.ts';

export interface ResultAnswerLimits {
  summaryCacheEntriesMax: number;
  comparisonCacheEntriesMax: number;
}

/** Missing datapoints a summary names. */
const missingNamedMax = 100;

/** A moved datapoint as a comparison answers it: with its id and the trace of each side. */
export type MovedAnswer = Omit<Moved, 'index'> & { datapoint: string; trace_id_from: string | null; trace_id_to: string | null };
export type ComparisonAnswer =
  | Extract<ResultsComparison, { comparable: false }>
  | (Omit<Extract<ResultsComparison, { comparable: true }>, 'regressions' | 'improvements'> & { regressions: MovedAnswer[]; improvements: MovedAnswer[] });

/** Two iterations' paired datapoints, with what a page needs to name them. */
export interface Pairs {
  from: string;
  to: string;
  roster: Roster;
  data: PairedDatapoints;
  /** Changes whenever either side's results do. */
  version: string;
}

export class ResultAnswers {
  private readonly summaries: LruCache<string, Promise<ResultSummary>>;
  private readonly comparisons: LruCache<string, Promise<ComparisonAnswer>>;
  private readonly pairs: LruCache<string, Promise<Pairs>>;

  constructor(
    private readonly store: ResultStore,
    private readonly compute: ComputePool,
    limits: ResultAnswerLimits,
  ) {
    this.summaries = new LruCache(limits.summaryCacheEntriesMax);
    this.comparisons = new LruCache(limits.comparisonCacheEntriesMax);
    this.pairs = new LruCache(limits.comparisonCacheEntriesMax);
  }

  /**
   * Readies a worker thread once some iteration holds enough results for its summary to be
   * offloaded (its comparisons are heavier still): at start, and after each durable batch.
   */
  prepare(iteration?: string): void {
    const tables = iteration === undefined ? this.store.allTables() : [this.store.table(iteration)];
    for (const table of tables) {
      if (table && this.compute.offloads(summaryMicros(table.rows, table.datapoints))) return this.compute.keepReady();
    }
  }

  summary(iteration: string): Promise<ResultSummary> {
    return this.summaryOf(iteration, false);
  }

  /**
   * The summaries of several iterations, admitted together: when the compute queue cannot take
   * every one that is heavy and not kept, none is computed (503), rather than some of them.
   */
  summariesOf(iterations: readonly string[]): Promise<ResultSummary[]> {
    const heavy = iterations.filter((iteration) => {
      const table = this.store.table(iteration);
      return table && !this.summaries.has(this.summaryKey(iteration, table)) && this.compute.offloads(summaryMicros(table.rows, table.datapoints));
    });
    this.compute.admit(heavy.length);
    return Promise.all(iterations.map((iteration) => this.summaryOf(iteration, true)));
  }

  comparison(from: string, to: string, confidence: number): Promise<ComparisonAnswer> {
    const tables = this.tablesOf(from, to);
    if ('reason' in tables) return Promise.resolve({ comparable: false, reason: tables.reason });
    const key = `${from} ${tables.from.version} ${to} ${tables.to.version} ${confidence}`;
    return keptAnswer(this.comparisons, key, () => {
      const { roster } = tables.from;
      const input = {
        from: tables.from.columns(),
        to: tables.to.columns(),
        orders: Float64Array.from(roster.orders),
        dataset: { id: roster.dataset, version: roster.version },
      };
      const settings = { confidence, pairedMin: comparisonRules.pairedMin, listedMax: comparisonRules.listedMax };
      return this.compute.run({ kind: 'compare', input, settings }).then(async ({ comparison, differences }) => {
        if (comparison.comparable) comparison.score.ci_bootstrap = await this.bootstrap(differences, confidence);
        return this.withTraces(comparison, from, to, roster);
      });
    });
  }

  /** The paired datapoints of two comparable iterations; null when they are not comparable. */
  paired(from: string, to: string): Promise<Pairs | null> {
    const tables = this.tablesOf(from, to);
    if ('reason' in tables) return Promise.resolve(null);
    const version = `${tables.from.version} ${tables.to.version}`;
    return keptAnswer(this.pairs, `${from} ${to} ${version}`, () =>
      this.compute
        .run({ kind: 'paired', from: tables.from.columns(), to: tables.to.columns() })
        .then((data) => ({ from, to, roster: tables.from.roster, data, version })),
    );
  }

  /** The trace of a datapoint's run on one side: its first ok attempt with a trace, else any with one. */
  traceOf(iteration: string, roster: Roster, index: number): string | null {
    let any: string | null = null;
    for (const row of this.store.rowsOfDatapoint(iteration, roster, index)) {
      if (row.trace_id === null) continue;
      if (row.status === 'ok') return row.trace_id;
      any ??= row.trace_id;
    }
    return any;
  }

  /** A summary, computed unless kept; `admitted`: its heavy work was let into the compute queue already. */
  private summaryOf(iteration: string, admitted: boolean): Promise<ResultSummary> {
    const table = this.store.table(iteration);
    if (!table) return Promise.resolve(emptySummary);
    const { roster } = table;
    return keptAnswer(this.summaries, this.summaryKey(iteration, table), () => {
      const task = { kind: 'summary' as const, columns: table.columns(), limits: { missingNamedMax } };
      return (admitted ? this.compute.runPart(task) : this.compute.run(task)).then((figures) => summaryOf(figures, roster));
    });
  }

  private summaryKey(iteration: string, table: ResultTable): string {
    return `${iteration} ${table.version}`;
  }

  /**
   * The percentile bootstrap interval of the mean difference, its chunks of resamples computed as
   * tasks of their own (spread over the worker threads when heavy); null under two values.
   */
  private async bootstrap(differences: Float64Array, confidence: number): Promise<Interval | null> {
    if (differences.length < 2) return null;
    const { bootstrapResamples, bootstrapSeed } = comparisonRules;
    const chunks = bootstrapChunkSizes(bootstrapResamples).map((count, chunk) =>
      this.compute.runPart({ kind: 'bootstrap', values: differences, chunk, count, seed: bootstrapSeed }),
    );
    return percentileOfChunks(await Promise.all(chunks), confidence);
  }

  private tablesOf(from: string, to: string): { from: ResultTable; to: ResultTable } | { reason: string } {
    const fromTable = this.store.table(from);
    const toTable = this.store.table(to);
    const reason = incomparability(fromTable?.roster, toTable?.roster);
    return reason !== null ? { reason } : { from: fromTable!, to: toTable! };
  }

  private withTraces(comparison: ResultsComparison, from: string, to: string, roster: Roster): ComparisonAnswer {
    if (!comparison.comparable) return comparison;
    const named = ({ index, ...moved }: Moved): MovedAnswer => ({
      datapoint: roster.ids[index]!,
      ...moved,
      trace_id_from: this.traceOf(from, roster, index),
      trace_id_to: this.traceOf(to, roster, index),
    });
    return { ...comparison, regressions: comparison.regressions.map(named), improvements: comparison.improvements.map(named) };
  }
}
