import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { runList, type ListRequest, type SortedRecords } from '../../src/query/list.ts';
import { parseOrdering } from '../../src/query/ordering.ts';
import { splitSearchTerms } from '../../src/query/search.ts';

interface Point {
  id: string;
  order: number;
  persona: string | null;
}

/** Points already in their default ordering (order, then position), as a dataset keeps them. */
function points(count: number): Point[] {
  return Array.from({ length: count }, (_, i) => ({
    id: `p-${String(count - i).padStart(6, '0')}`,
    order: Math.floor(i / 2),
    persona: i % 4 === 0 ? null : `persona ${i % 3}`,
  }));
}

const sorted = (records: readonly Point[], partition = 'project'): SortedRecords<Point> => ({
  partition,
  records,
  defaultOrdering: [{ field: 'order', descending: false }],
  version: 0,
});

const request = (overrides: Partial<ListRequest>): ListRequest => ({
  partitions: ['project'],
  filters: [],
  searchTerms: [],
  searchFields: ['persona'],
  ordering: null,
  offset: 0,
  limit: 25,
  ...overrides,
});

test('a page of a sorted array in its default ordering is a slice, reading only that page', () => {
  const records = points(100_000);
  const reads = { count: 0 };
  const counted = new Proxy(records, {
    get(target, key, receiver) {
      if (typeof key === 'string' && /^\d+$/.test(key)) reads.count++;
      return Reflect.get(target, key, receiver);
    },
  });
  const result = runList(sorted(counted), request({ offset: 50_000 }));
  assert.is(result.count, 100_000);
  assert.equal(result.items, records.slice(50_000, 50_025));
  assert.ok(reads.count <= 26, `read ${reads.count} elements for one page`);
});

test('the reverse of the default ordering reads the array backwards', () => {
  const records = points(10);
  const result = runList(sorted(records), request({ ordering: parseOrdering('-order', new Set(['order']), 4), offset: 2, limit: 3 }));
  assert.equal(result.items, [...records].reverse().slice(2, 5));
});

test('search and filters go through the same predicates as collections', () => {
  const records = points(40);
  const searched = runList(sorted(records), request({ searchTerms: splitSearchTerms('PERSONA 1', 4), limit: 100 }));
  const expected = records.filter((point) => point.persona === 'persona 1');
  assert.is(searched.count, expected.length);
  assert.equal(searched.items, expected);
  const filtered = runList(sorted(records), request({ filters: [{ field: 'order', op: 'gte', value: 18 }], limit: 100 }));
  assert.equal(filtered.items, records.filter((point) => point.order >= 18));
});

test('another ordering sorts the matching records, nulls last, ties broken on id', () => {
  const records = points(12);
  const result = runList(sorted(records), request({ ordering: parseOrdering('persona', new Set(['persona']), 4), limit: 100 }));
  const personas = result.items.map((point) => point.persona);
  assert.equal(personas, [...records.map((point) => point.persona)].sort((a, b) => (a === null ? 1 : b === null ? -1 : a.localeCompare(b))));
  const ties = result.items.filter((point) => point.persona === 'persona 1').map((point) => point.id);
  assert.equal(ties, [...ties].sort());
});

test('records of a partition the caller cannot see are not listed', () => {
  assert.equal(runList(sorted(points(5), 'other'), request({})), { count: 0, items: [] });
});

test.run();
