// Interval estimates: the t interval of a mean and Wilson's interval of a proportion. Pure; the
// quantiles come from @stdlib.
import { normalQuantile, tQuantile } from './distributions.ts';
import { meanAndSd, meanOf } from './moments.ts';

export interface Interval {
  low: number;
  high: number;
}

export interface MeanEstimate {
  n: number;
  mean: number | null;
  sd: number | null;
  se: number | null;
  ci: Interval | null;
}

/** t interval of the mean at `confidence` (two-sided), sd with n-1 degrees of freedom. */
export function meanWithInterval(values: ArrayLike<number>, confidence: number): MeanEstimate {
  assertConfidence(confidence);
  const n = values.length;
  if (n === 0) return { n, mean: null, sd: null, se: null, ci: null };
  // One value has no spread to measure (n - 1 = 0 degrees of freedom): its mean alone.
  if (n === 1) return { n, mean: meanOf(values), sd: null, se: null, ci: null };
  const { mean, sd } = meanAndSd(values);
  const se = sd / Math.sqrt(n);
  return { n, mean, sd, se, ci: tInterval(mean, se, n - 1, confidence) };
}

/** Wilson score interval for a proportion, z from the normal quantile at (1+confidence)/2. */
export function wilsonInterval(successes: number, n: number, confidence: number): Interval | null {
  assertConfidence(confidence);
  if (!Number.isSafeInteger(n) || !Number.isSafeInteger(successes) || successes < 0 || successes > n) {
    throw new RangeError(`wilsonInterval needs whole counts with 0 <= successes <= n, got ${successes} of ${n}`);
  }
  if (n === 0) return null; // no trials, no proportion
  const z = normalQuantile((1 + confidence) / 2, 0, 1);
  const z2 = z * z;
  const proportion = successes / n;
  const shrink = 1 + z2 / n;
  const center = (proportion + z2 / (2 * n)) / shrink;
  const half = (z / shrink) * Math.sqrt((proportion * (1 - proportion)) / n + z2 / (4 * n * n));
  // At 0 (or n) successes the bound is exactly 0 (or 1); rounding would leave a crumb.
  const low = successes === 0 ? 0 : Math.max(0, center - half);
  const high = successes === n ? 1 : Math.min(1, center + half);
  return { low, high };
}

/** center ± t_{(1+c)/2, df}·se; no spread (se 0) is the point itself (documented choice). */
export function tInterval(center: number, se: number, df: number, confidence: number): Interval {
  if (se === 0) return { low: center, high: center };
  const half = tQuantile((1 + confidence) / 2, df) * se;
  return { low: center - half, high: center + half };
}

export function assertConfidence(confidence: number): void {
  if (!(confidence > 0 && confidence < 1)) throw new RangeError(`confidence must be in (0, 1), got ${confidence}`);
}
