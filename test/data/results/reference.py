#!/usr/bin/env python3
"""Reference figures for results per datapoint: summaries, comparisons and paired datapoints.

Regenerate from anywhere with `python3 test/data/results/reference.py`: the script writes
reference.json beside itself (pretty, keys sorted, so a rerun gives the same bytes). It takes
about half a minute, most of it replaying the bootstrap generator in plain Python. Needs Python 3,
numpy and scipy >= 1.17 (the Wilcoxon defaults). test/http/results-reference.test.ts posts every
case's rows to a running service over HTTP and holds its answers to these figures.

Each case is a dataset version of `datapoints` datapoints (the test makes datapoint i with order
2 i + 1, so that an order is never mistaken for an index) and the result rows of two iterations,
`from` and `to`, each a list of rows {datapoint (the index), attempt, score, passed, status (ok
when left out, the API's default), dimension_scores, trace_id, error} in the order they are posted (shuffled, so that posting order
is not attempt order); `prior` rows are posted first and then replaced by rows of the same
datapoint and attempt. Everything expected is computed here from the rows alone, by the rules of
docs/API.md "## Results per datapoint" and the descriptions of schemas/results/*.json, with numpy
and scipy; nothing is translated from the TypeScript. Datapoints are named by their index in
`expected` (the test puts the ids in).

The rules, as applied here:
- A datapoint's rows: only status ok counts. Its score is the mean of its ok attempts' scores,
  summed in attempt order (plain float addition, then one division). Its pass verdict is passed
  when more than half of its ok attempts with a non-null `passed` passed, failed otherwise (a tie
  fails), none when no ok attempt says. A dimension's value is the mean over the ok attempts that
  have it. Its trace (regressions, improvements, paired list) is that of its first ok attempt,
  by attempt, that has one; null when none has.
- Summary: scored (an ok row) / errors (rows, all errors) / missing (no row; the first 100 by
  order); results and error_results count rows; attempts_max the most rows of any datapoint.
  mean_score and each dimension: numpy mean, scipy.stats.ttest_1samp(...).confidence_interval at
  95%; null interval for fewer than two values; equal values give {mean, mean} (and the mean is
  that value). pass_rate passed / (passed + failed) with scipy.stats.binomtest(...).proportion_ci
  (method 'wilson'), null without verdicts. Dimensions: every name any row's dimension_scores has,
  sorted by code point (see the readings below).
- Comparison: the datapoints scored on both sides are paired, in datapoint order; d = to - from.
  mean_from, mean_to, delta (mean of d); with two pairs or more: se = scipy.stats.sem(d), ci95 and
  p_value from scipy.stats.ttest_rel(to, from) at the case's confidence (no spread in d: the
  interval is {delta, delta} and p is 1 when every d is 0, else 0); wilcoxon_p_value =
  scipy.stats.wilcoxon(d).pvalue with its defaults (1 when every d is 0); correlation =
  scipy.stats.pearsonr (null when a side is constant); ci95_bootstrap = the percentile interval of
  10,000 resamples of d with the seed 20240101 (ten chunks of 1,000, chunk j from a generator
  seeded with 20240101 + j), by the generator replay of test/data/statistics/reference.py (the
  reference side, imported: its docstring states the definition). One pair: only the means and
  delta; the rest null. passed: over paired datapoints with a verdict on both sides (null if
  none), pass rates, flips, McNemar's exact p (scipy.stats.binomtest(min(b, c), b + c)) and mid-p
  (scipy.stats.binom); no flips gives 1 and 1. dimensions: names both sides have, each paired over
  the datapoints that have it on both, as the score; Holm's step-down over their non-null p-values.
  verdict: fewer than 10 pairs insufficient_data, else improved / regressed when the t interval
  lies wholly above / below 0, else no_detectable_difference. regressions / improvements: the 20
  largest drops / rises, ties by datapoint order. missing_in_from: scored on `to` only;
  missing_in_to: scored on `from` only.
- Paired list: every datapoint scored on either side, in datapoint order, with its change:
  only_from / only_to when one side is not scored; else pass_to_fail / fail_to_pass when both sides
  have a verdict and they differ; else improved / regressed / unchanged by the sign of the delta.

Readings where the documents are terse (each has a case of its own):
- A dimension named only by error rows: the summary's schema says "every numeric dimension of
  dimension_scores", n being "datapoints with this dimension on an ok result" (minimum 0), so it is
  listed with n 0 and null figures, and a comparison whose sides both name it pairs it (n 0). A
  dimension that no row has any more (its rows were replaced) is not a dimension of any row: not
  listed.
- Traces: the comparison schema says a moved datapoint's trace is "the trace of the datapoint's
  first ok attempt with one"; with no ok attempt having one it is null here, and the paired list
  (whose schema says nothing) is taken to follow the same rule.
- One pair: scipy.stats.wilcoxon of one nonzero difference gives 1, but the paired statistics are
  taken here (as in test/data/statistics/reference.py) to need two pairs: null.
"""

import importlib.util
import json
import os
import sys

import numpy as np
import scipy

HERE = os.path.dirname(os.path.abspath(__file__))

# The figures, the bootstrap generator's replay and the JSON writer, from the statistics reference
# (all the reference side; nothing here comes from the TypeScript).
_spec = importlib.util.spec_from_file_location(
    'statistics_reference', os.path.join(HERE, '..', 'statistics', 'reference.py'))
statistics_reference = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(statistics_reference)

SUMMARY_CONFIDENCE = 0.95
MISSING_NAMED_MAX = 100
RESAMPLES = 10_000
BOOTSTRAP_SEED = 20_240_101
PAIRED_MIN = 10
LISTED_MAX = 20


def order_of(index):
    return 2 * index + 1


# ---------------------------------------------------------------------------------------------
# One side's rows reduced per datapoint.


def reduce_side(rows, size):
    by_datapoint = [[] for _ in range(size)]
    for row in rows:
        by_datapoint[row['datapoint']].append(row)
    sides = []
    for index in range(size):
        attempts = sorted(by_datapoint[index], key=lambda row: row['attempt'])
        assert len({row['attempt'] for row in attempts}) == len(attempts), 'one row per attempt'
        ok = [row for row in attempts if row.get('status', 'ok') == 'ok']
        mean = None
        if ok:
            total = 0.0
            for row in ok:
                total += row['score']
            mean = total / len(ok)
        said = [row['passed'] for row in ok if row.get('passed') is not None]
        verdict = None if not said else 2 * sum(1 for p in said if p) > len(said)
        dimensions = {}
        for name in sorted({name for row in ok for name in (row.get('dimension_scores') or {})}):
            values = [row['dimension_scores'][name] for row in ok if name in (row.get('dimension_scores') or {})]
            total = 0.0
            for value in values:
                total += value
            dimensions[name] = total / len(values)
        # The trace of the datapoint's run: its first ok attempt with one, else its first attempt
        # with one (an error's trace is what a person opens to see what failed).
        trace = next((row['trace_id'].lower() for row in ok if row.get('trace_id')), None)
        if trace is None:
            trace = next((row['trace_id'].lower() for row in attempts if row.get('trace_id')), None)
        sides.append({'rows': len(attempts), 'errors': len(attempts) - len(ok), 'ok': len(ok), 'mean': mean,
                      'verdict': verdict, 'dimensions': dimensions, 'trace': trace})
    # Every name any row's dimension_scores has (error rows included: see AMBIGUOUS).
    names = sorted({name for row in rows for name in (row.get('dimension_scores') or {})})
    return sides, names


# ---------------------------------------------------------------------------------------------
# Figures.


# The figures themselves are the statistics reference's: one implementation of each on the
# reference side.
mean_with_interval = statistics_reference.mean_with_interval
wilson = statistics_reference.wilson_interval
holm = statistics_reference.holm


def summary(rows, size):
    sides, names = reduce_side(rows, size)
    scored = [i for i, s in enumerate(sides) if s['ok'] > 0]
    errors = [i for i, s in enumerate(sides) if s['rows'] > 0 and s['ok'] == 0]
    missing = [i for i, s in enumerate(sides) if s['rows'] == 0]
    assert len(scored) + len(errors) + len(missing) == size
    passed = sum(1 for s in sides if s['verdict'] is True)
    failed = sum(1 for s in sides if s['verdict'] is False)
    score = mean_with_interval([sides[i]['mean'] for i in scored], SUMMARY_CONFIDENCE)
    dimensions = []
    for name in names:
        values = [s['dimensions'][name] for s in sides if name in s['dimensions']]
        estimate = mean_with_interval(values, SUMMARY_CONFIDENCE)
        dimensions.append({'name': name, 'n': estimate['n'], 'mean': estimate['mean'], 'ci95': estimate['ci']})
    return {
        'datapoints': size,
        'results': len(rows),
        'error_results': sum(1 for row in rows if row.get('status', 'ok') == 'error'),
        'scored': len(scored),
        'errors': len(errors),
        'missing': {'count': len(missing), 'datapoints': missing[:MISSING_NAMED_MAX]},
        'attempts_max': max((s['rows'] for s in sides), default=0),
        'mean_score': score['mean'],
        'score_ci95': score['ci'],
        'passed': passed,
        'failed': failed,
        'pass_rate': None if passed + failed == 0 else passed / (passed + failed),
        'pass_rate_ci95': wilson(passed, passed + failed, SUMMARY_CONFIDENCE),
        'dimensions': dimensions,
    }


def paired(before, after, confidence, with_bootstrap):
    """Every paired figure of after - before (the statistics reference's), and its bootstrap interval."""
    estimate = statistics_reference.paired_estimate(before, after, confidence)[1]
    bootstrap = None
    if with_bootstrap and len(before) >= 2:
        d = [b - a for a, b in zip(before, after)]
        bootstrap = statistics_reference.bootstrap_interval(d, confidence, RESAMPLES, BOOTSTRAP_SEED)
    return {**estimate, 'bootstrap': bootstrap}


def mcnemar(b, c):
    figures = statistics_reference.mcnemar(b, c)
    return figures['p_value'], figures['mid_p_value']


def verdict_of(estimate):
    if estimate['n'] < PAIRED_MIN or estimate['ci'] is None:
        return 'insufficient_data'
    if estimate['ci']['low'] > 0:
        return 'improved'
    if estimate['ci']['high'] < 0:
        return 'regressed'
    return 'no_detectable_difference'


def comparison(rows_from, rows_to, size, confidence):
    before, names_from = reduce_side(rows_from, size)
    after, names_to = reduce_side(rows_to, size)
    pairs = [i for i in range(size) if before[i]['mean'] is not None and after[i]['mean'] is not None]
    estimate = paired([before[i]['mean'] for i in pairs], [after[i]['mean'] for i in pairs], confidence, True)

    judged = [i for i in pairs if before[i]['verdict'] is not None and after[i]['verdict'] is not None]
    passes = None
    if judged:
        b = sum(1 for i in judged if before[i]['verdict'] and not after[i]['verdict'])
        c = sum(1 for i in judged if not before[i]['verdict'] and after[i]['verdict'])
        p, mid = mcnemar(b, c)
        passes = {'n': len(judged),
                  'pass_rate_from': sum(1 for i in judged if before[i]['verdict']) / len(judged),
                  'pass_rate_to': sum(1 for i in judged if after[i]['verdict']) / len(judged),
                  'pass_to_fail': b, 'fail_to_pass': c, 'mcnemar_p_value': p, 'mcnemar_mid_p_value': mid}

    dimensions = []
    for name in sorted(set(names_from) & set(names_to)):
        both = [i for i in range(size) if name in before[i]['dimensions'] and name in after[i]['dimensions']]
        e = paired([before[i]['dimensions'][name] for i in both], [after[i]['dimensions'][name] for i in both],
                   confidence, False)
        dimensions.append({'name': name, 'n': e['n'], 'delta': e['delta'], 'ci95': e['ci'], 'p_value': e['p_value']})
    for dimension, adjusted in zip(dimensions, holm([d['p_value'] for d in dimensions])):
        dimension['p_value_holm'] = adjusted

    moved = [{'datapoint': i, 'datapoint_order': order_of(i), 'score_from': before[i]['mean'],
              'score_to': after[i]['mean'], 'delta': after[i]['mean'] - before[i]['mean'],
              'trace_id_from': before[i]['trace'], 'trace_id_to': after[i]['trace']} for i in pairs]
    regressions = sorted((m for m in moved if m['delta'] < 0), key=lambda m: (m['delta'], m['datapoint']))
    improvements = sorted((m for m in moved if m['delta'] > 0), key=lambda m: (-m['delta'], m['datapoint']))
    return {
        'comparable': True,
        'confidence': confidence,
        'paired_min': PAIRED_MIN,
        'n_paired': len(pairs),
        'missing_in_from': sum(1 for i in range(size) if before[i]['mean'] is None and after[i]['mean'] is not None),
        'missing_in_to': sum(1 for i in range(size) if before[i]['mean'] is not None and after[i]['mean'] is None),
        'score': {'mean_from': estimate['mean_from'], 'mean_to': estimate['mean_to'], 'delta': estimate['delta'],
                  'se': estimate['se'], 'ci95': estimate['ci'], 'ci95_bootstrap': estimate['bootstrap'],
                  'p_value': estimate['p_value'], 'wilcoxon_p_value': estimate['wilcoxon_p_value'],
                  'correlation': estimate['correlation']},
        'passed': passes,
        'dimensions': dimensions,
        'verdict': verdict_of(estimate),
        'regressions': regressions[:LISTED_MAX],
        'improvements': improvements[:LISTED_MAX],
    }


def paired_list(rows_from, rows_to, size):
    before, _ = reduce_side(rows_from, size)
    after, _ = reduce_side(rows_to, size)
    listed = []
    for i in range(size):
        a, b = before[i]['mean'], after[i]['mean']
        if a is None and b is None:
            continue
        va, vb = before[i]['verdict'], after[i]['verdict']
        if b is None:
            change = 'only_from'
        elif a is None:
            change = 'only_to'
        elif va is not None and vb is not None and va != vb:
            change = 'pass_to_fail' if va else 'fail_to_pass'
        else:
            change = 'improved' if b - a > 0 else 'regressed' if b - a < 0 else 'unchanged'
        listed.append({'datapoint': i, 'datapoint_order': order_of(i), 'score_from': a, 'score_to': b,
                       'delta': None if a is None or b is None else b - a, 'passed_from': va, 'passed_to': vb,
                       'change': change, 'trace_id_from': before[i]['trace'], 'trace_id_to': after[i]['trace']})
    return listed


# ---------------------------------------------------------------------------------------------
# Building rows.


def with_optional(row, score, passed, dimensions, trace):
    """The row with each optional field that is given."""
    if score is not None:
        row['score'] = float(score)
    if passed is not None:
        row['passed'] = bool(passed)
    if dimensions is not None:
        row['dimension_scores'] = {k: float(v) for k, v in dimensions.items()}
    if trace is not None:
        row['trace_id'] = trace
    return row


def ok(datapoint, attempt, score, passed=None, dimensions=None, trace=None):
    # status: ok by default
    return with_optional({'datapoint': datapoint, 'attempt': attempt}, score, passed, dimensions, trace)


def err(datapoint, attempt, score=None, passed=None, dimensions=None, trace=None):
    row = {'datapoint': datapoint, 'attempt': attempt, 'status': 'error', 'error': f'failed on attempt {attempt}'}
    return with_optional(row, score, passed, dimensions, trace)


def oks(spec):
    """Rows from {datapoint: [(score, passed), ...]} (attempts 0, 1, ...); passed may be None."""
    return [ok(dp, a, s, p) for dp, attempts in spec.items() for a, (s, p) in enumerate(attempts)]


def shuffled(rows, seed):
    order = np.random.RandomState(seed).permutation(len(rows))
    return [rows[i] for i in order]


def trace(n):
    return f'{n:032x}'


rs = statistics_reference.rs


def r4(x):
    return round(float(x), 4)


def continuous(seed, size, attempts, shift, noise=0.12, passed_at=0.5, dims=True):
    """Both sides of `size` datapoints with `attempts` attempts each: a difficulty per datapoint,
    attempt noise, and `shift` added on the `to` side; passed when the score reaches `passed_at`."""
    state = rs(seed)
    difficulty = state.uniform(0.15, 0.85, size)
    sides = []
    for side_shift in (0.0, shift):
        rows = []
        for i in range(size):
            for a in range(attempts):
                score = r4(min(1.0, max(0.0, difficulty[i] + side_shift + state.normal(0, noise))))
                dimensions = None
                if dims:
                    dimensions = {'accuracy': r4(min(1.0, max(0.0, score + state.normal(0, 0.05))))}
                    if i % 3 == 0:
                        dimensions['tone'] = r4(state.uniform(0, 1))
                rows.append(ok(i, a, score, score >= passed_at, dimensions))
        sides.append(rows)
    return sides


# ---------------------------------------------------------------------------------------------
# The cases.


def case_attempts_and_majority():
    rows_from = [
        ok(0, 0, 0.1, False), ok(0, 1, 0.7, True, trace=trace(0xA1)), ok(0, 2, 0.4, True, trace=trace(0xA2)),
        ok(1, 0, 0.3, True), ok(1, 1, 0.9, False),  # 1 of 2: a tie fails
        ok(2, 0, 0.2, True), ok(2, 1, 0.25, True), ok(2, 2, 0.6, False), ok(2, 3, 0.95, False),  # 2 of 4 fails
        ok(3, 0, 0.35, True), ok(3, 1, 0.45, True), ok(3, 2, 0.55, True), ok(3, 3, 0.05, False),  # 3 of 4
        ok(4, 0, 0.55),  # no verdict
        ok(5, 0, 0.6), ok(5, 1, 0.8, True),  # 1 of 1 that says
        ok(6, 0, 0.15, False), ok(6, 2, 0.85, False), ok(6, 5, 0.33, True),  # attempts 0, 2, 5
        ok(7, 0, 0.0, False),
        ok(8, 0, 1.0, True), ok(8, 1, 1.0, True),
        ok(9, 0, 0.3), ok(9, 1, 0.3), ok(9, 2, 0.3),
        ok(10, 0, 0.45, False), ok(10, 1, 0.65, True), ok(10, 2, 0.75),  # 1 of 2 that say
        ok(11, 0, 0.8, True),
    ]
    rows_to = [
        ok(0, 0, 0.9, True, trace=trace(0xB1)), ok(0, 1, 0.8, True),
        ok(1, 0, 0.7, True), ok(1, 1, 0.6, True), ok(1, 2, 0.1, False),
        ok(2, 0, 0.2, False), ok(2, 1, 0.3, True), ok(2, 2, 0.35, True),
        ok(3, 0, 0.1, False), ok(3, 1, 0.2, False),
        ok(4, 0, 0.5, True), ok(4, 1, 0.6),
        ok(5, 0, 0.7, None), ok(5, 1, 0.7, False), ok(5, 2, 0.9, True), ok(5, 3, 0.95, True),
        ok(6, 1, 0.5, True), ok(6, 3, 0.52, False), ok(6, 4, 0.61, True),
        ok(7, 0, 0.25, True),
        ok(8, 0, 0.9, True), ok(8, 1, 0.8, False), ok(8, 2, 1.0, True),
        ok(9, 0, 0.5, False), ok(9, 1, 0.1, True),
        ok(10, 0, 0.45), ok(10, 1, 0.65), ok(10, 2, 0.75),
        ok(11, 0, 0.6, True), ok(11, 1, 0.7, False), ok(11, 2, 0.2, False), ok(11, 3, 0.9, True), ok(11, 4, 0.3, True),
    ]
    return {'name': 'several attempts per datapoint are averaged in attempt order, and a pass needs a strict '
                    'majority of the attempts that say (a tie fails)',
            'datapoints': 12, 'confidence': 0.95,
            'from': shuffled(rows_from, 101), 'to': shuffled(rows_to, 102)}


def case_errors():
    rows_from = [
        err(0, 0), err(0, 1, score=0.9, passed=True, dimensions={'accuracy': 1}),  # an errored datapoint
        ok(1, 0, 0.4, False, {'accuracy': 0.5}), err(1, 1, score=1.0, passed=True, dimensions={'accuracy': 1.0}),
        ok(1, 2, 0.6, True),
        err(2, 0, score=0.0, passed=False), ok(2, 1, 0.8, True, {'accuracy': 0.75}),
        err(3, 0, score=1.0, passed=True),  # errored, with a score that must not count
        ok(4, 0, 0.3, False, {'accuracy': 0.25}),
        ok(5, 0, 0.5, True), err(5, 1), err(5, 2), err(5, 3),
        ok(6, 0, 0.9, True, {'accuracy': 1.0}),
        ok(7, 0, 0.1, False),
        # 8 and 9: no row at all
    ]
    rows_to = [
        ok(0, 0, 0.7, True, {'accuracy': 0.5}),
        err(1, 0, score=0.2), err(1, 1),
        ok(2, 0, 0.85, True), ok(2, 1, 0.65, False), err(2, 2, score=0.0, passed=False),
        ok(3, 0, 0.55, True), err(3, 1, score=0.95),
        ok(4, 0, 0.2, False, {'accuracy': 0.0}), ok(4, 1, 0.6, True, {'accuracy': 0.5}),
        err(5, 0),
        ok(6, 0, 0.95, True, {'accuracy': 1.0}),
        err(7, 0, passed=True), ok(7, 1, 0.3, False),
        ok(9, 0, 0.4, None),
    ]
    return {'name': 'error rows count apart: an errored datapoint, errors among ok attempts, and an error row '
                    'with a score or a pass that must not count',
            'datapoints': 10, 'confidence': 0.95,
            'from': shuffled(rows_from, 201), 'to': shuffled(rows_to, 202)}


def case_many_missing():
    state = rs(301)
    size = 260
    scored_from = sorted(state.choice(size, 40, replace=False))
    scored_to = sorted(state.choice(size, 130, replace=False))
    errored_to = [i for i in sorted(state.choice(size, 10, replace=False)) if i not in scored_to]
    rows_from = [ok(int(i), 0, r4(state.uniform(0.3, 0.9)), bool(state.rand() < 0.6)) for i in scored_from]
    rows_to = [ok(int(i), 0, r4(state.uniform(0.3, 0.9)), bool(state.rand() < 0.6)) for i in scored_to]
    rows_to += [err(int(i), 0) for i in errored_to]
    return {'name': 'more than 100 datapoints missing: the first 100 are named in order, and datapoints scored '
                    'on one side only are counted, not paired',
            'datapoints': size, 'confidence': 0.95,
            'from': shuffled(rows_from, 302), 'to': shuffled(rows_to, 303)}


def case_quantized():
    state = rs(401)
    size = 80
    levels = np.array([0.0, 0.25, 0.5, 0.75, 1.0])
    rows_from, rows_to = [], []
    for i in range(size):
        base = state.randint(0, 5)
        rows_from.append(ok(i, 0, levels[base], base >= 2))
        step = state.choice([-2, -1, -1, 0, 1, 1, 2])
        after = int(min(4, max(0, base + step)))
        rows_to.append(ok(i, 0, levels[after], after >= 2))
    return {'name': 'quantized scores give tied and zero differences: Wilcoxon by the normal approximation, '
                    'and ties at the cut of the twenty largest moves broken by datapoint order',
            'datapoints': size, 'confidence': 0.9,
            'from': shuffled(rows_from, 402), 'to': shuffled(rows_to, 403)}


def case_permutation():
    before = [0.5, 0.25, 0.75, 0.5, 1.0, 0.0, 0.25, 0.5, 0.75, 0.5, 0.25, 0.5]
    after = [0.75, 0.25, 1.0, 0.25, 1.0, 0.5, 0.5, 0.5, 1.0, 0.75, 0.0, 1.0]
    rows_from = [ok(i, 0, s, s >= 0.5) for i, s in enumerate(before)]
    rows_to = [ok(i, 0, s, s >= 0.5) for i, s in enumerate(after)]
    return {'name': 'twelve pairs with tied and zero differences: Wilcoxon by the exact sign-flip permutation',
            'datapoints': 12, 'confidence': 0.95, 'from': shuffled(rows_from, 501), 'to': shuffled(rows_to, 502)}


def case_all_zero_differences():
    # The same mean on both sides, reached through different attempts (exact in binary).
    rows_from = [ok(0, 0, 0.25, True), ok(0, 1, 0.75, True), ok(1, 0, 0.125), ok(2, 0, 0.5, False),
                 ok(3, 0, 1.0, True), ok(4, 0, 0.0, False), ok(4, 1, 0.0, False), ok(5, 0, 0.375, True),
                 ok(6, 0, 0.625), ok(6, 1, 0.875), ok(7, 0, 0.5), ok(8, 0, 0.25, False), ok(9, 0, 0.75, True)]
    rows_to = [ok(0, 0, 0.5, True), ok(1, 0, 0.125, False), ok(1, 1, 0.125), ok(2, 0, 0.5, False),
               ok(3, 0, 1.0, True), ok(4, 0, 0.0, False), ok(5, 0, 0.25, True), ok(5, 1, 0.5, True),
               ok(6, 0, 0.75), ok(7, 0, 0.5, True), ok(8, 0, 0.25, True), ok(8, 1, 0.25, False),
               ok(8, 2, 0.25, False), ok(9, 0, 0.75, True)]
    return {'name': 'every paired difference is zero: delta 0 with a point interval, p 1, Wilcoxon 1, nothing '
                    'moved, every datapoint unchanged',
            'datapoints': 10, 'confidence': 0.95, 'from': shuffled(rows_from, 601), 'to': shuffled(rows_to, 602)}


def case_all_equal():
    rows_from = [ok(i, a, 1.0, True) for i in range(11) for a in range(1 + i % 3)]
    rows_to = [ok(i, a, 1.0, True) for i in range(11) for a in range(1 + (i + 1) % 2)]
    return {'name': 'every score equal on both sides: point intervals, no correlation, no flips, no detectable '
                    'difference',
            'datapoints': 11, 'confidence': 0.95, 'from': shuffled(rows_from, 701), 'to': shuffled(rows_to, 702)}


def case_constant_gain():
    rows_from = [ok(i, 0, 0.5, False) for i in range(11)]
    rows_to = [ok(i, a, 0.75, True) for i in range(11) for a in range(1 + i % 2)]
    return {'name': 'each side constant with the same gain everywhere: a point interval above 0 is improved, '
                    'p 0, no correlation',
            'datapoints': 11, 'confidence': 0.95, 'from': shuffled(rows_from, 801), 'to': shuffled(rows_to, 802)}


def case_one_pair():
    rows_from = [ok(0, 0, 0.3, True), ok(0, 1, 0.6, False), ok(1, 0, 0.2, False), err(2, 0)]
    rows_to = [ok(1, 0, 0.7, True, {'accuracy': 0.5}), ok(2, 0, 0.9, True), err(0, 0)]
    return {'name': 'one paired datapoint: the means and delta only, every interval and test null, '
                    'insufficient data',
            'datapoints': 3, 'confidence': 0.95, 'from': rows_from, 'to': rows_to}


def case_two_pairs():
    rows_from = [ok(0, 0, 0.3, True), ok(1, 0, 0.2, False), ok(1, 1, 0.5, True), ok(3, 0, 0.5, True)]
    rows_to = [ok(0, 0, 0.5, True), ok(1, 0, 0.9, True), ok(2, 0, 0.1, False)]
    return {'name': 'two paired datapoints: intervals with one degree of freedom, the bootstrap of two values, '
                    'insufficient data',
            'datapoints': 4, 'confidence': 0.95, 'from': shuffled(rows_from, 901), 'to': rows_to}


def case_two_pairs_one_ulp_apart():
    # (0.2 + 0.4) / 2 is 0.30000000000000004, one ulp above 0.3: the side is not constant, and
    # Pearson's r of any two distinct points is +1 or -1 (scipy.stats.pearsonr returns the sign
    # for two pairs).
    rows_from = [ok(0, 0, 0.3), ok(1, 0, 0.2), ok(1, 1, 0.4)]
    rows_to = [ok(0, 0, 0.5), ok(1, 0, 0.9)]
    return {'name': 'two paired datapoints whose scores on one side differ only in the last bit still have a '
                    'correlation of 1',
            'datapoints': 2, 'confidence': 0.95, 'from': rows_from, 'to': rows_to}


def strong_gain_rows(count):
    state = rs(1001)
    before = [r4(state.uniform(0.2, 0.6)) for _ in range(10)]
    gains = [r4(state.uniform(0.15, 0.35)) for _ in range(10)]
    rows_from = [ok(i, 0, before[i], before[i] >= 0.5) for i in range(count)]
    rows_to = [ok(i, 0, r4(before[i] + gains[i]), before[i] + gains[i] >= 0.5) for i in range(count)]
    return rows_from, rows_to


def case_nine_pairs():
    rows_from, rows_to = strong_gain_rows(9)
    return {'name': 'nine paired datapoints with a clear gain are still insufficient data',
            'datapoints': 9, 'confidence': 0.95, 'from': rows_from, 'to': rows_to}


def case_ten_pairs():
    rows_from, rows_to = strong_gain_rows(10)
    return {'name': 'ten paired datapoints with the same clear gain are improved',
            'datapoints': 10, 'confidence': 0.95, 'from': rows_from, 'to': rows_to}


def case_one_side_errors():
    rows_from = [err(i, 0, score=0.5 if i % 2 else None, passed=True if i % 3 == 0 else None) for i in range(8)]
    rows_from += [err(2, 1), err(5, 1, score=1.0)]
    rows_to = [ok(i, 0, r4(0.1 * i + 0.05), i % 2 == 0, {'accuracy': r4(0.1 * i)}) for i in range(8)]
    return {'name': 'a side whose every row is an error is comparable: nothing paired, every figure null, '
                    'insufficient data',
            'datapoints': 8, 'confidence': 0.95, 'from': shuffled(rows_from, 1101), 'to': shuffled(rows_to, 1102)}


def case_dimensions():
    state = rs(1201)
    size = 25
    rows_from, rows_to = [], []
    for i in range(size):
        for a in range(1 + i % 2):
            dims = {'accuracy': r4(state.uniform(0.3, 0.9))}
            if i % 4 != 0:
                dims['tone'] = r4(state.uniform(0.2, 0.8))
            if a == 0:
                dims['style'] = r4(state.uniform(0, 1))  # this side only
            if i < 12:
                dims['brevity'] = r4(state.uniform(0, 1))
            if i == 3:
                dims['safety'] = 0.5  # on both sides, paired on one datapoint
            if i >= 20:
                dims['format'] = r4(state.uniform(0, 1))  # on both sides, never on the same datapoint
            rows_from.append(ok(i, a, r4(state.uniform(0.3, 0.8)), None, dims))
        for a in range(1 + (i + 1) % 3):
            dims = {}
            if a == 0 or i % 5 == 0:
                dims['accuracy'] = r4(state.uniform(0.4, 1.0))  # on some attempts only
            if i % 4 != 1:
                dims['tone'] = r4(state.uniform(0.2, 0.8))
            if i % 2 == 0:
                dims['judge'] = r4(state.uniform(0, 1))  # this side only
            if i < 12:
                dims['brevity'] = r4(state.uniform(0, 1) + 0.3)
            if i in (3, 4):
                dims['safety'] = 0.75
            if i < 5:
                dims['format'] = r4(state.uniform(0, 1))
            rows_to.append(ok(i, a, r4(state.uniform(0.35, 0.85)), None, dims or None))
    return {'name': "dimensions on one side only, on some datapoints or attempts only: each compared over the "
                    "datapoints that have it on both sides, with Holm's adjustment across them",
            'datapoints': size, 'confidence': 0.95,
            'from': shuffled(rows_from, 1202), 'to': shuffled(rows_to, 1203)}


def case_large(name, seed, size, attempts, shift, confidence):
    rows_from, rows_to = continuous(seed, size, attempts, shift)
    return {'name': name, 'datapoints': size, 'confidence': confidence,
            'from': shuffled(rows_from, seed + 1), 'to': shuffled(rows_to, seed + 2)}


BORDERLINE_SEED = 1606


def borderline_rows():
    state = rs(BORDERLINE_SEED)
    size = 40
    difficulty = state.uniform(0.3, 0.7, size)
    rows_from, rows_to = [], []
    for i in range(size):
        for a in range(2):
            rows_from.append(ok(i, a, r4(difficulty[i] + state.normal(0, 0.1)), None))
            rows_to.append(ok(i, a, r4(difficulty[i] + 0.03 + state.normal(0, 0.1)), None))
    return rows_from, rows_to


def case_borderline(confidence, verdict):
    rows_from, rows_to = borderline_rows()
    return {'name': f'a borderline gain is {verdict} at confidence {confidence}',
            'datapoints': 40, 'confidence': confidence, 'from': rows_from, 'to': rows_to}


def case_flips():
    state = rs(1701)
    size = 40
    verdicts_from = [bool(v) for v in state.rand(size) < 0.6]
    flips_down = {2, 9, 17}  # pass -> fail where the side passed
    rows_from, rows_to = [], []
    for i in range(size):
        before = verdicts_from[i]
        after = before
        if before and i in flips_down:
            after = False
        elif not before and i % 3 != 0:
            after = True
        score_from = r4((0.6 if before else 0.3) + state.uniform(-0.1, 0.1))
        score_to = r4((0.6 if after else 0.3) + state.uniform(-0.1, 0.1))
        if i == 2:
            score_to = r4(score_from + 0.05)  # failed now, yet scored higher: still pass_to_fail
        if i in (30, 31):
            rows_from.append(ok(i, 0, score_from, None))  # no verdict on one side: not among the n
        else:
            rows_from.append(ok(i, 0, score_from, before))
        rows_to.append(ok(i, 0, score_to, after))
        if i % 4 == 0:
            rows_to.append(ok(i, 1, score_to, after))
    return {'name': "pass/fail flips give McNemar's exact p and mid-p over the datapoints with a verdict on "
                    "both sides, and a flip is the change whatever the score did",
            'datapoints': size, 'confidence': 0.95,
            'from': shuffled(rows_from, 1702), 'to': shuffled(rows_to, 1703)}


def case_replaced():
    prior_from = [ok(0, 0, 0.9, True), err(1, 0), ok(2, 0, 0.1, False), ok(3, 1, 0.5, True)]
    rows_from = [ok(0, 0, 0.2, False), ok(1, 0, 0.6, True), err(2, 0), ok(3, 0, 0.4, True), ok(3, 1, 0.8, False),
                 ok(4, 0, 0.3, False), ok(5, 0, 0.7, True)]
    prior_to = [ok(5, 0, 0.0, False, {'accuracy': 1.0}), ok(1, 0, 0.1, False)]
    rows_to = [ok(0, 0, 0.5, True), ok(1, 0, 0.6, True), ok(2, 0, 0.5, True), ok(3, 0, 0.3, False),
               ok(4, 0, 0.9, True), ok(5, 0, 0.6, True, {'accuracy': 0.5})]
    return {'name': 'a row sent again replaces the earlier one whole: only the last version of each row counts',
            'datapoints': 6, 'confidence': 0.95,
            'from': rows_from, 'to': rows_to, 'prior': {'from': prior_from, 'to': prior_to}}


def case_replaced_dimension():
    prior_from = [ok(0, 0, 0.1, False, {'accuracy': 0.0}), ok(2, 0, 0.4, True, {'accuracy': 0.5, 'tone': 0.25})]
    rows_from = [ok(0, 0, 0.1, False), ok(1, 0, 0.2, True), ok(2, 0, 0.4, True, {'tone': 0.5})]
    rows_to = [ok(0, 0, 0.3, True, {'accuracy': 1.0}), ok(1, 0, 0.45, True, {'accuracy': 1.0}),
               ok(2, 0, 0.5, False, {'accuracy': 0.5, 'tone': 0.75})]
    return {'name': 'a dimension that only replaced rows had is gone with them: the summary does not list it '
                    'and the comparison does not pair it',
            'datapoints': 3, 'confidence': 0.95,
            'from': rows_from, 'to': rows_to, 'prior': {'from': prior_from, 'to': []}}


def case_error_only_dimension():
    rows_from = [ok(0, 0, 0.5, True, {'accuracy': 0.5}), err(0, 1, dimensions={'judge': 0.3}),
                 ok(1, 0, 0.6, True, {'accuracy': 0.75}), ok(2, 0, 0.7, False, {'accuracy': 0.25})]
    rows_to = [ok(0, 0, 0.8, True, {'accuracy': 0.5}), ok(1, 0, 0.4, False, {'accuracy': 1.0}),
               err(2, 0, score=0.9, dimensions={'judge': 0.9}), ok(2, 1, 0.9, True, {'accuracy': 0.5})]
    return {'name': 'a dimension named only by error rows is listed with n 0 and null figures',
            'datapoints': 3, 'confidence': 0.95, 'from': rows_from, 'to': rows_to}


def case_error_only_trace():
    rows_from = [err(0, 0, trace=trace(0xC1)), ok(0, 1, 0.2, True),  # the ok attempt has no trace: the error's
                 err(1, 0, trace=trace(0xC2)),  # errored: only_to, with the error's trace
                 ok(2, 0, 0.5, True, trace=trace(0xC3))]
    rows_to = [ok(0, 0, 0.6, True, trace=trace(0xD1)), ok(1, 0, 0.4, True, trace=trace(0xD2)),
               err(2, 0, trace=trace(0xD3)), ok(2, 1, 0.1, False)]  # the error's trace: no ok attempt has one
    return {'name': "a datapoint's trace is that of its first ok attempt with one, else of its first attempt with one (an error)",
            'datapoints': 3, 'confidence': 0.95, 'from': rows_from, 'to': rows_to}


def cases():
    return [
        case_attempts_and_majority(),
        case_errors(),
        case_replaced(),
        case_replaced_dimension(),
        case_many_missing(),
        case_quantized(),
        case_permutation(),
        case_all_zero_differences(),
        case_all_equal(),
        case_constant_gain(),
        case_one_pair(),
        case_two_pairs(),
        case_two_pairs_one_ulp_apart(),
        case_nine_pairs(),
        case_ten_pairs(),
        case_one_side_errors(),
        case_dimensions(),
        case_flips(),
        case_borderline(0.8, 'improved'),
        case_borderline(0.95, 'no_detectable_difference'),
        case_borderline(0.999, 'no_detectable_difference'),
        case_large('320 datapoints of two attempts with a clear gain are improved', 1301, 320, 2, 0.03, 0.95),
        case_large('350 datapoints of three attempts (1,050 rows a side, two batches) with a clear loss are '
                   'regressed', 1401, 350, 3, -0.015, 0.95),
        case_large('200 datapoints of two attempts with no shift show no detectable difference at 90%', 1501, 200,
                   2, 0.0, 0.9),
        case_error_only_dimension(),
        case_error_only_trace(),
    ]


# The verdict (and a few other facts) each case is meant to exercise: checked on every build, so a
# change of data that no longer tests what its name says fails here.
INTENDED = {
    'several attempts': {'verdict': 'no_detectable_difference'},
    'nine paired': {'verdict': 'insufficient_data', 'n_paired': 9},
    'ten paired': {'verdict': 'improved', 'n_paired': 10},
    'one paired datapoint': {'verdict': 'insufficient_data', 'n_paired': 1},
    'two paired datapoints': {'verdict': 'insufficient_data', 'n_paired': 2},
    'every paired difference is zero': {'verdict': 'no_detectable_difference'},
    'every score equal': {'verdict': 'no_detectable_difference'},
    'each side constant': {'verdict': 'improved'},
    'a side whose every row is an error': {'verdict': 'insufficient_data', 'n_paired': 0},
    '320 datapoints of two attempts with a clear gain': {'verdict': 'improved'},
    '350 datapoints': {'verdict': 'regressed'},
    '200 datapoints of two attempts with no shift': {'verdict': 'no_detectable_difference'},
    'a borderline gain is improved': {'verdict': 'improved'},
    'a borderline gain is no_detectable_difference': {'verdict': 'no_detectable_difference'},
}


def check_intended(case):
    comparison_ = case['expected']['comparison']
    for prefix, facts in INTENDED.items():
        if case['name'].startswith(prefix):
            for key, value in facts.items():
                assert comparison_[key] == value, (case['name'], key, comparison_[key], value)
    name = case['name']
    if name.startswith('more than 100'):
        assert case['expected']['summary_from']['missing']['count'] > 100
    if name.startswith('quantized'):
        assert len([m for m in comparison_['improvements']]) == LISTED_MAX
        deltas = [m['delta'] for m in comparison_['improvements']]
        assert len(set(deltas)) < len(deltas), 'ties among the listed moves'
        assert comparison_['n_paired'] > 13
    if name.startswith('twelve pairs'):
        d = [m['delta'] for m in case['expected']['paired'] if m['delta'] is not None]
        assert 0.0 in d and len(set(abs(x) for x in d if x)) < len([x for x in d if x])
    if name.startswith('pass/fail flips'):
        assert comparison_['passed']['pass_to_fail'] > 0 and comparison_['passed']['fail_to_pass'] > 0


def build():
    built = []
    for case in cases():
        print(f'case: {case["name"]}', file=sys.stderr)
        size = case['datapoints']
        rows_from, rows_to = case['from'], case['to']
        for rows in (rows_from, rows_to):
            assert len({(r['datapoint'], r['attempt']) for r in rows}) == len(rows)
        prior = case.get('prior', {'from': [], 'to': []})
        for side, rows in (('from', rows_from), ('to', rows_to)):
            final = {(r['datapoint'], r['attempt']) for r in rows}
            assert all((r['datapoint'], r['attempt']) in final for r in prior[side]), 'prior rows are replaced'
        case['expected'] = {
            'summary_from': summary(rows_from, size),
            'summary_to': summary(rows_to, size),
            'comparison': comparison(rows_from, rows_to, size, case['confidence']),
            'paired': paired_list(rows_from, rows_to, size),
        }
        check_intended(case)
        built.append(case)
    names = [case['name'] for case in built]
    assert len(set(names)) == len(names)
    return {
        'about': 'Written by reference.py beside this file; see its docstring for the rules and the cases.',
        'versions': {'python': sys.version.split()[0], 'numpy': np.__version__, 'scipy': scipy.__version__},
        'tolerance': {'relative': 1e-9, 'absolute': 1e-12},
        'datapoint_order': {'scale': 2, 'offset': 1},
        'cases': built,
    }


def dump(value, indent=0):
    """Pretty JSON with sorted keys, as the statistics reference writes it, except that each item of
    a list of objects (a row, a paired or moved datapoint) is written on one line: the rows are
    most of the file."""
    pad = '  ' * indent
    inner = '  ' * (indent + 1)
    if isinstance(value, list) and value and all(isinstance(item, dict) for item in value):
        lines = [inner + (json.dumps(item, sort_keys=True, allow_nan=False) if all(flat(v) for v in item.values())
                          else dump(item, indent + 1)) for item in value]
        return '[\n' + ',\n'.join(lines) + '\n' + pad + ']'
    if isinstance(value, dict) and value:
        items = [f'{inner}{json.dumps(key)}: {dump(value[key], indent + 1)}' for key in sorted(value)]
        return '{\n' + ',\n'.join(items) + '\n' + pad + '}'
    return statistics_reference.dump(value, indent)


def flat(value):
    if isinstance(value, dict):
        return all(not isinstance(v, (dict, list)) for v in value.values())
    return not isinstance(value, list)


def main():
    statistics_reference.write_reference(build, dump, os.path.join(HERE, 'reference.json'))


if __name__ == '__main__':
    main()
