// Reading one page of a list out of ordered sources: the one reader every list runs on. Each
// source yields its items in one order (`sourceOrder`) forwards or backwards; asked for that
// order or its exact reverse, the sources merge in it and a page stops reading once it is full
// whenever their sizes are known; asked for any other order, the page is selected from everything
// that matches, holding no more than it needs (query/sources.ts).
import type { Predicate } from './filters.ts';
import { isReverseOf, isSameOrdering, type OrderKey, type RecordComparator } from './ordering.ts';
import type { Page } from './pagination.ts';
import { pageOf, selectFirst, where, type Compare } from './sources.ts';

/** Items in the source order, read forwards or backwards. */
export interface PageSource<T> {
  items(reverse: boolean): Iterable<T>;
  /** How many items it yields, when known without reading them. */
  readonly size: number | null;
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
  predicate: Predicate | null;
  offset: number;
  limit: number;
}

export function readPage<T extends object>(query: PageQuery<T>): Page<T> {
  const { sources, sourceOrder, ordering, predicate, offset, limit } = query;
  const forwards = isSameOrdering(ordering, sourceOrder);
  if (forwards || isReverseOf(ordering, sourceOrder)) {
    const compare = forwards ? query.compareInSourceOrder : (a: T, b: T) => query.compareInSourceOrder(b, a);
    const read = sources.map((source) => ({ items: where(source.items(!forwards), predicate), size: predicate ? null : source.size }));
    return pageOf(read, compare, offset, limit);
  }
  const matching = sources.map((source) => where(source.items(false), predicate));
  return selectFirst(matching, query.comparatorFor(ordering), offset, limit);
}
