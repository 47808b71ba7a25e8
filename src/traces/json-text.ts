// JSON text for values that may hold bigints (64-bit timestamps, large integer attributes), which
// JSON.stringify refuses: a bigint is written as the exact integer it is, as Python's json writes
// a Django BigIntegerField. Non-finite numbers become null, as JSON has no NaN.

export type JsonValue = null | boolean | number | bigint | string | JsonValue[] | { [key: string]: JsonValue };

export function jsonText(value: JsonValue): string {
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
