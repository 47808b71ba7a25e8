// One iteration's results as the views read them in bulk (summaries, comparisons, paired
// datapoints): plain data, so that the same pure functions read it in place or on a worker thread
// (which gets a copy). The results' in-memory table (src/results/result-table.ts) hands it out.
export { rowFlags } from '../domain/result-row.ts';

/**
 * A datapoint's rows are the chain head[index], next[slot], ... (-1 ends it), in attempt order;
 * each slot's fields are in the columns below.
 */
export interface ResultColumns {
  /** Datapoints of the version (head's length). */
  readonly datapoints: number;
  readonly rows: number;
  readonly errorRows: number;
  readonly head: Int32Array;
  readonly next: Int32Array;
  /** NaN where a row has no score. */
  readonly score: Float64Array;
  /** Each row's flag bits, in the stored word's places (rowFlags names those the views read). */
  readonly flags: Uint16Array;
  /** Each numeric dimension's column (NaN where a row has none). */
  readonly dimensions: Readonly<Record<string, Float64Array>>;
}
