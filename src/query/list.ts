// The one list pipeline every resource uses: pick the narrowest index, filter, search, order,
// and cut one page. In the default ordering (or its reverse) a page comes straight from sorted
// lists; any other ordering sorts just the matching records.
import type { Collection, Identified } from './collection.ts';
import { allOf, predicateFor, type Filter, type Predicate } from './filters.ts';
import { comparatorFor, isReverseOf, isSameOrdering, type OrderKey, type RecordComparator } from './ordering.ts';
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

export interface ListResult<T> {
  count: number;
  items: T[];
}

export function runList<T extends Identified>(collection: Collection<T>, request: ListRequest): ListResult<T> {
  const { sources, residual } = chooseSources(collection, request);
  const predicate = allOf([
    ...residual.map(predicateFor),
    ...[searchPredicate(request.searchTerms, request.searchFields)].filter((p): p is Predicate => p !== null),
  ]);
  const defaultOrdering = collection.spec.defaultOrdering;
  const ordering = request.ordering ?? defaultOrdering;
  if (isSameOrdering(ordering, defaultOrdering) || isReverseOf(ordering, defaultOrdering)) {
    const reverse = !isSameOrdering(ordering, defaultOrdering);
    return fromSortedSources(sources, collection.compare, reverse, predicate, request.offset, request.limit);
  }
  const matching: T[] = [];
  for (const source of sources) {
    for (const record of source.iterate()) if (!predicate || predicate(record)) matching.push(record);
  }
  matching.sort(comparatorFor(ordering));
  return { count: matching.length, items: matching.slice(request.offset, request.offset + request.limit) };
}

/**
 * Per visible partition, the smallest sorted list an exact filter on an indexed field allows
 * (or every record), and the filters that list does not already satisfy.
 */
function chooseSources<T extends Identified>(collection: Collection<T>, request: ListRequest) {
  const partitions = [...new Set(request.partitions)]
    .map((key) => collection.partition(key))
    .filter((partition) => partition !== undefined);
  const indexed = request.filters.filter(
    (filter) => filter.op === 'exact' && (collection.spec.indexedFields as readonly string[]).includes(filter.field),
  );
  let best: { filter: Filter | null; sources: SortedList<T>[]; size: number } = {
    filter: null,
    sources: partitions.map((partition) => partition.all),
    size: partitions.reduce((total, partition) => total + partition.all.length, 0),
  };
  for (const filter of indexed) {
    const sources = partitions
      .map((partition) => partition.byField.get(filter.field)!.get(filter.value))
      .filter((list) => list !== undefined);
    const size = sources.reduce((total, list) => total + list.length, 0);
    if (size < best.size || best.filter === null) best = { filter, sources, size };
  }
  return { sources: best.sources, residual: request.filters.filter((filter) => filter !== best.filter) };
}

function fromSortedSources<T extends object>(
  sources: SortedList<T>[],
  compare: RecordComparator,
  reverse: boolean,
  predicate: Predicate | null,
  offset: number,
  limit: number,
): ListResult<T> {
  if (!predicate && sources.length <= 1) {
    const source = sources[0];
    if (!source) return { count: 0, items: [] };
    const items: T[] = [];
    for (const record of source.iterate(offset, reverse)) {
      if (items.length === limit) break;
      items.push(record);
    }
    return { count: source.length, items };
  }
  const items: T[] = [];
  let count = 0;
  for (const record of merge(sources, compare, reverse)) {
    if (predicate && !predicate(record)) continue;
    if (count >= offset && items.length < limit) items.push(record);
    count++;
    // Without a predicate the count is known up front; stop once the page is full.
    if (!predicate && items.length === limit) {
      return { count: sources.reduce((total, list) => total + list.length, 0), items };
    }
  }
  return { count, items };
}

/** k-way merge of sorted lists (k is the caller's number of projects, usually small). */
function* merge<T extends object>(sources: SortedList<T>[], compare: RecordComparator, reverse: boolean): Generator<T> {
  const order = reverse ? (a: T, b: T) => compare(b, a) : compare;
  if (sources.length === 1) {
    yield* sources[0]!.iterate(0, reverse);
    return;
  }
  const iterators = sources.map((source) => source.iterate(0, reverse));
  const heads = iterators.map((iterator) => iterator.next());
  while (true) {
    let smallest = -1;
    for (let i = 0; i < heads.length; i++) {
      const head = heads[i]!;
      if (head.done) continue;
      if (smallest < 0 || order(head.value, heads[smallest]!.value as T) < 0) smallest = i;
    }
    if (smallest < 0) return;
    yield heads[smallest]!.value as T;
    heads[smallest] = iterators[smallest]!.next();
  }
}
