// JSON for values that may hold bigints (64-bit timestamps, large integer attributes), which
// JSON.stringify refuses: a bigint is written as the exact integer it is, as Python's json writes
// a Django BigIntegerField. Non-finite numbers become null, as JSON has no NaN.
//
// A trace's answer holds up to thousands of spans, each with two bigint times, so its JSON is made
// by JSON.stringify itself, then encoded once (a walk in JavaScript that pushed every token took
// ~15 us a span and ~0.15 s of the event loop for a trace of 10,000 spans, before its encoding):
// each bigint is handed to JSON.stringify as its digits behind a NUL, which it always writes as
// the escape `\u0000`, and each such string is then put back as bare digits in the encoded bytes.
// Any other string token that begins with that escape (a NUL that begins a key or a string of the
// value's own, never sent by a real exporter but possible) makes the count of marks disagree, and
// such a value is written by the plain walk instead.

export type JsonValue = null | boolean | number | bigint | string | JsonValue[] | { [key: string]: JsonValue };

const bigintMark = '\u0000';
/** A marked bigint's opening in the encoded text: a quote, then the NUL's escape. */
const markedOpening = Buffer.from('"\\u0000');
const quote = 0x22;

/** The value's JSON as UTF-8 bytes, as an answer sends it. */
export function jsonBytes(value: JsonValue): Buffer {
  const marks = { count: 0 };
  const bytes = Buffer.from(JSON.stringify(withBigintsMarked(value, marks)));
  if (marks.count === 0) return bytes;
  return unmarked(bytes, marks.count) ?? Buffer.from(walkedText(value));
}

/** The value with each bigint as its marked digits: containers copied only where they hold one. */
function withBigintsMarked(value: JsonValue, marks: { count: number }): JsonValue {
  if (typeof value === 'bigint') {
    marks.count++;
    return bigintMark + value.toString();
  }
  if (value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) {
    let copy: JsonValue[] | undefined;
    for (let i = 0; i < value.length; i++) {
      const item = value[i]!;
      const marked = withBigintsMarked(item, marks);
      if (marked !== item) (copy ??= value.slice())[i] = marked;
    }
    return copy ?? value;
  }
  let copy: { [key: string]: JsonValue } | undefined;
  for (const key of Object.keys(value)) {
    const item = value[key]!;
    const marked = withBigintsMarked(item, marks);
    if (marked !== item) (copy ??= { ...value })[key] = marked;
  }
  return copy ?? value;
}

/**
 * The bytes with each marked bigint's string (`"\u0000<digits>"`) made its bare digits, moved in
 * place; undefined when more string tokens begin with the mark than bigints were marked.
 */
function unmarked(bytes: Buffer, expected: number): Buffer | undefined {
  let written = 0;
  let from = 0;
  let found = 0;
  for (let at = bytes.indexOf(markedOpening, from); at !== -1; at = bytes.indexOf(markedOpening, from)) {
    const digits = at + markedOpening.length;
    const close = bytes.indexOf(quote, digits);
    if (close === -1) return undefined;
    written += bytes.copy(bytes, written, from, at);
    written += bytes.copy(bytes, written, digits, close);
    from = close + 1;
    if (++found > expected) return undefined;
  }
  written += bytes.copy(bytes, written, from);
  return found === expected ? bytes.subarray(0, written) : undefined;
}

/** The same text written token by token: for values whose own strings could pass for a marked bigint. */
function walkedText(value: JsonValue): string {
  const parts: string[] = [];
  write(value, parts);
  return parts.join('');
}

function write(value: JsonValue, parts: string[]): void {
  if (value === null) {
    parts.push('null');
  } else if (typeof value === 'bigint') {
    parts.push(value.toString());
  } else if (typeof value === 'number') {
    parts.push(Number.isFinite(value) ? String(value) : 'null');
  } else if (typeof value === 'string' || typeof value === 'boolean') {
    parts.push(JSON.stringify(value));
  } else if (Array.isArray(value)) {
    parts.push('[');
    value.forEach((item, index) => {
      if (index > 0) parts.push(',');
      write(item, parts);
    });
    parts.push(']');
  } else {
    parts.push('{');
    let first = true;
    for (const [key, item] of Object.entries(value)) {
      if (!first) parts.push(',');
      first = false;
      parts.push(JSON.stringify(key), ':');
      write(item, parts);
    }
    parts.push('}');
  }
}
