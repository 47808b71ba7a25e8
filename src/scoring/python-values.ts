// Python's meaning of a few operations on JSON values, which the original evaluator (Python)
// relied on and whose numbers ours must reproduce: str(), float(), ==, truthiness, round() half
// to even, str.strip() and str.lower(), len() in code points, and re's `\b\w+\b` word tokens.
// Pure.
//
// JSON values only. A JSON number with an integral value is read as a Python int (JavaScript keeps
// no difference between 1 and 1.0, so str(1.0) is "1" here where Python's is "1.0"); an object's
// keys keep JavaScript's order, which puts integer-like keys ("2", "10") first where Python keeps
// the order written. `undefined` (a missing key) is read as None.

import { pythonFloatRepr } from '../python-float.ts';
import { trimWhere } from '../trim.ts';

/** `bool(x)`: null, false, 0, "", [] and {} are falsy; NaN is truthy, as in Python. */
export function pyTruthy(value: unknown): boolean {
  if (value === null || value === undefined || value === false || value === 0 || value === '') return false;
  if (Array.isArray(value)) return value.length > 0;
  if (typeof value === 'object') {
    for (const _ in value) return true;
    return false;
  }
  return true;
}

/** `str(x)`: Python's text of a JSON value. */
export function pyStr(value: unknown): string {
  if (typeof value === 'string') return value;
  if (value === null || value === undefined) return 'None';
  if (value === true) return 'True';
  if (value === false) return 'False';
  if (typeof value === 'number') return pyNumber(value);
  if (Array.isArray(value)) return `[${value.map(pyRepr).join(', ')}]`;
  if (typeof value === 'object') {
    const entries = Object.entries(value).map(([key, item]) => `${quoted(key)}: ${pyRepr(item)}`);
    return `{${entries.join(', ')}}`;
  }
  return String(value);
}

/** `str(x or "").strip()`: the text of a value, where every falsy value is empty text. */
export function pyText(value: unknown): string {
  return pyTruthy(value) ? pyStrip(pyStr(value)) : '';
}

/** `repr(x)`: as str() except that strings are quoted. */
function pyRepr(value: unknown): string {
  return typeof value === 'string' ? quoted(value) : pyStr(value);
}

/** Integers as digits; floats as Python's repr. */
function pyNumber(value: number): string {
  if (Number.isInteger(value)) return Math.abs(value) < 1e21 ? String(value) : BigInt(value).toString();
  return pythonFloatRepr(value);
}

/** Python's repr of a string: single quotes unless it holds a single quote and no double quote. */
function quoted(text: string): string {
  const quote = text.includes("'") && !text.includes('"') ? '"' : "'";
  if (plainAscii.test(text)) return quote + text + quote;
  let body = '';
  for (const char of text) body += escapedChar(char, quote);
  return quote + body + quote;
}

const plainAscii = /^[ !#-&(-[\]-~]*$/;
const nonPrintable = /^[\p{Cc}\p{Cf}\p{Cs}\p{Co}\p{Cn}\p{Zl}\p{Zp}\p{Zs}]$/u;
const namedEscapes: ReadonlyMap<string, string> = new Map([['\\', '\\\\'], ['\t', '\\t'], ['\n', '\\n'], ['\r', '\\r']]);

function escapedChar(char: string, quote: string): string {
  if (char === quote) return `\\${quote}`;
  const named = namedEscapes.get(char);
  if (named) return named;
  if (char === ' ' || !nonPrintable.test(char)) return char;
  const code = char.codePointAt(0)!;
  if (code < 0x100) return `\\x${code.toString(16).padStart(2, '0')}`;
  if (code < 0x10000) return `\\u${code.toString(16).padStart(4, '0')}`;
  return `\\U${code.toString(16).padStart(8, '0')}`;
}

/** Python float()'s text: a decimal or exponent number with `_` between digits, or inf / infinity / nan. */
const floatText = /^[+-]?(?:(?:\d(?:_?\d)*(?:\.(?:\d(?:_?\d)*)?)?|\.\d(?:_?\d)*)(?:[eE][+-]?\d(?:_?\d)*)?|inf|infinity|nan)$/i;

/**
 * `float(x)`, or undefined where Python raises: a number; a boolean as 1 or 0; a string that is
 * wholly float()'s text once read as Python reads it (numberText).
 */
export function pyFloat(value: unknown): number | undefined {
  if (typeof value === 'number') return value;
  if (typeof value === 'boolean') return value ? 1 : 0;
  if (typeof value !== 'string') return undefined;
  const text = numberText(value);
  if (text === undefined || !floatText.test(text)) return undefined;
  const unsigned = text.replace(/^[+-]/, '').toLowerCase();
  const negative = text.startsWith('-');
  if (unsigned === 'nan') return NaN;
  if (unsigned === 'inf' || unsigned === 'infinity') return negative ? -Infinity : Infinity;
  return Number(text.replaceAll('_', ''));
}

/** `int(x)` of a JSON integer or of text int() reads (digits of any script, `_` between them), else undefined. */
export function pyInt(value: unknown): number | undefined {
  if (typeof value === 'number') return Number.isInteger(value) ? value : undefined;
  if (typeof value !== 'string') return undefined;
  const text = numberText(value);
  return text !== undefined && /^[+-]?\d(?:_?\d)*$/.test(text) ? Number(text.replaceAll('_', '')) : undefined;
}

/** Python's whitespace (`str.isspace()`, and re's `\s` in a str pattern), as ascending code point ranges. */
const pyWhitespaceRanges: readonly (readonly [number, number])[] = [
  [0x09, 0x0d], [0x1c, 0x20], [0x85, 0x85], [0xa0, 0xa0], [0x1680, 0x1680], [0x2000, 0x200a], [0x2028, 0x2029], [0x202f, 0x202f], [0x205f, 0x205f], [0x3000, 0x3000],
];

const decimalDigit = /\p{Nd}/u;

/**
 * The text float() and int() parse, as CPython makes it (_PyUnicode_TransformDecimalAndSpaceToASCII,
 * then stripping ASCII whitespace): each character beyond ASCII is a space if it is whitespace, its
 * ASCII digit if it is a decimal digit of any script ("٣" is 3), else the text is no number
 * (undefined); ASCII characters stay, so U+001C..U+001F, which strip() removes, are refused.
 */
function numberText(value: string): string | undefined {
  if (asciiOnly.test(value)) return trimAsciiSpace(value);
  let text = '';
  for (const char of value) {
    const code = char.codePointAt(0)!;
    if (code < 0x80) text += char;
    else if (isPyWhitespace(code)) text += ' ';
    else if (decimalDigit.test(char)) text += String(digitValue(code));
    else return undefined;
  }
  return trimAsciiSpace(text);
}

const asciiOnly = /^[\x00-\x7f]+$/;

/** Strips C's isspace() set (space, \t..\r): what CPython strips around a number's text. */
function trimAsciiSpace(text: string): string {
  return trimWhere(text, (code) => code === 0x20 || (code >= 0x09 && code <= 0x0d));
}

/**
 * A decimal digit's value: Unicode encodes each script's digits 0 to 9 in one ascending run of
 * ten (and runs may follow one another), so it is the distance from the start of the digits'
 * unbroken stretch, modulo 10.
 */
function digitValue(code: number): number {
  let start = code;
  while (decimalDigit.test(String.fromCodePoint(start - 1))) start--;
  return (code - start) % 10;
}

/** `a == b` between JSON values: 1 == true == 1.0, never a string and a number; lists and dicts deeply. */
export function pyEquals(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (a === null || a === undefined || b === null || b === undefined) return (a ?? null) === (b ?? null);
  const x = typeof a === 'boolean' ? Number(a) : a;
  const y = typeof b === 'boolean' ? Number(b) : b;
  if (typeof x === 'number' || typeof y === 'number') return x === y;
  if (typeof x !== 'object' || typeof y !== 'object') return false;
  if (Array.isArray(x) || Array.isArray(y)) {
    return Array.isArray(x) && Array.isArray(y) && x.length === y.length && x.every((item, i) => pyEquals(item, y[i]));
  }
  const left = x as Record<string, unknown>;
  const right = y as Record<string, unknown>;
  const keys = Object.keys(left);
  return keys.length === Object.keys(right).length && keys.every((key) => Object.hasOwn(right, key) && pyEquals(left[key], right[key]));
}

/** `round(x)` of a float: to the nearest integer, a half to the even one. */
export function pyRound(value: number): number {
  const floor = Math.floor(value);
  const fraction = value - floor;
  if (fraction < 0.5) return floor;
  if (fraction > 0.5) return floor + 1;
  return floor % 2 === 0 ? floor : floor + 1;
}

/**
 * `str.strip()`: Python's whitespace at both ends (pyWhitespaceRanges). JavaScript's trim()
 * differs: it also strips U+FEFF and keeps U+001C..U+001F and U+0085.
 */
export function pyStrip(text: string): string {
  return trimWhere(text, isPyWhitespace);
}

/** Whether a UTF-16 code unit is Python whitespace (pyWhitespaceRanges, all in the BMP). */
export function isPyWhitespace(code: number): boolean {
  for (const [low, high] of pyWhitespaceRanges) {
    if (code < low) return false;
    if (code <= high) return true;
  }
  return false;
}

/** `str.lower()`: JavaScript's toLowerCase applies the same Unicode full mappings (final sigma included). */
export function pyLower(text: string): string {
  return text.toLowerCase();
}

/** `len(s)`: the number of code points (a character outside the BMP is one, not two UTF-16 units). */
export function pyLength(text: string): number {
  let length = text.length;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code >= 0xd800 && code <= 0xdbff && i + 1 < text.length) {
      const next = text.charCodeAt(i + 1);
      if (next >= 0xdc00 && next <= 0xdfff) {
        length--;
        i++;
      }
    }
  }
  return length;
}

/** Python's Unicode `\w`: letters and digits of any script, and the underscore. */
const wordPattern = /[\p{L}\p{N}_]+/gu;

/** `set(re.findall(r"\b\w+\b", text))`: maximal runs of word characters are exactly those matches. */
export function wordTokens(text: string): Set<string> {
  return new Set(text.match(wordPattern));
}
