// How the trace module writes values: slugs, JSON text with 64-bit integers, nanosecond times as hex.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { jsonBytes, type JsonValue } from '../../src/traces/json-text.ts';
import { hexToNanos, int64ToExact, nanosToHex, uint64Difference, uint64ToHex } from '../../src/traces/nanos.ts';
import { slugify } from '../../src/traces/slug.ts';
import { Random } from '../fuzz/random.ts';

test('slugify folds accents, drops punctuation and joins words with hyphens, as Django does', () => {
  assert.is(slugify('  Support Bot — Ünïcode! '), 'support-bot-unicode');
  assert.is(slugify('already-a_slug'), 'already-a_slug');
  assert.is(slugify('--Trim me__'), 'trim-me');
  assert.is(slugify('***'), '');
  assert.is(slugify('Ａgent ２'), 'agent-2');
});

const jsonText = (value: JsonValue) => jsonBytes(value).toString();

test('jsonBytes writes bigints as exact integers and non-finite numbers as null', () => {
  assert.is(jsonText({ a: 1767225600123456789n, b: [1.5, NaN, Infinity], c: 'q"uote', d: null, e: true }),
    '{"a":1767225600123456789,"b":[1.5,null,null],"c":"q\\"uote","d":null,"e":true}');
  assert.is(jsonText([]), '[]');
  assert.is(jsonText(-9223372036854775808n), '-9223372036854775808');
});

test('strings and keys that begin like a marked bigint are written as themselves', () => {
  const tricky = { '\u00001': '\u00002', list: ['\u00003', 'a"\u00004', 5n], nested: { n: -6n, s: '\u0000' } };
  assert.is(jsonText(tricky), '{"\\u00001":"\\u00002","list":["\\u00003","a\\"\\u00004",5],"nested":{"n":-6,"s":"\\u0000"}}');
  assert.equal(JSON.parse(jsonText({ s: '\u00001', n: 2n })), { s: '\u00001', n: 2 });
});

/** The JSON a reference walk writes, token by token (the way json-text.ts wrote it before). */
function referenceText(value: JsonValue): string {
  if (value === null) return 'null';
  if (typeof value === 'bigint') return value.toString();
  if (typeof value === 'number') return Number.isFinite(value) ? String(value) : 'null';
  if (typeof value === 'string' || typeof value === 'boolean') return JSON.stringify(value);
  if (Array.isArray(value)) return `[${value.map(referenceText).join(',')}]`;
  return `{${Object.entries(value).map(([key, item]) => `${JSON.stringify(key)}:${referenceText(item)}`).join(',')}}`;
}

test('jsonBytes agrees with a token-by-token walk on seeded random values', () => {
  const random = new Random(Number(process.env.FUZZ_SEED ?? 20261205));
  const pieces = ['', 'a', '"', '\\', '\u0000', '\u0000', '\u00007', '\ud800', '\udc00', '😀', 'é', '\n', '\u2028', '0', '-'];
  const text = () => Array.from({ length: random.int(0, 4) }, () => random.pick(pieces)).join('');
  const scalar = (): JsonValue =>
    random.pick<() => JsonValue>([
      () => null,
      () => random.chance(0.5),
      () => random.pick([0, -0, 1.5, -2, 1e21, 5e-324, Number.MAX_VALUE, NaN, -Infinity]),
      () => BigInt(random.int(-1e9, 1e9)) * 10_000_000_000n + BigInt(random.int(0, 1e9)),
      text,
    ])();
  const value = (depth: number): JsonValue => {
    if (depth === 0 || random.chance(0.3)) return scalar();
    if (random.chance(0.5)) return Array.from({ length: random.int(0, 5) }, () => value(depth - 1));
    return Object.fromEntries(Array.from({ length: random.int(0, 5) }, () => [text(), value(depth - 1)]));
  };
  for (let i = 0; i < 5_000; i++) {
    const sample = value(4);
    assert.is(jsonText(sample), referenceText(sample), `seed ${random.seed}, value ${i}`);
  }
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
