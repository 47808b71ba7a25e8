// One iteration's results as a list reads them: a light reference per row, made from the table's
// columns as the list goes, holding what filters and orderings read. Only the page's rows are
// then read from the store. The table yields rows in datapoint order, then attempt, which is the
// list's default ordering; ties of any ordering break the same way (a reference's `id` is its
// position there), in the direction of the ordering's last key.
import { allOf, predicateFor } from '../query/filters.ts';
import type { ListRequest } from '../query/list.ts';
import { comparatorFor, type OrderKey } from '../query/ordering.ts';
import type { Page } from '../query/pagination.ts';
import { readPage } from '../query/read-page.ts';
import { nextVersion } from '../query/versions.ts';
import type { Roster } from '../domain/result-batch.ts';
import type { ResultTable } from './result-table.ts';

/** A row as lists filter and order it. */
export interface ResultRef {
  /** Its position in datapoint order, then attempt. */
  readonly id: number;
  readonly iteration: string;
  /** The version its datapoint is of. */
  readonly roster: Roster;
  readonly slot: number;
  readonly index: number;
  readonly datapoint: string;
  readonly datapoint_order: number;
  readonly attempt: number;
  readonly score: number | null;
  readonly passed: boolean | null;
  readonly status: 'ok' | 'error';
}

export const resultDefaultOrdering: readonly OrderKey[] = [{ field: 'datapoint_order', descending: false }];

/** The list of an iteration that has no results. */
const noResultsVersion = nextVersion();

export function resultRows(iteration: string, table: ResultTable | undefined, attemptsPerDatapointMax: number) {
  return {
    version: table?.version ?? noResultsVersion,
    read(request: ListRequest): Page<ResultRef> {
      return readPage<ResultRef>({
        sources: table ? [{ items: (reverse) => refs(iteration, table, reverse, attemptsPerDatapointMax), size: table.rows }] : [],
        sourceOrder: resultDefaultOrdering,
        compareInSourceOrder: (a, b) => a.id - b.id,
        ordering: request.ordering ?? resultDefaultOrdering,
        comparatorFor,
        predicate: allOf(request.filters.map(predicateFor)),
        offset: request.offset,
        limit: request.limit,
      });
    },
  };
}

function* refs(iteration: string, table: ResultTable, reverse: boolean, attemptsPerDatapointMax: number): Generator<ResultRef> {
  const { roster } = table;
  for (const slot of table.slotsInOrder(reverse)) {
    const index = table.indexAt(slot);
    const attempt = table.attemptAt(slot);
    yield {
      id: index * attemptsPerDatapointMax + attempt,
      iteration,
      roster,
      slot,
      index,
      datapoint: roster.ids[index]!,
      datapoint_order: roster.orders[index]!,
      attempt,
      score: table.valueAt('score', slot),
      passed: table.passedAt(slot),
      status: table.isError(slot) ? 'error' : 'ok',
    };
  }
}
