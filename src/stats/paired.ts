// Paired comparison of two candidates scored on the same datapoints: over d_i = to_i - from_i,
// the paired t (as scipy.stats.ttest_rel(to, from)), the Wilcoxon signed-rank p-value (rule in
// signed-rank.ts) and Pearson's r of the scores. Pure; the t distribution comes from @stdlib.
import { tCdf } from './distributions.ts';
import { tInterval, assertConfidence, type Interval } from './intervals.ts';
import { crossDeviations, meanOf, sampleSd, squaredDeviations } from './moments.ts';
import { signedRankPValue } from './signed-rank.ts';

export interface PairedEstimate {
  n: number;
  mean_from: number | null;
  mean_to: number | null;
  delta: number | null;
  se: number | null;
  ci: Interval | null;
  p_value: number | null;
  wilcoxon_p_value: number | null;
  correlation: number | null;
}

/** Paired comparison of to[i] - from[i]: paired t (delta, se, interval, p), Wilcoxon signed-rank p, Pearson r. */
export function pairedEstimate(from: ArrayLike<number>, to: ArrayLike<number>, confidence: number): PairedEstimate {
  assertConfidence(confidence);
  if (from.length !== to.length) {
    throw new RangeError(`paired scores must have equal lengths, got ${from.length} and ${to.length}`);
  }
  const n = from.length;
  const none = { se: null, ci: null, p_value: null, wilcoxon_p_value: null, correlation: null };
  if (n === 0) return { n, mean_from: null, mean_to: null, delta: null, ...none };
  const differences = new Float64Array(n);
  for (let i = 0; i < n; i++) differences[i] = to[i]! - from[i]!;
  // The mean of the differences, not mean_to - mean_from: it is the mean the t test is about.
  const delta = meanOf(differences);
  const means = { n, mean_from: meanOf(from), mean_to: meanOf(to), delta };
  if (n === 1) return { ...means, ...none }; // one pair has no spread to test against
  const se = sampleSd(differences) / Math.sqrt(n);
  return {
    ...means,
    se,
    ci: tInterval(delta, se, n - 1, confidence),
    p_value: pairedTPValue(delta, se, n - 1),
    wilcoxon_p_value: signedRankPValue(differences),
    correlation: pearson(from, to),
  };
}

/** Two-sided p of t = delta / se with `df` degrees of freedom. */
function pairedTPValue(delta: number, se: number, df: number): number {
  // Documented choice: differences with no spread leave no doubt (scipy gives nan).
  if (se === 0) return delta === 0 ? 1 : 0;
  return 2 * tCdf(-Math.abs(delta / se), df);
}

/** Pearson's r of at least two pairs; null when either side is constant (r is undefined). */
function pearson(x: ArrayLike<number>, y: ArrayLike<number>): number | null {
  // Deviations of equal values are exact zeros (moments.ts), so 0 means constant.
  const spreadX = squaredDeviations(x);
  const spreadY = squaredDeviations(y);
  if (spreadX === 0 || spreadY === 0) return null;
  const r = crossDeviations(x, y) / (Math.sqrt(spreadX) * Math.sqrt(spreadY));
  return Math.max(-1, Math.min(1, r)); // rounding can step just past ±1
}
