// Seeded races for test/units/race-guarantee.test.ts and bench/race-savings.ts: draws of scores
// from a seeded xoshiro128** (src/stats/xoshiro128.ts), a population of N datapoints scored by an
// incumbent and K candidates, a random order of the datapoints, and the race rule applied to
// each candidate pair after pair, as the service would.
import { confidenceSequenceBounds, updateConfidenceSequence } from '../../src/stats/confidence-sequence.ts';
import { decideCandidate, initialRaceSequence, type RaceSettings, type RaceStanding } from '../../src/stats/race-rule.ts';
import { Xoshiro128StarStar } from '../../src/stats/xoshiro128.ts';

const twoToMinus53 = 2 ** -53;

/** Draws from standard methods, on a seeded generator: samplers, not quantile functions. */
export class Sampler {
  private readonly generator: Xoshiro128StarStar;
  /** Box-Muller makes normals in pairs: the second waits here (NaN when none does). */
  private spareNormal = Number.NaN;

  constructor(seed: number) {
    this.generator = Xoshiro128StarStar.seeded(seed);
  }

  /** A uniform in [0, 1) on 53 bits, from two outputs (27 and 26 of their high bits). */
  uniform(): number {
    const high = this.generator.nextUint32() >>> 5;
    const low = this.generator.nextUint32() >>> 6;
    return (high * 2 ** 26 + low) * twoToMinus53;
  }

  /** An integer in [0, n), without bias (Lemire's rejection, xoshiro128.ts). */
  index(n: number): number {
    return this.generator.nextIndex(n);
  }

  bernoulli(p: number): number {
    return this.uniform() < p ? 1 : 0;
  }

  /** A standard normal by Box-Muller: sqrt(-2 ln u1) (cos, sin)(2 pi u2), u1 in (0, 1]. */
  normal(): number {
    if (!Number.isNaN(this.spareNormal)) {
      const spare = this.spareNormal;
      this.spareNormal = Number.NaN;
      return spare;
    }
    const radius = Math.sqrt(-2 * Math.log(1 - this.uniform()));
    const angle = 2 * Math.PI * this.uniform();
    this.spareNormal = radius * Math.sin(angle);
    return radius * Math.cos(angle);
  }

  /**
   * A Gamma(shape, 1) draw, shape >= 1, by Marsaglia & Tsang, "A simple method for generating
   * gamma variables" (2000): d = shape - 1/3, c = 1/sqrt(9d); v = (1 + cx)^3 for a normal x,
   * accepted (as dv) when v > 0 and ln u < x^2/2 + d - dv + d ln v, with their squeeze first.
   */
  gamma(shape: number): number {
    if (!(shape >= 1)) throw new RangeError(`this gamma sampler needs shape >= 1, got ${shape}`);
    const d = shape - 1 / 3;
    const c = 1 / Math.sqrt(9 * d);
    for (;;) {
      const x = this.normal();
      const cube = 1 + c * x;
      if (cube <= 0) continue;
      const v = cube * cube * cube;
      const u = 1 - this.uniform();
      const x2 = x * x;
      if (u < 1 - 0.0331 * x2 * x2) return d * v;
      if (Math.log(u) < 0.5 * x2 + d * (1 - v + Math.log(v))) return d * v;
    }
  }

  /** A Beta(a, b) draw as X / (X + Y) of independent gammas, a, b >= 1. */
  beta(a: number, b: number): number {
    const x = this.gamma(a);
    return x / (x + this.gamma(b));
  }

  /** 0, 1, ..., n - 1 in a uniformly random order (Fisher-Yates). */
  order(n: number): Int32Array {
    const order = Int32Array.from({ length: n }, (_, i) => i);
    for (let i = n - 1; i > 0; i--) {
      const j = this.index(i + 1);
      const kept = order[i]!;
      order[i] = order[j]!;
      order[j] = kept;
    }
    return order;
  }
}

/** One race's data: every datapoint's score by the incumbent and by each candidate. */
export interface RacePopulation {
  incumbent: Float64Array;
  candidates: Float64Array[];
}

export interface CandidateOutcome {
  /** The standing the rule stopped the candidate on, or `finished` / `live` at the end. */
  state: RaceStanding;
  /** The pairs it ran: up to and including the one it was stopped on. */
  pairs: number;
  /** Its mean over those pairs. */
  ranMean: number;
  /** Its true mean difference over all N datapoints (summed in arrival order, as the sequence sums). */
  meanDifference: number;
  /** Whether its bounds held the true mean difference after every pair (when asked to check). */
  covered: boolean;
}

/**
 * The race of `population` in `order`, the incumbent's every score known. With `coverage`, a
 * stopped candidate's pairs keep coming (the rule no longer consulted) so that its bounds are
 * checked against the true mean after every one of the N; without, it stops there.
 */
export function runRace(settings: RaceSettings, population: RacePopulation, order: Int32Array, coverage: boolean): CandidateOutcome[] {
  const n = settings.datapoints;
  const { incumbent } = population;
  let incumbentSum = 0;
  for (let i = 0; i < n; i++) incumbentSum += incumbent[i]!;
  return population.candidates.map((candidate) => {
    let meanDifference = 0;
    for (let t = 0; t < n; t++) meanDifference += candidate[order[t]!]! - incumbent[order[t]!]!;
    meanDifference /= n;
    let sequence = initialRaceSequence(settings);
    let state: RaceStanding = 'live';
    let pairs = 0;
    let candidateSum = 0;
    let covered = true;
    for (let t = 1; t <= n; t++) {
      const datapoint = order[t - 1]!;
      sequence = updateConfidenceSequence(sequence, candidate[datapoint]! - incumbent[datapoint]!);
      if (state === 'live') {
        candidateSum += candidate[datapoint]!;
        pairs = t;
        state = decideCandidate(settings, sequence, { candidateSum, candidateCount: t, incumbentSum, incumbentCount: n }).state;
      }
      if (coverage) {
        const bounds = confidenceSequenceBounds(sequence);
        if (!(bounds.low <= meanDifference && meanDifference <= bounds.high)) covered = false;
      } else if (state !== 'live') {
        break;
      }
    }
    return { state, pairs, ranMean: candidateSum / pairs, meanDifference, covered };
  });
}
