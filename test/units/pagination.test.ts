// DRF's page-number pagination as pure decisions.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { cutPage, InvalidPage, pageNumber, pageSize } from '../../src/query/pagination.ts';

const items = Array.from({ length: 7 }, (_, i) => i);
const fetch = (offset: number, limit: number) => ({ count: items.length, items: items.slice(offset, offset + limit) });
const sizes = { sizeDefault: 3, sizeMax: 5 };

test('page numbers: positive integers up to the maximum, or "last"; anything else is an invalid page', () => {
  assert.is(pageNumber(undefined, 10), 1);
  assert.is(pageNumber(' +2 ', 10), 2);
  assert.is(pageNumber('last', 10), 'last');
  for (const raw of ['0', '-1', '1.5', 'x', '11', '']) assert.throws(() => pageNumber(raw, 10), (error: unknown) => error instanceof InvalidPage, raw);
});

test('page sizes: clamped to the maximum; anything unusable means the default', () => {
  assert.is(pageSize(undefined, sizes), 3);
  assert.is(pageSize('4', sizes), 4);
  assert.is(pageSize('50', sizes), 5);
  for (const raw of ['0', '-2', 'x', '2.5']) assert.is(pageSize(raw, sizes), 3, raw);
});

test('a page is cut with its number and the number of pages; past the end is invalid, page 1 of nothing is not', () => {
  assert.equal(cutPage(2, 3, fetch), { count: 7, items: [3, 4, 5], number: 2, pages: 3 });
  assert.equal(cutPage('last', 3, fetch), { count: 7, items: [6], number: 3, pages: 3 });
  assert.throws(() => cutPage(4, 3, fetch), (error: unknown) => error instanceof InvalidPage);
  assert.equal(cutPage(1, 3, () => ({ count: 0, items: [] })), { count: 0, items: [], number: 1, pages: 1 });
  assert.equal(cutPage('last', 3, () => ({ count: 0, items: [] })), { count: 0, items: [], number: 1, pages: 1 });
});

test.run();
