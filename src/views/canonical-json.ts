// Canonical JSON: one text for one JSON value whatever the key order it was written in, so that
// equal content compares equal and hashes equal on any machine. It is RFC 8785's JSON
// Canonicalization Scheme (JCS): object keys sorted by their UTF-16 code units at every depth,
// nothing between tokens, strings and numbers as JSON.stringify (ECMAScript's Number::toString)
// writes them, so a client recomputes it with any JCS implementation. A string holding a lone
// surrogate, which RFC 8785 leaves out (it is not I-JSON), is written as JSON.stringify writes
// it: escaped, "\ud800". Pure.
import type { Json } from '../domain/records.ts';

export function canonicalJson(value: Json): string {
  const ordered = inKeyOrder(value);
  return ordered === unorderable ? written(value) : JSON.stringify(ordered);
}

/** A value JSON.stringify cannot write in canonical order (below). */
const unorderable = Symbol('unorderable');

/**
 * The value with its objects' keys in UTF-16 code unit order: itself where they are already
 * (nothing copied), else a copy of what needed reordering. JSON.stringify then writes it in one
 * native pass as one flat string; text built by concatenation is a tree of pieces, and a dataset
 * diff keeps 100,000 canonical inputs alive, which every scavenge copied piece by piece (half of a
 * cold diff's time was GC). An object keeps array-index keys ("2", "10") first in numeric order,
 * whatever order they were added in, so a value with such a key is `unorderable`.
 */
function inKeyOrder(value: Json): Json | typeof unorderable {
  if (value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) {
    let copy: Json[] | undefined;
    for (let i = 0; i < value.length; i++) {
      const item = inKeyOrder(value[i]!);
      if (item === unorderable) return unorderable;
      if (item !== value[i] && !copy) copy = value.slice(0, i);
      copy?.push(item);
    }
    return copy ?? value;
  }
  const keys = Object.keys(value);
  let sorted = true;
  for (let i = 0; i < keys.length; i++) {
    if (isArrayIndex(keys[i]!)) return unorderable;
    if (i > 0 && keys[i - 1]! > keys[i]!) sorted = false;
  }
  // sort()'s own order is by UTF-16 code units, JCS's order.
  if (!sorted) keys.sort();
  // Copies have no prototype, so that a "__proto__" key (JSON.parse makes it an own property) stays one.
  let copy: { [key: string]: Json } | undefined = sorted ? undefined : Object.create(null);
  for (let i = 0; i < keys.length; i++) {
    const key = keys[i]!;
    const item = inKeyOrder(value[key]!);
    if (item === unorderable) return unorderable;
    if (item !== value[key] && !copy) {
      copy = Object.create(null) as { [key: string]: Json };
      for (let j = 0; j < i; j++) copy[keys[j]!] = value[keys[j]!]!;
    }
    if (copy) copy[key] = item;
  }
  return copy ?? value;
}

/**
 * Whether a property key may be ordered as an array index, before every other key. Array indexes
 * end at 2^32 - 2; any integer key is treated so, which only costs the slower writer.
 */
function isArrayIndex(key: string): boolean {
  const first = key.charCodeAt(0);
  if (!(first >= 48 && first <= 57)) return false;
  const index = Number(key);
  return Number.isSafeInteger(index) && String(index) === key;
}

/** Canonical JSON written piece by piece, for values with array-index keys. */
function written(value: Json): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value);
  if (Array.isArray(value)) {
    let text = '[';
    for (let i = 0; i < value.length; i++) text += (i === 0 ? '' : ',') + written(value[i]!);
    return `${text}]`;
  }
  const keys = Object.keys(value).sort();
  let text = '{';
  for (let i = 0; i < keys.length; i++) text += `${i === 0 ? '' : ','}${JSON.stringify(keys[i])}:${written(value[keys[i]!]!)}`;
  return `${text}}`;
}

/**
 * Orders strings by code point (as UTF-8 bytes compare), for names shown in order (an iteration
 * comparison's dimensions); canonical JSON orders keys by UTF-16 code units instead, as RFC 8785
 * does. The two agree except where a surrogate (half of a code point above U+FFFF) meets
 * U+E000..U+FFFF.
 */
export function compareCodePoints(a: string, b: string): number {
  const length = Math.min(a.length, b.length);
  for (let i = 0; i < length; i++) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    if (x !== y) return codePointRank(x) - codePointRank(y);
  }
  return a.length - b.length;
}

/** Moves surrogates above U+E000..U+FFFF, keeping every other code unit's order. */
function codePointRank(unit: number): number {
  if (unit >= 0xd800 && unit <= 0xdfff) return unit + 0x2000;
  if (unit >= 0xe000) return unit - 0x800;
  return unit;
}

/** Whether two JSON values are equal as canonical JSON is (key order ignored), without writing either. */
export function sameJson(a: Json, b: Json): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a) || Array.isArray(b)) {
    return Array.isArray(a) && Array.isArray(b) && a.length === b.length && a.every((item, i) => sameJson(item, b[i]!));
  }
  const keys = Object.keys(a);
  return keys.length === Object.keys(b).length && keys.every((key) => Object.hasOwn(b, key) && sameJson(a[key]!, b[key]!));
}
