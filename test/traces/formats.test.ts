// How the trace module writes values: slugs, JSON text with 64-bit integers, nanosecond times as hex.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { jsonText } from '../../src/traces/json-text.ts';
import { hexToNanos, int64ToExact, nanosToHex, uint64Difference, uint64ToHex } from '../../src/traces/nanos.ts';
import { slugify } from '../../src/traces/slug.ts';

test('slugify folds accents, drops punctuation and joins words with hyphens, as Django does', () => {
  assert.is(slugify('  Support Bot — Ünïcode! '), 'support-bot-unicode');
  assert.is(slugify('already-a_slug'), 'already-a_slug');
  assert.is(slugify('--Trim me__'), 'trim-me');
  assert.is(slugify('***'), '');
  assert.is(slugify('Ａgent ２'), 'agent-2');
});

test('jsonText writes bigints as exact integers and non-finite numbers as null', () => {
  assert.is(jsonText({ a: 1767225600123456789n, b: [1.5, NaN, Infinity], c: 'q"uote', d: null, e: true }),
    '{"a":1767225600123456789,"b":[1.5,null,null],"c":"q\\"uote","d":null,"e":true}');
  assert.is(jsonText([]), '[]');
});

test('nanosecond times keep all 64 bits through hex', () => {
  const nanos = 18_446_744_073_709_551_615n;
  assert.is(nanosToHex(nanos), 'ffffffffffffffff');
  assert.is(hexToNanos(nanosToHex(1767225600123456789n)), 1767225600123456789n);
  assert.is(nanosToHex(-5n), '0000000000000000');
  assert.is(uint64ToHex({ high: 0x18873e4d, low: -1 }), '18873e4dffffffff');
  assert.is(uint64Difference({ high: 2, low: 5 }, { high: 1, low: -1 }), 6);
  assert.is(uint64Difference({ high: 1, low: 0 }, { high: 2, low: 0 }), 0);
  assert.is(int64ToExact({ high: -1, low: -2 }), -2);
  assert.is(int64ToExact({ high: 0x7fffffff, low: -1 }), 9223372036854775807n);
});

test.run();
