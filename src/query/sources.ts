// The pieces query/read-page.ts reads a page with, for every list (records of the read model and
// spans of the store alike): one k-way merge, one filter, one cut that stops reading once the
// page is full when the count is known, and one bounded selection for orderings no source is
// sorted by.
import type { Page } from './pagination.ts';

export type Compare<T> = (a: T, b: T) => number;

/** Items in the order a page is read in, and how many there are when known without reading them. */
export interface Source<T> {
  items: Iterable<T>;
  size: number | null;
}

/**
 * The page at `offset` of the sources merged in `compare` order; reading stops once the page is
 * full when every source's size is known.
 */
export function pageOf<T>(sources: readonly Source<T>[], compare: Compare<T>, offset: number, limit: number): Page<T> {
  const sized = sources.every((source) => source.size !== null);
  const size = sized ? sources.reduce((total, source) => total + source.size!, 0) : null;
  // One source (the usual case: one project) is read as it is, through no merge.
  const items = sources.length === 1 ? sources[0]!.items : merge(sources.map((source) => source.items), compare);
  return cut(items, offset, limit, size);
}

/** k-way merge of sources each already in `compare` order (k is the caller's projects). */
export function* merge<T>(sources: readonly Iterable<T>[], compare: Compare<T>): Generator<T> {
  const iterators = sources.map((source) => source[Symbol.iterator]());
  const heads = iterators.map((iterator) => iterator.next());
  for (;;) {
    let smallest = -1;
    for (let i = 0; i < heads.length; i++) {
      const head = heads[i]!;
      if (!head.done && (smallest < 0 || compare(head.value, heads[smallest]!.value as T) < 0)) smallest = i;
    }
    if (smallest < 0) return;
    yield heads[smallest]!.value as T;
    heads[smallest] = iterators[smallest]!.next();
  }
}

/**
 * The items that pass `predicate`; `items` itself when there is none (each generator wrapped
 * around a source costs every item a resumption: a scan of a million spans reads through them).
 */
export function where<T>(items: Iterable<T>, predicate: ((item: T) => boolean) | null): Iterable<T> {
  return predicate ? passing(items, predicate) : items;
}

function* passing<T>(items: Iterable<T>, predicate: (item: T) => boolean): Generator<T> {
  for (const item of items) if (predicate(item)) yield item;
}

/**
 * The page at `offset`: with `size` known up front, reading stops once the page is full;
 * otherwise everything is read to count it.
 */
export function cut<T>(items: Iterable<T>, offset: number, limit: number, size: number | null): Page<T> {
  const page: T[] = [];
  let position = 0;
  for (const item of items) {
    if (size !== null && page.length === limit) break;
    if (position >= offset && page.length < limit) page.push(item);
    position++;
  }
  return { count: size ?? position, items: page };
}

/**
 * The page at `offset` of everything the sources yield, in `compare` order, holding only the best
 * offset + limit items seen so far (sorted and cut whenever the buffer doubles).
 */
export function selectFirst<T>(sources: readonly Iterable<T>[], compare: Compare<T>, offset: number, limit: number): Page<T> {
  const keep = offset + limit;
  let buffer: T[] = [];
  let count = 0;
  for (const source of sources) {
    for (const item of source) {
      count++;
      buffer.push(item);
      if (buffer.length >= 2 * keep + 64) buffer = buffer.sort(compare).slice(0, keep);
    }
  }
  return { count, items: buffer.sort(compare).slice(offset, keep) };
}
