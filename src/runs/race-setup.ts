// A racing run's `race` as asked for, checked and settled before the run is created: its incumbent
// an iteration of the job (run with the candidates, or with results already on every datapoint of
// the version, whose values are then fixed in the run), at least one candidate, the score range
// (the scoring's when the service scores, else declared), and the order (a race hands its
// datapoints out in a seeded random order). Every refusal is a 400 on the field at fault.
import type { Job, JobIteration } from '../domain/records.ts';
import { invalid, invalidPk } from '../domain/rejection.ts';
import type { Roster } from '../domain/result-batch.ts';
import { datapointMean, type RaceConfig } from '../domain/run-race.ts';
import type { RunOrder } from '../domain/run.ts';
import { pairsMinDefault } from '../stats/index.ts';
import type { ReadModel } from '../read-model.ts';
import type { ResultStore } from '../results/result-store.ts';

/** A run body's `race` as the schema lets it through. */
export interface RaceBody {
  incumbent: string;
  alpha?: number;
  min_pairs?: number;
  stop_better?: boolean;
  score_range?: [number, number] | null;
}

export interface SettledRace {
  config: RaceConfig;
  /** The incumbent's value per datapoint, when it is not one of the run's iterations. */
  incumbentValues: number[] | null;
}

const alphaDefault = 0.05;

export interface RaceSetupInput {
  job: Job;
  race: RaceBody;
  /** The run's iterations, checked (of this job). */
  iterations: readonly string[];
  roster: Roster;
  /** The scoring's score range when the service scores the run, else null. */
  scoringRange: readonly [number, number] | null;
  /** The order as sent (undefined: not sent). */
  order: RunOrder | undefined;
  /** Whether the caller sees an iteration: one it does not is named as one that does not exist. */
  visible: (iteration: JobIteration) => boolean;
}

/** The race settled, or a 400 saying what is wrong. */
export function settleRace(readModel: ReadModel, results: ResultStore, input: RaceSetupInput): SettledRace {
  const { job, race, iterations, roster } = input;
  if (input.order === 'dataset') {
    throw invalid({ order: ['A race hands its datapoints out in a seeded random order: leave order out, or send "shuffled".'] });
  }
  const found = readModel.iterations.get(race.incumbent);
  const incumbent = found && input.visible(found) ? found : undefined;
  if (!incumbent || incumbent.job !== job.id) throw invalid({ race: { incumbent: [incumbent ? 'Must be an iteration of this job.' : invalidPk(race.incumbent)] } });
  const candidates = iterations.filter((id) => id !== race.incumbent);
  if (candidates.length === 0) throw invalid({ race: { incumbent: ['A race needs at least one candidate: an iteration of the run other than its incumbent.'] } });
  const scoreRange = settledRange(race.score_range ?? null, input.scoringRange);
  const config: RaceConfig = {
    incumbent: race.incumbent,
    alpha: race.alpha ?? alphaDefault,
    min_pairs: race.min_pairs ?? pairsMinDefault,
    stop_better: race.stop_better ?? false,
    score_range: scoreRange,
  };
  const incumbentValues = iterations.includes(race.incumbent) ? null : valuesOfIncumbent(results, race.incumbent, roster, scoreRange);
  return { config, incumbentValues };
}

/** The scoring's range when the service scores (a declared one must agree), else the declared one. */
function settledRange(declared: readonly number[] | null, scoring: readonly [number, number] | null): [number, number] {
  if (scoring) {
    if (declared && (declared[0] !== scoring[0] || declared[1] !== scoring[1])) {
      throw invalid({ race: { score_range: [`The service scores this run: its scores lie in [${scoring[0]}, ${scoring[1]}]; leave score_range out or send that.`] } });
    }
    return [scoring[0], scoring[1]];
  }
  if (!declared) throw invalid({ race: { score_range: ['Declare the bounds scores can take, [low, high]: the workers report the scores of this run.'] } });
  const [low, high] = declared as [number, number];
  if (!(low < high)) throw invalid({ race: { score_range: ['The low bound must be below the high bound.'] } });
  // Scores are scaled by the width: one too wide for a number is no range.
  if (!Number.isFinite(high - low)) throw invalid({ race: { score_range: ['The bounds are too far apart: their difference must be a finite number.'] } });
  return [low, high];
}

/**
 * An incumbent that is not run: its value on every datapoint of the version from its results
 * (the mean of its ok attempts, `low` when they all failed), each within the score range.
 */
function valuesOfIncumbent(results: ResultStore, iteration: string, roster: Roster, [low, high]: [number, number]): number[] {
  const table = results.table(iteration);
  if (!table || table.roster.dataset !== roster.dataset) {
    throw invalid({ race: { incumbent: ['It has no results on this dataset version: name it among the iterations to run it in the race.'] } });
  }
  const values: number[] = [];
  let missing = 0;
  for (let index = 0; index < roster.ids.length; index++) {
    let sum = 0;
    let oks = 0;
    let rows = 0;
    for (const slot of table.slotsOf(index)) {
      rows++;
      const score = table.valueAt('score', slot);
      // An error, or an ok row without a score, is no score (as a live race takes them).
      if (table.isError(slot) || score === null) continue;
      if (score < low || score > high) throw invalid({ race: { incumbent: [`Its results hold a score of ${score}, outside score_range [${low}, ${high}].`] } });
      sum += score;
      oks++;
    }
    if (rows === 0) missing++;
    values.push(datapointMean(sum, oks, { low, high }));
  }
  if (missing > 0) {
    throw invalid({ race: { incumbent: [`It has no result on ${missing} of the ${roster.ids.length} datapoints of this version: name it among the iterations to run it in the race.`] } });
  }
  return values;
}
