// Two candidates' results compared datapoint by datapoint (Miller, "Adding Error Bars to Evals",
// 2024): each side's attempts are averaged per datapoint first, the datapoints scored on both
// sides are paired, and the paired differences give the delta with its standard error and
// interval (paired t, and a percentile bootstrap of datapoints), the Wilcoxon signed-rank test,
// the correlation of the two sides, McNemar's test on pass/fail flips, and every numeric
// dimension the same way with Holm's adjustment across them. Nothing is imputed: a datapoint
// scored on one side only is counted, not paired. Results of different dataset versions are not
// comparable at all. Pure: the inputs are per-datapoint values (datapoint-scores.ts) and the
// bootstrap's seed is fixed, so the same request gives the same answer.
import type { Roster } from '../domain/result-batch.ts';
import type { ResultColumns } from './result-columns.ts';
import { holm } from '../stats/holm.ts';
import type { Interval } from '../stats/intervals.ts';
import { mcnemar } from '../stats/mcnemar.ts';
import { pairedEstimate } from '../stats/paired.ts';
import { datapointScores, dimensionMeans, verdictFailed, verdictNone, verdictPassed } from './datapoint-scores.ts';

/** What a comparison reads: both sides' results (of one version) and the version's datapoint orders. */
export interface ComparisonInput {
  readonly from: ResultColumns;
  readonly to: ResultColumns;
  readonly orders: ArrayLike<number>;
  readonly dataset: { id: string; version: number };
}

/** One side reduced to one value per datapoint (NaN: not scored; verdictNone: no pass verdict). */
interface ComparedSide {
  readonly mean: Float64Array;
  readonly verdict: Int8Array;
  readonly columns: ResultColumns;
}

/**
 * How the comparison is made: at a confidence, by the rules of comparison-rules.ts (a test may
 * ask for others). Its bootstrap interval is the caller's to add: it spreads the resamples over
 * worker threads (src/results/result-answers.ts).
 */
export interface ComparisonSettings {
  confidence: number;
  /** Fewer paired datapoints than this is insufficient data for a verdict. */
  pairedMin: number;
  /** The datapoints listed as the largest drops and rises. */
  listedMax: number;
}

export const verdicts = ['improved', 'regressed', 'no_detectable_difference', 'insufficient_data'] as const;
export type Verdict = (typeof verdicts)[number];

/** A paired datapoint whose score moved (its id and traces are added by the caller, who reads them). */
export interface Moved {
  index: number;
  datapoint_order: number;
  score_from: number;
  score_to: number;
  delta: number;
}

/**
 * The score compared. `ci` and `ci_bootstrap` are at the comparison's confidence (on the wire,
 * `ci95` and `ci95_bootstrap`, names the API kept from when it was always 95%).
 */
export interface ScoreComparison {
  mean_from: number | null;
  mean_to: number | null;
  delta: number | null;
  se: number | null;
  ci: Interval | null;
  ci_bootstrap: Interval | null;
  p_value: number | null;
  wilcoxon_p_value: number | null;
  correlation: number | null;
}

export interface PassComparison {
  n: number;
  pass_rate_from: number;
  pass_rate_to: number;
  pass_to_fail: number;
  fail_to_pass: number;
  mcnemar_p_value: number;
  mcnemar_mid_p_value: number;
}

/** A dimension compared; `ci` is at the comparison's confidence (on the wire, `ci95`). */
export interface DimensionComparison {
  name: string;
  n: number;
  delta: number | null;
  ci: Interval | null;
  p_value: number | null;
  p_value_holm: number | null;
}

export type ResultsComparison =
  | { comparable: false; reason: string }
  | {
      comparable: true;
      confidence: number;
      paired_min: number;
      dataset: { id: string; version: number };
      n_paired: number;
      missing_in_from: number;
      missing_in_to: number;
      score: ScoreComparison;
      passed: PassComparison | null;
      dimensions: DimensionComparison[];
      verdict: Verdict;
      regressions: Moved[];
      improvements: Moved[];
    };

/** Why two iterations' results cannot be compared, or null when they can. */
export function incomparability(from: Roster | undefined, to: Roster | undefined): string | null {
  if (!from && !to) return 'neither iteration has results';
  if (!from) return 'the first iteration has no results';
  if (!to) return 'the second iteration has no results';
  if (from.dataset === to.dataset) return null;
  if (from.version !== to.version) return `different dataset versions: ${from.version} and ${to.version}`;
  return `different datasets: ${from.dataset} and ${to.dataset} (version ${from.version} of two agents)`;
}

/**
 * The comparison of two sides of one version (incomparability says first whether they are), and
 * the paired differences (to - from) it was made of, for a bootstrap made apart.
 */
export function compareResults(input: ComparisonInput, settings: ComparisonSettings): { comparison: ResultsComparison; differences: Float64Array } {
  const from = sideOf(input.from);
  const to = sideOf(input.to);
  const paired: number[] = [];
  let missingInFrom = 0;
  let missingInTo = 0;
  for (let index = 0; index < input.from.datapoints; index++) {
    const inFrom = !Number.isNaN(from.mean[index]!);
    const inTo = !Number.isNaN(to.mean[index]!);
    if (inFrom && inTo) paired.push(index);
    else if (inFrom) missingInTo++;
    else if (inTo) missingInFrom++;
  }
  const scoresFrom = Float64Array.from(paired, (index) => from.mean[index]!);
  const scoresTo = Float64Array.from(paired, (index) => to.mean[index]!);
  const differences = scoresTo.map((value, i) => value - scoresFrom[i]!);
  const score = compareScores(scoresFrom, scoresTo, settings.confidence);
  const comparison: ResultsComparison = {
    comparable: true,
    confidence: settings.confidence,
    paired_min: settings.pairedMin,
    dataset: input.dataset,
    n_paired: paired.length,
    missing_in_from: missingInFrom,
    missing_in_to: missingInTo,
    score,
    passed: comparePasses(from, to, paired),
    dimensions: compareDimensions(from, to, settings.confidence),
    verdict: verdictOf(paired.length, score, settings.pairedMin),
    ...moved(input.orders, paired, scoresFrom, scoresTo, settings.listedMax),
  };
  return { comparison, differences };
}

function sideOf(columns: ResultColumns): ComparedSide {
  const { mean, verdict } = datapointScores(columns);
  return { mean, verdict, columns };
}

/** The score's paired figures; its bootstrap interval is added by the caller (null until then). */
function compareScores(scoresFrom: Float64Array, scoresTo: Float64Array, confidence: number): ScoreComparison {
  const estimate = pairedEstimate(scoresFrom, scoresTo, confidence);
  return {
    mean_from: estimate.mean_from,
    mean_to: estimate.mean_to,
    delta: estimate.delta,
    se: estimate.se,
    ci: estimate.ci,
    ci_bootstrap: null,
    p_value: estimate.p_value,
    wilcoxon_p_value: estimate.wilcoxon_p_value,
    correlation: estimate.correlation,
  };
}

/** Passes compared over the paired datapoints with a verdict on both sides; null when there are none. */
function comparePasses(from: ComparedSide, to: ComparedSide, paired: readonly number[]): PassComparison | null {
  let n = 0;
  let passedFrom = 0;
  let passedTo = 0;
  let passToFail = 0;
  let failToPass = 0;
  for (const index of paired) {
    const before = from.verdict[index]!;
    const after = to.verdict[index]!;
    if (before === verdictNone || after === verdictNone) continue;
    n++;
    if (before === verdictPassed) passedFrom++;
    if (after === verdictPassed) passedTo++;
    if (before === verdictPassed && after === verdictFailed) passToFail++;
    if (before === verdictFailed && after === verdictPassed) failToPass++;
  }
  if (n === 0) return null;
  const test = mcnemar(passToFail, failToPass);
  return {
    n,
    pass_rate_from: passedFrom / n,
    pass_rate_to: passedTo / n,
    pass_to_fail: passToFail,
    fail_to_pass: failToPass,
    mcnemar_p_value: test.p_value,
    mcnemar_mid_p_value: test.mid_p_value,
  };
}

/** Every dimension both sides have, paired over the datapoints that have it on both; Holm across them. */
function compareDimensions(from: ComparedSide, to: ComparedSide, confidence: number): DimensionComparison[] {
  const names = Object.keys(from.columns.dimensions).filter((name) => Object.hasOwn(to.columns.dimensions, name)).sort();
  const estimates = names.map((name) => {
    const valuesFrom = dimensionMeans(from.columns, name);
    const valuesTo = dimensionMeans(to.columns, name);
    const a: number[] = [];
    const b: number[] = [];
    for (let index = 0; index < valuesFrom.length; index++) {
      if (Number.isNaN(valuesFrom[index]!) || Number.isNaN(valuesTo[index]!)) continue;
      a.push(valuesFrom[index]!);
      b.push(valuesTo[index]!);
    }
    return { name, estimate: pairedEstimate(a, b, confidence) };
  });
  const adjusted = holm(estimates.map(({ estimate }) => estimate.p_value));
  return estimates.map(({ name, estimate }, i) => ({
    name,
    n: estimate.n,
    delta: estimate.delta,
    ci: estimate.ci,
    p_value: estimate.p_value,
    p_value_holm: adjusted[i]!,
  }));
}

/**
 * The verdict: fewer than `pairedMin` paired datapoints is insufficient data; otherwise improved
 * or regressed when the paired t interval of the delta (at the asked confidence) excludes 0, and
 * no detectable difference when it holds 0.
 */
export function verdictOf(paired: number, score: ScoreComparison, pairedMin: number): Verdict {
  if (paired < pairedMin || score.delta === null || score.ci === null) return 'insufficient_data';
  if (score.ci.low > 0) return 'improved';
  if (score.ci.high < 0) return 'regressed';
  return 'no_detectable_difference';
}

/** The largest drops (most negative delta first) and rises (largest first); ties by datapoint order. */
function moved(orders: ArrayLike<number>, paired: readonly number[], scoresFrom: Float64Array, scoresTo: Float64Array, listedMax: number) {
  const all: Moved[] = paired.map((index, i) => ({
    index,
    datapoint_order: orders[index]!,
    score_from: scoresFrom[i]!,
    score_to: scoresTo[i]!,
    delta: scoresTo[i]! - scoresFrom[i]!,
  }));
  const byIndex = (a: Moved, b: Moved) => a.index - b.index;
  return {
    regressions: all.filter((one) => one.delta < 0).sort((a, b) => a.delta - b.delta || byIndex(a, b)).slice(0, listedMax),
    improvements: all.filter((one) => one.delta > 0).sort((a, b) => b.delta - a.delta || byIndex(a, b)).slice(0, listedMax),
  };
}
