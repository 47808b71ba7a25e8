// The list pipeline of records: a Collection or an array already kept in its default ordering (a
// dataset's datapoints) supplies its sources in that ordering, and the one reader
// (query/read-page.ts) filters, searches, orders and cuts the page. A collection's source per
// visible partition is the smallest sorted list an exact filter on an indexed field allows (or
// every record), so a page in the default ordering or its reverse stops reading once full, and
// with nothing left to test it is a positional slice of that list. Requests are made from a query
// string by validation/list-vocabulary.ts's listRequestOf.
import { Collection, type Identified, type Partition } from './collection.ts';
import { allOf, predicateFor, type Filter, type Predicate } from './filters.ts';
import { comparatorFor, type OrderKey, type RecordComparator } from './ordering.ts';
import type { Page } from './pagination.ts';
import { narrowest, othersThan, readPage, type PageSource } from './read-page.ts';
import { searchPredicate } from './search.ts';
import type { SortedList } from './sorted-list.ts';

/** What a list is asked for, apart from the page. */
export interface ListSelection {
  /** The partitions (projects) the caller may see, narrowed by the query's partition parameter. */
  partitions: readonly string[];
  filters: readonly Filter[];
  searchTerms: readonly string[];
  searchFields: readonly string[];
  /** null: the resource's default ordering. */
  ordering: readonly OrderKey[] | null;
}

export interface ListRequest extends ListSelection {
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

/** What a listable supplies for one request: sources in its default ordering, and the filters they leave to test. */
interface Supplied<T> {
  sources: PageSource<T>[];
  residual: readonly Filter[];
  defaultOrdering: readonly OrderKey[];
  compare: RecordComparator;
}

export function runList<T extends Identified>(listable: Listable<T>, request: ListRequest): Page<T> {
  const { sources, residual, defaultOrdering, compare } =
    listable instanceof Collection ? collectionSources(listable, request) : sortedRecordsSources(listable, request);
  const predicates: Predicate[] = residual.map(predicateFor);
  const search = searchPredicate(request.searchTerms, request.searchFields);
  if (search) predicates.push(search);
  return readPage<T>({
    sources,
    sourceOrder: defaultOrdering,
    compareInSourceOrder: compare,
    ordering: request.ordering ?? defaultOrdering,
    comparatorFor,
    predicate: allOf(predicates),
    offset: request.offset,
    limit: request.limit,
  });
}

/** The array itself when its partition is visible; every filter is left to the predicate. */
function sortedRecordsSources<T>(sorted: SortedRecords<T>, request: ListRequest): Supplied<T> {
  return {
    sources: request.partitions.includes(sorted.partition) ? [arraySource(sorted.records)] : [],
    residual: request.filters,
    defaultOrdering: sorted.defaultOrdering,
    compare: comparatorFor(sorted.defaultOrdering),
  };
}

/**
 * Per visible partition, the smallest sorted list an exact filter on an indexed field allows
 * (the filter chosen is the one with the fewest records over all those partitions), or every
 * record when no filter is indexed. A partition's full list is only touched when it is the one
 * read (it may need building).
 */
function collectionSources<T extends Identified>(collection: Collection<T>, request: ListRequest): Supplied<T> {
  const partitions: Partition<T>[] = [];
  for (const key of new Set(request.partitions)) {
    const partition = collection.partition(key);
    if (partition) partitions.push(partition);
  }
  const indexed = collection.spec.indexedFields as readonly string[];
  const chosen = narrowest(request.filters, (filter) => {
    if (!indexed.includes(filter.field)) return null;
    let size = 0;
    for (const partition of partitions) size += partition.byField.get(filter.field)!.get(filter.value)?.length ?? 0;
    return size;
  });
  const sources: PageSource<T>[] = [];
  for (const partition of partitions) {
    const list = chosen ? partition.byField.get(chosen.filter.field)!.get(chosen.filter.value) : partition.all;
    if (list) sources.push(sortedListSource(list));
  }
  return {
    sources,
    residual: othersThan(request.filters, chosen?.filter ?? null),
    defaultOrdering: collection.spec.defaultOrdering,
    compare: collection.compare,
  };
}

function sortedListSource<T>(list: SortedList<T>): PageSource<T> {
  return {
    size: list.length,
    items: (reverse) => list.iterate(0, reverse),
    slice(offset, limit, reverse) {
      const page: T[] = [];
      if (limit <= 0) return page;
      for (const item of list.iterate(offset, reverse)) {
        page.push(item);
        if (page.length === limit) break;
      }
      return page;
    },
  };
}

function arraySource<T>(records: readonly T[]): PageSource<T> {
  return {
    size: records.length,
    items: (reverse) => (reverse ? backwards(records) : records),
    slice(offset, limit, reverse) {
      const page: T[] = [];
      if (reverse) for (let i = records.length - 1 - offset; i >= 0 && page.length < limit; i--) page.push(records[i]!);
      else for (let i = offset; i < records.length && page.length < limit; i++) page.push(records[i]!);
      return page;
    },
  };
}

function* backwards<T>(records: readonly T[]): Generator<T> {
  for (let i = records.length - 1; i >= 0; i--) yield records[i]!;
}
