// The bootstrap's random numbers, written out so that an independent script can reproduce them
// exactly (test/data/statistics/reference.py) and because this is the service's hottest loop:
// for 10,000 resamples of 10,000, @stdlib's mt19937 was measured at 2.1 s and pure-rand's
// xoroshiro128+ at 1.25 s, against 0.4 s for an inline generator (sumOfDraws below: 0.5 to
// 0.7 s warm on this shared 2-core machine). Pure: the state is the object's own.
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
// Indices: Lemire's multiply-and-reject ("Fast random integer generation in an interval", 2019).

/** The largest n an index is drawn below: r·n < 2^32·2^21 = 2^53 stays an exact double. */
export const indexRangeMax = 2 ** 21;

const twoTo32 = 4294967296;
/** m·2^-32 is exact, and truncating it with `| 0` is floor(m / 2^32) for 0 <= m < 2^53: the high word. */
const twoToMinus32 = 1 / twoTo32;

export class Xoshiro128StarStar {
  /** s0..s3 as int32s: kept in a typed array, they are read and written back unboxed. */
  private readonly state: Int32Array;

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

  /** The next output, an integer in [0, 2^32). */
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
   * An index in [0, n) without bias, 1 <= n <= indexRangeMax. m = r·n is exact; its low 32 bits
   * l fall in the short leftover range [0, (2^32 - n) mod n) for the few r that would favour
   * some indices, and those r are redrawn. The modulo is computed only when l < n (rarely).
   */
  nextIndex(n: number): number {
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
   * The sum of values.length values drawn with replacement, added in draw order: the same draws
   * and the same sum as values[nextIndex(n)] n times. Written out as one loop over the state in
   * locals because it is the bootstrap's whole cost: through nextIndex, 10,000 resamples of
   * 10,000 took 0.94 s warm, this loop 0.53 s. The threshold is computed once per call rather
   * than on the rare l < n: below it l is also below n, so the same r are redrawn.
   */
  sumOfDraws(values: Float64Array): number {
    const n = values.length;
    // Module constants read in the loop are context loads with a hole check each time (it ran
    // 1.4 s so); as locals they are registers.
    const leftover = (twoTo32 - n) % n;
    const scale = twoToMinus32;
    const state = this.state;
    let s0 = state[0]!;
    let s1 = state[1]!;
    let s2 = state[2]!;
    let s3 = state[3]!;
    let sum = 0;
    for (let j = 0; j < n; j++) {
      let r: number;
      let low: number;
      do {
        const x = Math.imul(s1, 5);
        r = Math.imul((x << 7) | (x >>> 25), 9) >>> 0;
        const t = s1 << 9;
        s2 ^= s0;
        s3 ^= s1;
        s1 ^= s2;
        s0 ^= s3;
        s2 ^= t;
        s3 = (s3 << 11) | (s3 >>> 21);
        low = Math.imul(r, n) >>> 0;
      } while (low < leftover);
      sum += values[(r * n * scale) | 0]!;
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
