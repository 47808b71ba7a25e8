// The percentile bootstrap interval of a mean, reproducible from its seed: the same values,
// confidence, resamples and seed give the same interval on any machine, bit for bit (the
// reference script replays it exactly), and however the work is split. Pure: the randomness is
// a seeded generator's.
//
// Definition. Resample b (0 <= b < resamples) belongs to chunk j = floor(b / 1000)
// (bootstrapChunkResamples); the last chunk is shorter when resamples is not a multiple of 1000.
// Each chunk has a generator of its own: xoshiro128** seeded by SplitMix32 from
// (seed + j) mod 2^32 (xoshiro128.ts). Within a chunk the resamples come in order, from that one
// generator: each draws n indices with replacement one after another (for n <= 65,536 two
// indices per 32-bit output, its high 16 bits then its low 16 bits, a half left over at the end
// of a resample starting the next; for larger n one index per output; both by Lemire's
// rejection, see xoshiro128.ts), and its mean is the sum of those values added in draw order,
// divided by n. The interval is the (1 - c)/2 and (1 + c)/2 quantiles (R's type 7) of every
// chunk's means. Since a chunk depends on nothing but (values, seed, j, its count), chunks can
// be computed anywhere, in any order (bootstrapChunkMeans, e.g. on worker threads), and their
// means put together (percentileInterval) give the interval of bootstrapMeanInterval.
import { quantileSorted } from 'd3-array';
import { assertConfidence, type Interval } from './intervals.ts';
import { indexRangeMax, Xoshiro128StarStar } from './xoshiro128.ts';

/** Resamples per chunk: resample b is in chunk floor(b / bootstrapChunkResamples). */
export const bootstrapChunkResamples = 1000;

/** Percentile bootstrap interval of the mean of `values`: `resamples` resamples of n drawn with replacement, in chunks seeded from `seed` (above). */
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
  assertDrawable(n);
  assertSeed(seed);
  const data = Float64Array.from(values);
  return percentileOfChunks(bootstrapChunkSizes(resamples).map((count, chunk) => bootstrapChunkMeans(data, chunk, count, seed)), confidence);
}

/** The percentile interval of chunks' means (chunk j's means are resamples j·1000 ...), in chunk order. */
export function percentileOfChunks(chunks: readonly Float64Array[], confidence: number): Interval {
  const all = new Float64Array(chunks.reduce((total, chunk) => total + chunk.length, 0));
  chunks.forEach((chunk, j) => all.set(chunk, j * bootstrapChunkResamples));
  return percentileInterval(all, confidence);
}

/** The resamples of each chunk of `resamples`: bootstrapChunkResamples each, the last the rest. */
export function bootstrapChunkSizes(resamples: number): number[] {
  return Array.from({ length: Math.ceil(resamples / bootstrapChunkResamples) }, (_, chunk) =>
    Math.min(bootstrapChunkResamples, resamples - chunk * bootstrapChunkResamples),
  );
}

/**
 * The means of resamples chunk·1000 .. chunk·1000 + count - 1 of bootstrapMeanInterval(values,
 * _, resamples, seed), for any resamples that includes them: chunk `chunk`'s first `count`
 * (1 <= count <= 1000) resamples, from the chunk's own generator. Any n >= 1 (one value
 * resamples to itself).
 */
export function bootstrapChunkMeans(values: ArrayLike<number>, chunk: number, count: number, seed: number): Float64Array {
  if (!Number.isSafeInteger(chunk) || chunk < 0) throw new RangeError(`the chunk must be a whole number, got ${chunk}`);
  if (!Number.isSafeInteger(count) || count < 1 || count > bootstrapChunkResamples) {
    throw new RangeError(`a chunk has 1 to ${bootstrapChunkResamples} resamples, got ${count}`);
  }
  if (values.length < 1) throw new RangeError('the bootstrap needs a value to draw');
  assertDrawable(values.length);
  assertSeed(seed);
  const data = values instanceof Float64Array ? values : Float64Array.from(values);
  const means = new Float64Array(count);
  Xoshiro128StarStar.seeded(chunkSeed(seed, chunk)).meansOfResamples(data, means);
  return means;
}

/**
 * The percentile interval of bootstrap means (in any order: a sorted copy is taken, `means` is
 * left as it was): their (1 - c)/2 and (1 + c)/2 quantiles, interpolated linearly between order
 * statistics (d3's quantileSorted: R's type 7, numpy's default).
 */
export function percentileInterval(means: Float64Array, confidence: number): Interval {
  assertConfidence(confidence);
  if (means.length < 1) throw new RangeError('a percentile interval needs at least one mean');
  const sorted = Array.from(means.slice().sort());
  return { low: quantileSorted(sorted, (1 - confidence) / 2)!, high: quantileSorted(sorted, (1 + confidence) / 2)! };
}

/** Chunk j's generator seed: (seed + j) mod 2^32, exact for any safe seed (seed >>> 0 is seed mod 2^32). */
function chunkSeed(seed: number, chunk: number): number {
  return ((seed >>> 0) + chunk) >>> 0;
}

function assertSeed(seed: number): void {
  if (!Number.isSafeInteger(seed)) throw new RangeError(`the seed must be a safe integer, got ${seed}`);
}

function assertDrawable(n: number): void {
  if (n > indexRangeMax) throw new RangeError(`the bootstrap draws among at most ${indexRangeMax} values, got ${n}`);
}
