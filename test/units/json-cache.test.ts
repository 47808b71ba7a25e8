import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { JsonCache } from '../../src/json-cache.ts';

test('a value is serialized once while it stays cached', () => {
  const cache = new JsonCache(1000);
  let calls = 0;
  const serialize = (value: { a: number }) => {
    calls++;
    return { wrapped: value.a };
  };
  const value = { a: 1 };
  assert.is(cache.text(value, serialize), '{"wrapped":1}');
  assert.is(cache.text(value, serialize), '{"wrapped":1}');
  assert.is(calls, 1);
  assert.is(cache.text(value), '{"a":1}', 'another serializer has its own text');
  assert.is(cache.text(value), '{"a":1}');
});

test('the cache holds at most jsonCacheCharsMax characters, dropping the oldest first', () => {
  const cache = new JsonCache(20);
  let calls = 0;
  const counting = (value: { text: string }) => {
    calls++;
    return value.text;
  };
  const first = { text: 'aaaaaaa' };
  const second = { text: 'bbbbbbb' };
  const third = { text: 'ccccccc' };
  for (const value of [first, second, third]) cache.text(value, counting);
  assert.is(calls, 3);
  cache.text(third, counting);
  cache.text(second, counting);
  assert.is(calls, 3, 'the two newest are still cached');
  cache.text(first, counting);
  assert.is(calls, 4, 'the oldest was dropped');
  const huge = { text: 'x'.repeat(100) };
  cache.text(huge, counting);
  cache.text(huge, counting);
  assert.is(calls, 6, 'a text larger than the whole cache is never kept');
});

test('long runs of evictions keep exactly the newest texts that fit', () => {
  const cache = new JsonCache(100);
  let calls = 0;
  const counting = (value: { n: number }) => {
    calls++;
    return String(value.n).padStart(8, '0');
  };
  const values = Array.from({ length: 5000 }, (_, n) => ({ n }));
  for (const value of values) cache.text(value, counting);
  assert.is(calls, 5000);
  // Each text is 10 characters ("00000123" with quotes): the newest ten fit.
  for (const value of values.slice(-10)) cache.text(value, counting);
  assert.is(calls, 5000, 'the newest ten are cached');
  cache.text(values[4989]!, counting);
  assert.is(calls, 5001, 'the eleventh newest was dropped');
});

test.run();
