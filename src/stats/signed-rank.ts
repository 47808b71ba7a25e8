// The two-sided Wilcoxon signed-rank p-value of paired differences d, as scipy.stats.wilcoxon(d)
// computes it with its 1.17 defaults (zero_method='wilcox', correction=False, method='auto';
// read from scipy/stats/_wilcoxon.py and permutation_test in scipy/stats/_resampling.py).
// The rule, exactly, with n the number of pairs counted BEFORE zeros are dropped (as scipy does):
//   - Zero differences are dropped; m nonzero ones are left of the n pairs. If m = 0 (every
//     difference is zero) the p-value is 1: scipy gives 1 too for 2 <= n <= 13 (its permutation
//     test); elsewhere (nan above 13, an error for one zero) 1 is our documented choice.
//   - The |d| are ranked with average ranks for ties (equal doubles, as scipy's rankdata); R+ is
//     the sum of the ranks of the positive differences. Ranks are multiples of 1/2, so 2R+ is an
//     integer and the permutation test compares 2R+ as integers.
//   - Exact when n <= 50, no difference is zero and no two |d| are equal (scipy 'auto' chooses
//     method='exact'): p = min(1, 2 F(min(R+, m(m+1)/2 - R+))), F the signed-rank CDF for m; by
//     symmetry this is scipy's min(1, 2 min(P(T >= R+), P(T <= R+))).
//   - Exact permutation test when n <= 13 and some difference is zero or two |d| are equal
//     (scipy 'auto' runs permutation_test with its default 9999 resamples, which covers all 2^n
//     sign flips exactly when 2^n <= 9999, i.e. n <= 13): over the 2^m assignments of signs to
//     the nonzero |d|, each keeping its average rank, T = R+ of the assignment, and
//     p = min(1, 2 min(#{T <= R+}, #{T >= R+}) / 2^m), the observed assignment among them.
//     scipy flips the signs of all n differences, zeros included, but a zero stays zero under a
//     flip and is dropped again, so each of the 2^m assignments appears 2^(n-m) times and the
//     proportions are the same. (scipy's relative tolerance of 100 eps in these comparisons
//     cannot join two distinct rank sums, which differ by at least 1/2.)
//   - Otherwise (n > 50, or 14 <= n <= 50 with zeros or ties) the normal approximation with the
//     tie correction and no continuity correction (scipy's method='asymptotic'):
//     z = (R+ - m(m+1)/4) / sqrt((m(m+1)(2m+1) - sum(t^3 - t)/2) / 24), over the groups of t
//     tied |d|, and p = 2 Phi(-|z|).
// @stdlib/stats-wilcoxon follows the same exact/asymptotic split but computes the tails as
// 1 - CDF (its p of 1.6e-11 for 60 positive differences is wrong from the 6th digit) and does
// not cap the exact p at 1, so the p-value is made here from @stdlib's two CDFs. No package
// computes the permutation distribution with tied ranks, so signFlipPValue below enumerates it:
// that enumeration is the definition of the exact conditional test, not an approximation. Pure.
import { normalCdf, signrankCdf } from './distributions.ts';

/** Above this many pairs scipy's 'auto' never uses the exact distribution. */
const exactPairsMax = 50;
/** Up to this many pairs, zeros included, scipy's 'auto' permutes when there are zeros or ties (2^13 <= 9999). */
const permutationPairsMax = 13;

/** Two-sided Wilcoxon signed-rank p-value of `differences` under the rule above. */
export function signedRankPValue(differences: ArrayLike<number>): number {
  const n = differences.length;
  const ranked = rankNonzero(differences);
  const m = ranked.count;
  if (m === 0) return 1; // scipy's permutation test gives 1 too; above 13 pairs, our documented choice
  const zerosOrTies = m < n || ranked.tieTerm !== 0;
  if (n <= exactPairsMax && !zerosOrTies) {
    const rankTotal = (m * (m + 1)) / 2;
    return Math.min(1, 2 * signrankCdf(Math.min(ranked.positiveRankSum, rankTotal - ranked.positiveRankSum), m));
  }
  if (n <= permutationPairsMax) return signFlipPValue(ranked.doubledRanks, ranked.doubledPositiveRankSum);
  const expected = (m * (m + 1)) / 4;
  const sd = Math.sqrt((m * (m + 1) * (2 * m + 1) - ranked.tieTerm / 2) / 24);
  const z = (ranked.positiveRankSum - expected) / sd;
  return 2 * normalCdf(-Math.abs(z), 0, 1);
}

/**
 * The exact two-sided p of the conditional signed-rank permutation test, by its definition:
 * every one of the 2^m assignments of signs to the ranked nonzero |d| is visited once, in Gray
 * code order (one sign changes per step, so 2R+ is updated by one rank), and
 * p = min(1, 2 min(#{2T <= 2R+}, #{2T >= 2R+}) / 2^m). All sums are of integers (twice the
 * average ranks), so the comparisons are exact; 2^m is a power of two, so the division is too.
 * Allocates nothing per assignment.
 */
function signFlipPValue(doubledRanks: ArrayLike<number>, observed: number): number {
  const m = doubledRanks.length;
  if (m > permutationPairsMax) {
    throw new RangeError(`the permutation test is for at most ${permutationPairsMax} differences, got ${m}`);
  }
  const assignments = 2 ** m;
  let positive = 0; // bit i set: the difference of rank doubledRanks[i] is positive; start with none
  let sum = 0; // 2R+ of the current assignment
  let atMost = 0;
  let atLeast = 0;
  for (let step = 0; step < assignments; step++) {
    if (step > 0) {
      const bit = step & -step; // Gray code: the sign to change is the lowest set bit of step
      positive ^= bit;
      const rank = doubledRanks[31 - Math.clz32(bit)]!;
      sum += (positive & bit) !== 0 ? rank : -rank;
    }
    if (sum <= observed) atMost++;
    if (sum >= observed) atLeast++;
  }
  return Math.min(1, (2 * Math.min(atMost, atLeast)) / assignments);
}

interface RankedDifferences {
  /** How many differences are nonzero. */
  count: number;
  /** The sum of the average ranks of |d| over the positive differences. */
  positiveRankSum: number;
  /** Twice that sum, an integer. */
  doubledPositiveRankSum: number;
  /** Twice the average rank of each nonzero |d| (integers), in increasing order of |d|. */
  doubledRanks: number[];
  /** sum(t^3 - t) over the groups of t equal |d| (0 when there are no ties). */
  tieTerm: number;
}

function rankNonzero(differences: ArrayLike<number>): RankedDifferences {
  const nonzero: number[] = [];
  for (let i = 0; i < differences.length; i++) if (differences[i] !== 0) nonzero.push(differences[i]!);
  nonzero.sort((a, b) => Math.abs(a) - Math.abs(b));
  const doubledRanks: number[] = [];
  let doubledPositiveRankSum = 0;
  let tieTerm = 0;
  for (let start = 0; start < nonzero.length; ) {
    let end = start + 1;
    while (end < nonzero.length && Math.abs(nonzero[end]!) === Math.abs(nonzero[start]!)) end++;
    const tied = end - start;
    const doubledRank = start + 1 + end; // ranks start+1 .. end share their mean, (start + 1 + end) / 2
    for (let i = start; i < end; i++) {
      doubledRanks.push(doubledRank);
      if (nonzero[i]! > 0) doubledPositiveRankSum += doubledRank;
    }
    tieTerm += tied * tied * tied - tied;
    start = end;
  }
  return {
    count: nonzero.length,
    positiveRankSum: doubledPositiveRankSum / 2,
    doubledPositiveRankSum,
    doubledRanks,
    tieTerm,
  };
}
