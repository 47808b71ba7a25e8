// src/stats/ against test/data/statistics/reference.json, which an independent Python script
// (numpy and scipy, no code shared) writes beside it: every figure of every case within a
// relative 1e-9 (absolute 1e-12 near zero), nulls exactly, the seeded bootstrap to the bit.
import { readFileSync } from 'node:fs';
import normalCdf from '@stdlib/stats-base-dists-normal-cdf';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import {
  bootstrapChunkMeans,
  bootstrapChunkResamples,
  bootstrapMeanInterval,
  holm,
  mcnemar,
  meanWithInterval,
  pairedEstimate,
  percentileInterval,
  wilsonInterval,
  type Interval,
} from '../../src/stats/index.ts';
import { signedRankPValue } from '../../src/stats/signed-rank.ts';
import { Xoshiro128StarStar } from '../../src/stats/xoshiro128.ts';

interface Case<Expected> {
  name: string;
  expected: Expected;
}
interface Reference {
  tolerance: { relative: number; absolute: number };
  mean_with_interval: (Case<unknown> & { values: number[]; confidence: number })[];
  wilson_interval: (Case<unknown> & { successes: number; n: number; confidence: number })[];
  paired_estimate: (Case<unknown> & { from: number[]; to: number[]; confidence: number; wilcoxon_method: string | null })[];
  signed_rank: (Case<number> & { differences: number[]; wilcoxon_method: string | null })[];
  mcnemar: (Case<unknown> & { b: number; c: number })[];
  holm: (Case<unknown> & { p_values: (number | null)[] })[];
  bootstrap_mean_interval: (Case<Interval | null> & ValuesEntry & {
    confidence: number;
    resamples: number;
    seed: number;
    scipy_percentile?: Interval & { resamples: number; tolerance: number };
  })[];
  bootstrap_chunk_means: (Case<number[]> & ValuesEntry & { chunk: number; count: number; seed: number })[];
  generator: {
    seeded: { seed: number; outputs: number[] }[];
    index_draws: { seed: number; n: number; count: number; first: number[]; last: number[]; sum: number; redrawn: number }[];
  };
}

/** A case's values, listed or by a rule: value i = ((i·multiplier) mod modulus) / modulus. */
interface ValuesEntry {
  values?: number[];
  values_rule?: { length: number; multiplier: number; modulus: number };
}

function valuesOf(entry: ValuesEntry): number[] {
  if (entry.values) return entry.values;
  const { length, multiplier, modulus } = entry.values_rule!;
  return Array.from({ length }, (_, i) => ((i * multiplier) % modulus) / modulus);
}

const reference = JSON.parse(
  readFileSync(new URL('../data/statistics/reference.json', import.meta.url), 'utf8'),
) as Reference;
const { relative, absolute } = reference.tolerance;

/** Asserts `actual` has exactly the shape of `expected`, each number within the tolerance. */
function assertFigures(actual: unknown, expected: unknown, where: string): void {
  if (expected === null || typeof expected !== 'object') {
    if (typeof expected === 'number' && typeof actual === 'number') {
      const near = Math.abs(actual - expected) <= Math.max(relative * Math.abs(expected), absolute);
      assert.ok(near, `${where}: ${actual} is not within tolerance of ${expected}`);
    } else {
      assert.is(actual, expected, where);
    }
    return;
  }
  assert.type(actual, 'object', where);
  assert.ok(actual !== null, `${where}: null where ${JSON.stringify(expected)} was expected`);
  const actualRecord = actual as Record<string, unknown>;
  const expectedRecord = expected as Record<string, unknown>;
  assert.equal(Object.keys(actualRecord).sort(), Object.keys(expectedRecord).sort(), `${where}: keys`);
  for (const key of Object.keys(expectedRecord)) assertFigures(actualRecord[key], expectedRecord[key], `${where}.${key}`);
}

test('the mean, sd, se and t interval of every reference case are scipy\'s, null below two values', () => {
  for (const item of reference.mean_with_interval) {
    assertFigures(meanWithInterval(item.values, item.confidence), item.expected, item.name);
  }
});

test("Wilson's interval of every reference case is scipy's proportion_ci(method='wilson'), null for 0 of 0", () => {
  for (const item of reference.wilson_interval) {
    assertFigures(wilsonInterval(item.successes, item.n, item.confidence), item.expected, item.name);
  }
});

test('every paired comparison is scipy\'s ttest_rel, wilcoxon (by the documented rule) and pearsonr', () => {
  const methods = new Set(reference.paired_estimate.map((item) => item.wilcoxon_method));
  for (const method of ['exact', 'permutation', 'asymptotic']) assert.ok(methods.has(method), `some case is ${method}`);
  for (const item of reference.paired_estimate) {
    assertFigures(pairedEstimate(item.from, item.to, item.confidence), item.expected, item.name);
  }
});

test("the signed-rank p of every reference case is scipy.stats.wilcoxon(d)'s with method='auto'", () => {
  const methods = new Set(reference.signed_rank.map((item) => item.wilcoxon_method));
  for (const method of ['exact', 'permutation', 'asymptotic']) assert.ok(methods.has(method), `some case is ${method}`);
  for (const item of reference.signed_rank) assertFigures(signedRankPValue(item.differences), item.expected, item.name);
});

test('with zeros or ties up to 13 pairs the signed-rank p is the exact count over the 2^m sign flips', () => {
  // Four equal gains: all ranks 2.5, R+ = 10 is the largest of the 16 sums, p = 2 * 1/16.
  assert.is(signedRankPValue([1, 1, 1, 1]), 0.125);
  assert.is(signedRankPValue([-1, -1, -1, -1]), 0.125);
  assert.is(signedRankPValue([0.3, 0.3]), 0.5); // sums 0, 1.5, 1.5, 3: p = 2 * 1/4
  assert.is(signedRankPValue([0, 0, 0.3, 0.3]), 0.5); // zeros are dropped, n = 4 still permutes
  assert.is(signedRankPValue([0, 2]), 1); // one nonzero difference: p = 2 * 1/2
  assert.is(signedRankPValue(Array.from({ length: 13 }, () => 1)), 2 / 2 ** 13);
  // Fourteen pairs, one of them zero, leave 13 nonzero: scipy's n counts the zero, so this is the
  // normal approximation, z = (91 - 45.5) / sqrt((13 * 14 * 27 - 2184 / 2) / 24) (scipy: 3.1149e-4),
  // not the 2 / 2^13 of the permutation.
  const fourteen = signedRankPValue([0, ...Array.from({ length: 13 }, () => 1)]);
  assert.ok(Math.abs(fourteen - 2 * normalCdf(-45.5 / Math.sqrt(159.25), 0, 1)) < 1e-15, String(fourteen));
  // Flipping every sign, or reordering, changes nothing.
  const d = [0, 3, 3, -1, 2, 2, 0, 4, -4, 1, 0.5, -0.5, 2];
  assert.is(signedRankPValue(d.map((x) => -x)), signedRankPValue(d));
  assert.is(signedRankPValue([...d].reverse()), signedRankPValue(d));
});

test("McNemar's exact p is scipy's binomtest and its mid-p comes from scipy's binomial cdf and pmf", () => {
  for (const item of reference.mcnemar) assertFigures(mcnemar(item.b, item.c), item.expected, item.name);
});

test('Holm adjusts the tested p-values step-down in their places and leaves nulls where they were', () => {
  for (const item of reference.holm) assertFigures(holm(item.p_values), item.expected, item.name);
});

test('the seeded bootstrap interval is the Python replay of the generator, bit for bit', () => {
  const sizes = reference.bootstrap_mean_interval.map((item) => valuesOf(item).length);
  for (const n of [65_536, 65_537]) assert.ok(sizes.includes(n), `a reference case has n = ${n}`);
  assert.ok(reference.bootstrap_mean_interval.some((item) => item.resamples % bootstrapChunkResamples !== 0 && item.resamples > bootstrapChunkResamples), 'a case ends on a shorter chunk');
  for (const item of reference.bootstrap_mean_interval) {
    const interval = bootstrapMeanInterval(valuesOf(item), item.confidence, item.resamples, item.seed);
    assert.equal(interval, item.expected, item.name);
  }
});

test("a chunk's bootstrap means are the Python replay's, bit for bit", () => {
  for (const item of reference.bootstrap_chunk_means) {
    const means = bootstrapChunkMeans(valuesOf(item), item.chunk, item.count, item.seed);
    assert.equal(Array.from(means), item.expected, item.name);
  }
});

test('with 10,000 resamples the bootstrap interval agrees with scipy.stats.bootstrap within Monte Carlo error', () => {
  // The tolerance is reference.py's: 6 sds of the difference between two percentile estimates.
  const compared = reference.bootstrap_mean_interval.filter((item) => item.scipy_percentile);
  assert.ok(compared.length >= 2);
  for (const item of compared) {
    const scipy = item.scipy_percentile!;
    const interval = bootstrapMeanInterval(valuesOf(item), item.confidence, scipy.resamples, item.seed)!;
    assert.ok(Math.abs(interval.low - scipy.low) <= scipy.tolerance, `${item.name}: low ${interval.low} vs ${scipy.low}`);
    assert.ok(Math.abs(interval.high - scipy.high) <= scipy.tolerance, `${item.name}: high ${interval.high} vs ${scipy.high}`);
  }
});

test("xoshiro128** from the state (1, 2, 3, 4) gives the reference C implementation's outputs", () => {
  // rand_xoshiro's test vector, produced with Vigna's xoshiro128starstar.c (version 1.1).
  const random = new Xoshiro128StarStar([1, 2, 3, 4]);
  const outputs = Array.from({ length: 10 }, () => random.nextUint32());
  assert.equal(outputs, [11520, 0, 5927040, 70819200, 2031721883, 1637235492, 1287239034, 3734860849, 3729100597, 4258142804]);
});

test('seeded generators and their index draws are the Python replay, redraws included', () => {
  for (const { seed, outputs } of reference.generator.seeded) {
    const random = Xoshiro128StarStar.seeded(seed);
    assert.equal(Array.from({ length: outputs.length }, () => random.nextUint32()), outputs, `seed ${seed}`);
  }
  for (const draws of reference.generator.index_draws) {
    const random = Xoshiro128StarStar.seeded(draws.seed);
    const indices = Array.from({ length: draws.count }, () => random.nextIndex(draws.n));
    assert.equal(indices.slice(0, draws.first.length), draws.first, `n = ${draws.n}: first draws`);
    assert.equal(indices.slice(-draws.last.length), draws.last, `n = ${draws.n}: last draws`);
    assert.is(indices.reduce((sum, index) => sum + index, 0), draws.sum, `n = ${draws.n}: sum`);
  }
  assert.ok(reference.generator.index_draws.some((draws) => draws.redrawn > 0), 'some draw was rejected and redrawn');
});

test('for n <= 2^16 an index comes from each 16-bit half, high first, a rejected half skipped, the halves one stream', () => {
  // Lemire on 16 bits spelled out from the raw outputs: m = r16·n, rejected when m mod 2^16 < (2^16 - n) mod n.
  for (const n of [10, 10_001, 32_769, 65_536]) {
    const raw = Xoshiro128StarStar.seeded(21);
    const candidates: number[] = [];
    const expected: number[] = [];
    let rejected = 0;
    while (expected.length < 3001) {
      if (candidates.length === 0) {
        const r = raw.nextUint32();
        candidates.push(r >>> 16, r & 0xffff);
      }
      const m = candidates.shift()! * n;
      if (m % 65536 < (65536 - n) % n) rejected++;
      else expected.push(Math.floor(m / 65536));
    }
    const random = Xoshiro128StarStar.seeded(21);
    assert.equal(Array.from({ length: expected.length }, () => random.nextIndex(n)), expected, `n = ${n}`);
    // Both have taken the same outputs (the low half of the last one pending when an odd number of halves was).
    assert.is(random.nextUint32(), raw.nextUint32(), `n = ${n}: both at the same output`);
    if (n === 10_001 || n === 32_769) assert.ok(rejected > 0, `n = ${n}: some half was rejected`);
  }
  // A pending half waits for the next 16-bit draw: whole outputs in between neither take nor drop it.
  const raw = Xoshiro128StarStar.seeded(4);
  const [first, second] = [raw.nextUint32(), raw.nextUint32()];
  const random = Xoshiro128StarStar.seeded(4);
  assert.is(random.nextIndex(65_536), first >>> 16); // n = 2^16: never rejected, the index is r16
  assert.is(random.nextUint32(), second);
  assert.is(random.nextIndex(65_536), first & 0xffff);
  assert.is(random.nextIndex(65_537), Math.floor((raw.nextUint32() * 65_537) / 2 ** 32)); // 32-bit: the pending half stays
  assert.is(random.nextIndex(3), Math.floor((((raw.nextUint32() >>> 16) * 3) / 65536)));
});

test('the means of resamples in one loop are those of drawing one index at a time, redraws and pending halves included', () => {
  // 32,769 rejects about half the 16-bit candidates; 2,096,129 redraws about one 32-bit draw in
  // 2,000 (see reference.py); odd n end resamples on either half.
  const cases = [
    { n: 3, resamples: 50 },
    { n: 10_001, resamples: 5 },
    { n: 32_769, resamples: 3 },
    { n: 65_536, resamples: 2 },
    { n: 65_537, resamples: 2 },
    { n: 2_096_129, resamples: 1 },
  ];
  for (const { n, resamples } of cases) {
    const values = Float64Array.from({ length: n }, (_, i) => ((i * 7919) % 1009) / 1009);
    const fused = Xoshiro128StarStar.seeded(9);
    const stepwise = Xoshiro128StarStar.seeded(9);
    if (n <= 65_536) {
      fused.nextIndex(n); // leaves a low half pending for the loop to start with
      stepwise.nextIndex(n);
    }
    for (let round = 0; round < 2; round++) {
      const expected = Array.from({ length: resamples }, () => {
        let sum = 0;
        for (let j = 0; j < n; j++) sum += values[stepwise.nextIndex(n)]!;
        return sum / n;
      });
      const means = new Float64Array(resamples);
      fused.meansOfResamples(values, means);
      assert.equal(Array.from(means), expected, `n = ${n}, round ${round}`);
    }
    assert.is(fused.nextIndex(n), stepwise.nextIndex(n), `n = ${n}: the same pending half`);
    assert.is(fused.nextUint32(), stepwise.nextUint32(), `n = ${n}: both generators end in the same state`);
  }
});

test('chunk j is resamples 1000 j .. 1000 j + 999, from a generator seeded with seed + j alone', () => {
  const values = Array.from({ length: 37 }, (_, i) => ((i * 31) % 17) / 17);
  const seed = 123;
  // The whole, spelled out: chunk by chunk, each from Xoshiro128StarStar.seeded(seed + j), one index at a time.
  const resamples = 2600;
  const whole: number[] = [];
  for (let chunk = 0; chunk * bootstrapChunkResamples < resamples; chunk++) {
    const random = Xoshiro128StarStar.seeded(seed + chunk);
    const count = Math.min(bootstrapChunkResamples, resamples - chunk * bootstrapChunkResamples);
    for (let b = 0; b < count; b++) {
      let sum = 0;
      for (let j = 0; j < values.length; j++) sum += values[random.nextIndex(values.length)]!;
      whole.push(sum / values.length);
    }
  }
  for (const [chunk, count] of [[0, 1000], [1, 1000], [2, 600], [2, 1], [1, 17]] as const) {
    const start = chunk * bootstrapChunkResamples;
    assert.equal(Array.from(bootstrapChunkMeans(values, chunk, count, seed)), whole.slice(start, start + count), `chunk ${chunk}, ${count}`);
  }
  const sorted = Float64Array.from(whole);
  assert.equal(bootstrapMeanInterval(values, 0.9, resamples, seed), percentileInterval(sorted, 0.9));
  // A chunk depends on seed + j alone, counted modulo 2^32, exactly for any safe seed.
  const chunkOf = (chunk: number, chunkSeed: number) => Array.from(bootstrapChunkMeans(values, chunk, 20, chunkSeed));
  assert.equal(chunkOf(3, 5), chunkOf(0, 8));
  assert.equal(chunkOf(2, 2 ** 32 - 1), chunkOf(0, 1));
  assert.equal(chunkOf(1, -1), chunkOf(0, 0));
  assert.equal(chunkOf(5, Number.MAX_SAFE_INTEGER), chunkOf(0, 4)); // (2^53 - 1) mod 2^32 = 2^32 - 1
});

test('the interval is the same whatever order the chunks are computed and put together in', () => {
  for (const n of [200, 10_001]) {
    const values = Float64Array.from({ length: n }, (_, i) => Math.sin(i * 1.7) * 0.3 + ((i * 13) % 7) / 10);
    const resamples = 3500; // three chunks of 1,000 and one of 500
    const chunks = [3, 1, 0, 2].map((chunk) => ({
      chunk,
      means: bootstrapChunkMeans(values, chunk, Math.min(bootstrapChunkResamples, resamples - chunk * bootstrapChunkResamples), 77),
    }));
    const inChunkOrder = new Float64Array(resamples);
    for (const { chunk, means } of chunks) inChunkOrder.set(means, chunk * bootstrapChunkResamples);
    const shuffled = new Float64Array(resamples);
    let offset = 0;
    for (const { means } of chunks) {
      shuffled.set(means, offset);
      offset += means.length;
    }
    const copy = shuffled.slice();
    const expected = bootstrapMeanInterval(values, 0.95, resamples, 77);
    assert.equal(percentileInterval(inChunkOrder, 0.95), expected, `n = ${n}: chunks in order`);
    assert.equal(percentileInterval(shuffled, 0.95), expected, `n = ${n}: chunks out of order`);
    assert.equal(shuffled, copy, 'percentileInterval sorts a copy: the means are left as they were');
  }
});

test('a chunk has 1 to 1,000 resamples of at least one value; a percentile interval needs a mean', () => {
  assert.is(bootstrapChunkResamples, 1000);
  const values = [0.1, 0.4, 0.7];
  for (const count of [0, 1001, 1.5, Number.NaN]) assert.throws(() => bootstrapChunkMeans(values, 0, count, 1), RangeError, String(count));
  for (const chunk of [-1, 0.5, Number.NaN]) assert.throws(() => bootstrapChunkMeans(values, chunk, 10, 1), RangeError, String(chunk));
  for (const seed of [0.5, Number.NaN, 2 ** 53]) assert.throws(() => bootstrapChunkMeans(values, 0, 10, seed), RangeError, String(seed));
  assert.throws(() => bootstrapChunkMeans([], 0, 10, 1), RangeError);
  assert.throws(() => percentileInterval(new Float64Array(0), 0.95), RangeError);
  assert.throws(() => percentileInterval(Float64Array.of(1, 2), 1), RangeError);
  assert.equal(percentileInterval(Float64Array.of(0.3), 0.95), { low: 0.3, high: 0.3 });
  // Plain arrays and typed arrays give the same means.
  assert.equal(bootstrapChunkMeans(values, 4, 30, 9), bootstrapChunkMeans(Float64Array.from(values), 4, 30, 9));
});

test('the same seed gives the same bootstrap interval, a different seed a different one', () => {
  const values = Array.from({ length: 200 }, (_, i) => ((i * 37) % 101) / 100);
  const first = bootstrapMeanInterval(values, 0.95, 2000, 11);
  assert.equal(bootstrapMeanInterval(values, 0.95, 2000, 11), first);
  assert.not.equal(bootstrapMeanInterval(values, 0.95, 2000, 12), first);
});

test('a seed counts modulo 2^32, and must be a safe integer', () => {
  const values = [0.1, 0.5, 0.7, 0.2, 0.9];
  assert.equal(bootstrapMeanInterval(values, 0.9, 300, 2 ** 32 + 7), bootstrapMeanInterval(values, 0.9, 300, 7));
  assert.equal(bootstrapMeanInterval(values, 0.9, 300, -1), bootstrapMeanInterval(values, 0.9, 300, 2 ** 32 - 1));
  for (const seed of [0.5, Number.NaN, 2 ** 53]) {
    assert.throws(() => bootstrapMeanInterval(values, 0.9, 300, seed), RangeError, String(seed));
  }
});

test('paired scores of different lengths are refused', () => {
  assert.throws(() => pairedEstimate([0.1, 0.2], [0.3], 0.95), RangeError);
  assert.throws(() => pairedEstimate([], [0.3], 0.95), RangeError);
});

test('a paired comparison with no spread in the differences is certain: p = 1 when they are all zero, 0 otherwise', () => {
  const unchanged = pairedEstimate([0.3, 0.5, 0.9], [0.3, 0.5, 0.9], 0.95);
  assert.equal([unchanged.se, unchanged.ci, unchanged.p_value, unchanged.wilcoxon_p_value], [0, { low: 0, high: 0 }, 1, 1]);
  const shifted = pairedEstimate([1, 2, 3], [1.5, 2.5, 3.5], 0.95);
  assert.equal([shifted.delta, shifted.se, shifted.ci, shifted.p_value], [0.5, 0, { low: 0.5, high: 0.5 }, 0]);
});

test('equal values have exactly no spread: the mean is that value, sd and se are 0, the interval is the point', () => {
  const estimate = meanWithInterval(Array.from({ length: 10 }, () => 0.1), 0.95);
  assert.equal(estimate, { n: 10, mean: 0.1, sd: 0, se: 0, ci: { low: 0.1, high: 0.1 } });
});

test('a correlation needs spread on both sides: null with one pair or a constant side', () => {
  assert.is(pairedEstimate([0.2], [0.4], 0.95).correlation, null);
  assert.is(pairedEstimate([1, 1, 1], [0, 1, 1], 0.95).correlation, null);
  assert.is(pairedEstimate([1, 0, 1], [1, 0, 1], 0.95).correlation, 1);
});

test('confidence must lie strictly between 0 and 1, and counts must be whole', () => {
  for (const confidence of [0, 1, -0.5, 95, Number.NaN]) {
    assert.throws(() => meanWithInterval([1, 2], confidence), RangeError, String(confidence));
    assert.throws(() => wilsonInterval(1, 2, confidence), RangeError, String(confidence));
    assert.throws(() => pairedEstimate([1, 2], [2, 3], confidence), RangeError, String(confidence));
    assert.throws(() => bootstrapMeanInterval([1, 2], confidence, 10, 1), RangeError, String(confidence));
  }
  assert.throws(() => wilsonInterval(3, 2, 0.95), RangeError);
  assert.throws(() => mcnemar(-1, 2), RangeError);
  assert.throws(() => mcnemar(1.5, 2), RangeError);
  assert.throws(() => bootstrapMeanInterval([1, 2], 0.95, 0, 1), RangeError);
  assert.throws(() => holm([0.2, 1.5]), TypeError); // @stdlib/stats-padjust takes probabilities only
});

test.run();
