// What a race saves (src/stats/race-rule.ts): K = 8 candidates against an incumbent that already
// has all its results on N = 500 datapoints, scores in [0, 1], alpha 0.05, min_pairs 10,
// stop_better off; a fresh population and order per race, all seeded. For each mix of candidates:
// - the candidate tasks a race runs against the full grid's K * N (a stopped candidate runs the
//   pairs up to its stop; one task per pair);
// - how often the race ends with the full grid's best candidate (best: the highest mean over the
//   N datapoints among the candidates; the race's best: among the candidates it did not stop, the
//   highest mean over the pairs each ran; a race that stops them all has none, a miss);
// - the rule's work per completion: one update of the sequence, the totals, one decision, timed
//   over many completions, the median of a few rounds.
// The mixes:
// - the issue's: the incumbent's score on a datapoint ~ Beta(2, 1.2), each candidate's
//   clip(incumbent's + effect + Normal(0, 0.15), 0, 1), effects -0.30 to +0.08;
// - an optimization loop's proposals: an optimizer (prompt edits, a new few-shot example, a
//   parameter tweak) proposes variants of the incumbent, and most of them are near-duplicates,
//   within a point or two of it, with now and then a broken one and a real but modest gain. The
//   checks are pass/fail and run 3 times (scores 0, 1/3, 2/3, 1): each datapoint has a difficulty
//   (the incumbent's pass probability, ~ Beta(2, 1.2)) that a variant shares, moved by its effect
//   and by Normal(0, 0.1) of its own; effects -0.25, -0.04, -0.02, -0.01, 0, 0, +0.01, +0.05.
//   Near-duplicates are what no sequence tells apart in 500 datapoints: they run to or near the end.
// Run with `node --import tsx -e "import('./bench/race-savings.ts').then((m) => m.raceSavingsRows()).then(console.log)"`.
import { initialRaceSequence, decideCandidate, type RaceSettings } from '../src/stats/race-rule.ts';
import { updateConfidenceSequence } from '../src/stats/confidence-sequence.ts';
import { runRace, Sampler, type RacePopulation } from '../test/helpers/race-simulation.ts';
import { median, type Row } from './harness.ts';

const datapoints = 500;
const candidates = 8;
const settings: RaceSettings = { alpha: 0.05, candidates, pairsMin: 10, stopBetter: false, low: 0, high: 1, datapoints };
const racesDefault = 200;
const tasksSavedMin = 0.4;
const sameBestMin = 0.95;
const completionMicrosecondsMax = 5;
const timingRounds = 5;
/** Completions per timing round: every pair of every candidate of a race, this many times over. */
const timingPasses = 50;

interface Mix {
  name: string;
  seed: number;
  /** Whether the issue's targets apply to it (its mix); the other is reported beside it. */
  targeted: boolean;
  population: (sampler: Sampler) => RacePopulation;
}

const issueEffects = [-0.3, -0.2, -0.15, -0.1, -0.05, 0, 0.03, 0.08];
const loopEffects = [-0.25, -0.04, -0.02, -0.01, 0, 0, 0.01, 0.05];

const mixes: Mix[] = [
  {
    name: "the issue's mix",
    seed: 7001,
    targeted: true,
    population: (sampler) => {
      const incumbent = Float64Array.from({ length: datapoints }, () => sampler.beta(2, 1.2));
      const candidateScores = issueEffects.map((effect) => incumbent.map((score) => clip(score + effect + 0.15 * sampler.normal())));
      return { incumbent, candidates: candidateScores };
    },
  },
  {
    name: "an optimization loop's proposals",
    seed: 7002,
    targeted: false,
    population: (sampler) => {
      const difficulty = Float64Array.from({ length: datapoints }, () => sampler.beta(2, 1.2));
      const attempts = (p: number) => (sampler.bernoulli(p) + sampler.bernoulli(p) + sampler.bernoulli(p)) / 3;
      const incumbent = difficulty.map(attempts);
      const candidateScores = loopEffects.map((effect) => difficulty.map((p) => attempts(clip(p + effect + 0.1 * sampler.normal()))));
      return { incumbent, candidates: candidateScores };
    },
  },
];

function clip(score: number): number {
  return Math.min(1, Math.max(0, score));
}

export async function raceSavingsRows(options: { races?: number } = {}): Promise<Row[]> {
  const races = options.races ?? racesDefault;
  return mixes.flatMap((mix) => mixRows(mix, races));
}

function mixRows(mix: Mix, races: number): Row[] {
  const sampler = new Sampler(mix.seed);
  let tasks = 0;
  let sameBest = 0;
  const stopsPerCandidate = new Array<number>(candidates).fill(0);
  let timed: RacePopulation | undefined;
  let timedOrder: Int32Array | undefined;
  for (let race = 0; race < races; race++) {
    const population = mix.population(sampler);
    const order = sampler.order(datapoints);
    const outcomes = runRace(settings, population, order, false);
    tasks += outcomes.reduce((sum, outcome) => sum + outcome.pairs, 0);
    outcomes.forEach((outcome, k) => {
      if (outcome.state !== 'finished') stopsPerCandidate[k]!++;
    });
    const best = argMax(population.candidates.map((scores) => scores.reduce((sum, score) => sum + score, 0)));
    const survivors = outcomes.map((outcome) => (outcome.state === 'finished' ? outcome.ranMean : Number.NEGATIVE_INFINITY));
    if (survivors.some(Number.isFinite) && argMax(survivors) === best) sameBest++;
    timed ??= population;
    timedOrder ??= order;
  }
  const saved = 1 - tasks / (races * candidates * datapoints);
  const microseconds = completionMicroseconds(timed!, timedOrder!);
  const stops = `stopped per candidate (of ${races}): ${stopsPerCandidate.join(', ')}`;
  return [
    {
      name: `race: candidate tasks saved, ${mix.name}`,
      value: 100 * saved,
      unit: '%',
      target: mix.targeted ? `>= ${100 * tasksSavedMin}% fewer than the full grid` : 'report only (near-duplicates run to the end)',
      pass: !mix.targeted || saved >= tasksSavedMin,
      note: `${tasks} of ${races * candidates * datapoints} tasks over ${races} races; ${stops}`,
    },
    {
      name: `race: same best candidate as the full grid, ${mix.name}`,
      value: (100 * sameBest) / races,
      unit: '% of races',
      target: `>= ${100 * sameBestMin}%`,
      pass: sameBest / races >= sameBestMin,
    },
    {
      name: `race: rule work per completion, ${mix.name}`,
      value: microseconds,
      unit: 'us',
      target: `<= ${completionMicrosecondsMax} us`,
      pass: microseconds <= completionMicrosecondsMax,
      note: `median of ${timingRounds} rounds of ${timingPasses * candidates * datapoints} completions: update, totals, decision`,
    },
  ];
}

function argMax(values: number[]): number {
  let best = 0;
  for (let i = 1; i < values.length; i++) if (values[i]! > values[best]!) best = i;
  return best;
}

/**
 * Microseconds per completion of the rule's work alone: each candidate's pairs of one race in
 * order, every one decided (as if no candidate were ever stopped), a sequence started afresh per
 * candidate and pass; one uncounted warm-up round.
 */
function completionMicroseconds(population: RacePopulation, order: Int32Array): number {
  const { incumbent } = population;
  let incumbentSum = 0;
  for (const score of incumbent) incumbentSum += score;
  let worse = 0;
  const round = (): number => {
    const started = performance.now();
    for (let pass = 0; pass < timingPasses; pass++) {
      for (const candidate of population.candidates) {
        let sequence = initialRaceSequence(settings);
        let candidateSum = 0;
        for (let t = 1; t <= datapoints; t++) {
          const datapoint = order[t - 1]!;
          sequence = updateConfidenceSequence(sequence, candidate[datapoint]! - incumbent[datapoint]!);
          candidateSum += candidate[datapoint]!;
          const decision = decideCandidate(settings, sequence, { candidateSum, candidateCount: t, incumbentSum, incumbentCount: datapoints });
          if (decision.state === 'worse') worse++;
        }
      }
    }
    return ((performance.now() - started) * 1000) / (timingPasses * population.candidates.length * datapoints);
  };
  round();
  const rounds = Array.from({ length: timingRounds }, round);
  if (worse < 0) throw new Error('unreachable: reading the decisions keeps their work from being optimized away');
  return median(rounds);
}
