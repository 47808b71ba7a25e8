// Every datapoint scored on either side of a comparison, with what changed: the per-datapoint view
// behind a comparison's figures. A datapoint whose pass verdict is known on both sides and differs
// flipped (pass_to_fail, fail_to_pass); otherwise the sign of its delta says whether it improved,
// regressed or is unchanged; a datapoint scored on one side only is only_from or only_to. Pure;
// compact typed columns, so that a large comparison's rows cross to and from a worker cheaply.
import type { ResultColumns } from './result-columns.ts';
import { datapointScores, verdictFailed, verdictNone, verdictPassed } from './datapoint-scores.ts';

export const pairChanges = ['improved', 'regressed', 'unchanged', 'pass_to_fail', 'fail_to_pass', 'only_from', 'only_to'] as const;
export type PairChange = (typeof pairChanges)[number];

/** One entry per datapoint scored on either side, in datapoint order. */
export interface PairedDatapoints {
  /** The datapoint's index in the version. */
  readonly index: Int32Array;
  /** NaN where that side has no score. */
  readonly scoreFrom: Float64Array;
  readonly scoreTo: Float64Array;
  /** Pass verdicts (datapoint-scores.ts: -1 none, 0 failed, 1 passed). */
  readonly passedFrom: Int8Array;
  readonly passedTo: Int8Array;
  /** Positions in pairChanges. */
  readonly change: Uint8Array;
}

const code = (change: PairChange) => pairChanges.indexOf(change);

export function pairedDatapoints(from: ResultColumns, to: ResultColumns): PairedDatapoints {
  const before = datapointScores(from);
  const after = datapointScores(to);
  const listed: number[] = [];
  for (let index = 0; index < from.datapoints; index++) {
    if (!Number.isNaN(before.mean[index]!) || !Number.isNaN(after.mean[index]!)) listed.push(index);
  }
  const index = Int32Array.from(listed);
  const scoreFrom = Float64Array.from(listed, (i) => before.mean[i]!);
  const scoreTo = Float64Array.from(listed, (i) => after.mean[i]!);
  const passedFrom = Int8Array.from(listed, (i) => before.verdict[i]!);
  const passedTo = Int8Array.from(listed, (i) => after.verdict[i]!);
  const change = Uint8Array.from(listed, (_, k) => code(changeOf(scoreFrom[k]!, scoreTo[k]!, passedFrom[k]!, passedTo[k]!)));
  return { index, scoreFrom, scoreTo, passedFrom, passedTo, change };
}

function changeOf(scoreFrom: number, scoreTo: number, passedFrom: number, passedTo: number): PairChange {
  if (Number.isNaN(scoreTo)) return 'only_from';
  if (Number.isNaN(scoreFrom)) return 'only_to';
  if (passedFrom !== verdictNone && passedTo !== verdictNone && passedFrom !== passedTo) {
    return passedFrom === verdictPassed && passedTo === verdictFailed ? 'pass_to_fail' : 'fail_to_pass';
  }
  const delta = scoreTo - scoreFrom;
  return delta > 0 ? 'improved' : delta < 0 ? 'regressed' : 'unchanged';
}
