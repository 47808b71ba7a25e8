#!/usr/bin/env python3
"""Reference figures for src/stats/confidence-sequence.ts and src/stats/race-rule.ts, computed
independently of the TypeScript, from the published statement.

Regenerate from anywhere with `python3 test/data/race/reference.py`: the script writes
reference.json beside itself (pretty, keys sorted, so a rerun gives the same bytes) in about a
second. Needs Python 3 and numpy (only to draw the cases' values, from seeded generators).

The confidence sequence (CS) is the predictable plug-in empirical-Bernstein CS of Waudby-Smith &
Ramdas, "Estimating means of bounded random variables by betting" (JRSS-B 2024; arXiv
2010.09686), Theorem 2 with its suggested plug-ins, in its without-replacement form. Written
here from the paper's statement, for x_1..x_N in [0, 1] seen in a random order:

    C_t = ( sum_i lam_i (x_i + (1/(N-i+1)) sum_{j<i} x_j)  +-  (log(2/a) + sum_i v_i psiE(lam_i)) )
          / sum_i lam_i (1 + (i-1)/(N-i+1))
    v_i = 4 (x_i - muhat_{i-1})^2,   psiE(lam) = (-log(1 - lam) - lam) / 4
    lam_t = min(c, sqrt(2 log(2/a) / (sigma2hat_{t-1} t log(1 + t)))),   c = 3/4
    muhat_t = (1/2 + sum_{i<=t} x_i) / (t + 1),   sigma2hat_t = (1/4 + sum_{i<=t} (x_i - muhat_i)^2) / (t + 1)

Every sum is recomputed from the lists of terms at each step with math.fsum (the TypeScript keeps
running sums), so agreement is to rounding, checked within a relative 1e-9 (absolute 1e-12).

Values v in [low, high] are scaled to x = (v - low) / (high - low) and the bounds scaled back.
Then, as the service documents: the running intersection (largest lower bound, smallest upper
bound so far, starting from [low, high]); if those cross, the span between them; and the result
clipped to the certain range [(sum v + (N - t) low) / N, (sum v + (N - t) high) / N], which at
t = N is the exact mean.

The race rule, for K candidates, level alpha / K, differences d = candidate - incumbent in
[low - high, high - low], per step, the first that applies: 'finished' at t = N (every pair in:
nothing is left to stop); 'live' while t < pairs_min; 'worse' if high < 0; 'better' if
stop_better and low > 0; 'cannot_win' if the candidate's total plus high for each of its
datapoints without a score is <= the incumbent's total plus low for each of its datapoints
without a score (beating needs a strictly greater mean); else 'live'. Scores are multiples of 1/8 where a case tests the exact rule at a tie, so
every total is exact; totals are running sums in arrival order (the same additions as the
service), and the script refuses a case where a bound lies within 1e-9 of 0 but is not 0, which
rounding could decide either way.
"""

import json
import math
import os
import sys

import numpy as np

C = 0.75
TOLERANCE = {'relative': 1e-9, 'absolute': 1e-12}


def cs_bounds(values, n, alpha, low, high):
    """The reported bounds after each value: the published CS, intersected, clipped."""
    width = high - low
    xs = [(v - low) / width for v in values]
    squares, numerators, denominators, penalties = [], [], [], []
    lower_max, upper_min = low, high
    out = []
    for t in range(1, len(xs) + 1):
        seen = xs[: t - 1]
        muhat_before = (0.5 + math.fsum(seen)) / t
        sigma2_before = (0.25 + math.fsum(squares)) / t
        lam = min(C, math.sqrt(2 * math.log(2 / alpha) / (sigma2_before * t * math.log(1 + t))))
        x = xs[t - 1]
        squares.append((x - (0.5 + math.fsum(xs[:t])) / (t + 1)) ** 2)
        numerators.append(lam * (x + math.fsum(seen) / (n - t + 1)))
        denominators.append(lam * (1 + (t - 1) / (n - t + 1)))
        v = 4 * (x - muhat_before) ** 2
        penalties.append(v * (-math.log1p(-lam) - lam) / 4)
        denominator = math.fsum(denominators)
        center = math.fsum(numerators) / denominator
        margin = (math.log(2 / alpha) + math.fsum(penalties)) / denominator
        lower_max = max(lower_max, low + width * (center - margin))
        upper_min = min(upper_min, low + width * (center + margin))
        lo, hi = min(lower_max, upper_min), max(lower_max, upper_min)
        total = math.fsum(values[:t])
        certain_low = (total + (n - t) * low) / n
        certain_high = (total + (n - t) * high) / n
        out.append((min(max(lo, certain_low), certain_high), max(min(hi, certain_high), certain_low)))
    return out


def unambiguous(bound):
    assert bound == 0 or abs(bound) > 1e-9, f'a bound of {bound} is too near 0 for an exact decision'


def race_steps(case):
    s = case['settings']
    n, low, high, k = s['datapoints'], s['low'], s['high'], s['candidates']
    incumbent, candidate = case['incumbent'], case['candidate']
    differences = [c - i for c, i in zip(candidate, incumbent)]
    bounds = cs_bounds(differences, n, s['alpha'] / k, low - high, high - low)
    incumbent_total = 0.0
    if case['incumbent_complete']:
        for score in incumbent:
            incumbent_total += score
    candidate_total = 0.0
    steps = []
    for t, (lo, hi) in enumerate(bounds, start=1):
        candidate_total += candidate[t - 1]
        if case['incumbent_complete']:
            incumbent_count = n
        else:
            incumbent_total += incumbent[t - 1]
            incumbent_count = t
        unambiguous(lo)
        unambiguous(hi)
        best = candidate_total + (n - t) * high
        least = incumbent_total + (n - incumbent_count) * low
        if t == n:
            state = 'finished'
        elif t < s['pairs_min']:
            state = 'live'
        elif hi < 0:
            state = 'worse'
        elif s['stop_better'] and lo > 0:
            state = 'better'
        elif best <= least:
            state = 'cannot_win'
        else:
            state = 'live'
        steps.append({'low': lo, 'high': hi, 'state': state, 'tie': best == least, 'gated': t < s['pairs_min'] and hi < 0})
    return steps


def settings(alpha, candidates, pairs_min, stop_better, low, high, datapoints):
    return {'alpha': alpha, 'candidates': candidates, 'pairs_min': pairs_min, 'stop_better': stop_better,
            'low': low, 'high': high, 'datapoints': datapoints}


def floats(array):
    return [float(v) for v in array]


def sequences():
    """CS cases on values (not differences): the CS alone, with its own range and level."""
    rng = np.random.default_rng(20240501)
    cases = [
        ('bernoulli 0/1 values, N = 12, every value', 12, 0.05, 0.0, 1.0, floats(rng.integers(0, 2, 12))),
        ('Beta(2, 5) values, N = 500, alpha 0.01, 300 seen', 500, 0.01, 0.0, 1.0, floats(rng.beta(2, 5, 300))),
        ('all values equal, N = 40', 40, 0.05, 0.0, 1.0, [0.3] * 40),
        ('values at both ends of [1, 5], N = 60', 60, 0.05, 1.0, 5.0, floats(1 + 4 * rng.integers(0, 2, 60))),
        ('differences in [-1, 1], alpha 0.05 / 8, N = 500', 500, 0.05 / 8, -1.0, 1.0,
         floats(np.clip(rng.normal(-0.05, 0.2, 500), -1, 1))),
        # The smallest populations: after its one value (or two) the bounds are the exact mean.
        ('a single datapoint, N = 1', 1, 0.05, 0.0, 1.0, [0.7]),
        ('two datapoints, N = 2', 2, 0.05, 0.0, 1.0, [0.2, 0.9]),
    ]
    out = []
    for name, n, alpha, low, high, values in cases:
        bounds = cs_bounds(values, n, alpha, low, high)
        out.append({'name': name, 'population': n, 'alpha': alpha, 'low': low, 'high': high, 'values': values,
                    'expected': [{'low': lo, 'high': hi} for lo, hi in bounds]})
    return out


def races():
    rng = np.random.default_rng(20240502)
    eighths = lambda size, p: floats(rng.choice(np.arange(9) / 8, size=size, p=p))
    flat = [1 / 9] * 9
    cases = []

    def add(name, s, incumbent, candidate, complete=True):
        case = {'name': name, 'settings': s, 'incumbent': incumbent, 'candidate': candidate, 'incumbent_complete': complete}
        case['expected'] = race_steps(case)
        cases.append(case)

    # A tie: incumbent 0.75 everywhere (total 9), candidate 0.5: its best total 12 - t/2 is 9 at t = 6.
    add('cannot win at a tie, N = 12', settings(0.05, 1, 3, False, 0.0, 1.0, 12), [0.75] * 12, [0.5] * 12)
    # Candidate 0, incumbent 1: the certain range puts high below 0 from t = 7, pairs_min holds it to 10.
    add('extremes at the range ends held by pairs_min, N = 12', settings(0.05, 1, 10, False, 0.0, 1.0, 12), [1.0] * 12, [0.0] * 12)
    add('Bernoulli scores, K = 8, N = 500', settings(0.05, 8, 10, False, 0.0, 1.0, 500),
        floats(rng.integers(0, 2, 500)), floats(rng.binomial(1, 0.35, 500)))
    add('Bernoulli scores better with stop_better, K = 1, alpha 0.01, N = 500', settings(0.01, 1, 10, True, 0.0, 1.0, 500),
        floats(rng.binomial(1, 0.4, 500)), floats(rng.binomial(1, 0.75, 500)))
    add('the same scores without stop_better run to the end, N = 500', settings(0.01, 1, 10, False, 0.0, 1.0, 500),
        cases[-1]['incumbent'], cases[-1]['candidate'])
    beta_incumbent = floats(rng.beta(2, 1.2, 500))
    add('continuous scores, candidate -0.15, K = 8, N = 500', settings(0.05, 8, 10, False, 0.0, 1.0, 500), beta_incumbent,
        floats(np.clip(np.array(beta_incumbent) - 0.15 + rng.normal(0, 0.15, 500), 0, 1)))
    add('many ties on a grid of eighths, incumbent partial, alpha 0.01, K = 8, N = 200', settings(0.01, 8, 10, False, 0.0, 1.0, 200),
        eighths(200, flat), eighths(200, [0.2, 0.2, 0.15, 0.15, 0.1, 0.1, 0.05, 0.03, 0.02]), complete=False)
    add('all differences 0, K = 8, N = 40 (a tie at the end)', settings(0.05, 8, 10, True, 0.0, 1.0, 40), [0.5] * 40, [0.5] * 40)
    add('a five-point scale [1, 5], K = 4, N = 100', settings(0.05, 4, 10, True, 1.0, 5.0, 100),
        floats(rng.integers(1, 6, 100)), floats(np.minimum(5, rng.integers(1, 6, 100) + 1)))
    # Incumbent 1 on the pairs so far, candidate 0.5: best 12 - t/2 meets the incumbent's least, t, at t = 8.
    add('cannot win against a partial incumbent at a tie, N = 12', settings(0.05, 1, 3, False, 0.0, 1.0, 12), [1.0] * 12,
        [0.5] * 12, complete=False)
    add('fewer datapoints than pairs_min, N = 6', settings(0.05, 2, 10, False, 0.0, 1.0, 6), [0.25, 0.5, 0.75, 1.0, 0.5, 0.5],
        [0.5, 0.5, 1.0, 1.0, 0.75, 0.5])
    add('partial run of a near tie, 120 of N = 500', settings(0.05, 8, 10, False, 0.0, 1.0, 500), floats(rng.beta(2, 2, 500)),
        floats(rng.beta(2, 2, 120)))
    # One datapoint: its one pair finishes the race, whatever pairs_min says.
    add('a single datapoint, N = 1', settings(0.05, 1, 10, False, 0.0, 1.0, 1), [0.4], [0.9])
    return cases


def build():
    race_cases = races()
    states = {step['state'] for case in race_cases for step in case['expected']}
    assert states == {'live', 'worse', 'better', 'cannot_win', 'finished'}, states
    assert any(step['tie'] and step['state'] == 'cannot_win' for case in race_cases for step in case['expected'])
    assert any(step['gated'] for case in race_cases for step in case['expected'])
    assert any(not case['incumbent_complete'] and any(step['state'] == 'cannot_win' for step in case['expected']) for case in race_cases)
    for case in race_cases:
        for step in case['expected']:
            del step['tie'], step['gated']
    return {'tolerance': TOLERANCE, 'lambda_max': C, 'sequences': sequences(), 'races': race_cases}


def dump(value, indent=0):
    """JSON with sorted keys, short lists of numbers on one line."""
    pad = '  ' * indent
    inner = '  ' * (indent + 1)
    if isinstance(value, dict):
        items = [f'{inner}{json.dumps(key)}: {dump(value[key], indent + 1)}' for key in sorted(value)]
        return '{\n' + ',\n'.join(items) + '\n' + pad + '}'
    if isinstance(value, list) and value and all(isinstance(item, (dict, list)) for item in value):
        if all(isinstance(item, dict) and len(item) <= 3 and not any(isinstance(v, (dict, list)) for v in item.values()) for item in value):
            return '[\n' + ',\n'.join(inner + json.dumps(item, sort_keys=True, allow_nan=False) for item in value) + '\n' + pad + ']'
        return '[\n' + ',\n'.join(inner + dump(item, indent + 1) for item in value) + '\n' + pad + ']'
    if isinstance(value, list):
        lines, line = [], ''
        for text in (json.dumps(v, allow_nan=False) for v in value):
            if line and len(inner) + len(line) + len(text) + 2 > 100:
                lines.append(line)
                line = ''
            line = f'{line} {text},' if line else f'{text},'
        if line:
            lines.append(line)
        body = '\n'.join(inner + entry for entry in lines)
        return '[]' if not value else '[\n' + body[:-1] + '\n' + pad + ']'
    return json.dumps(value, allow_nan=False)


def main():
    figures = build()
    text = dump(figures) + '\n'
    assert json.loads(text) == json.loads(json.dumps(figures))
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), 'reference.json')
    with open(path, 'w', encoding='utf-8') as out:
        out.write(text)
    print(f'wrote {path}', file=sys.stderr)


if __name__ == '__main__':
    main()
