// The one list pipeline every resource uses: pick the narrowest index, filter, search, order,
// and cut one page. In the default ordering (or its reverse) a page comes straight from sorted
// lists; any other ordering selects the page from the matching records (query/sources.ts, shared
// with the span queries). It runs over an indexed Collection or over one array already kept in
// its default ordering (a dataset's datapoints).
import { Collection, type Identified } from './collection.ts';
import { allOf, predicateFor, type Filter, type Predicate } from './filters.ts';
import { comparatorFor, isReverseOf, isSameOrdering, type OrderKey, type RecordComparator } from './ordering.ts';
import type { Page } from './pagination.ts';
import { pageOf, selectFirst, where } from './sources.ts';
import { searchPredicate } from './search.ts';
import type { SortedList } from './sorted-list.ts';

export interface ListRequest {
  /** The partitions (projects) the caller may see. */
  partitions: Iterable<string>;
  filters: readonly Filter[];
  searchTerms: readonly string[];
  searchFields: readonly string[];
  /** null: the resource's default ordering. */
  ordering: readonly OrderKey[] | null;
  offset: number;
  limit: number;
}


/** Records of one partition in an array kept in `defaultOrdering` (it is never re-sorted). */
export interface SortedRecords<T> {
  readonly partition: string;
  readonly records: readonly T[];
  readonly defaultOrdering: readonly OrderKey[];
  /** Changes whenever the partition or the records do (query/versions.ts), as Collection's does. */
  readonly version: number;
}

/** What a list runs over. */
export type Listable<T extends Identified> = Collection<T> | SortedRecords<T>;

/** A sorted list or array, read from a position forwards or from the end backwards. */
interface SortedSource<T> {
  readonly length: number;
  iterate(start?: number, reverse?: boolean): Iterable<T>;
}

export function runList<T extends Identified>(listable: Listable<T>, request: ListRequest): Page<T> {
  const { sources, residual, defaultOrdering, compare } =
    listable instanceof Collection ? collectionSources(listable, request) : sortedRecordsSources(listable, request);
  const predicate = allOf([
    ...residual.map(predicateFor),
    ...[searchPredicate(request.searchTerms, request.searchFields)].filter((p): p is Predicate => p !== null),
  ]);
  const ordering = request.ordering ?? defaultOrdering;
  if (isSameOrdering(ordering, defaultOrdering) || isReverseOf(ordering, defaultOrdering)) {
    const reverse = !isSameOrdering(ordering, defaultOrdering);
    return fromSortedSources(sources, compare, reverse, predicate, request.offset, request.limit);
  }
  const matching = sources.map((source) => where(source.iterate(), predicate));
  return selectFirst(matching, comparatorFor(ordering), request.offset, request.limit);
}

/** The array itself when its partition is visible; every filter is left to the predicate. */
function sortedRecordsSources<T>(sorted: SortedRecords<T>, request: ListRequest) {
  const visible = [...request.partitions].includes(sorted.partition);
  return {
    sources: visible ? [arraySource(sorted.records)] : [],
    residual: request.filters,
    defaultOrdering: sorted.defaultOrdering,
    compare: comparatorFor(sorted.defaultOrdering),
  };
}

function arraySource<T>(records: readonly T[]): SortedSource<T> {
  return {
    length: records.length,
    *iterate(start = 0, reverse = false) {
      if (reverse) for (let i = records.length - 1 - start; i >= 0; i--) yield records[i]!;
      else for (let i = start; i < records.length; i++) yield records[i]!;
    },
  };
}

function collectionSources<T extends Identified>(collection: Collection<T>, request: ListRequest) {
  return {
    ...chooseSources(collection, request),
    defaultOrdering: collection.spec.defaultOrdering,
    compare: collection.compare,
  };
}

/**
 * Per visible partition, the smallest sorted list an exact filter on an indexed field allows
 * (or every record, when no filter is indexed), and the filters that list does not satisfy.
 * A partition's full list is only touched when it is the one read (it may need building).
 */
function chooseSources<T extends Identified>(collection: Collection<T>, request: ListRequest) {
  const partitions = [...new Set(request.partitions)]
    .map((key) => collection.partition(key))
    .filter((partition) => partition !== undefined);
  const indexed = request.filters.filter(
    (filter) => filter.op === 'exact' && (collection.spec.indexedFields as readonly string[]).includes(filter.field),
  );
  let chosen: { filter: Filter; lists: SortedList<T>[]; size: number } | null = null;
  for (const filter of indexed) {
    const lists = partitions
      .map((partition) => partition.byField.get(filter.field)!.get(filter.value))
      .filter((list) => list !== undefined);
    const size = lists.reduce((total, list) => total + list.length, 0);
    if (!chosen || size < chosen.size) chosen = { filter, lists, size };
  }
  return {
    sources: chosen ? chosen.lists : partitions.map((partition) => partition.all),
    residual: request.filters.filter((filter) => filter !== chosen?.filter),
  };
}

function fromSortedSources<T extends object>(
  sources: SortedSource<T>[],
  compare: RecordComparator,
  reverse: boolean,
  predicate: Predicate | null,
  offset: number,
  limit: number,
): Page<T> {
  // One sorted list and nothing to test: the page is a positional slice of it.
  if (!predicate && sources.length === 1) return { count: sources[0]!.length, items: [...take(sources[0]!.iterate(offset, reverse), limit)] };
  const order = reverse ? (a: T, b: T) => compare(b, a) : compare;
  const read = sources.map((source) => ({ items: where(source.iterate(0, reverse), predicate), size: predicate ? null : source.length }));
  return pageOf(read, order, offset, limit);
}

function* take<T>(items: Iterable<T>, limit: number): Generator<T> {
  if (limit <= 0) return;
  let taken = 0;
  for (const item of items) {
    yield item;
    if (++taken === limit) return;
  }
}
