import { test } from 'uvu';
import * as assert from 'uvu/assert';
import type { Filter } from '../../src/query/filters.ts';
import { comparatorFor, type OrderKey } from '../../src/query/ordering.ts';
import { narrowest, othersThan, readPage, type PageQuery, type PageSource } from '../../src/query/read-page.ts';

interface Item {
  id: string;
  n: number;
}

const ascending: readonly OrderKey[] = [{ field: 'n', descending: false }];
const descending: readonly OrderKey[] = [{ field: 'n', descending: true }];

const items = (...ns: number[]): Item[] => ns.map((n) => ({ id: `i${String(n).padStart(3, '0')}`, n }));

/** A source over items kept in ascending n, counting what is read from it. */
function counted(list: Item[], options: { sized?: boolean; sliced?: boolean } = {}) {
  const reads = { items: 0, slices: 0 };
  const source: PageSource<Item> = {
    size: options.sized === false ? null : list.length,
    *items(reverse) {
      for (let k = 0; k < list.length; k++) {
        reads.items++;
        yield list[reverse ? list.length - 1 - k : k]!;
      }
    },
  };
  if (options.sliced) {
    source.slice = (offset, limit, reverse) => {
      reads.slices++;
      const ordered = reverse ? [...list].reverse() : list;
      return ordered.slice(offset, offset + limit);
    };
  }
  return { source, reads };
}

const query = (sources: PageSource<Item>[], overrides: Partial<PageQuery<Item>> = {}): PageQuery<Item> => ({
  sources,
  sourceOrder: ascending,
  compareInSourceOrder: (a, b) => a.n - b.n,
  ordering: ascending,
  comparatorFor,
  predicate: null,
  offset: 0,
  limit: 3,
  ...overrides,
});

test('sources merge in the source order, and a sized page stops reading once full', () => {
  const a = counted(items(1, 4, 7, 10));
  const b = counted(items(2, 3, 8, 9));
  const page = readPage(query([a.source, b.source], { offset: 1, limit: 3 }));
  assert.is(page.count, 8);
  assert.equal(page.items.map((item) => item.n), [2, 3, 4]);
  assert.ok(a.reads.items + b.reads.items <= 6, `read ${a.reads.items + b.reads.items}`);
});

test('the reverse of the source order reads every source backwards', () => {
  const a = counted(items(1, 4, 7, 10));
  const b = counted(items(2, 3, 8, 9));
  const page = readPage(query([a.source, b.source], { ordering: descending, limit: 4 }));
  assert.equal(page.items.map((item) => item.n), [10, 9, 8, 7]);
});

test('one source with nothing to test is sliced by position, either way', () => {
  const one = counted(items(1, 2, 3, 4, 5, 6), { sliced: true });
  assert.equal(readPage(query([one.source], { offset: 2, limit: 2 })), { count: 6, items: items(3, 4) });
  assert.equal(readPage(query([one.source], { ordering: descending, offset: 1, limit: 2 })), { count: 6, items: items(5, 4) });
  assert.is(one.reads.slices, 2);
  assert.is(one.reads.items, 0);
});

test('a predicate, or a second source, reads items instead of slicing; the count stays exact', () => {
  const one = counted(items(1, 2, 3, 4, 5, 6), { sliced: true });
  const even = readPage(query([one.source], { predicate: (item) => (item as Item).n % 2 === 0, limit: 2 }));
  assert.equal(even, { count: 3, items: items(2, 4) });
  assert.is(one.reads.slices, 0);
  assert.is(one.reads.items, 6);
  const other = counted(items(7), { sliced: true });
  assert.equal(readPage(query([one.source, other.source], { offset: 5 })), { count: 7, items: items(6, 7) });
  assert.is(one.reads.slices + other.reads.slices, 0);
});

test('a source of unknown size is read to the end to count it', () => {
  const unsized = counted(items(1, 2, 3, 4, 5), { sized: false });
  assert.equal(readPage(query([unsized.source], { limit: 2 })), { count: 5, items: items(1, 2) });
  assert.is(unsized.reads.items, 5);
});

test('any other ordering selects the page from everything that matches, in the comparator asked for', () => {
  const a = counted(items(1, 4, 7));
  const b = counted(items(2, 5, 8));
  const byId: readonly OrderKey[] = [{ field: 'id', descending: true }];
  const page = readPage(query([a.source, b.source], { ordering: byId, offset: 1, limit: 2, predicate: (item) => (item as Item).n !== 8 }));
  assert.equal(page, { count: 5, items: items(5, 4) });
});

test('narrowest: the exact filter of the smallest size, the first of equals; others are not candidates', () => {
  const filters: Filter[] = [
    { field: 'a', op: 'exact', value: 1 },
    { field: 'b', op: 'gte', value: 0 },
    { field: 'c', op: 'exact', value: 2 },
    { field: 'd', op: 'exact', value: 3 },
    { field: 'e', op: 'exact', value: 4 },
  ];
  const sizes: Record<string, number | null> = { a: 10, b: 1, c: 5, d: 5, e: null };
  const sized: string[] = [];
  const chosen = narrowest(filters, (filter) => {
    sized.push(filter.field);
    return sizes[filter.field]!;
  });
  assert.equal(chosen, { filter: filters[2], size: 5 });
  assert.equal(sized, ['a', 'c', 'd', 'e']);
  assert.is(narrowest(filters, () => null), null);
  assert.equal(othersThan(filters, filters[2]!), [filters[0], filters[1], filters[3], filters[4]]);
  assert.is(othersThan(filters, null), filters);
});

test.run();
