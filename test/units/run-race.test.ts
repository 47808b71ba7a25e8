// A race's pure halves (src/domain/run-race.ts): advancing decides without changing the race,
// applying writes exactly what was decided; pairs go in the seeded order (an early one waits);
// attempts are averaged, a datapoint whose attempts all failed counts low, scores are clipped;
// the history is thinned to at most 256 points; a snapshot restores the race bit for bit.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { advanceRace, applyRaceAdvance, historyPointsMax, newRace, raceFromPlain, raceToPlain, type RaceConfig, type RaceState, type RaceValue } from '../../src/domain/run-race.ts';
import { confidenceSequenceBounds, initialRaceSequence, updateConfidenceSequence } from '../../src/stats/index.ts';

const config: RaceConfig = { incumbent: 'inc', alpha: 0.05, min_pairs: 1, stop_better: false, score_range: [0, 1] };

function race(datapoints: number, attempts = 1, order?: number[]): RaceState {
  return newRace(config, { iterations: ['inc', 'a', 'b'], datapoints, attempts, datapointOrder: order ?? Array.from({ length: datapoints }, (_, i) => i) }, null);
}

/** Advances and applies; returns the advance. */
function step(state: RaceState, values: RaceValue[]) {
  const advance = advanceRace(state, values, '2026-12-05T00:00:00.000Z');
  if (advance) applyRaceAdvance(state, advance);
  return advance;
}

test('advancing decides without changing the race; applying writes what it decided', () => {
  const state = race(5);
  const before = JSON.stringify(raceToPlain(state), (_, value) => (value instanceof Uint8Array ? [...value] : value));
  const advance = advanceRace(state, [[0, 0, 0.5], [1, 0, 0.25]], 'now')!;
  assert.is(JSON.stringify(raceToPlain(state), (_, value) => (value instanceof Uint8Array ? [...value] : value)), before, 'the race is unchanged');
  assert.equal(advance.candidates.map(({ k, candidate }) => [k, candidate.pairs]), [[0, 1]]);
  applyRaceAdvance(state, advance);
  assert.is(state.candidates[0]!.candidate.pairs, 1);
  assert.equal(state.candidates[0]!.sequence, advance.candidates[0]!.sequence);
  assert.is(state.candidates[1]!.candidate.pairs, 0, 'b has no value yet');
});

test('pairs go in the seeded order: a datapoint complete out of turn waits for those before it', () => {
  const state = race(4, 1, [2, 0, 3, 1]);
  step(state, [[0, 0, 0.5], [1, 0, 0.5], [0, 3, 0.5], [1, 3, 0.5]]);
  assert.is(state.candidates[0]!.candidate.pairs, 0, 'datapoint 2 goes first');
  step(state, [[0, 2, 1], [1, 2, 0]]);
  assert.is(state.candidates[0]!.candidate.pairs, 3, 'then 0 and 3, which were waiting');
  let expected = initialRaceSequence({ ...state.settings });
  for (const difference of [-1, 0, 0]) expected = updateConfidenceSequence(expected, difference);
  assert.equal(state.candidates[0]!.sequence, expected);
});

test('attempts are averaged over the ok ones; all failed counts low; a score outside the range is clipped', () => {
  const state = race(3, 2);
  step(state, [[0, 0, 1], [0, 0, 0.5], [1, 0, 0.2], [1, 0, null]]);
  step(state, [[0, 1, 0.1], [0, 1, 0.1], [1, 1, null], [1, 1, null]]);
  step(state, [[0, 2, 0.5], [0, 2, 0.5], [1, 2, 7], [1, 2, 1]]);
  let expected = initialRaceSequence(state.settings);
  for (const difference of [0.2 - 0.75, 0 - 0.1, 1 - 0.5]) expected = updateConfidenceSequence(expected, difference);
  assert.equal(state.candidates[0]!.sequence, expected);
  const { low, high } = confidenceSequenceBounds(expected);
  assert.equal([state.candidates[0]!.candidate.low, state.candidates[0]!.candidate.high], [low, high]);
  assert.is(state.candidates[0]!.candidate.state, 'finished');
});

test('the history keeps at most 256 points: every stride-th pair, the stride doubling, and the decision', () => {
  const datapoints = 1000;
  const state = race(datapoints);
  for (let d = 0; d < datapoints; d++) step(state, [[0, d, 0.5], [1, d, 0.5], [2, d, 0.5]]);
  const { history, candidate } = state.candidates[0]!;
  assert.ok(history.pairs.length <= historyPointsMax + 1, `${history.pairs.length} points`);
  assert.is(history.stride, 4);
  assert.ok(history.pairs.slice(0, -1).every((pairs) => pairs % history.stride === 0));
  assert.is(history.pairs.at(-1), 1000, 'the last pair, where it finished');
  assert.equal([history.low.at(-1), history.high.at(-1)], [candidate.low, candidate.high]);
});

test('a snapshot restores the race exactly, and it goes on as it would have', () => {
  const datapoints = 50;
  const a = race(datapoints, 1, Array.from({ length: datapoints }, (_, i) => (i * 7) % datapoints));
  const values = (d: number): RaceValue[] => [[0, d, (d % 5) / 5], [1, d, ((d + 1) % 4) / 4], [2, d, 0.1]];
  for (let d = 0; d < 20; d++) step(a, values(d));
  const b = raceFromPlain(raceToPlain(a), ['inc', 'a', 'b'], datapoints);
  assert.equal(raceToPlain(b), raceToPlain(a));
  for (let d = 20; d < datapoints; d++) {
    step(a, values(d));
    step(b, values(d));
  }
  assert.equal(b.candidates.map((entry) => entry.candidate), a.candidates.map((entry) => entry.candidate));
  assert.equal(raceToPlain(b), raceToPlain(a));
});

test.run();
