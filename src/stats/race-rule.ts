// The rule of a race: K candidates against an incumbent on one dataset version of N datapoints,
// scores in [low, high]. Each candidate's paired differences d = candidate - incumbent (attempts
// averaged per datapoint first), in [low - high, high - low], feed a confidence sequence for
// their mean over all N datapoints (confidence-sequence.ts) at level alpha / K: by Bonferroni,
// with probability >= 1 - alpha every candidate's sequence covers its mean at every step, so the
// race stops a candidate whose mean difference is >= 0 as `worse` with probability <= alpha
// (<= alpha / 2 in fact: only the upper bounds decide `worse`), however often it is looked at.
// With stop_better, the lower bounds likewise stop a candidate whose mean difference is <= 0 as
// `better` with probability <= alpha / 2. Pure: plain data in, plain data out.
//
// What the guarantee needs of the order: a candidate's pairs must reach its sequence in an order
// of the datapoints that is uniformly random and fixed before any score is known (the run's
// seeded order), whatever the scores. Completion order is not that: with workers running
// concurrently, a datapoint whose task fails fast or times out early completes out of turn, and
// its score is then tied to its place. Feed the sequence in the seeded order, holding a pair that
// completes early until the pairs before it in that order are in: decisions then lag behind the
// oldest task still running, never ahead of the order. Every datapoint needs a pair in the end (a
// task given up must still be scored, say `low`, or the population is not the N the sequence was
// started for). K is fixed when the race starts: a candidate added later needs alpha of its own.
//
// A candidate's standing after a pair, the first rule that applies:
// - `finished` when all N pairs are in: nothing is left to stop, and the bounds are the exact
//   mean difference (a comparison then reads it in full);
// - `live` before pairsMin pairs (the wire's min_pairs): no early decision rests on a handful of
//   pairs;
// - `worse` when the upper bound is below 0: the candidate is stopped;
// - `better` when the lower bound is above 0, only if the run asked to stop on it (stop_better);
// - `cannot_win`, exact, no statistics: the candidate cannot beat the incumbent, where beating is
//   having a strictly greater mean over the N datapoints (a tie does not beat). Even with `high`
//   on every datapoint it has no score for yet, its total would be at most the incumbent's total,
//   which is exact when the incumbent has all N scores and otherwise its least possible, `low` on
//   each datapoint it has no score for. Totals are compared rather than means (the same order,
//   N > 0), so no division rounds a tie away;
// - `live` otherwise.
import {
  confidenceSequenceBounds,
  initialConfidenceSequence,
  type ConfidenceSequenceState,
} from './confidence-sequence.ts';

/** Pairs before any decision when the run names none (the wire's min_pairs). */
export const pairsMinDefault = 10;

export interface RaceSettings {
  /** The chance the race ever stops a candidate that is not worse, as `worse`. */
  alpha: number;
  /** K, the candidates racing the incumbent. */
  candidates: number;
  /** No decision before this many pairs (min_pairs). */
  pairsMin: number;
  /** Stop a candidate as `better` once its lower bound is above 0 (stop_better). */
  stopBetter: boolean;
  /** The declared score range. */
  low: number;
  high: number;
  /** N, the datapoints of the dataset version. */
  datapoints: number;
}

export type RaceStanding = 'live' | 'worse' | 'better' | 'cannot_win' | 'finished';

/** The scores known so far, per-datapoint averages, for the exact rule. */
export interface RaceScores {
  /** The candidate's total over the datapoints it has a score for, and how many those are. */
  candidateSum: number;
  candidateCount: number;
  /** The incumbent's, likewise (incumbentCount = N: every score is known). */
  incumbentSum: number;
  incumbentCount: number;
}

export interface RaceDecision {
  state: RaceStanding;
  /** The candidate's confidence bounds on its mean difference over the N datapoints. */
  low: number;
  high: number;
}

/** A candidate's confidence sequence before its first pair: level alpha / K over the differences' range. */
export function initialRaceSequence(settings: RaceSettings): ConfidenceSequenceState {
  assertSettings(settings);
  return initialConfidenceSequence({
    population: settings.datapoints,
    alpha: settings.alpha / settings.candidates,
    low: settings.low - settings.high,
    high: settings.high - settings.low,
  });
}

/** A candidate's standing and bounds, given its sequence (one value per pair) and the scores known. */
export function decideCandidate(settings: RaceSettings, sequence: ConfidenceSequenceState, scores: RaceScores): RaceDecision {
  assertSequenceOf(settings, sequence);
  assertScores(settings, scores);
  const { low, high } = confidenceSequenceBounds(sequence);
  return { state: standing(settings, sequence.count, low, high, scores), low, high };
}

function standing(settings: RaceSettings, pairs: number, low: number, high: number, scores: RaceScores): RaceStanding {
  if (pairs === settings.datapoints) return 'finished';
  if (pairs < settings.pairsMin) return 'live';
  if (high < 0) return 'worse';
  if (settings.stopBetter && low > 0) return 'better';
  if (cannotWin(settings, scores)) return 'cannot_win';
  return 'live';
}

/** The candidate's best possible total is at most the incumbent's least possible total. */
function cannotWin(settings: RaceSettings, scores: RaceScores): boolean {
  const { datapoints, low, high } = settings;
  const candidateBest = scores.candidateSum + (datapoints - scores.candidateCount) * high;
  const incumbentLeast = scores.incumbentSum + (datapoints - scores.incumbentCount) * low;
  return candidateBest <= incumbentLeast;
}

function assertSettings(settings: RaceSettings): void {
  const { alpha, candidates, pairsMin, datapoints } = settings;
  if (!(alpha > 0 && alpha < 1)) throw new RangeError(`alpha must be in (0, 1), got ${alpha}`);
  if (!Number.isSafeInteger(candidates) || candidates < 1) throw new RangeError(`a race has a whole number of candidates, at least 1, got ${candidates}`);
  if (!Number.isSafeInteger(pairsMin) || pairsMin < 0) throw new RangeError(`pairsMin must be a whole number, got ${pairsMin}`);
  if (!Number.isSafeInteger(datapoints) || datapoints < 1) throw new RangeError(`a race needs a whole number of datapoints, at least 1, got ${datapoints}`);
}

/** The sequence must be the one initialRaceSequence(settings) started: its level, range and N. */
function assertSequenceOf(settings: RaceSettings, sequence: ConfidenceSequenceState): void {
  assertSettings(settings);
  const matches =
    sequence.population === settings.datapoints &&
    sequence.alpha === settings.alpha / settings.candidates &&
    sequence.low === settings.low - settings.high &&
    sequence.high === settings.high - settings.low;
  if (!matches) throw new RangeError('the confidence sequence was not started for these race settings');
}

function assertScores(settings: RaceSettings, scores: RaceScores): void {
  for (const count of [scores.candidateCount, scores.incumbentCount]) {
    if (!Number.isSafeInteger(count) || count < 0 || count > settings.datapoints) {
      throw new RangeError(`a count of scores must be a whole number up to ${settings.datapoints}, got ${count}`);
    }
  }
  if (!Number.isFinite(scores.candidateSum) || !Number.isFinite(scores.incumbentSum)) throw new RangeError('score totals must be finite');
}
