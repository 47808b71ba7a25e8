// What a comparison says about a pair a race decided early: a candidate stopped against its
// incumbent after some of the datapoints, its results partial by design. Fixed-sample figures (a
// t interval, a p-value) assume a sample size chosen in advance, not by looking: for such a pair
// the race's own bound is the one that holds.
import type { JobIteration } from '../domain/records.ts';
import type { ReadModel } from '../read-model.ts';

export interface StoppedEarly {
  run: string;
  /** The candidate stopped (from or to). */
  iteration: string;
  state: string;
  pairs: number;
  datapoints: number;
  /** The race's bounds on the mean difference, as to minus from. */
  low: number;
  high: number;
  alpha: number;
  method: string;
  note: string;
}

const note =
  'This pair was stopped early by a race: its sample size was chosen by looking at the scores, so the fixed-sample t interval, ' +
  'bootstrap interval and p-values here do not apply, and the stopped candidate\'s partial results are not a fair estimate of its full score. ' +
  'The race\'s confidence-sequence bounds (low, high) hold however often it looked.';

/** The newest race of from's job that stopped one of the two against the other, if any. */
export function stoppedEarlyOf(readModel: ReadModel, from: JobIteration, to: JobIteration): StoppedEarly | null {
  const job = readModel.jobs.get(from.job);
  if (!job || from.job !== to.job) return null;
  for (const run of readModel.runsOf(job)) {
    const race = readModel.runStates.get(run.id)?.race;
    if (!race) continue;
    for (const { candidate } of race.candidates) {
      if (candidate.stop === null) continue;
      const pair = [race.config.incumbent, candidate.iteration];
      if (!pair.includes(from.id) || !pair.includes(to.id) || from.id === to.id) continue;
      // The race bounds candidate - incumbent; the comparison reads to - from.
      const sign = to.id === candidate.iteration ? 1 : -1;
      const [low, high] = sign === 1 ? [candidate.low, candidate.high] : [-candidate.high, -candidate.low];
      const { pairs, datapoints, alpha, method } = candidate.stop;
      return { run: run.id, iteration: candidate.iteration, state: candidate.state, pairs, datapoints, low, high, alpha, method, note };
    }
  }
  return null;
}
