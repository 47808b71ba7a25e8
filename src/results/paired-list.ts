// Two iterations' paired datapoints as a list reads them: a light reference per datapoint made
// from the paired columns as the list goes, holding what the `change` filter and the orderings
// read. The columns are in datapoint order, the list's default; ties of any ordering break on it
// (a reference's `id` is its datapoint's index), in the direction of the ordering's last key.
import { allOf, predicateFor } from '../query/filters.ts';
import type { ListRequest } from '../query/list.ts';
import { comparatorFor, type OrderKey } from '../query/ordering.ts';
import type { Page } from '../query/pagination.ts';
import { readPage } from '../query/read-page.ts';
import { nextVersion } from '../query/versions.ts';
import { verdictNone, verdictPassed } from '../views/datapoint-scores.ts';
import { pairChanges, type PairChange } from '../views/paired-datapoints.ts';
import type { Pairs } from './result-answers.ts';

/** A paired datapoint as the list filters and orders it. */
export interface PairRef {
  readonly id: number;
  readonly pairs: Pairs;
  /** Its position in the paired columns. */
  readonly at: number;
  readonly datapoint_order: number;
  readonly delta: number | null;
  readonly change: PairChange;
}

const defaultOrdering: readonly OrderKey[] = [{ field: 'datapoint_order', descending: false }];
/** The list of two iterations that are not comparable (it is empty). */
const noPairsVersion = nextVersion();

export function pairRows(pairs: Pairs | null) {
  return {
    version: pairs?.version ?? noPairsVersion,
    read(request: ListRequest): Page<PairRef> {
      return readPage<PairRef>({
        sources: pairs ? [{ items: (reverse) => refs(pairs, reverse), size: pairs.data.index.length }] : [],
        sourceOrder: defaultOrdering,
        compareInSourceOrder: (a, b) => a.id - b.id,
        ordering: request.ordering ?? defaultOrdering,
        comparatorFor,
        predicate: allOf(request.filters.map(predicateFor)),
        offset: request.offset,
        limit: request.limit,
      });
    },
  };
}

function* refs(pairs: Pairs, reverse: boolean): Generator<PairRef> {
  const { data, roster } = pairs;
  const count = data.index.length;
  for (let k = 0; k < count; k++) {
    const at = reverse ? count - 1 - k : k;
    const index = data.index[at]!;
    const delta = data.scoreTo[at]! - data.scoreFrom[at]!;
    yield {
      id: index,
      pairs,
      at,
      datapoint_order: roster.orders[index]!,
      delta: Number.isNaN(delta) ? null : delta,
      change: pairChanges[data.change[at]!]!,
    };
  }
}

/** A paired datapoint as the list answers it (schemas/results/paired-datapoint-response.json). */
export interface PairedItem {
  readonly datapoint: string;
  readonly datapoint_order: number;
  readonly score_from: number | null;
  readonly score_to: number | null;
  readonly delta: number | null;
  readonly passed_from: boolean | null;
  readonly passed_to: boolean | null;
  readonly change: PairChange;
  readonly trace_id_from: string | null;
  readonly trace_id_to: string | null;
}

/** A listed reference as its item: the compact columns read out, each side's trace looked up. */
export function pairedItemOf(ref: PairRef, traceOf: (iteration: string, index: number) => string | null): PairedItem {
  const { data, roster, from, to } = ref.pairs;
  const index = data.index[ref.at]!;
  return {
    datapoint: roster.ids[index]!,
    datapoint_order: ref.datapoint_order,
    score_from: scoreOf(data.scoreFrom[ref.at]!),
    score_to: scoreOf(data.scoreTo[ref.at]!),
    delta: ref.delta,
    passed_from: passedOf(data.passedFrom[ref.at]!),
    passed_to: passedOf(data.passedTo[ref.at]!),
    change: ref.change,
    trace_id_from: traceOf(from, index),
    trace_id_to: traceOf(to, index),
  };
}

/** NaN is a side without a score. */
function scoreOf(value: number): number | null {
  return Number.isNaN(value) ? null : value;
}

function passedOf(verdict: number): boolean | null {
  return verdict === verdictNone ? null : verdict === verdictPassed;
}
