// One iteration's results reduced to one value per datapoint, the unit every figure counts in:
// several attempts of a datapoint are averaged first, so a datapoint counts once however often it
// was run (Miller, "Adding Error Bars to Evals", 2024). Only results with status `ok` count
// towards scores, passes and dimensions; errors are counted apart. Attempts are summed in attempt
// order, so the same rows always give the same figures to the last bit.
import { rowFlags, type ResultColumns } from './result-columns.ts';

/** A datapoint's pass verdict: most of its attempts passed (a tie does not), among those that say. */
export const verdictNone = -1;
export const verdictFailed = 0;
export const verdictPassed = 1;

export interface DatapointScores {
  /** Mean score of each datapoint's ok attempts that have a score; NaN where there are none. */
  readonly mean: Float64Array;
  /** Each datapoint's pass verdict (verdictNone where no ok attempt says). */
  readonly verdict: Int8Array;
  /** Results per datapoint, errors included. */
  readonly results: Int32Array;
  /** Results with status `ok` per datapoint. */
  readonly ok: Int32Array;
}

export function datapointScores(columns: ResultColumns): DatapointScores {
  const count = columns.datapoints;
  const mean = new Float64Array(count);
  const verdict = new Int8Array(count);
  const results = new Int32Array(count);
  const ok = new Int32Array(count);
  const { head, next, score: scores, flags } = columns;
  for (let index = 0; index < count; index++) {
    let sum = 0;
    let scored = 0;
    let passes = 0;
    let judged = 0;
    let rows = 0;
    let okRows = 0;
    for (let slot = head[index]!; slot >= 0; slot = next[slot]!) {
      rows++;
      const flag = flags[slot]!;
      if (flag & rowFlags.error) continue;
      okRows++;
      const score = scores[slot]!;
      if (score === score) {
        // Not NaN: the row has a score.
        sum += score;
        scored++;
      }
      if (flag & rowFlags.passedKnown) {
        judged++;
        if (flag & rowFlags.passedTrue) passes++;
      }
    }
    results[index] = rows;
    ok[index] = okRows;
    mean[index] = scored > 0 ? sum / scored : NaN;
    verdict[index] = judged === 0 ? verdictNone : 2 * passes > judged ? verdictPassed : verdictFailed;
  }
  return { mean, verdict, results, ok };
}

/** A numeric dimension's mean per datapoint over the ok attempts that have it; NaN where none do. */
export function dimensionMeans(columns: ResultColumns, name: string, into = new Float64Array(columns.datapoints)): Float64Array {
  const count = columns.datapoints;
  const means = into.subarray(0, count).fill(NaN);
  const { head, next, flags } = columns;
  const values = columns.dimensions[name];
  if (!values) return means;
  for (let index = 0; index < count; index++) {
    let sum = 0;
    let n = 0;
    for (let slot = head[index]!; slot >= 0; slot = next[slot]!) {
      if (flags[slot]! & rowFlags.error) continue;
      const value = values[slot]!;
      if (value !== value) continue; // NaN: the row has no such dimension
      sum += value;
      n++;
    }
    if (n > 0) means[index] = sum / n;
  }
  return means;
}

/** The values that are not NaN, in datapoint order: a view of the start of `into` (a new array unless given). */
export function present(values: Float64Array, into = new Float64Array(values.length)): Float64Array {
  let at = 0;
  for (let i = 0; i < values.length; i++) {
    const value = values[i]!;
    if (value === value) into[at++] = value; // not NaN
  }
  return into.subarray(0, at);
}
