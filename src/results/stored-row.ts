// The bytes of a stored result row: the fields of src/domain/result-row.ts's table, laid out by
// kind, in the table's order. A fixed layout rather than msgpack: msgpackr's record path cost
// ~6 us a row inside lmdb's put (its key transitions, per key, for the row and its
// dimension_scores), this one well under 1 us. Little-endian:
//
//   u8  0xc1 (the layout's mark: a byte msgpack never uses)
//   u8  2 (the layout's version)
//   u32 the flag word: each field's bits from bit 0, in table order (result-row.ts's fieldBits);
//       the bits no field uses are reserved, and zero
//   then each field's payload, in table order, where its kind has one:
//     number   f64, when present          text     varint length, UTF-8
//     time     f64                        hexId    hex: its bytes; text: varint length, UTF-8
//     numbers  varint count, then each name (varint length, UTF-8) and its f64
//
// Stores written by earlier builds (msgpack records, then version 1 of this layout) are rewritten
// in this layout once, when the store opens (stored-row-upgrade.ts): this codec reads one layout.
import assert from 'node:assert/strict';
import { bitsOf, fieldBits, storedRowFromValues, usedFlagBits, writtenDefault, type FieldKind, type StoredRow } from '../domain/result-row.ts';
import type { ValueCodec } from '../store/kv.ts';

export const storedRowMark = 0xc1;
export const storedRowVersion = 2;
/** Mark, version and the flag word. */
const headerBytes = 6;

/** A hexId field's bits (result-row.ts's bitsOf). */
const idNull = 0;
const idHex = 1;
const idText = 2;

/** The most bytes a varint-prefixed UTF-8 text of `text` takes. */
function textBytesMax(text: string): number {
  return 5 + text.length * 3;
}

/**
 * The codec of the results database. Each store makes its own: it remembers the dimension names
 * it read last (rows of an iteration repeat the same few). `checked` reads every row back as it
 * is written and asserts it is the same (tests and debugging; about doubles a row's cost).
 * `columnsOnly` reads only the fields the in-memory columns hold, the others as a row without
 * them reads (no error, no ids, no latency or cost): loading a store at start reads nothing else,
 * and its strings are most of a row's read.
 */
export function storedRowCodec(options: { checked?: boolean; columnsOnly?: boolean } = {}): ValueCodec<StoredRow> {
  const names = new RecentNames();
  const fields = options.columnsOnly ? columnsLayout : layout;
  const codec: ValueCodec<StoredRow> = {
    bytesMax: rowBytesMax,
    write: (row, target, offset) => writeRow(row, target, offset),
    read: (bytes, end) => readRow(bytes, end, names, fields),
  };
  if (!options.checked) return codec;
  return {
    ...codec,
    write(row, target, offset) {
      const end = writeRow(row, target, offset);
      assert.deepEqual(readRow(target.subarray(offset, end), end - offset, names, layout), { ...row }, 'a stored result reads back as it was written');
      return end;
    },
  };
}

/**
 * The table's fields as the loops below read them: kinds as small integers (a switch over them is
 * a jump table; over the kinds' names it was string compares, and the row's read took twice as
 * long), each entry of one shape.
 */
const kindCodes: Readonly<Record<FieldKind, number>> = { number: 0, boolean: 1, status: 2, flag: 3, text: 4, hexId: 5, numbers: 6, time: 7 };
const layout = fieldBits.map(({ field, shift, mask }) => ({ field, name: field.name, kind: kindCodes[field.kind], shift, mask, hexBytes: field.hexBytes ?? 0, read: true }));
/** The same, reading only the column fields: the others' payloads are skipped, their values as a row without them reads. */
const columnsLayout = layout.map((entry) => ({ ...entry, read: entry.field.column }));
const skippedValues = layout.map(({ field }) => (field.kind === 'time' ? 0 : writtenDefault(field.kind)));
type Layout = typeof layout;

function rowBytesMax(row: StoredRow): number {
  const values = row as Record<string, unknown>;
  let bytes = headerBytes;
  for (const { name, kind } of layout) {
    const value = values[name];
    switch (kind) {
      case 0: // number
      case 7: // time
        bytes += 8;
        break;
      case 4: // text
      case 5: // hexId
        if (typeof value === 'string') bytes += textBytesMax(value);
        break;
      case 6: // numbers
        if (value !== null) {
          bytes += 5;
          for (const dimension in value as object) bytes += textBytesMax(dimension) + 8;
        }
        break;
    }
  }
  return bytes;
}

function writeRow(row: StoredRow, target: Buffer, start: number): number {
  const values = row as Record<string, unknown>;
  let flags = 0;
  let offset = start + headerBytes;
  for (const { field, name, kind, shift } of layout) {
    const value = values[name];
    const bits = bitsOf(field, value);
    flags |= bits << shift;
    switch (kind) {
      case 0: // number
        if (bits) offset = target.writeDoubleLE(value as number, offset);
        break;
      case 7: // time
        offset = target.writeDoubleLE(value as number, offset);
        break;
      case 2: // status
        assert.ok(value === 'ok' || value === 'error', "a result's status is ok or error");
        break;
      case 4: // text
        offset = writeText(target, offset, value as string);
        break;
      case 5: // hexId
        if (bits === idHex) offset = writeHex(target, offset, value as string);
        else if (bits === idText) offset = writeText(target, offset, value as string);
        break;
      case 6: // numbers
        if (bits) offset = writeNumbers(target, offset, value as Record<string, number>);
        break;
    }
  }
  target[start] = storedRowMark;
  target[start + 1] = storedRowVersion;
  target.writeUInt32LE(flags >>> 0, start + 2);
  return offset;
}

/**
 * A row of this layout. Bytes without the mark are msgpack (undefined: the store reads them as
 * such), which the database holds only as lmdb-js's own bookkeeping (its shared structures) once
 * upgraded; bytes with the mark and another version are refused.
 */
function readRow(bytes: Uint8Array, end: number, names: RecentNames, fields: Layout): StoredRow | undefined {
  if (bytes[0] !== storedRowMark) return undefined;
  const source = bytes instanceof Buffer ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, end);
  if (source[1] !== storedRowVersion) {
    throw new Error(`a stored result is not of layout ${storedRowVersion} (it starts ${source[0]}, ${source[1]}): the store was not upgraded when it opened`);
  }
  const flags = source.readUInt32LE(2);
  const unknown = (flags & ~usedFlagBits) >>> 0;
  if (unknown !== 0) throw new Error(`a stored result has flag bits ${unknown} this build does not know: a newer build wrote it`);
  const reader = { offset: headerBytes };
  const values = new Array<unknown>(fields.length);
  for (let i = 0; i < fields.length; i++) {
    const { kind, shift, mask, hexBytes, read } = fields[i]!;
    const bits = (flags >>> shift) & mask;
    if (!read) {
      skipField(source, reader, kind, bits, hexBytes);
      values[i] = skippedValues[i];
      continue;
    }
    switch (kind) {
      case 0: // number
        values[i] = bits ? readDouble(source, reader) : null;
        break;
      case 1: // boolean: known, true
        values[i] = bits === 0 ? null : bits === 3;
        break;
      case 2: // status
        values[i] = bits ? 'error' : 'ok';
        break;
      case 3: // flag
        values[i] = bits === 1;
        break;
      case 4: // text
        values[i] = readText(source, reader);
        break;
      case 5: // hexId
        values[i] = bits === idNull ? null : bits === idText ? readText(source, reader) : readHex(source, reader, hexBytes);
        break;
      case 6: // numbers
        values[i] = bits ? readNumbers(source, reader, names) : null;
        break;
      case 7: // time
        values[i] = readDouble(source, reader);
        break;
    }
  }
  if (reader.offset !== end) throw new Error(`a stored result has ${end - reader.offset} bytes past its layout`);
  return storedRowFromValues(values);
}

/** Steps over a field's payload (the kinds' payloads as writeRow lays them out). */
function skipField(source: Buffer, reader: Reader, kind: number, bits: number, hexBytes: number): void {
  switch (kind) {
    case 0: // number
      if (bits) reader.offset += 8;
      break;
    case 7: // time
      reader.offset += 8;
      break;
    case 4: // text
      skipText(source, reader);
      break;
    case 5: // hexId
      if (bits === idHex) reader.offset += hexBytes;
      else if (bits === idText) skipText(source, reader);
      break;
    case 6: // numbers
      if (bits) {
        for (let count = readVarint(source, reader); count > 0; count--) {
          skipText(source, reader);
          reader.offset += 8;
        }
      }
      break;
  }
}

function skipText(source: Buffer, reader: Reader): void {
  // Not `reader.offset += readVarint(...)`: that adds to the offset from before the length was read.
  const length = readVarint(source, reader);
  reader.offset += length;
}

// ---- payloads ----

interface Reader {
  offset: number;
}

export function writeVarint(target: Buffer, offset: number, value: number): number {
  while (value >= 0x80) {
    target[offset++] = (value & 0x7f) | 0x80;
    value >>>= 7;
  }
  target[offset++] = value;
  return offset;
}

export function readVarint(source: Uint8Array, reader: Reader): number {
  let value = 0;
  let shift = 0;
  for (;;) {
    const byte = source[reader.offset++]!;
    value += (byte & 0x7f) * 2 ** shift;
    if (byte < 0x80) return value;
    shift += 7;
  }
}

function readDouble(source: Buffer, reader: Reader): number {
  const value = source.readDoubleLE(reader.offset);
  reader.offset += 8;
  return value;
}

function writeText(target: Buffer, offset: number, text: string): number {
  const length = text.length;
  if (length < 0x80) {
    // ASCII, the usual case, byte by byte: shorter than a call into Buffer's writer.
    let i = 0;
    for (; i < length; i++) {
      const code = text.charCodeAt(i);
      if (code >= 0x80) break;
      target[offset + 1 + i] = code;
    }
    if (i === length) {
      target[offset] = length;
      return offset + 1 + length;
    }
  }
  const bytes = Buffer.byteLength(text, 'utf8');
  offset = writeVarint(target, offset, bytes);
  return offset + target.write(text, offset, bytes, 'utf8');
}

export function readText(source: Buffer, reader: Reader): string {
  const length = readVarint(source, reader);
  const start = reader.offset;
  reader.offset += length;
  return length === 0 ? '' : source.toString('utf8', start, reader.offset);
}

/** Lowercase hex digits' values by character code (-1: not one). */
const hexValue = new Int8Array(128).fill(-1);
for (let i = 0; i < 16; i++) hexValue['0123456789abcdef'.charCodeAt(i)] = i;

/** Writes lowercase hex (bitsOf said it is) as its bytes. */
function writeHex(target: Buffer, offset: number, id: string): number {
  for (let i = 0; i < id.length; i += 2) target[offset++] = (hexValue[id.charCodeAt(i)]! << 4) | hexValue[id.charCodeAt(i + 1)]!;
  return offset;
}

export function readHex(source: Buffer, reader: Reader, bytes: number): string {
  const start = reader.offset;
  reader.offset += bytes;
  return source.toString('hex', start, reader.offset);
}

function writeNumbers(target: Buffer, offset: number, numbers: Readonly<Record<string, number>>): number {
  let count = 0;
  for (const _name in numbers) count++;
  offset = writeVarint(target, offset, count);
  for (const name in numbers) {
    offset = writeText(target, offset, name);
    offset = target.writeDoubleLE(numbers[name]!, offset);
  }
  return offset;
}

function readNumbers(source: Buffer, reader: Reader, names: RecentNames): Record<string, number> {
  const numbers: Record<string, number> = {};
  const count = readVarint(source, reader);
  for (let i = 0; i < count; i++) {
    const name = names.read(source, reader);
    numbers[name] = readDouble(source, reader);
  }
  return numbers;
}

/**
 * Dimension names as read: every row of an iteration repeats the same few, so the last names
 * read are kept and a name whose bytes match one is that string again (no new string per row at
 * a start).
 */
export class RecentNames {
  private static readonly kept = 16;
  private readonly recent: { bytes: Buffer; name: string }[] = [];
  private next = 0;

  read(source: Buffer, reader: Reader): string {
    const length = readVarint(source, reader);
    const start = reader.offset;
    reader.offset += length;
    for (const recent of this.recent) if (sameBytes(recent.bytes, source, start, length)) return recent.name;
    const name = source.toString('utf8', start, reader.offset);
    const entry = { bytes: Buffer.from(source.subarray(start, reader.offset)), name };
    if (this.recent.length < RecentNames.kept) this.recent.push(entry);
    else this.recent[this.next++ % RecentNames.kept] = entry;
    return name;
  }
}

function sameBytes(bytes: Buffer, source: Buffer, start: number, length: number): boolean {
  if (bytes.length !== length) return false;
  for (let i = 0; i < length; i++) if (bytes[i] !== source[start + i]) return false;
  return true;
}
