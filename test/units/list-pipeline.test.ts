import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { Collection } from '../../src/query/collection.ts';
import { predicateFor } from '../../src/query/filters.ts';
import { runList, type ListRequest } from '../../src/query/list.ts';
import { comparatorFor, parseOrdering } from '../../src/query/ordering.ts';
import { searchPredicate, splitSearchTerms } from '../../src/query/search.ts';

interface Row {
  id: string;
  project: string;
  created_at: string;
  status: string;
  score: number | null;
  name: string;
}

function rows(count: number, project = 'p1'): Row[] {
  return Array.from({ length: count }, (_, i) => ({
    id: `id-${String(i).padStart(6, '0')}`,
    project,
    created_at: new Date(Date.UTC(2026, 0, 1) + i * 1000).toISOString(),
    status: ['running', 'pending', 'completed'][i % 3]!,
    score: i % 5 === 0 ? null : i % 100,
    name: `Row ${i}`,
  }));
}

function collection(records: Row[]): Collection<Row> {
  const result = new Collection<Row>({
    partitionOf: (row) => row.project,
    defaultOrdering: [{ field: 'created_at', descending: true }],
    indexedFields: ['status'],
  });
  result.load(records);
  return result;
}

const request = (overrides: Partial<ListRequest>): ListRequest => ({
  partitions: ['p1'],
  filters: [],
  searchTerms: [],
  searchFields: ['name'],
  ordering: null,
  offset: 0,
  limit: 25,
  ...overrides,
});

test('an indexed exact filter in the default ordering is a slice of the sorted index', () => {
  const records = rows(1000);
  const list = collection(records);
  const result = runList(list, request({ filters: [{ field: 'status', op: 'exact', value: 'running' }], offset: 25 }));
  const expected = records
    .filter((row) => row.status === 'running')
    .sort((a, b) => b.created_at.localeCompare(a.created_at));
  assert.is(result.count, expected.length);
  assert.equal(result.items.map((row) => row.id), expected.slice(25, 50).map((row) => row.id));
});

test('the reverse of the default ordering is served from the same index', () => {
  const list = collection(rows(100));
  const ordering = parseOrdering('created_at', new Set(['created_at']), 4);
  const result = runList(list, request({ ordering, limit: 3 }));
  assert.equal(result.items.map((row) => row.id), ['id-000000', 'id-000001', 'id-000002']);
});

test('other orderings sort matches with nulls last ascending and first descending, ties on id', () => {
  const records = rows(20);
  const list = collection(records);
  const ascending = runList(list, request({ ordering: parseOrdering('score', new Set(['score']), 4), limit: 100 }));
  const scores = ascending.items.map((row) => row.score);
  assert.equal(scores.slice(-4), [null, null, null, null]);
  const descending = runList(list, request({ ordering: parseOrdering('-score', new Set(['score']), 4), limit: 100 }));
  assert.equal(descending.items.map((row) => row.score).slice(0, 4), [null, null, null, null]);
  const nullIds = descending.items.slice(0, 4).map((row) => row.id);
  assert.equal(nullIds, [...nullIds].sort().reverse());
});

test('ordering ignores unknown fields and falls back to the default', () => {
  assert.is(parseOrdering('password,-nope', new Set(['name']), 4), null);
  assert.equal(parseOrdering(' -name , name, created_at', new Set(['name', 'created_at']), 4), [
    { field: 'name', descending: true },
    { field: 'created_at', descending: false },
  ]);
  assert.equal(parseOrdering('a,b,c', new Set(['a', 'b', 'c']), 2)?.length, 2);
});

test('filters combine across partitions; counts stay exact', () => {
  const list = collection([...rows(50, 'p1'), ...rows(30, 'p2').map((row) => ({ ...row, id: `q${row.id}` }))]);
  const both = runList(list, request({ partitions: ['p1', 'p2'], limit: 10 }));
  assert.is(both.count, 80);
  const dates = both.items.map((row) => row.created_at);
  assert.equal(dates, [...dates].sort().reverse());
  const filtered = runList(list, request({
    partitions: ['p1', 'p2', 'p-missing'],
    filters: [
      { field: 'status', op: 'exact', value: 'pending' },
      { field: 'score', op: 'gte', value: 10 },
    ],
    limit: 1000,
  }));
  const expected = [...rows(50, 'p1'), ...rows(30, 'p2')].filter((row) => row.status === 'pending' && row.score !== null && row.score >= 10);
  assert.is(filtered.count, expected.length);
  assert.is(filtered.items.length, expected.length);
});

test('a partition the caller cannot see contributes nothing', () => {
  const list = collection(rows(10, 'p1'));
  assert.equal(runList(list, request({ partitions: ['p2'] })), { count: 0, items: [] });
  assert.equal(runList(list, request({ partitions: [] })), { count: 0, items: [] });
});

test('records that change are re-indexed; deleted ones disappear', () => {
  const records = rows(9);
  const list = collection(records);
  list.put({ ...records[0]!, status: 'pending' });
  list.delete(records[1]!.id);
  const running = runList(list, request({ filters: [{ field: 'status', op: 'exact', value: 'running' }] }));
  assert.equal(running.items.map((row) => row.id).sort(), ['id-000003', 'id-000006']);
  assert.is(list.size, 8);
});

test('lookups follow SQL: a null field matches no comparison; icontains ignores case', () => {
  const row = { score: null, name: 'Hello World' };
  assert.not.ok(predicateFor({ field: 'score', op: 'gte', value: 0 })(row));
  assert.not.ok(predicateFor({ field: 'score', op: 'lte', value: 0 })(row));
  assert.ok(predicateFor({ field: 'name', op: 'icontains', value: 'WORLD' })(row));
  assert.ok(predicateFor({ field: 'name', op: 'in', value: ['x', 'Hello World'] })(row));
});

test('search splits like DRF: whitespace and commas, quoted phrases whole, every term must match', () => {
  assert.equal(splitSearchTerms('alpha  beta,gamma', 10), ['alpha', 'beta', 'gamma']);
  assert.equal(splitSearchTerms('"hello world" other', 10), ['hello world', 'other']);
  // As in DRF: a quote only groups a term that it both opens and closes.
  assert.equal(splitSearchTerms("'a b' c", 10), ['a b', 'c']);
  assert.equal(splitSearchTerms("'a b',c", 10), ["'a b'", 'c']);
  assert.equal(splitSearchTerms(',,', 10), []);
  assert.equal(splitSearchTerms('a b c d', 2), ['a', 'b']);
  const matches = searchPredicate(['hello', 'wor'], ['name', 'other'])!;
  assert.ok(matches({ name: 'Hello', other: 'World' }));
  assert.not.ok(matches({ name: 'Hello', other: null }));
});

test('the comparator breaks ties on id in the direction of the last key', () => {
  const compare = comparatorFor([{ field: 'status', descending: true }]);
  assert.ok(compare({ id: 'a', status: 'x' }, { id: 'b', status: 'x' }) > 0);
  const ascending = comparatorFor([{ field: 'status', descending: false }]);
  assert.ok(ascending({ id: 'a', status: 'x' }, { id: 'b', status: 'x' }) < 0);
});

test('a filtered page over 100,000 records reads only the index, not every record', () => {
  const records = rows(100_000);
  const list = collection(records);
  let touched = 0;
  const counting = new Proxy(list, {
    get(target, property, receiver) {
      if (property === 'values') {
        return () => {
          touched++;
          return target.values();
        };
      }
      return Reflect.get(target, property, receiver);
    },
  });
  const result = runList(counting, request({ filters: [{ field: 'status', op: 'exact', value: 'completed' }], offset: 500, limit: 25 }));
  assert.is(result.count, 33_333);
  assert.is(result.items.length, 25);
  assert.is(touched, 0);
  assert.is(result.items[0]!.id, records.filter((row) => row.status === 'completed').reverse()[500]!.id);
});

test.run();
