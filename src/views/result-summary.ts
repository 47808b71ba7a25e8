// What one iteration's results add up to: coverage of its version's datapoints, the mean score
// with its t interval over per-datapoint means, the pass rate with Wilson's interval over
// datapoints (never over attempts), and each numeric dimension the same way as the score.
// Every datapoint is exactly one of: scored (an ok result), errored (results, all errors) or
// missing (no result).
import type { Roster } from '../domain/result-batch.ts';
import type { ResultColumns } from './result-columns.ts';
import { meanWithInterval, wilsonInterval, type Interval } from '../stats/intervals.ts';
import { datapointScores, dimensionMeans, present, verdictFailed, verdictPassed } from './datapoint-scores.ts';

/** The confidence of the summary's intervals (`*_ci95`). */
export const summaryConfidence = 0.95;

export interface DimensionSummary {
  name: string;
  n: number;
  mean: number | null;
  ci95: Interval | null;
}

export interface ResultSummary {
  dataset: { id: string; version: number } | null;
  datapoints: number;
  results: number;
  error_results: number;
  scored: number;
  errors: number;
  missing: { count: number; datapoints: string[] };
  attempts_max: number;
  mean_score: number | null;
  score_ci95: Interval | null;
  passed: number;
  failed: number;
  pass_rate: number | null;
  pass_rate_ci95: Interval | null;
  dimensions: DimensionSummary[];
}

export interface SummaryLimits {
  /** Missing datapoints named in a summary. */
  missingNamedMax: number;
}

/** A summary as computed from columns alone: the missing datapoints by index in the version. */
export type SummaryFigures = Omit<ResultSummary, 'dataset' | 'missing'> & { missing: { count: number; indexes: number[] } };

/** The summary of an iteration that has no results yet. */
export const emptySummary: ResultSummary = {
  dataset: null,
  datapoints: 0,
  results: 0,
  error_results: 0,
  scored: 0,
  errors: 0,
  missing: { count: 0, datapoints: [] },
  attempts_max: 0,
  mean_score: null,
  score_ci95: null,
  passed: 0,
  failed: 0,
  pass_rate: null,
  pass_rate_ci95: null,
  dimensions: [],
};

export function summarize(columns: ResultColumns, limits: SummaryLimits): SummaryFigures {
  const scores = datapointScores(columns);
  let scored = 0;
  let errors = 0;
  let attemptsMax = 0;
  let passed = 0;
  let failed = 0;
  const missing: number[] = [];
  let missingCount = 0;
  for (let index = 0; index < columns.datapoints; index++) {
    const results = scores.results[index]!;
    attemptsMax = Math.max(attemptsMax, results);
    if (results === 0) {
      if (missingCount++ < limits.missingNamedMax) missing.push(index);
    } else if (scores.ok[index] === 0) errors++;
    else scored++;
    if (scores.verdict[index] === verdictPassed) passed++;
    else if (scores.verdict[index] === verdictFailed) failed++;
  }
  // Two arrays of the datapoints' length serve every figure below: one for a dimension's means,
  // one for the means present (fresh typed arrays of 100,000 values cost page faults each).
  const means = new Float64Array(columns.datapoints);
  const kept = new Float64Array(columns.datapoints);
  const score = meanWithInterval(present(scores.mean, kept), summaryConfidence);
  const judged = passed + failed;
  return {
    datapoints: columns.datapoints,
    results: columns.rows,
    error_results: columns.errorRows,
    scored,
    errors,
    missing: { count: missingCount, indexes: missing },
    attempts_max: attemptsMax,
    mean_score: score.mean,
    score_ci95: score.ci,
    passed,
    failed,
    pass_rate: judged === 0 ? null : passed / judged,
    pass_rate_ci95: wilsonInterval(passed, judged, summaryConfidence),
    dimensions: Object.keys(columns.dimensions).sort().map((name) => {
      const estimate = meanWithInterval(present(dimensionMeans(columns, name, means), kept), summaryConfidence);
      return { name, n: estimate.n, mean: estimate.mean, ci95: estimate.ci };
    }),
  };
}

/** The summary of a version's results: its figures with the version and the missing datapoints' ids. */
export function summaryOf(figures: SummaryFigures, roster: Roster): ResultSummary {
  const { missing, ...rest } = figures;
  return {
    ...rest,
    dataset: { id: roster.dataset, version: roster.version },
    missing: { count: missing.count, datapoints: missing.indexes.map((index) => roster.ids[index]!) },
  };
}
