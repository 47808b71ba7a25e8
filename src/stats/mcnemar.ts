// McNemar's test on the discordant pairs of two pass/fail candidates: under the null, each of
// the n = b + c discordant pairs goes either way with probability 1/2, so the smaller count k is
// Binomial(n, 1/2). Pure; the binomial distribution comes from @stdlib.
import { binomialCdf, binomialPmf } from './distributions.ts';

/** Exact two-sided McNemar on the discordant pairs (b: pass->fail, c: fail->pass) and its mid-p. */
export function mcnemar(b: number, c: number): { p_value: number; mid_p_value: number } {
  if (!isCount(b) || !isCount(c)) throw new RangeError(`mcnemar needs whole counts, got b = ${b}, c = ${c}`);
  const n = b + c;
  if (n === 0) return { p_value: 1, mid_p_value: 1 }; // documented choice: no discordance, no evidence
  const k = Math.min(b, c);
  // At p = 1/2 the exact two-sided binomial test (scipy's binomtest) is 2 P(X <= k), capped at
  // 1: the outcomes as unlikely as k are k's tail and its mirror. @stdlib/stats-binomial-test
  // computes the mirror as 1 - CDF, which rounds it to 0 for small p (half of 1.5e-36 at 0 of 120).
  const p = Math.min(1, 2 * binomialCdf(k, n, 0.5));
  const midP = Math.min(1, 2 * (binomialCdf(k - 1, n, 0.5) + 0.5 * binomialPmf(k, n, 0.5)));
  return { p_value: p, mid_p_value: midP };
}

function isCount(value: number): boolean {
  return Number.isSafeInteger(value) && value >= 0;
}
