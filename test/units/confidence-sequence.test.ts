// src/stats/confidence-sequence.ts and race-rule.ts against test/data/race/reference.json, which
// an independent Python script writes beside it from the paper's statement: every bound after
// every value within a relative 1e-9 (absolute 1e-12 near zero), every decision exactly.
import { readFileSync } from 'node:fs';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import {
  confidenceSequenceBounds,
  initialConfidenceSequence,
  lambdaMax,
  updateConfidenceSequence,
  type ConfidenceSequenceState,
} from '../../src/stats/confidence-sequence.ts';
import { decideCandidate, initialRaceSequence, type RaceSettings, type RaceStanding } from '../../src/stats/race-rule.ts';

interface Bounds {
  low: number;
  high: number;
}
interface Reference {
  tolerance: { relative: number; absolute: number };
  lambda_max: number;
  sequences: { name: string; population: number; alpha: number; low: number; high: number; values: number[]; expected: Bounds[] }[];
  races: {
    name: string;
    settings: { alpha: number; candidates: number; pairs_min: number; stop_better: boolean; low: number; high: number; datapoints: number };
    incumbent: number[];
    candidate: number[];
    incumbent_complete: boolean;
    expected: (Bounds & { state: RaceStanding })[];
  }[];
}

const reference = JSON.parse(readFileSync(new URL('../data/race/reference.json', import.meta.url), 'utf8')) as Reference;
const { relative, absolute } = reference.tolerance;

function assertNear(actual: number, expected: number, where: string): void {
  const near = Math.abs(actual - expected) <= Math.max(relative * Math.abs(expected), absolute);
  assert.ok(near, `${where}: ${actual} is not within tolerance of ${expected}`);
}

function raceSettings(item: Reference['races'][number]): RaceSettings {
  const { alpha, candidates, pairs_min, stop_better, low, high, datapoints } = item.settings;
  return { alpha, candidates, pairsMin: pairs_min, stopBetter: stop_better, low, high, datapoints };
}

/** The race of a reference case, pair by pair: totals as running sums in arrival order, as the script adds them. */
function* raceSteps(item: Reference['races'][number]) {
  const settings = raceSettings(item);
  let sequence = initialRaceSequence(settings);
  let incumbentSum = 0;
  if (item.incumbent_complete) for (const score of item.incumbent) incumbentSum += score;
  let candidateSum = 0;
  for (let t = 1; t <= item.candidate.length; t++) {
    const candidate = item.candidate[t - 1]!;
    const incumbent = item.incumbent[t - 1]!;
    sequence = updateConfidenceSequence(sequence, candidate - incumbent);
    candidateSum += candidate;
    if (!item.incumbent_complete) incumbentSum += incumbent;
    const incumbentCount = item.incumbent_complete ? settings.datapoints : t;
    yield { t, sequence, decision: decideCandidate(settings, sequence, { candidateSum, candidateCount: t, incumbentSum, incumbentCount }) };
  }
}

test('the truncation c is the one the reference uses', () => {
  assert.is(lambdaMax, reference.lambda_max);
});

test('every bound of every reference sequence is the published CS, intersected and clipped, after every value', () => {
  for (const item of reference.sequences) {
    let state = initialConfidenceSequence(item);
    item.values.forEach((value, i) => {
      state = updateConfidenceSequence(state, value);
      const bounds = confidenceSequenceBounds(state);
      assertNear(bounds.low, item.expected[i]!.low, `${item.name} low at t = ${i + 1}`);
      assertNear(bounds.high, item.expected[i]!.high, `${item.name} high at t = ${i + 1}`);
    });
  }
});

test("every race decision is the reference's, exactly, and its bounds within tolerance, pair after pair", () => {
  const seen = new Set<RaceStanding>();
  for (const item of reference.races) {
    for (const { t, decision } of raceSteps(item)) {
      const expected = item.expected[t - 1]!;
      assert.is(decision.state, expected.state, `${item.name} at t = ${t}`);
      assertNear(decision.low, expected.low, `${item.name} low at t = ${t}`);
      assertNear(decision.high, expected.high, `${item.name} high at t = ${t}`);
      seen.add(decision.state);
    }
  }
  assert.equal([...seen].sort(), ['better', 'cannot_win', 'finished', 'live', 'worse']);
});

test('a state restored from JSON mid-sequence continues bit for bit', () => {
  for (const item of reference.races) {
    const steps = [...raceSteps(item)];
    if (steps.length < 2) continue; // one pair: no middle to restore from
    const half = Math.floor(steps.length / 2);
    let restored = JSON.parse(JSON.stringify(steps[half - 1]!.sequence)) as ConfidenceSequenceState;
    assert.equal(restored, steps[half - 1]!.sequence, item.name);
    for (let t = half + 1; t <= steps.length; t++) {
      restored = updateConfidenceSequence(restored, item.candidate[t - 1]! - item.incumbent[t - 1]!);
      const original = steps[t - 1]!.sequence;
      for (const key of Object.keys(original) as (keyof ConfidenceSequenceState)[]) {
        assert.ok(Object.is(restored[key], original[key]), `${item.name} ${key} at t = ${t}: ${restored[key]} against ${original[key]}`);
      }
      const a = confidenceSequenceBounds(restored);
      const b = confidenceSequenceBounds(original);
      assert.ok(Object.is(a.low, b.low) && Object.is(a.high, b.high), `${item.name} bounds at t = ${t}`);
    }
  }
});

test('before any value the bounds are the range; after all N they are the exact mean', () => {
  const settings = { population: 4, alpha: 0.05, low: 1, high: 5 };
  let state = initialConfidenceSequence(settings);
  assert.equal(confidenceSequenceBounds(state), { low: 1, high: 5 });
  for (const value of [1, 2, 4, 5]) state = updateConfidenceSequence(state, value);
  assert.equal(confidenceSequenceBounds(state), { low: 3, high: 3 });
});

test('an update leaves the state it was given as it was', () => {
  const state = updateConfidenceSequence(initialConfidenceSequence({ population: 10, alpha: 0.05, low: 0, high: 1 }), 0.25);
  const copy = { ...state };
  updateConfidenceSequence(state, 0.75);
  assert.equal(state, copy);
});

test('values outside the range, beyond the population, and bad settings are refused', () => {
  const state = initialConfidenceSequence({ population: 1, alpha: 0.05, low: 0, high: 1 });
  assert.throws(() => updateConfidenceSequence(state, 1.5), /must lie in \[0, 1\]/);
  assert.throws(() => updateConfidenceSequence(state, Number.NaN), /must lie in/);
  assert.throws(() => updateConfidenceSequence(updateConfidenceSequence(state, 1), 1), /all 1 values/);
  assert.throws(() => initialConfidenceSequence({ population: 0, alpha: 0.05, low: 0, high: 1 }), /population/);
  assert.throws(() => initialConfidenceSequence({ population: 2.5, alpha: 0.05, low: 0, high: 1 }), /population/);
  assert.throws(() => initialConfidenceSequence({ population: 3, alpha: 1, low: 0, high: 1 }), /alpha/);
  assert.throws(() => initialConfidenceSequence({ population: 3, alpha: 0.05, low: 1, high: 1 }), /low < high/);
});

const race: RaceSettings = { alpha: 0.05, candidates: 2, pairsMin: 2, stopBetter: false, low: 0, high: 1, datapoints: 4 };

test('a candidate whose best possible mean equals the incumbent\'s cannot win: beating is a strictly greater mean', () => {
  let sequence = initialRaceSequence(race);
  sequence = updateConfidenceSequence(sequence, 0);
  sequence = updateConfidenceSequence(sequence, 0);
  // Candidate 0.5 + 0.5 so far, 1 + 1 at best to come: 3 = the incumbent's exact total.
  const tie = { candidateSum: 1, candidateCount: 2, incumbentSum: 3, incumbentCount: 4 };
  assert.is(decideCandidate(race, sequence, tie).state, 'cannot_win');
  assert.is(decideCandidate(race, sequence, { ...tie, incumbentSum: 2.75 }).state, 'live');
  // An incumbent with 2 of 4 scores counts `low` = 0 for the other two: 3 + 0 + 0 is the least it ends on.
  assert.is(decideCandidate(race, sequence, { ...tie, incumbentCount: 2 }).state, 'cannot_win');
  assert.is(decideCandidate(race, sequence, { ...tie, incumbentSum: 2.75, incumbentCount: 2 }).state, 'live');
});

test('the rule refuses a sequence started for other settings and counts beyond the datapoints', () => {
  const sequence = initialRaceSequence(race);
  const scores = { candidateSum: 0, candidateCount: 0, incumbentSum: 0, incumbentCount: 0 };
  assert.throws(() => decideCandidate({ ...race, candidates: 3 }, sequence, scores), /not started for these race settings/);
  assert.throws(() => decideCandidate({ ...race, high: 2 }, sequence, scores), /not started for these race settings/);
  assert.throws(() => decideCandidate(race, sequence, { ...scores, candidateCount: 5 }), /up to 4/);
  assert.throws(() => decideCandidate(race, sequence, { ...scores, incumbentSum: Number.NaN }), /finite/);
  assert.throws(() => initialRaceSequence({ ...race, candidates: 0 }), /candidates/);
  assert.throws(() => initialRaceSequence({ ...race, pairsMin: -1 }), /pairsMin/);
});

test.run();
