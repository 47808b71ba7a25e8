// The percentile bootstrap interval of a mean, reproducible from its seed: the same values,
// confidence, resamples and seed give the same interval on any machine, bit for bit (the
// reference script replays it exactly). Pure: the randomness is a seeded generator's.
import { quantileSorted } from 'd3-array';
import { assertConfidence, type Interval } from './intervals.ts';
import { indexRangeMax, Xoshiro128StarStar } from './xoshiro128.ts';

/** Percentile bootstrap interval of the mean of `values`: `resamples` resamples of n drawn with replacement, from a PRNG seeded with `seed`. */
export function bootstrapMeanInterval(
  values: ArrayLike<number>,
  confidence: number,
  resamples: number,
  seed: number,
): Interval | null {
  assertConfidence(confidence);
  if (!Number.isSafeInteger(resamples) || resamples < 1) throw new RangeError(`resamples must be a positive integer, got ${resamples}`);
  const n = values.length;
  if (n < 2) return null; // one value resamples to itself: no interval to speak of
  if (n > indexRangeMax) throw new RangeError(`the bootstrap draws among at most ${indexRangeMax} values, got ${n}`);
  const means = resampledMeans(Float64Array.from(values), resamples, Xoshiro128StarStar.seeded(seed));
  means.sort();
  // d3's quantileSorted interpolates linearly between order statistics: R's type 7, numpy's default.
  const sorted = Array.from(means);
  return { low: quantileSorted(sorted, (1 - confidence) / 2)!, high: quantileSorted(sorted, (1 + confidence) / 2)! };
}

/** Each resample's mean, in order: n values drawn one after another, summed in draw order. */
function resampledMeans(values: Float64Array, resamples: number, random: Xoshiro128StarStar): Float64Array {
  const means = new Float64Array(resamples);
  for (let b = 0; b < resamples; b++) means[b] = random.sumOfDraws(values) / values.length;
  return means;
}
