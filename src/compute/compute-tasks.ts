// The work heavy enough to move off the event loop, as plain-data tasks (a comparison's bootstrap
// is a task of its own per chunk of resamples, so that one comparison spreads over every worker): the same pure function
// answers a task in place or on a worker thread (compute-pool.ts decides which). Tasks carry only
// data that survives a structured clone (typed arrays, strings, numbers), and answers the same.
import type { Datapoint } from '../domain/records.ts';
import type { ResultColumns } from '../views/result-columns.ts';
import { bootstrapChunkMeans } from '../stats/bootstrap.ts';
import { LruCache } from '../views/lru-cache.ts';
import { diffDatapoints, type DatasetDiff } from '../views/dataset-diff.ts';
import { codeDiff, type CodeDiffLimits, type CodeDiffSide } from '../views/iteration-compare.ts';
import { pairedDatapoints, type PairedDatapoints } from '../views/paired-datapoints.ts';
import { compareResults, type ComparisonInput, type ComparisonSettings, type ResultsComparison } from '../views/result-comparison.ts';
import { summarize, type SummaryFigures, type SummaryLimits } from '../views/result-summary.ts';
import { protobufOfOtlpJson } from '../traces/otlp.ts';

/** A dataset version's datapoints as JSON text (the text the service keeps of them anyway). */
export interface DatapointsText {
  id: string;
  text: string;
}

export type ComputeTask =
  | { kind: 'summary'; columns: ResultColumns; limits: SummaryLimits }
  | { kind: 'compare'; input: ComparisonInput; settings: ComparisonSettings }
  | { kind: 'bootstrap'; values: Float64Array; chunk: number; count: number; seed: number }
  | { kind: 'paired'; from: ResultColumns; to: ResultColumns }
  | { kind: 'diff'; from: DatapointsText; to: DatapointsText }
  | { kind: 'codeDiff'; from: CodeDiffSide; to: CodeDiffSide; limits: CodeDiffLimits }
  | { kind: 'otlpJson'; body: Uint8Array };

export interface ComputeAnswers {
  summary: SummaryFigures;
  compare: { comparison: ResultsComparison; differences: Float64Array };
  bootstrap: Float64Array;
  paired: PairedDatapoints;
  diff: DatasetDiff;
  codeDiff: string | null;
  otlpJson: { bytes: Uint8Array } | { error: string };
}

export type TaskOf<K extends ComputeTask['kind']> = Extract<ComputeTask, { kind: K }>;

/**
 * What each task is expected to cost on this kind of machine, in microseconds: what decides that
 * it runs on a worker thread (measured here: a bootstrap draw 2 to 5 ns by host and load, counted
 * at the slow end; a datapoint's digest and diff ~10 us, a summary ~0.2 us per row, a
 * comparison's paired figures ~0.5 us per row; its bootstrap is tasks of its own).
 */
export function expectedMicros(task: ComputeTask): number {
  switch (task.kind) {
    case 'summary':
      return summaryMicros(task.columns.rows, task.columns.datapoints);
    case 'compare':
      return 0.5 * (task.input.from.rows + task.input.to.rows);
    case 'bootstrap':
      return 0.005 * task.values.length * task.count;
    case 'paired':
      return 0.3 * (task.from.rows + task.to.rows) + 0.2 * task.from.datapoints;
    case 'diff':
      // About one datapoint per 200 characters of JSON.
      return (10 * (task.from.text.length + task.to.text.length)) / 200;
    case 'codeDiff':
      // jsdiff: ~0.35 us a character of both sides (700 ms for 1 MB each), whether or not it gives up.
      return 0.35 * ((task.from.code?.length ?? 0) + (task.to.code?.length ?? 0));
    case 'otlpJson':
      // JSON.parse and protobufjs's JSON mapping and encoding: ~30 ns a byte (150 ms for a 10,000-span export).
      return 0.03 * task.body.byteLength;
  }
}

/** What a summary of a table of `rows` results over `datapoints` datapoints is expected to cost. */
export function summaryMicros(rows: number, datapoints: number): number {
  return 0.2 * rows + 0.05 * datapoints;
}

/** Parsed datapoints of the versions diffed lately: datasets never change, so they stay right. */
const parsed = new LruCache<string, Datapoint[]>(8);

export function runTask<K extends ComputeTask['kind']>(task: TaskOf<K>): ComputeAnswers[K];
export function runTask(task: ComputeTask): ComputeAnswers[keyof ComputeAnswers] {
  switch (task.kind) {
    case 'summary':
      return summarize(task.columns, task.limits);
    case 'compare':
      return compareResults(task.input, task.settings);
    case 'bootstrap':
      return bootstrapChunkMeans(task.values, task.chunk, task.count, task.seed);
    case 'paired':
      return pairedDatapoints(task.from, task.to);
    case 'diff': {
      const datapoints = ({ id, text }: DatapointsText) => parsed.get(id, () => JSON.parse(text) as Datapoint[]);
      return diffDatapoints(datapoints(task.from), datapoints(task.to));
    }
    case 'codeDiff':
      return codeDiff(task.from, task.to, task.limits);
    case 'otlpJson':
      return protobufOfOtlpJson(task.body);
  }
}
