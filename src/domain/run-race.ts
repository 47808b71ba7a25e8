// A racing run (issue 37): its candidates against an incumbent, each candidate's paired
// differences (candidate minus incumbent per datapoint, attempts averaged first) fed to an
// anytime-valid confidence sequence in the run's seeded datapoint order, and the race rule
// (src/stats/race-rule.ts) deciding after each completion which candidates stop. Pure, in two
// halves as the rest of a run: `advanceRace` decides from the race and the scores a completion
// brings what changes (the RaceAdvanced event: the values, each touched candidate's new sequence
// and standing, its bounds at every pair fed), and `applyRaceAdvance` writes that in. Neither
// reads a clock; nothing is computed twice on replay.
//
// What a datapoint's value is for the race: the mean of its ok attempts' scores, clipped to the
// score range; a datapoint whose attempts all ended in error counts `low` (the sequence needs a
// value for every datapoint of the version; a failure is the worst the candidate could do). A
// datapoint's value is known once every attempt of it has ended (done or dead).
import assert from 'node:assert/strict';
import {
  confidenceSequenceBounds,
  decideCandidate,
  initialRaceSequence,
  updateConfidenceSequence,
  type ConfidenceSequenceState,
  type RaceSettings,
  type RaceStanding,
} from '../stats/index.ts';

/** A run's `race` as asked for (its defaults filled in, its score range settled). */
export interface RaceConfig {
  readonly incumbent: string;
  readonly alpha: number;
  readonly min_pairs: number;
  readonly stop_better: boolean;
  readonly score_range: readonly [number, number];
}

/** Why a candidate was stopped, as it records it. */
export interface RaceStop {
  /** Datapoints paired when it stopped, of the version's. */
  readonly pairs: number;
  readonly datapoints: number;
  /** The bound that decided: the upper bound for `worse`, the lower for `better`; for `cannot_win`, the most it could still reach minus the incumbent's least. */
  readonly bound: number;
  /** The level of its confidence sequence: the race's alpha over its candidates. */
  readonly alpha: number;
  readonly method: 'confidence_sequence' | 'exact_maximum';
}

/** A candidate as the run answers it. */
export interface RaceCandidate {
  readonly iteration: string;
  readonly state: RaceStanding;
  readonly pairs: number;
  /** Its confidence bounds on the mean difference over the whole version (candidate minus incumbent). */
  readonly low: number;
  readonly high: number;
  /** Pairs when it was stopped (worse, better, cannot_win); null while live or when it ran to the end. */
  readonly stopped_at: number | null;
  readonly decided_at: string | null;
  readonly stop: RaceStop | null;
}

/** Its bounds as they narrowed, thinned to at most `historyPointsMax` points (every stride-th pair, and the last). */
export interface RaceHistory {
  stride: number;
  pairs: number[];
  low: number[];
  high: number[];
}

export interface CandidateRace {
  /** Its index among the run's iterations. */
  readonly index: number;
  candidate: RaceCandidate;
  sequence: ConfidenceSequenceState;
  history: RaceHistory;
}

/** What the race needs of the run's tasks: how many datapoints, attempts, and the order they go out in. */
export interface RaceShape {
  readonly iterations: readonly string[];
  readonly datapoints: number;
  readonly attempts: number;
  /** Datapoint indexes in hand-out order (the run's seeded order). */
  readonly datapointOrder: ArrayLike<number>;
}

export interface RaceState {
  readonly config: RaceConfig;
  readonly settings: RaceSettings;
  readonly attempts: number;
  readonly order: Uint32Array;
  /** The incumbent's index among the run's iterations, or -1 when its results are from before the run (`fixed`). */
  readonly incumbent: number;
  /** The incumbent's value per datapoint when it is not run (NaN never: every datapoint has one). */
  readonly fixed: Float64Array | null;
  /** Their total (the exact rule's incumbent total when it is not run). */
  readonly fixedSum: number;
  /** Per iteration of the run, per datapoint: the sum of its ok scores, their count, and its attempts ended. */
  readonly sums: Float64Array[];
  readonly oks: Uint16Array[];
  readonly ended: Uint16Array[];
  /** Per iteration of the run: the total and count of its known datapoint values (the exact rule's). */
  readonly knownSum: Float64Array;
  readonly knownCount: Uint32Array;
  readonly candidates: CandidateRace[];
  /** Tasks skipped because the race stopped their candidate (or ended). */
  tasksSaved: number;
}

/** One ended task's contribution: its score, or null for an error. */
export type RaceValue = readonly [iteration: number, datapoint: number, score: number | null];

/** A candidate's change in one advance. */
export interface CandidateAdvance {
  /** Its position among the race's candidates. */
  readonly k: number;
  readonly candidate: RaceCandidate;
  readonly sequence: ConfidenceSequenceState;
  /** Its bounds after each pair fed in this advance: [pairs, low, high]. */
  readonly points: readonly (readonly [number, number, number])[];
}

/** What a completion changes in a race (the RaceAdvanced event's content). */
export interface RaceAdvance {
  readonly values: readonly RaceValue[];
  readonly candidates: readonly CandidateAdvance[];
}

export const historyPointsMax = 256;

/** A new race: every candidate live, no pair yet. `fixedValues`: the incumbent's per datapoint when it is not run. */
export function newRace(config: RaceConfig, shape: RaceShape, fixedValues: readonly number[] | null): RaceState {
  const incumbent = shape.iterations.indexOf(config.incumbent);
  assert.ok((incumbent === -1) === (fixedValues !== null), 'an incumbent is run or has its values');
  const indexes = shape.iterations.map((_, i) => i).filter((i) => i !== incumbent);
  const [low, high] = config.score_range;
  const settings: RaceSettings = {
    alpha: config.alpha,
    candidates: indexes.length,
    pairsMin: config.min_pairs,
    stopBetter: config.stop_better,
    low,
    high,
    datapoints: shape.datapoints,
  };
  const sequence = initialRaceSequence(settings);
  const { low: boundLow, high: boundHigh } = confidenceSequenceBounds(sequence);
  const count = shape.iterations.length;
  return {
    config,
    settings,
    attempts: shape.attempts,
    order: Uint32Array.from(shape.datapointOrder),
    incumbent,
    fixed: fixedValues && Float64Array.from(fixedValues),
    fixedSum: fixedValues ? fixedValues.reduce((sum, value) => sum + value, 0) : 0,
    sums: Array.from({ length: count }, () => new Float64Array(shape.datapoints)),
    oks: Array.from({ length: count }, () => new Uint16Array(shape.datapoints)),
    ended: Array.from({ length: count }, () => new Uint16Array(shape.datapoints)),
    knownSum: new Float64Array(count),
    knownCount: new Uint32Array(count),
    candidates: indexes.map((index) => ({
      index,
      candidate: { iteration: shape.iterations[index]!, state: 'live', pairs: 0, low: boundLow, high: boundHigh, stopped_at: null, decided_at: null, stop: null },
      sequence,
      history: { stride: 1, pairs: [], low: [], high: [] },
    })),
    tasksSaved: 0,
  };
}

/**
 * What ended tasks change in the race: their values noted, each live candidate fed the pairs now
 * complete in the seeded order (a pair that completes early waits for those before it), and
 * decided again. Null when no candidate changes and no value is noted.
 */
export function advanceRace(race: RaceState, values: readonly RaceValue[], now: string): RaceAdvance | null {
  if (values.length === 0) return null;
  const view = new RaceView(race, values);
  // Only a candidate whose own values, or the incumbent's, came in can pair or be decided anew.
  const touched = new Set(values.map(([iteration]) => iteration));
  const all = touched.has(race.incumbent);
  const candidates: CandidateAdvance[] = [];
  race.candidates.forEach((entry, k) => {
    if (entry.candidate.state !== 'live' || !(all || touched.has(entry.index))) return;
    const advanced = advanceCandidate(race, view, entry, now);
    if (advanced) candidates.push({ k, ...advanced });
  });
  return { values, candidates };
}

function advanceCandidate(race: RaceState, view: RaceView, entry: CandidateRace, now: string): Omit<CandidateAdvance, 'k'> | null {
  const { settings, order } = race;
  let sequence = entry.sequence;
  const points: [number, number, number][] = [];
  while (sequence.count < settings.datapoints) {
    const datapoint = order[sequence.count]!;
    const candidateValue = view.valueOf(entry.index, datapoint);
    const incumbentValue = view.valueOf(race.incumbent, datapoint);
    if (candidateValue === undefined || incumbentValue === undefined) break;
    sequence = updateConfidenceSequence(sequence, candidateValue - incumbentValue);
    const bounds = confidenceSequenceBounds(sequence);
    points.push([sequence.count, bounds.low, bounds.high]);
  }
  const scores = {
    candidateSum: view.knownSum(entry.index),
    candidateCount: view.knownCount(entry.index),
    incumbentSum: view.knownSum(race.incumbent),
    incumbentCount: view.knownCount(race.incumbent),
  };
  const decision = decideCandidate(settings, sequence, scores);
  const before = entry.candidate;
  if (points.length === 0 && decision.state === before.state) return null;
  const stopped = decision.state === 'worse' || decision.state === 'better' || decision.state === 'cannot_win';
  const candidate: RaceCandidate = {
    iteration: before.iteration,
    state: decision.state,
    pairs: sequence.count,
    low: decision.low,
    high: decision.high,
    stopped_at: stopped ? sequence.count : null,
    decided_at: decision.state === 'live' ? null : now,
    stop: stopped ? stopOf(race, decision.state, sequence.count, decision, scores) : null,
  };
  return { candidate, sequence, points };
}

function stopOf(race: RaceState, state: RaceStanding, pairs: number, bounds: { low: number; high: number }, scores: { candidateSum: number; candidateCount: number; incumbentSum: number; incumbentCount: number }): RaceStop {
  const { settings } = race;
  const common = { pairs, datapoints: settings.datapoints, alpha: settings.alpha / settings.candidates };
  if (state === 'cannot_win') {
    const best = scores.candidateSum + (settings.datapoints - scores.candidateCount) * settings.high;
    const least = scores.incumbentSum + (settings.datapoints - scores.incumbentCount) * settings.low;
    return { ...common, bound: (best - least) / settings.datapoints, method: 'exact_maximum' };
  }
  return { ...common, bound: state === 'worse' ? bounds.high : bounds.low, method: 'confidence_sequence' };
}

/** Writes an advance into the race (the RaceAdvanced event's apply); returns the candidates' indexes among the run's iterations that it stops. */
export function applyRaceAdvance(race: RaceState, advance: RaceAdvance): number[] {
  for (const [iteration, datapoint, score] of advance.values) noteValue(race, iteration, datapoint, score);
  const stopped: number[] = [];
  for (const { k, candidate, sequence, points } of advance.candidates) {
    const entry = race.candidates[k]!;
    assert.equal(entry.candidate.state, 'live', 'only a live candidate advances');
    entry.candidate = candidate;
    entry.sequence = sequence;
    for (const [pairs, low, high] of points) notePoint(entry.history, pairs, low, high, pairs === sequence.count && candidate.state !== 'live');
    if (candidate.stopped_at !== null) stopped.push(entry.index);
  }
  return stopped;
}

/** An ended task's score: its datapoint's sums, and once all its attempts have ended, the iteration's known total. */
function noteValue(race: RaceState, iteration: number, datapoint: number, score: number | null): void {
  const ended = ++race.ended[iteration]![datapoint]!;
  assert.ok(ended <= race.attempts, 'a datapoint ends no more attempts than it has');
  if (score !== null) {
    race.sums[iteration]![datapoint]! += clip(race, score);
    race.oks[iteration]![datapoint]!++;
  }
  if (ended === race.attempts) {
    race.knownSum[iteration]! += datapointValue(race, iteration, datapoint);
    race.knownCount[iteration]!++;
  }
}

/** Keeps a point when its pair falls on the stride (or it is a decision); past the bound, every other point goes and the stride doubles. */
function notePoint(history: RaceHistory, pairs: number, low: number, high: number, decision: boolean): void {
  if (pairs % history.stride !== 0 && !decision) return;
  history.pairs.push(pairs);
  history.low.push(low);
  history.high.push(high);
  if (history.pairs.length <= historyPointsMax) return;
  history.stride *= 2;
  const keep = history.pairs.map((p, i) => p % history.stride === 0 || i === history.pairs.length - 1);
  for (const list of [history.pairs, history.low, history.high]) {
    const kept = list.filter((_, i) => keep[i]);
    list.length = 0;
    list.push(...kept);
  }
}

function clip(race: RaceState, score: number): number {
  const { low, high } = race.settings;
  return Math.min(high, Math.max(low, score));
}

/** A known datapoint's value: the mean of its ok attempts, or low when every attempt failed. */
function datapointValue(race: RaceState, iteration: number, datapoint: number): number {
  return datapointMean(race.sums[iteration]![datapoint]!, race.oks[iteration]![datapoint]!, race.settings);
}

/**
 * A datapoint's value from its ok attempts' scores (each within the range): their mean, clipped to
 * the range again, since a sum divided can land an ulp outside it (three scores of 0.1 average to
 * 0.10000000000000002), which the sequence would refuse; low when none was ok.
 */
export function datapointMean(sum: number, oks: number, range: { readonly low: number; readonly high: number }): number {
  return oks === 0 ? range.low : Math.min(range.high, Math.max(range.low, sum / oks));
}

/** The race as it would be with `values` noted, read without changing it (a decision's view). */
class RaceView {
  /** Per iteration * datapoints + datapoint: the sum, ok count and ended count with the new values. */
  private readonly pending = new Map<number, { sum: number; oks: number; ended: number }>();
  /** The known totals with the new values: the race's own until a value completes a datapoint, then a copy. */
  private knownSums: Float64Array;
  private knownCounts: Uint32Array;
  private copied = false;

  constructor(private readonly race: RaceState, values: readonly RaceValue[]) {
    this.knownSums = race.knownSum;
    this.knownCounts = race.knownCount;
    const datapoints = race.settings.datapoints;
    for (const [iteration, datapoint, score] of values) {
      const key = iteration * datapoints + datapoint;
      const entry = this.pending.get(key) ?? { sum: race.sums[iteration]![datapoint]!, oks: race.oks[iteration]![datapoint]!, ended: race.ended[iteration]![datapoint]! };
      entry.ended++;
      if (score !== null) {
        entry.sum += clip(race, score);
        entry.oks++;
      }
      this.pending.set(key, entry);
      if (entry.ended === race.attempts) {
        if (!this.copied) {
          this.knownSums = race.knownSum.slice();
          this.knownCounts = race.knownCount.slice();
          this.copied = true;
        }
        this.knownSums[iteration]! += datapointMean(entry.sum, entry.oks, race.settings);
        this.knownCounts[iteration]!++;
      }
    }
  }

  /** An iteration's value at a datapoint once every attempt has ended, else undefined; the incumbent's fixed one when it is not run. */
  valueOf(iteration: number, datapoint: number): number | undefined {
    const { race } = this;
    if (iteration === -1) return race.fixed![datapoint]!;
    const entry = this.pending.get(iteration * race.settings.datapoints + datapoint);
    const ended = entry ? entry.ended : race.ended[iteration]![datapoint]!;
    if (ended < race.attempts) return undefined;
    return entry ? datapointMean(entry.sum, entry.oks, race.settings) : datapointValue(race, iteration, datapoint);
  }

  knownSum(iteration: number): number {
    return iteration === -1 ? this.race.fixedSum : this.knownSums[iteration]!;
  }

  knownCount(iteration: number): number {
    return iteration === -1 ? this.race.settings.datapoints : this.knownCounts[iteration]!;
  }
}

// ---- in a snapshot ----

/** A race as a snapshot holds it: its numbers' arrays as bytes, the rest as it is. */
export interface RaceStatePlain {
  config: RaceConfig;
  attempts: number;
  order: Uint8Array;
  incumbent: number;
  fixed: Uint8Array | null;
  sums: Uint8Array[];
  oks: Uint8Array[];
  ended: Uint8Array[];
  knownSum: Uint8Array;
  knownCount: Uint8Array;
  candidates: { index: number; candidate: RaceCandidate; sequence: ConfidenceSequenceState; history: RaceHistory }[];
  tasksSaved: number;
}

export function raceToPlain(race: RaceState): RaceStatePlain {
  return {
    config: race.config,
    attempts: race.attempts,
    order: bytesOf(race.order),
    incumbent: race.incumbent,
    fixed: race.fixed && bytesOf(race.fixed),
    sums: race.sums.map(bytesOf),
    oks: race.oks.map(bytesOf),
    ended: race.ended.map(bytesOf),
    knownSum: bytesOf(race.knownSum),
    knownCount: bytesOf(race.knownCount),
    candidates: race.candidates.map(({ index, candidate, sequence, history }) => ({ index, candidate, sequence, history })),
    tasksSaved: race.tasksSaved,
  };
}

export function raceFromPlain(plain: RaceStatePlain, iterations: readonly string[], datapoints: number): RaceState {
  const fixed = plain.fixed && new Float64Array(copied(plain.fixed));
  const started = newRace(plain.config, { iterations, datapoints, attempts: plain.attempts, datapointOrder: new Uint32Array(copied(plain.order)) }, fixed && [...fixed]);
  return {
    ...started,
    sums: plain.sums.map((bytes) => new Float64Array(copied(bytes))),
    oks: plain.oks.map((bytes) => new Uint16Array(copied(bytes))),
    ended: plain.ended.map((bytes) => new Uint16Array(copied(bytes))),
    knownSum: new Float64Array(copied(plain.knownSum)),
    knownCount: new Uint32Array(copied(plain.knownCount)),
    // The history's lists too: they grow in place, and a copy (the read model's) must not share them.
    candidates: plain.candidates.map((entry) => ({ ...entry, history: copiedHistory(entry.history) })),
    tasksSaved: plain.tasksSaved,
  };
}

function copiedHistory({ stride, pairs, low, high }: RaceHistory): RaceHistory {
  return { stride, pairs: [...pairs], low: [...low], high: [...high] };
}

function bytesOf(array: Float64Array | Uint32Array | Uint16Array): Uint8Array {
  return new Uint8Array(array.buffer.slice(array.byteOffset, array.byteOffset + array.byteLength));
}

/** The bytes in a buffer of their own (a typed array over a decoded buffer's slice may be misaligned). */
function copied(bytes: Uint8Array): ArrayBuffer {
  return bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer;
}
