// The bootstrap's random numbers, written out so that an independent script can reproduce them
// exactly (test/data/statistics/reference.py) and because this is the service's hottest loop: an
// inline generator ran several times faster than the maintained ones measured (docs/PERFORMANCE.md,
// "The bootstrap's generator and loops"). Pure: the state is the object's own.
//
// Generator: xoshiro128** 1.1 (Blackman & Vigna), on four 32-bit words s0..s3:
//   result = rotl(s1 * 5, 7) * 9                         (mod 2^32)
//   t = s1 << 9
//   s2 ^= s0; s3 ^= s1; s1 ^= s2; s0 ^= s3; s2 ^= t; s3 = rotl(s3, 11)
// Seeding: the four words are the first four outputs of SplitMix32 started at seed mod 2^32:
//   state = (state + 0x9E3779B9) mod 2^32                (the increment comes first)
//   z = state
//   z = ((z ^ (z >>> 16)) * 0x85EBCA6B) mod 2^32
//   z = ((z ^ (z >>> 13)) * 0xC2B2AE35) mod 2^32
//   output z ^ (z >>> 16)
// (a Weyl sequence through MurmurHash3's fmix32, which is a bijection: the four words are never
// all zero, the one state xoshiro cannot leave).
//
// Indices in [0, n): Lemire's multiply-and-reject ("Fast random integer generation in an
// interval", 2019), on 16 or 32 bits by the size of n.
// - n <= 2^16 (indexHalfRangeMax): two candidates per output, its high 16 bits first, then its
//   low 16 bits. For a candidate r16: m = r16·n (exact, < 2^32), l = m mod 2^16; if l < n, the
//   candidate is rejected while l < t = (2^16 - n) mod n; else the index is floor(m / 2^16). A
//   rejected candidate is skipped: the next one is the other half of the same output, or the
//   high half of the next output. The candidates form one stream across index draws: a draw that
//   takes an output's high half leaves its low half pending, and the next 16-bit draw starts
//   with it (whatever its n, and even if 32-bit outputs were taken in between: nextUint32 and
//   32-bit draws neither use nor drop the pending half).
// - 2^16 < n <= 2^21 (indexRangeMax): one candidate per output r: m = r·n, l = m mod 2^32; if
//   l < n, r is rejected while l < t = (2^32 - n) mod n; else the index is floor(m / 2^32).
// Since t < n, "l < n and l < t" is "l < t": the loops below test l < t alone, t computed once.

/** The largest n an index is drawn below: r·n < 2^32·2^21 = 2^53 stays an exact double. */
export const indexRangeMax = 2 ** 21;
/** The largest n an index is drawn below from 16 bits (half an output). */
export const indexHalfRangeMax = 2 ** 16;

const twoTo32 = 4294967296;
/** m·2^-32 is exact, and truncating it with `| 0` is floor(m / 2^32) for 0 <= m < 2^53: the high word. */
const twoToMinus32 = 1 / twoTo32;

export class Xoshiro128StarStar {
  /** s0..s3 as int32s: kept in a typed array, they are read and written back unboxed. */
  private readonly state: Int32Array;
  /** The low 16 bits of an output whose high half a 16-bit draw took, -1 when none is pending. */
  private pendingHalf = -1;

  /** A generator at the given state (four 32-bit words, not all zero). */
  constructor(state: readonly [number, number, number, number]) {
    if (state.every((word) => word >>> 0 === 0)) throw new RangeError('xoshiro128** cannot start from the all-zero state');
    this.state = Int32Array.from(state, (word) => word | 0);
  }

  /** A generator seeded from an integer through SplitMix32 (above); the seed counts modulo 2^32. */
  static seeded(seed: number): Xoshiro128StarStar {
    if (!Number.isSafeInteger(seed)) throw new RangeError(`the seed must be a safe integer, got ${seed}`);
    let state = seed >>> 0;
    const splitMix32 = (): number => {
      state = (state + 0x9e3779b9) >>> 0;
      let z = state;
      z = Math.imul(z ^ (z >>> 16), 0x85ebca6b);
      z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35);
      return (z ^ (z >>> 16)) >>> 0;
    };
    return new Xoshiro128StarStar([splitMix32(), splitMix32(), splitMix32(), splitMix32()]);
  }

  /** The next output, an integer in [0, 2^32). A pending half (above) stays pending. */
  nextUint32(): number {
    const state = this.state;
    const s0 = state[0]!;
    const s1 = state[1]!;
    const s2 = state[2]! ^ s0;
    const s3 = state[3]! ^ s1;
    state[0] = s0 ^ s3;
    state[1] = s1 ^ s2;
    state[2] = s2 ^ (s1 << 9);
    state[3] = rotl(s3, 11);
    return Math.imul(rotl(Math.imul(s1, 5), 7), 9) >>> 0;
  }

  /**
   * An index in [0, n) without bias, 1 <= n <= indexRangeMax, by the rule above: from 16-bit
   * halves of outputs when n <= 2^16, else from whole outputs. One draw at a time: the reference
   * for meansOfResamples (and the tests'); the modulo is computed only when l < n.
   */
  nextIndex(n: number): number {
    if (n <= indexHalfRangeMax) {
      for (;;) {
        let r16: number;
        if (this.pendingHalf >= 0) {
          r16 = this.pendingHalf;
          this.pendingHalf = -1;
        } else {
          const r = this.nextUint32();
          r16 = r >>> 16;
          this.pendingHalf = r & 0xffff;
        }
        const m = r16 * n; // exact: below 2^32
        const low = m % 65536;
        if (low >= n || low >= (65536 - n) % n) return Math.floor(m / 65536);
      }
    }
    let r = this.nextUint32();
    let low = Math.imul(r, n) >>> 0; // r·n mod 2^32, as the exact product's low word
    if (low < n) {
      const threshold = (twoTo32 - n) % n;
      while (low < threshold) {
        r = this.nextUint32();
        low = Math.imul(r, n) >>> 0;
      }
    }
    return (r * n * twoToMinus32) | 0;
  }

  /**
   * Fills `means` with the means of means.length resamples of n = values.length values drawn
   * with replacement (1 <= n <= indexRangeMax), one resample after another: each the sum of its
   * n draws added in draw order (from 0), divided by n. The same draws as nextIndex(n)
   * n·means.length times, and the same state after (a pending half included). The bootstrap's
   * whole cost, so written out as loops over the generator's state in locals, allocation-free
   * (but for one padded copy of the values per call, for n <= 2^16): through nextIndex, 10,000
   * resamples of 10,000 took 0.94 s warm; one loop per resample drawing from whole outputs
   * 0.53 s; from 16-bit halves, below, about 0.44 s, and 0.16 to 0.24 s as now shaped.
   */
  meansOfResamples(values: Float64Array, means: Float64Array): void {
    if (values.length <= indexHalfRangeMax) this.meansFromHalves(values, means);
    else this.meansFromWords(values, means);
  }

  /**
   * meansOfResamples for n <= 2^16: two 16-bit candidates per output. While two draws or more
   * remain in a resample, both halves of each output go to it in one loop iteration, without
   * branching on rejection: a rejected candidate reads the +0 appended at padded[n] and counts
   * 0 draws. Adding +0 leaves every sum as it was (x + 0 = x for all x but -0, and a sum begun
   * at +0 is never -0: a rounded sum is -0 only when both terms are), so the sums are those of
   * the accepted draws alone, bit for bit. A half pending at the start of a resample is its
   * first candidate, taken the same way (none pending counts as rejected); the resample's last
   * draw or two go through finishFromHalves (nextIndex, a candidate at a time). The state goes
   * through `this.state` at each resample's start and end and the branchy last draws are a method
   * of their own: V8 then keeps this loop's values in registers (the shapes measured are in
   * docs/PERFORMANCE.md).
   */
  private meansFromHalves(values: Float64Array, means: Float64Array): void {
    const n = values.length;
    const count = means.length;
    const padded = new Float64Array(n + 1);
    padded.set(values);
    // Module constants read in the loop are context loads with a hole check each time (it ran
    // 1.4 s so); as locals they are registers.
    const leftover = (65536 - n) % n;
    const state = this.state;
    for (let b = 0; b < count; b++) {
      let s0 = state[0]!;
      let s1 = state[1]!;
      let s2 = state[2]!;
      let s3 = state[3]!;
      const half = this.pendingHalf;
      // rejected: 1 when l < leftover (l - leftover is negative), or when no half is pending
      // (half = -1, whose sign bit is set); the index read is then n, the +0.
      const first = Math.imul(half & 0xffff, n); // the bits of r16·n < 2^32: its low and high 16 bits read right
      const firstRejected = (((first & 0xffff) - leftover) >>> 31) | (half >>> 31);
      let sum = 0 + padded[((first >>> 16) & (firstRejected - 1)) | (n & -firstRejected)]!;
      let j = 1 - firstRejected; // draws taken
      while (j < n - 1) {
        // The generator's step, here and in meansFromWords and finishFromWords, is written out
        // rather than called: its state lives in the four locals, which a helper would have to
        // return or keep in an object, and this loop is the bootstrap's whole cost.
        const x = Math.imul(s1, 5);
        const r = Math.imul((x << 7) | (x >>> 25), 9);
        const t = s1 << 9;
        s2 ^= s0;
        s3 ^= s1;
        s1 ^= s2;
        s0 ^= s3;
        s2 ^= t;
        s3 = (s3 << 11) | (s3 >>> 21);
        const high = Math.imul(r >>> 16, n);
        const highRejected = ((high & 0xffff) - leftover) >>> 31;
        sum += padded[((high >>> 16) & (highRejected - 1)) | (n & -highRejected)]!;
        const low = Math.imul(r & 0xffff, n);
        const lowRejected = ((low & 0xffff) - leftover) >>> 31;
        sum += padded[((low >>> 16) & (lowRejected - 1)) | (n & -lowRejected)]!;
        j += 2 - highRejected - lowRejected;
      }
      state[0] = s0;
      state[1] = s1;
      state[2] = s2;
      state[3] = s3;
      this.pendingHalf = -1; // both halves of every output so far were taken
      means[b] = this.finishFromHalves(padded, sum, j) / n;
    }
  }

  /**
   * The rest of a resample of n = padded.length - 1 whose first j draws (n - 1 <= j <= n) summed
   * to `sum`: its last draw or two through nextIndex, the pending half first. Returns the sum.
   */
  private finishFromHalves(padded: Float64Array, sum: number, j: number): number {
    const n = padded.length - 1;
    for (; j < n; j++) sum += padded[this.nextIndex(n)]!;
    return sum;
  }

  /**
   * meansOfResamples for 2^16 < n <= 2^21: one 32-bit candidate per output. Shaped as
   * meansFromHalves is, for the same reason: a resample's draws in one loop with the state in
   * locals between `this.state` reads and writes, a rejection (under 0.01% of candidates for
   * n <= 10^6, but a branch in the loop either way) leaving it for finishFromWords to go on a
   * candidate at a time (measured: docs/PERFORMANCE.md).
   */
  private meansFromWords(values: Float64Array, means: Float64Array): void {
    const n = values.length;
    const count = means.length;
    const leftover = (twoTo32 - n) % n;
    const scale = twoToMinus32;
    const state = this.state;
    for (let b = 0; b < count; b++) {
      let s0 = state[0]!;
      let s1 = state[1]!;
      let s2 = state[2]!;
      let s3 = state[3]!;
      let sum = 0;
      let j = 0;
      for (; j < n; j++) {
        const x = Math.imul(s1, 5);
        const r = Math.imul((x << 7) | (x >>> 25), 9) >>> 0;
        const t = s1 << 9;
        s2 ^= s0;
        s3 ^= s1;
        s1 ^= s2;
        s0 ^= s3;
        s2 ^= t;
        s3 = (s3 << 11) | (s3 >>> 21);
        if (Math.imul(r, n) >>> 0 < leftover) break; // rejected: draw j goes on in finishFromWords
        sum += values[(r * n * scale) | 0]!;
      }
      state[0] = s0;
      state[1] = s1;
      state[2] = s2;
      state[3] = s3;
      means[b] = (j < n ? this.finishFromWords(values, leftover, sum, j) : sum) / n;
    }
  }

  /**
   * The rest of a resample of n = values.length whose first j draws summed to `sum`, a 32-bit
   * candidate at a time (the one that stopped meansFromWords was rejected and is spent). Returns
   * the sum; the state is written back.
   */
  private finishFromWords(values: Float64Array, leftover: number, sum: number, j: number): number {
    const n = values.length;
    const state = this.state;
    let s0 = state[0]!;
    let s1 = state[1]!;
    let s2 = state[2]!;
    let s3 = state[3]!;
    while (j < n) {
      const x = Math.imul(s1, 5);
      const r = Math.imul((x << 7) | (x >>> 25), 9) >>> 0;
      const t = s1 << 9;
      s2 ^= s0;
      s3 ^= s1;
      s1 ^= s2;
      s0 ^= s3;
      s2 ^= t;
      s3 = (s3 << 11) | (s3 >>> 21);
      if (Math.imul(r, n) >>> 0 < leftover) continue;
      sum += values[(r * n * twoToMinus32) | 0]!;
      j++;
    }
    state[0] = s0;
    state[1] = s1;
    state[2] = s2;
    state[3] = s3;
    return sum;
  }
}

function rotl(x: number, k: number): number {
  return (x << k) | (x >>> (32 - k));
}
