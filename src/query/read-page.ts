// Reading one page of a list out of ordered sources: the one reader every list runs on (records
// of the read model, a dataset's datapoints, spans of the store, results and paired datapoints).
// A list only supplies its sources. Each yields its items in one order (`sourceOrder`), forwards
// or backwards (`reverse` always means "read the source backwards"). Asked for that order or its
// exact reverse, the sources merge in it and a page stops reading once it is full whenever their
// sizes are known, and one source with nothing to test is cut by position when it can be
// (`slice`); asked for any other order, the page is selected from everything that matches,
// holding no more than it needs (query/sources.ts). The count is always exact, so a predicate
// sees every item of every source.
//
// Where a list can read a narrower source for an exact filter (a collection's sorted list per
// value of an indexed field, the spans linked to one agent, job or iteration), `narrowest` picks
// the filter that leaves the fewest items, and `othersThan` the filters left to test.
import type { Filter, Predicate } from './filters.ts';
import { isReverseOf, isSameOrdering, type OrderKey, type RecordComparator } from './ordering.ts';
import type { Page } from './pagination.ts';
import { pageOf, selectFirst, where, type Compare } from './sources.ts';

/** Items in the source order, read forwards or backwards. */
export interface PageSource<T> {
  /** Every item, in the source order, or in its exact reverse when `reverse`. */
  items(reverse: boolean): Iterable<T>;
  /** How many items it yields, when known without reading them. */
  readonly size: number | null;
  /**
   * The `limit` items from position `offset`, counted from the end when `reverse`, reading no
   * others (a positional index); only sources of known size have it.
   */
  slice?(offset: number, limit: number, reverse: boolean): T[];
}

export interface PageQuery<T extends object> {
  sources: readonly PageSource<T>[];
  /** The order every source yields forwards, as ordering keys and as a comparator. */
  sourceOrder: readonly OrderKey[];
  compareInSourceOrder: Compare<T>;
  /** The order asked for. */
  ordering: readonly OrderKey[];
  /** A total order for any ordering asked (ordering.ts's comparatorFor, or one of the list's own). */
  comparatorFor(ordering: readonly OrderKey[]): RecordComparator;
  /** What every item must pass, on top of what its source already satisfies; null: nothing. */
  predicate: Predicate | null;
  offset: number;
  limit: number;
}

export function readPage<T extends object>(query: PageQuery<T>): Page<T> {
  const { sources, sourceOrder, ordering, predicate, offset, limit } = query;
  const forwards = isSameOrdering(ordering, sourceOrder);
  if (!forwards && !isReverseOf(ordering, sourceOrder)) {
    const matching = sources.map((source) => where(source.items(false), predicate));
    return selectFirst(matching, query.comparatorFor(ordering), offset, limit);
  }
  const reverse = !forwards;
  // One source and nothing to test: the page is a positional slice of it.
  const only = sources.length === 1 ? sources[0]! : null;
  if (only?.slice && only.size !== null && !predicate) return { count: only.size, items: only.slice(offset, limit, reverse) };
  const compare = forwards ? query.compareInSourceOrder : (a: T, b: T) => query.compareInSourceOrder(b, a);
  const read = sources.map((source) => ({ items: where(source.items(reverse), predicate), size: predicate ? null : source.size }));
  return pageOf(read, compare, offset, limit);
}

/** An exact filter a source can be narrowed by, and how many items that narrower source holds. */
export interface Narrowing {
  filter: Filter;
  size: number;
}

/**
 * Of the exact filters among `filters`, the one whose narrower source is the smallest (the first
 * of equals); null when none narrows. `sizeOf` sizes a filter's source, or is null when the list
 * has none for its field.
 */
export function narrowest(filters: readonly Filter[], sizeOf: (filter: Filter) => number | null): Narrowing | null {
  let best: Narrowing | null = null;
  for (const filter of filters) {
    if (filter.op !== 'exact') continue;
    const size = sizeOf(filter);
    if (size !== null && (best === null || size < best.size)) best = { filter, size };
  }
  return best;
}

/** The filters a source narrowed by `satisfied` leaves to test (`filters` itself when it is null). */
export function othersThan(filters: readonly Filter[], satisfied: Filter | null): readonly Filter[] {
  return satisfied ? filters.filter((filter) => filter !== satisfied) : filters;
}
