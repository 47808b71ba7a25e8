#!/usr/bin/env python3
"""Reference figures for src/stats/, computed independently of the TypeScript.

Regenerate from anywhere with `python3 test/data/statistics/reference.py`: the script writes
reference.json beside itself (pretty, keys sorted, so a rerun gives the same bytes). It takes
about a minute and a half, nearly all of it replaying the bootstrap generator in plain Python.

Needs Python 3, numpy and scipy >= 1.17 (the Wilcoxon rule below was read from scipy 1.17's
scipy/stats/_wilcoxon.py). Nothing else: statsmodels is not installed here, so Holm's step-down
is written out in plain Python (statsmodels' multipletests(method='holm') does the same: sort,
multiply the i-th of m by m - i, running maximum, cap at 1). No code is shared with the
TypeScript; where the service documents a choice scipy does not make (marked "documented
choice"), the rule is applied here from its statement.

What each figure is:
- mean_with_interval: numpy mean and sample sd (ddof=1), scipy.stats.sem, and the t interval of
  scipy.stats.ttest_1samp(values, 0).confidence_interval(confidence).
- wilson_interval: scipy.stats.binomtest(k, n).proportion_ci(confidence, method='wilson').
- paired_estimate over d = to - from: numpy means, scipy.stats.sem(d), scipy.stats.ttest_rel(to,
  from) (p and interval), scipy.stats.wilcoxon(d) (see Wilcoxon below), scipy.stats.pearsonr.
- signed_rank: scipy.stats.wilcoxon(d).pvalue of differences given directly (see Wilcoxon below).
- mcnemar: scipy.stats.binomtest(min(b, c), b + c, 0.5).pvalue, and the mid-p from
  scipy.stats.binom.cdf/pmf.
- bootstrap_mean_interval: the generator of src/stats/xoshiro128.ts replayed with Python
  integers masked to 32 bits, and the percentiles by R's type 7 (checked against numpy.quantile);
  for two larger cases also scipy.stats.bootstrap's percentile interval, with its own RNG. A
  case's values are listed, or given by a rule (values_rule: value i = ((i m) mod q) / q, for
  the cases of 65,536 values and more, which would be most of this file if listed).
- bootstrap_chunk_means: the means of a few resamples of one chunk, to the bit.

The bootstrap, as replayed here (the definition of src/stats/bootstrap.ts and xoshiro128.ts):
resample b belongs to chunk j = b // 1000; chunk j has its own generator, xoshiro128** whose four
words are the first four outputs of SplitMix32 from (seed + j) mod 2^32; within a chunk the
resamples come in order, each n indices drawn one after another and the values at them added in
draw order (from 0.0) and divided by n; the interval is the type-7 quantiles of all the means.
An index in [0, n) is drawn by Lemire's multiply-and-reject. For n <= 2^16, on 16-bit candidates,
two per 32-bit output, its high half first and then its low half: m = r16 n, l = m mod 2^16,
rejected when l < n and l < (2^16 - n) mod n, else the index is m >> 16; a rejected half is
skipped, and the halves are one stream across draws and resamples (a resample that ends on a high
half leaves the low half to the next draw). For n > 2^16, on whole outputs: m = r n, l = m mod
2^32, rejected when l < n and l < (2^32 - n) mod n, else m >> 32 (a pending half is left alone).

Wilcoxon: scipy.stats.wilcoxon(d) with its 1.17 defaults (zero_method='wilcox', correction=False,
method='auto'), called with those defaults. With n the number of pairs counted before zero
differences are dropped, 'auto' uses the exact signed-rank distribution when n <= 50 with no
zeros and no tied |d|; a permutation test (scipy.stats.permutation_test over sign flips, its
default 9999 resamples covering all 2^n flips exactly when n <= 13) when n <= 13 with zeros or
ties; and the normal approximation with the tie correction otherwise. The script names the
method it expects for each case by that reading and asserts that 'auto' gives the same p-value
as scipy with that method named explicitly ('exact', 'asymptotic', or a PermutationMethod()),
and, in the permutation case, as a plain-Python enumeration of the 2^m sign assignments of the
m nonzero |d| with their average ranks: p = min(1, 2 min(#{T <= R+}, #{T >= R+}) / 2^m).
Every difference zero: 1 (documented choice; scipy's 'auto' gives 1 too when 2 <= n <= 13,
which the script checks, nan above 13 and an error for a single zero). The signed_rank cases
give differences directly, so that one pair (which paired_estimate does not test) is covered too.
"""

import itertools
import json
import math
import os
import sys

import numpy as np
import scipy
from scipy import stats

MASK32 = 0xFFFFFFFF

# ---------------------------------------------------------------------------------------------
# The bootstrap generator: SplitMix32 seeding, xoshiro128**, Lemire's multiply-and-reject.


def splitmix32_words(seed):
    """The first four outputs of SplitMix32 from seed mod 2^32 (increment, then MurmurHash3's fmix32)."""
    state = seed & MASK32
    words = []
    for _ in range(4):
        state = (state + 0x9E3779B9) & MASK32
        z = state
        z = ((z ^ (z >> 16)) * 0x85EBCA6B) & MASK32
        z = ((z ^ (z >> 13)) * 0xC2B2AE35) & MASK32
        words.append(z ^ (z >> 16))
    return words


def rotl(x, k):
    return ((x << k) | (x >> (32 - k))) & MASK32


class Xoshiro128StarStar:
    """xoshiro128** 1.1 (Blackman & Vigna), transcribed from xoshiro128starstar.c."""

    def __init__(self, words):
        self.s = [w & MASK32 for w in words]
        self.rejections = 0
        self.half = None  # the low 16 bits of an output whose high half a 16-bit draw took

    @classmethod
    def seeded(cls, seed):
        return cls(splitmix32_words(seed))

    def next_uint32(self):
        s = self.s
        result = (rotl((s[1] * 5) & MASK32, 7) * 9) & MASK32
        t = (s[1] << 9) & MASK32
        s[2] ^= s[0]
        s[3] ^= s[1]
        s[1] ^= s[2]
        s[0] ^= s[3]
        s[2] ^= t
        s[3] = rotl(s[3], 11)
        return result

    def next_half(self):
        """The next 16-bit candidate: a pending low half, else the high half of a new output."""
        if self.half is not None:
            r16, self.half = self.half, None
            return r16
        r = self.next_uint32()
        self.half = r & 0xFFFF
        return r >> 16

    def next_index(self, n):
        """Lemire on 16 bits for n <= 2^16, else on 32 bits: m = r*n; if its low part l < n,
        redraw while l < (2^bits - n) mod n; index = m >> bits."""
        if n <= 2**16:
            m = self.next_half() * n
            low = m & 0xFFFF
            if low < n:
                threshold = (2**16 - n) % n
                while low < threshold:
                    self.rejections += 1
                    m = self.next_half() * n
                    low = m & 0xFFFF
            return m >> 16
        m = self.next_uint32() * n
        low = m & MASK32
        if low < n:
            threshold = (2**32 - n) % n
            while low < threshold:
                self.rejections += 1
                m = self.next_uint32() * n
                low = m & MASK32
        return m >> 32


# rand_xoshiro's test vector, made with Vigna's reference C implementation: state (1, 2, 3, 4).
KNOWN_ANSWER = [11520, 0, 5927040, 70819200, 2031721883, 1637235492, 1287239034, 3734860849,
                3729100597, 4258142804]


def quantile_type7(sorted_values, q):
    """Linear interpolation between order statistics at h = (N - 1) q (R type 7, numpy 'linear')."""
    h = (len(sorted_values) - 1) * q
    lo = math.floor(h)
    if lo + 1 >= len(sorted_values):
        return sorted_values[-1]
    return sorted_values[lo] + (sorted_values[lo + 1] - sorted_values[lo]) * (h - lo)


CHUNK_RESAMPLES = 1000


def chunk_means(values, chunk, count, seed):
    """The means of the first `count` resamples of chunk `chunk`, from its own generator."""
    n = len(values)
    random = Xoshiro128StarStar.seeded((seed + chunk) & MASK32)
    means = []
    for _ in range(count):
        total = 0.0
        for _ in range(n):
            total += values[random.next_index(n)]
        means.append(total / n)
    return means


def bootstrap_interval(values, confidence, resamples, seed):
    n = len(values)
    if n < 2:
        return None
    means = []
    for chunk in range(-(-resamples // CHUNK_RESAMPLES)):
        count = min(CHUNK_RESAMPLES, resamples - chunk * CHUNK_RESAMPLES)
        means.extend(chunk_means(values, chunk, count, seed))
    assert len(means) == resamples
    means.sort()
    low = quantile_type7(means, (1 - confidence) / 2)
    high = quantile_type7(means, (1 + confidence) / 2)
    for ours, q in ((low, (1 - confidence) / 2), (high, (1 + confidence) / 2)):
        assert math.isclose(ours, float(np.quantile(means, q)), rel_tol=1e-12, abs_tol=1e-15)
    return {'low': low, 'high': high}


def scipy_percentile_interval(values, confidence, seed):
    """scipy's own percentile bootstrap (10,000 resamples) and how far ours may be from it.

    Each endpoint is a sample quantile of B = 10,000 bootstrap means; its Monte Carlo sd is about
    sqrt(q (1 - q) / B) / f(x_q), and with the bootstrap means close to normal around the mean
    with sd se = sd(values, ddof=0) / sqrt(n), f(x_q) = phi(z_q) / se. Two independent runs
    differ by sqrt(2) times that; the tolerance is 6 such sds (a chance of about 2e-9 that a
    correct implementation fails, though with fixed seeds the test gives the same answer
    every time).
    """
    resamples = 10_000
    result = stats.bootstrap((np.asarray(values),), np.mean, confidence_level=confidence,
                             n_resamples=resamples, method='percentile',
                             rng=np.random.default_rng(seed))
    se = float(np.std(values)) / math.sqrt(len(values))
    q = (1 - confidence) / 2
    quantile_sd = se * math.sqrt(q * (1 - q) / resamples) / float(stats.norm.pdf(stats.norm.ppf(q)))
    return {'low': float(result.confidence_interval.low), 'high': float(result.confidence_interval.high),
            'resamples': resamples, 'tolerance': 6 * math.sqrt(2) * quantile_sd}


# ---------------------------------------------------------------------------------------------
# The figures.


def is_constant(values):
    return all(v == values[0] for v in values)


def mean_with_interval(values, confidence):
    n = len(values)
    if n == 0:
        return {'n': 0, 'mean': None, 'sd': None, 'se': None, 'ci': None}
    if is_constant(values):
        # Documented choice: equal values have mean that value and no spread (numpy's pairwise
        # mean of ten 0.1s is 0.09999999999999999); scipy's interval is nan there.
        assert math.isclose(float(np.mean(values)), values[0], rel_tol=1e-15)
        mean = values[0]
        if n == 1:
            return {'n': 1, 'mean': mean, 'sd': None, 'se': None, 'ci': None}
        return {'n': n, 'mean': mean, 'sd': 0.0, 'se': 0.0, 'ci': {'low': mean, 'high': mean}}
    ci = stats.ttest_1samp(values, 0.0).confidence_interval(confidence_level=confidence)
    return {'n': n, 'mean': float(np.mean(values)), 'sd': float(np.std(values, ddof=1)),
            'se': float(stats.sem(values)), 'ci': {'low': float(ci.low), 'high': float(ci.high)}}


def wilson_interval(successes, n, confidence):
    if n == 0:
        return None
    ci = stats.binomtest(successes, n).proportion_ci(confidence_level=confidence, method='wilson')
    return {'low': float(ci.low), 'high': float(ci.high)}


# Up to this many pairs, zeros included, scipy's 'auto' permutes when there are zeros or ties:
# its PermutationMethod() takes 9999 resamples and enumerates all 2^n sign flips if 2^n <= 9999.
PERMUTATION_PAIRS_MAX = 13


def wilcoxon_method(d):
    """The method scipy 1.17's 'auto' runs for d, by our reading of scipy/stats/_wilcoxon.py."""
    nonzero = d[d != 0]
    no_zeros = nonzero.size == d.size
    no_ties = np.unique(np.abs(nonzero)).size == nonzero.size
    if d.size <= 50 and no_zeros and no_ties:
        return 'exact'
    if d.size <= PERMUTATION_PAIRS_MAX:
        return 'permutation'
    return 'asymptotic'


def sign_flip_p(d):
    """The exact conditional test by enumeration: every sign assignment of the nonzero |d|."""
    nonzero = d[d != 0]
    ranks = stats.rankdata(np.abs(nonzero))  # average ranks for ties, as scipy's wilcoxon
    observed = float(np.sum(ranks[nonzero > 0]))
    sums = [float(np.dot(ranks, signs)) for signs in itertools.product((0, 1), repeat=nonzero.size)]
    at_most = sum(1 for t in sums if t <= observed)
    at_least = sum(1 for t in sums if t >= observed)
    return min(1.0, 2 * min(at_most, at_least) / len(sums))


def wilcoxon_p(d):
    """Returns (the method 'auto' runs by our reading, scipy.stats.wilcoxon(d).pvalue with 'auto')."""
    d = np.asarray(d, dtype=float)
    if not np.any(d != 0):
        if 2 <= d.size <= PERMUTATION_PAIRS_MAX:
            with np.errstate(invalid='ignore'):  # 'auto' computes z = 0/0 before choosing to permute
                assert float(stats.wilcoxon(d).pvalue) == 1.0  # scipy's permutation test agrees here
        return None, 1.0  # documented choice: no nonzero difference, no evidence of one
    method = wilcoxon_method(d)
    auto = float(stats.wilcoxon(d).pvalue)
    named = stats.PermutationMethod() if method == 'permutation' else method
    explicit = float(stats.wilcoxon(d, zero_method='wilcox', correction=False, method=named).pvalue)
    assert auto == explicit, (method, auto, explicit)
    if method == 'permutation':
        assert auto == sign_flip_p(d), (auto, sign_flip_p(d))
    return method, auto


def paired_estimate(before, after, confidence):
    n = len(before)
    assert len(after) == n
    empty = {'se': None, 'ci': None, 'p_value': None, 'wilcoxon_p_value': None, 'correlation': None}
    if n == 0:
        return None, {'n': 0, 'mean_from': None, 'mean_to': None, 'delta': None, **empty}
    x = np.asarray(before, dtype=float)
    y = np.asarray(after, dtype=float)
    d = y - x
    means = {'n': n, 'mean_from': mean_with_interval(before, confidence)['mean'],
             'mean_to': mean_with_interval(after, confidence)['mean'],
             'delta': mean_with_interval([float(v) for v in d], confidence)['mean']}
    if n == 1:
        return None, {**means, **empty}
    method, wilcoxon = wilcoxon_p(d)
    correlation = None if is_constant(before) or is_constant(after) else float(stats.pearsonr(x, y).statistic)
    if is_constant(list(d)):
        # Documented choice: differences with no spread leave no doubt (scipy gives nan).
        delta = means['delta']
        return method, {**means, 'se': 0.0, 'ci': {'low': delta, 'high': delta},
                        'p_value': 1.0 if delta == 0 else 0.0, 'wilcoxon_p_value': wilcoxon,
                        'correlation': correlation}
    t = stats.ttest_rel(y, x)
    ci = t.confidence_interval(confidence_level=confidence)
    return method, {**means, 'se': float(stats.sem(d)), 'ci': {'low': float(ci.low), 'high': float(ci.high)},
                    'p_value': float(t.pvalue), 'wilcoxon_p_value': wilcoxon, 'correlation': correlation}


def mcnemar(b, c):
    n = b + c
    if n == 0:
        return {'p_value': 1.0, 'mid_p_value': 1.0}
    k = min(b, c)
    p = min(1.0, float(stats.binomtest(k, n, 0.5).pvalue))
    mid = min(1.0, 2 * (float(stats.binom.cdf(k - 1, n, 0.5)) + 0.5 * float(stats.binom.pmf(k, n, 0.5))))
    return {'p_value': p, 'mid_p_value': mid}


def holm(p_values):
    tested = sorted((p, place) for place, p in enumerate(p_values) if p is not None)
    m = len(tested)
    adjusted = list(p_values)
    running = 0.0
    for i, (p, place) in enumerate(tested):
        running = max(running, (m - i) * p)
        adjusted[place] = min(1.0, running)
    return adjusted


# ---------------------------------------------------------------------------------------------
# The cases.


def floats(values):
    return [float(v) for v in values]


def rounded(values, decimals):
    return floats(np.round(values, decimals))


def rs(seed):
    return np.random.RandomState(seed)


def pass_fail(seed, rate, n):
    return floats(rs(seed).binomial(1, rate, n))


def continuous_pairs(seed, n, shift, noise, decimals=6):
    state = rs(seed)
    before = state.uniform(0.2, 0.8, n)
    after = before + state.normal(shift, noise, n)
    return rounded(before, decimals), rounded(after, decimals)


def integer_pairs(seed, n, low, high):
    state = rs(seed)
    return floats(state.randint(low, high + 1, n)), floats(state.randint(low, high + 1, n))


def pass_fail_pairs(seed, n, rate_before, rate_after):
    state = rs(seed)
    return floats(state.binomial(1, rate_before, n)), floats(state.binomial(1, rate_after, n))


SCORES_500 = rounded(rs(4).normal(0.62, 0.18, 500), 6)
PASS_FAIL_2000 = pass_fail(11, 0.7, 2000)

MEAN_CASES = [
    ('no values', [], 0.95),
    ('one value', [0.7], 0.95),
    ('two values', [0.2, 0.9], 0.95),
    ('three values at 99.9%', [1.0, 2.0, 4.0], 0.999),
    ('ten equal values of 0.1', [0.1] * 10, 0.95),
    ('forty pass/fail scores at 80%', pass_fail(1, 0.7, 40), 0.8),
    ('scores far from zero', rounded(1e6 + rs(2).normal(0, 0.01, 30), 4), 0.95),
    ('negative scores at 90%', rounded(rs(3).normal(-2.5, 1.0, 25), 4), 0.9),
    ('500 continuous scores', SCORES_500, 0.95),
    ('2,000 continuous scores at 99.9%', rounded(rs(5).beta(2, 5, 2000), 6), 0.999),
    ('2,000 pass/fail scores', PASS_FAIL_2000, 0.95),
]

WILSON_CASES = [
    ('0 of 0', 0, 0, 0.95),
    ('0 of 10', 0, 10, 0.95),
    ('10 of 10', 10, 10, 0.95),
    ('1 of 1', 1, 1, 0.95),
    ('0 of 1 at 99.9%', 0, 1, 0.999),
    ('7 of 20 at 80%', 7, 20, 0.8),
    ('13 of 37 at 90%', 13, 37, 0.9),
    ('50 of 100 at 99.9%', 50, 100, 0.999),
    ('1 of 1000', 1, 1000, 0.95),
    ('999 of 1000', 999, 1000, 0.95),
]

# Each paired case: name, from, to, confidence, the Wilcoxon method it is meant to exercise.
PAIRED_CASES = [
    ('no pairs', [], [], 0.95, None),
    ('one pair', [0.2], [0.5], 0.95, None),
    ('two pairs', [0.1, 0.4], [0.3, 0.9], 0.95, 'exact'),
    ('two pairs, one of them unchanged', [0.5, 0.5], [0.5, 0.8], 0.95, 'permutation'),
    ('three pairs at 99.9%', [1.0, 2.0, 3.0], [2.0, 4.0, 7.0], 0.999, 'exact'),
    ('three pairs whose signed ranks sit at the centre', [0.0, 0.0, 3.0], [1.0, 2.0, 0.0], 0.95, 'exact'),
    ('twelve continuous pairs (exact signed-rank)', *continuous_pairs(21, 12, 0.08, 0.15), 0.95, 'exact'),
    ('eight pairs with tied |d| and no zeros', [5.0, 3.0, 6.0, 2.0, 7.0, 4.0, 8.0, 1.0],
     [6.0, 2.0, 8.0, 4.0, 4.0, 7.0, 9.0, 5.0], 0.95, 'permutation'),
    ('ten pairs with ties and zero differences', [3.0, 1.0, 4.0, 1.0, 5.0, 9.0, 2.0, 6.0, 5.0, 3.0],
     [4.0, 1.0, 2.0, 3.0, 7.0, 9.0, 3.0, 6.0, 3.0, 5.0], 0.95, 'permutation'),
    ('twenty pairs with ties and zero differences', *integer_pairs(22, 20, 0, 4), 0.95, 'asymptotic'),
    ('thirty pairs with ties at 90%', *integer_pairs(23, 30, 1, 5), 0.9, 'asymptotic'),
    ('every difference zero', [0.3, 0.5, 0.9, 0.1], [0.3, 0.5, 0.9, 0.1], 0.95, None),
    ('every score equal on both sides', [1.0] * 8, [1.0] * 8, 0.95, None),
    ('the same gain on every datapoint', [1.0, 2.0, 3.0, 4.0], [3.0, 4.0, 5.0, 6.0], 0.95, 'permutation'),
    ('a baseline that passes everything', [1.0] * 12,
     [1.0, 0.0, 1.0, 1.0, 0.0, 1.0, 1.0, 1.0, 0.0, 1.0, 1.0, 1.0], 0.95, 'permutation'),
    ('gains and losses of equal sizes', [0.0, 2.0, 0.0, 3.0], [1.0, 1.0, 2.0, 1.0], 0.95, 'permutation'),
    ('five pairs whose near-equal differences tie only where the doubles are equal',
     [0.2, 0.5, 0.5, 0.9, 0.4], [0.4, 0.5, 0.7, 0.7, 0.6], 0.95, 'permutation'),
    ('thirteen pass/fail pairs (the most scipy permutes)', *pass_fail_pairs(34, 13, 0.5, 0.8), 0.95,
     'permutation'),
    ('fourteen pass/fail pairs (normal approximation past thirteen)', *pass_fail_pairs(31, 14, 0.5, 0.8),
     0.95, 'asymptotic'),
    ('fifty continuous pairs (exact signed-rank at 50)', *continuous_pairs(24, 50, 0.03, 0.1), 0.95, 'exact'),
    ('fifty pairs all improved', *continuous_pairs(25, 50, 0.5, 0.05), 0.95, 'exact'),
    ('sixty continuous pairs (normal approximation above 50)', *continuous_pairs(26, 60, 0.02, 0.1), 0.95,
     'asymptotic'),
    ('eighty pass/fail pairs', *pass_fail_pairs(27, 80, 0.6, 0.7), 0.95, 'asymptotic'),
    ('forty pairs getting worse', *continuous_pairs(28, 40, -0.15, 0.12), 0.95, 'exact'),
    ('500 continuous pairs', *continuous_pairs(29, 500, 0.01, 0.2), 0.95, 'asymptotic'),
    ('2,000 continuous pairs at 99.9%', *continuous_pairs(30, 2000, -0.004, 0.1), 0.999, 'asymptotic'),
    ('2,000 pass/fail pairs at 80%', *pass_fail_pairs(31, 2000, 0.7, 0.72), 0.8, 'asymptotic'),
]

# Each signed-rank case: name, differences, the Wilcoxon method it is meant to exercise (None: all zero).
SIGNED_RANK_CASES = [
    ('one nonzero difference', [0.4], 'exact'),
    ('one nonzero difference among zeros', [0.0, -0.4, 0.0], 'permutation'),
    ('two equal gains', [0.3, 0.3], 'permutation'),
    ('a gain and a loss of equal size', [0.3, -0.3], 'permutation'),
    ('two unequal gains (no ties: exact)', [0.1, 0.3], 'exact'),
    ('four identical gains', [1.0, 1.0, 1.0, 1.0], 'permutation'),
    ('four identical losses', [-0.25, -0.25, -0.25, -0.25], 'permutation'),
    ('five with a zero and a tie', [2.0, 0.0, -1.0, 1.0, 3.0], 'permutation'),
    ('five with zeros and ties, all gains', [0.5, 0.0, 0.5, 0.0, 1.5], 'permutation'),
    ('eight with zeros and ties', [0.0, 3.0, 3.0, -1.0, 2.0, 2.0, 0.0, 4.0], 'permutation'),
    ('eight with zeros and ties centred', [0.0, 1.0, -1.0, 2.0, -2.0, 3.0, -3.0, 0.0], 'permutation'),
    ('twelve with zeros and ties', [1.0, 0.0, 2.0, 2.0, -2.0, 3.0, 0.0, 5.0, 5.0, 5.0, 1.0, -4.0],
     'permutation'),
    ('twelve pass/fail differences', [1.0, -1.0, 1.0, 1.0, 0.0, 1.0, 1.0, -1.0, 1.0, 0.0, 1.0, 1.0],
     'permutation'),
    ('thirteen with zeros and ties (the most scipy permutes)',
     [0.0, 1.0, -1.0, 2.0, 2.0, 2.0, -3.0, 4.0, 0.0, 5.0, 5.0, -6.0, 7.0], 'permutation'),
    ('thirteen equal gains', [1.0] * 13, 'permutation'),
    ('thirteen with ties and no zeros', [1.0, 2.0, 2.0, -3.0, 4.0, 5.0, 6.0, 6.0, -6.0, 7.0, 8.0, 9.0, 10.0],
     'permutation'),
    ('thirteen with one nonzero difference', [0.0] * 12 + [2.0], 'permutation'),
    ('thirteen distinct differences (exact)', [-0.5, -1.5, -2.5] + [float(v) for v in range(1, 11)], 'exact'),
    ('thirteen zeros', [0.0] * 13, None),
    ('fourteen with ties (normal approximation past thirteen)',
     [1.0, 2.0, 2.0, -3.0, 4.0, 5.0, 6.0, 6.0, -6.0, 7.0, 8.0, 9.0, 10.0, 11.0], 'asymptotic'),
    ('fourteen with ties and zeros (n counts the zeros)',
     [0.0, 1.0, -1.0, 2.0, 2.0, 2.0, -3.0, 4.0, 0.0, 5.0, 5.0, -6.0, 7.0, 0.0], 'asymptotic'),
    ('fourteen equal gains', [1.0] * 14, 'asymptotic'),
    ('fourteen with one nonzero difference', [0.0] * 13 + [2.0], 'asymptotic'),
]

MCNEMAR_CASES = [
    ('no discordant pairs', 0, 0),
    ('one discordant pair', 1, 0),
    ('b equals c', 5, 5),
    ('b is 0', 0, 7),
    ('c is 0', 9, 0),
    ('1 against 2', 1, 2),
    ('3 against 17', 3, 17),
    ('12 against 13', 12, 13),
    ('40 against 80', 40, 80),
    ('60 against 60', 60, 60),
    ('0 against 120', 0, 120),
]

HOLM_CASES = [
    ('four tests', [0.01, 0.04, 0.03, 0.005]),
    ('nulls and tied p-values', [None, 0.02, None, 0.02, 0.5]),
    ('nothing tested', []),
    ('only nulls', [None, None]),
    ('one test', [0.04]),
    ('capped at 1', [0.5, 0.9, 1.0]),
    ('three equal p-values', [0.001, 0.001, 0.001]),
    ('the running maximum binds', [0.2, None, 0.01, 0.03, 0.03, 0.04, 0.011]),
    ('a p-value of zero', [0.0, 0.3, 0.02]),
]

# name, values, confidence, resamples, seed, compare with scipy.stats.bootstrap (its seed)
BOOTSTRAP_CASES = [
    ('no values', [], 0.95, 1000, 1, None),
    ('one value', [0.4], 0.95, 1000, 1, None),
    ('two values', [0.2, 0.9], 0.95, 1000, 1, None),
    ('ten pass/fail scores', pass_fail(41, 0.6, 10), 0.95, 2000, 42, None),
    ('twenty equal scores', [0.5] * 20, 0.95, 500, 3, None),
    ('thirty-seven continuous scores at 80%', rounded(rs(42).normal(0.5, 0.2, 37), 4), 0.8, 999, 7, None),
    ('the same scores with the seed 2^32 + 7', rounded(rs(42).normal(0.5, 0.2, 37), 4), 0.8, 999, 2**32 + 7,
     None),
    ('a hundred scores at 99.9% with seed 0', rounded(rs(43).beta(2, 3, 100), 4), 0.999, 4000, 0, None),
    ('fifty scores with seed -1', rounded(rs(44).normal(0, 1, 50), 4), 0.9, 1500, -1, None),
    ('one resample', [0.1, 0.2, 0.3, 0.4], 0.95, 1, 5, None),
    ('500 continuous scores, 10,000 resamples', SCORES_500, 0.95, 10_000, 2024, 501),
    ('2,000 pass/fail scores, 10,000 resamples', PASS_FAIL_2000, 0.9, 10_000, 99, 502),
    ('seventy-three scores, 2,500 resamples in three chunks whose seeds wrap past 2^32 to 0',
     rounded(rs(45).uniform(0, 1, 73), 4), 0.95, 2500, 2**32 - 2, None),
    ('32,769 values (about half the 16-bit candidates rejected), 4 resamples',
     {'length': 32_769, 'multiplier': 7919, 'modulus': 1009}, 0.9, 4, 12, None),
    ('65,536 values (the most drawn from 16-bit halves), 4 resamples',
     {'length': 65_536, 'multiplier': 7919, 'modulus': 1009}, 0.9, 4, 13, None),
    ('65,537 values (the fewest drawn from whole outputs), 4 resamples',
     {'length': 65_537, 'multiplier': 7919, 'modulus': 1009}, 0.9, 4, 14, None),
]

# name, values, chunk, count, seed: bootstrapChunkMeans(values, chunk, count, seed), to the bit.
CHUNK_MEANS_CASES = [
    ('thirty-seven scores, chunk 2 (seed 7 + 2), its first five resamples', rounded(rs(42).normal(0.5, 0.2, 37), 4),
     2, 5, 7),
    ('ten pass/fail scores, chunk 0, all 1,000 resamples', pass_fail(41, 0.6, 10), 0, 1000, 42),
    ('one value resamples to itself', [0.25], 0, 3, 1),
    ('65,537 values by rule, chunk 1 (32-bit draws), two resamples',
     {'length': 65_537, 'multiplier': 7919, 'modulus': 1009}, 1, 2, 3),
]


def values_of(values):
    """A case's values: a list as it is, or a rule {length, multiplier m, modulus q}: ((i m) mod q) / q."""
    if isinstance(values, dict):
        return [((i * values['multiplier']) % values['modulus']) / values['modulus'] for i in range(values['length'])]
    return values


def values_entry(values):
    return {'values_rule': values} if isinstance(values, dict) else {'values': values}

GENERATOR_SEEDS = [0, 1, 42, 123456789, 2**32 - 1, -1]
# n = 2,096,129 (about 2^32 / 2049) has the largest leftover range of any n up to 2^21:
# (2^32 - n) mod n = 2,095,104, so about one draw in 2,000 is redrawn. On 16 bits, n = 32,769
# leaves (2^16 - n) mod n = 32,767: about half the candidates are rejected. 65,536 is the largest
# n drawn from halves (no rejection), 65,537 the smallest from whole outputs; 10,001 is odd, so
# draws end on high halves as often as on low ones.
INDEX_CASES = [(5, 3, 16), (6, 10, 40), (7, 2_096_129, 20_000), (8, 32_769, 3000), (9, 65_536, 3000),
               (10, 65_537, 3000), (11, 10_001, 3001)]


def generator_figures():
    known = Xoshiro128StarStar([1, 2, 3, 4])
    assert [known.next_uint32() for _ in KNOWN_ANSWER] == KNOWN_ANSWER
    seeded = []
    for seed in GENERATOR_SEEDS:
        random = Xoshiro128StarStar.seeded(seed)
        seeded.append({'seed': seed, 'outputs': [random.next_uint32() for _ in range(8)]})
    draws = []
    for seed, n, count in INDEX_CASES:
        random = Xoshiro128StarStar.seeded(seed)
        indices = [random.next_index(n) for _ in range(count)]
        assert all(0 <= i < n for i in indices)
        if n in (2_096_129, 32_769, 10_001):
            assert random.rejections > 0
        if n == 32_769:
            assert random.rejections > count // 2, 'about half the candidates are rejected'
        draws.append({'seed': seed, 'n': n, 'count': count, 'first': indices[:16], 'last': indices[-16:],
                      'sum': sum(indices), 'redrawn': random.rejections})
    return {'known_answer': {'state': [1, 2, 3, 4], 'outputs': KNOWN_ANSWER}, 'seeded': seeded,
            'index_draws': draws}


def build():
    figures = {
        'about': 'Written by reference.py beside this file; see its docstring for what each figure is.',
        'versions': {'python': sys.version.split()[0], 'numpy': np.__version__, 'scipy': scipy.__version__},
        'tolerance': {'relative': 1e-9, 'absolute': 1e-12},
        'mean_with_interval': [
            {'name': name, 'values': values, 'confidence': confidence,
             'expected': mean_with_interval(values, confidence)}
            for name, values, confidence in MEAN_CASES],
        'wilson_interval': [
            {'name': name, 'successes': k, 'n': n, 'confidence': confidence,
             'expected': wilson_interval(k, n, confidence)}
            for name, k, n, confidence in WILSON_CASES],
        'paired_estimate': [],
        'signed_rank': [],
        'mcnemar': [{'name': name, 'b': b, 'c': c, 'expected': mcnemar(b, c)} for name, b, c in MCNEMAR_CASES],
        'holm': [{'name': name, 'p_values': ps, 'expected': holm(ps)} for name, ps in HOLM_CASES],
        'bootstrap_mean_interval': [],
        'bootstrap_chunk_means': [],
        'generator': generator_figures(),
    }
    for name, before, after, confidence, intended in PAIRED_CASES:
        print(f'paired: {name}', file=sys.stderr)
        method, expected = paired_estimate(before, after, confidence)
        assert method == intended, (name, method, intended)
        figures['paired_estimate'].append({'name': name, 'from': before, 'to': after, 'confidence': confidence,
                                           'wilcoxon_method': method, 'expected': expected})
    for name, differences, intended in SIGNED_RANK_CASES:
        print(f'signed rank: {name}', file=sys.stderr)
        method, p = wilcoxon_p(differences)
        assert method == intended, (name, method, intended)
        figures['signed_rank'].append({'name': name, 'differences': differences, 'wilcoxon_method': method,
                                       'expected': p})
    for name, values, confidence, resamples, seed, scipy_seed in BOOTSTRAP_CASES:
        print(f'bootstrap: {name}', file=sys.stderr)
        case = {'name': name, **values_entry(values), 'confidence': confidence, 'resamples': resamples,
                'seed': seed, 'expected': bootstrap_interval(values_of(values), confidence, resamples, seed)}
        if scipy_seed is not None:
            case['scipy_percentile'] = scipy_percentile_interval(values, confidence, scipy_seed)
        figures['bootstrap_mean_interval'].append(case)
    for name, values, chunk, count, seed in CHUNK_MEANS_CASES:
        print(f'bootstrap chunk: {name}', file=sys.stderr)
        means = chunk_means(values_of(values), chunk, count, seed)
        if len(values_of(values)) > 1 and count == CHUNK_RESAMPLES and chunk == 0:
            assert bootstrap_interval(values_of(values), 0.95, count, seed) == \
                {'low': quantile_type7(sorted(means), 0.025), 'high': quantile_type7(sorted(means), 0.975)}
        figures['bootstrap_chunk_means'].append({'name': name, **values_entry(values), 'chunk': chunk,
                                                 'count': count, 'seed': seed, 'expected': means})
    return figures


# ---------------------------------------------------------------------------------------------
# Writing: JSON with sorted keys, two-space indents, arrays of numbers wrapped at 100 columns.


def dump(value, indent=0):
    pad = '  ' * indent
    inner = '  ' * (indent + 1)
    if isinstance(value, dict):
        if not value:
            return '{}'
        items = [f'{inner}{json.dumps(key)}: {dump(value[key], indent + 1)}' for key in sorted(value)]
        return '{\n' + ',\n'.join(items) + '\n' + pad + '}'
    if isinstance(value, list):
        if not value:
            return '[]'
        if all(not isinstance(item, (dict, list)) for item in value):
            return scalar_list(value, indent)
        return '[\n' + ',\n'.join(inner + dump(item, indent + 1) for item in value) + '\n' + pad + ']'
    return json.dumps(value, allow_nan=False)


def scalar_list(values, indent):
    texts = [json.dumps(v, allow_nan=False) for v in values]
    if len(', '.join(texts)) + 2 + 2 * indent <= 100:
        return '[' + ', '.join(texts) + ']'
    inner = '  ' * (indent + 1)
    lines, line = [], ''
    for text in texts:
        if line and len(inner) + len(line) + len(text) + 2 > 100:
            lines.append(line)
            line = ''
        line = f'{line} {text},' if line else f'{text},'
    lines.append(line)
    body = '\n'.join(inner + entry for entry in lines)
    return '[\n' + body[:-1] + '\n' + '  ' * indent + ']'


def write_reference(build_figures, dump_figures, path):
    """Builds the figures (scipy >= 1.17) and writes them to `path` as dump_figures lays them out."""
    version = tuple(int(part) for part in scipy.__version__.split('.')[:2])
    if version < (1, 17):
        sys.exit(f'scipy >= 1.17 is needed (its wilcoxon defaults), found {scipy.__version__}')
    figures = build_figures()
    text = dump_figures(figures) + '\n'
    assert json.loads(text) == json.loads(json.dumps(figures))
    with open(path, 'w', encoding='utf-8') as out:
        out.write(text)
    print(f'wrote {path}', file=sys.stderr)


def main():
    write_reference(build, dump, os.path.join(os.path.dirname(os.path.abspath(__file__)), 'reference.json'))


if __name__ == '__main__':
    main()
