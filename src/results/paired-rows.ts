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
import { pairChanges, type PairChange } from '../views/paired-datapoints.ts';
import type { Pairs } from './result-views.ts';

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
