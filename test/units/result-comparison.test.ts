// The comparison of two candidates' results, as pure functions of their columns: what is paired,
// the verdict's rule, the flips, the datapoints listed as moved, what makes two iterations
// incomparable, and each paired datapoint's change. (Every figure is checked against scipy by
// test/http/results-reference.test.ts; these say what the rules are.)
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import type { Roster } from '../../src/domain/result-batch.ts';
import { storedRowOf, type StoredRow } from '../../src/domain/result-row.ts';
import { ResultTable } from '../../src/results/result-table.ts';
import { pairChanges, pairedDatapoints } from '../../src/views/paired-datapoints.ts';
import { compareResults, incomparability, verdictOf, type ComparisonSettings } from '../../src/views/result-comparison.ts';

const settings: ComparisonSettings = { confidence: 0.95, pairedMin: 10, listedMax: 3 };
const roster = (size: number, dataset = 'dataset-1', version = 1): Roster => ({
  dataset, agent: 'agent-1', version, ids: Array.from({ length: size }, (_, i) => `dp-${i}`), orders: Array.from({ length: size }, (_, i) => 10 * i),
});

type Row = [index: number, score: number | null, fields?: Partial<StoredRow>];

function table(version: Roster, rows: Row[]): ResultTable {
  const made = new ResultTable(version, 100);
  const attempts = new Map<number, number>();
  for (const [index, score, fields = {}] of rows) {
    const attempt = attempts.get(index) ?? 0;
    attempts.set(index, attempt + 1);
    made.put(index, attempt, storedRowOf({ score, created_at: 0, updated_at: 0, ...fields }));
  }
  return made;
}

const compare = (version: Roster, from: ResultTable, to: ResultTable, overrides: Partial<ComparisonSettings> = {}) => {
  const { comparison } = compareResults(
    { from: from.columns(), to: to.columns(), orders: Float64Array.from(version.orders), dataset: { id: version.dataset, version: version.version } },
    { ...settings, ...overrides },
  );
  if (!comparison.comparable) throw new Error(comparison.reason);
  return comparison;
};

test('only datapoints scored on both sides are paired; the others are counted, never imputed; errors do not score', () => {
  const version = roster(6);
  const from = table(version, [[0, 0.5], [1, 0.5], [2, 0.5], [3, null, { status: 'error' }], [5, 1]]);
  const to = table(version, [[0, 0.75], [1, 0.25], [3, 1], [4, 1], [5, 0.2, { status: 'error' }]]);
  const comparison = compare(version, from, to);
  assert.equal([comparison.n_paired, comparison.missing_in_from, comparison.missing_in_to], [2, 2, 2]);
  assert.equal([comparison.score.mean_from, comparison.score.mean_to, comparison.score.delta], [0.5, 0.5, 0]);
});

test("a side's attempts of a datapoint are averaged first: the datapoint counts once", () => {
  const version = roster(2);
  const from = table(version, [[0, 0], [0, 1], [0, 0.5], [1, 0.5]]);
  const to = table(version, [[0, 0.5], [1, 1], [1, 0]]);
  const comparison = compare(version, from, to);
  assert.equal([comparison.n_paired, comparison.score.delta], [2, 0]);
});

test('the verdict: under 10 paired is insufficient; else improved or regressed when the interval excludes 0', () => {
  const score = (delta: number, low: number, high: number) => ({
    mean_from: 0, mean_to: delta, delta, se: 0.01, ci: { low, high }, ci_bootstrap: null, p_value: 0.5, wilcoxon_p_value: null, correlation: null,
  });
  assert.is(verdictOf(9, score(0.5, 0.4, 0.6), 10), 'insufficient_data');
  assert.is(verdictOf(10, score(0.5, 0.4, 0.6), 10), 'improved');
  assert.is(verdictOf(10, score(-0.5, -0.6, -0.4), 10), 'regressed');
  assert.is(verdictOf(10, score(0.1, -0.05, 0.25), 10), 'no_detectable_difference');
  assert.is(verdictOf(10, score(0.1, 0, 0.2), 10), 'no_detectable_difference', 'an interval that touches 0 holds it');
  const version = roster(12);
  const from = table(version, version.ids.map((_, i): Row => [i, 0.5]));
  const better = table(version, version.ids.map((_, i): Row => [i, 0.6 + (i % 3) / 100]));
  assert.is(compare(version, from, better).verdict, 'improved');
  assert.is(compare(version, better, from).verdict, 'regressed');
  assert.is(compare(version, from, from).verdict, 'no_detectable_difference');
});

test('flips are counted over paired datapoints with a verdict on both sides, with McNemar on them', () => {
  const version = roster(5);
  const pass = (passed: boolean | null): Partial<StoredRow> => ({ passed });
  const from = table(version, [[0, 1, pass(true)], [1, 1, pass(true)], [2, 0, pass(false)], [3, 1, pass(null)], [4, 1, pass(true)]]);
  const to = table(version, [[0, 0, pass(false)], [1, 1, pass(true)], [2, 1, pass(true)], [3, 1, pass(true)]]);
  const { passed } = compare(version, from, to);
  assert.equal(passed, { n: 3, pass_rate_from: 2 / 3, pass_rate_to: 2 / 3, pass_to_fail: 1, fail_to_pass: 1, mcnemar_p_value: 1, mcnemar_mid_p_value: 1 });
  assert.is(compare(version, table(version, [[0, 1]]), table(version, [[0, 1]])).passed, null);
});

test('the largest drops and rises are listed, largest first, ties by datapoint order, at most listedMax of each', () => {
  const version = roster(6);
  const from = table(version, [[0, 1], [1, 1], [2, 1], [3, 0], [4, 0], [5, 0.5]]);
  const to = table(version, [[0, 0.5], [1, 0], [2, 0.5], [3, 0.25], [4, 1], [5, 0.5]]);
  const comparison = compare(version, from, to);
  assert.equal(comparison.regressions.map((moved) => [moved.datapoint_order, moved.delta]), [[10, -1], [0, -0.5], [20, -0.5]]);
  assert.equal(comparison.improvements.map((moved) => [moved.datapoint_order, moved.delta]), [[40, 1], [30, 0.25]]);
});

test('results of different versions, or a side without results, are not comparable, and say why', () => {
  assert.is(incomparability(roster(1), roster(1)), null);
  assert.is(incomparability(undefined, roster(1)), 'the first iteration has no results');
  assert.is(incomparability(roster(1), undefined), 'the second iteration has no results');
  assert.is(incomparability(undefined, undefined), 'neither iteration has results');
  assert.is(incomparability(roster(1, 'a', 3), roster(1, 'b', 4)), 'different dataset versions: 3 and 4');
  assert.is(incomparability(roster(1, 'a', 1), roster(1, 'b', 1)), 'different datasets: a and b (version 1 of two agents)');
});

test('every datapoint scored on either side has a change: a flip outranks the sign of its delta', () => {
  const version = roster(7);
  const pass = (passed: boolean | null): Partial<StoredRow> => ({ passed });
  const from = table(version, [[0, 0.2], [1, 0.8], [2, 0.5], [3, 0.9, pass(true)], [4, 0.1, pass(false)], [5, 0.5]]);
  const to = table(version, [[0, 0.6], [1, 0.3], [2, 0.5], [3, 0.95, pass(false)], [4, 0.05, pass(true)], [6, 0.5]]);
  const pairs = pairedDatapoints(from.columns(), to.columns());
  assert.equal([...pairs.index], [0, 1, 2, 3, 4, 5, 6]);
  assert.equal([...pairs.change].map((code) => pairChanges[code]), ['improved', 'regressed', 'unchanged', 'pass_to_fail', 'fail_to_pass', 'only_from', 'only_to']);
  assert.ok(Number.isNaN(pairs.scoreTo[5]!) && Number.isNaN(pairs.scoreFrom[6]!));
});

test.run();
