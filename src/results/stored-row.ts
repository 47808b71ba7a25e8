// A result row as the results database keeps it, apart from the store that writes it: the table's
// columns are made from it too (result-table.ts), and result-store.ts uses the table.
import type { ResultRecord } from '../domain/results.ts';
import type { ValueCodec } from '../store/kv.ts';

/**
 * A row as stored: what its key (iteration, datapoint index, attempt) and its iteration's version
 * (the datapoint's id and order) do not say (its id is its key's too: resultIdOf), times in epoch
 * ms, its output apart. A third of the bytes of the whole record: every byte is written once per
 * row and read at every start.
 */
export interface StoredRow {
  readonly score: number | null;
  readonly passed: boolean | null;
  readonly dimension_scores: Readonly<Record<string, number>> | null;
  readonly status: ResultRecord['status'];
  readonly error: string;
  readonly trace_id: string | null;
  readonly span_id: string | null;
  readonly latency_ms: number | null;
  readonly cost: number | null;
  readonly created_ms: number;
  readonly updated_ms: number;
  /** Whether an output is kept in result-outputs. */
  readonly has_output: boolean;
}

// ---- the stored bytes ----
//
// A row is written in a fixed layout rather than as msgpack: msgpackr's record path cost ~6 us a
// row inside lmdb's put (its key transitions, per key, for the row and its dimension_scores),
// this one ~0.3 us. Rows written before it (msgpack records with shared structures) still read:
// the layout starts with 0xc1, a byte msgpack never uses, and anything else is msgpack (kv.ts's
// ValueCodec). Little-endian:
//
//   u8  0xc1 (the layout's mark)
//   u8  version (1)
//   u8  flags: score, passed, passed true, latency, cost, has_output, status error, dimension_scores
//   u8  ids: trace_id in bits 0-1, span_id in bits 2-3 (0 null, 1 lowercase hex as its bytes,
//       2 UTF-8 text)
//   f64 created_ms, f64 updated_ms, then f64 score, latency_ms, cost where present
//   dimension_scores, where present: varint count, then each name (varint length, UTF-8) and f64
//   trace_id, span_id where present: hex as 16 / 8 bytes, text as varint length and UTF-8
//   error: varint length, UTF-8

export const storedRowMark = 0xc1;
const layoutVersion = 1;

const hasScore = 1;
const hasPassed = 2;
const passedTrue = 4;
const hasLatency = 8;
const hasCost = 16;
const hasOutput = 32;
const statusError = 64;
const hasDimensions = 128;

const idNull = 0;
const idHex = 1;
const idText = 2;


/** Buffer's UTF-8 and hex writers and readers without argument parsing (Node's own, on every Buffer). */
interface FastBuffer extends Buffer {
  utf8Write(text: string, offset: number, length?: number): number;
  utf8Slice(start: number, end: number): string;
  hexSlice(start: number, end: number): string;
}

/** The most bytes a varint-prefixed UTF-8 text of `text` takes. */
function textBytesMax(text: string): number {
  return 5 + text.length * 3;
}

function writeVarint(target: Buffer, offset: number, value: number): number {
  while (value >= 0x80) {
    target[offset++] = (value & 0x7f) | 0x80;
    value >>>= 7;
  }
  target[offset++] = value;
  return offset;
}

function writeText(target: FastBuffer, offset: number, text: string): number {
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
  return offset + target.utf8Write(text, offset, bytes);
}

/** Lowercase hex digits' values by character code (-1: not one). */
const hexValue = new Int8Array(128).fill(-1);
for (let i = 0; i < 16; i++) hexValue['0123456789abcdef'.charCodeAt(i)] = i;

/** Whether `id` is `chars` lowercase hex digits. */
function isHex(id: string, chars: number): boolean {
  if (id.length !== chars) return false;
  for (let i = 0; i < chars; i++) {
    const code = id.charCodeAt(i);
    if (code >= 128 || hexValue[code]! < 0) return false;
  }
  return true;
}

/** Writes lowercase hex (checked by isHex) as its bytes. */
function writeHex(target: Buffer, offset: number, id: string): number {
  for (let i = 0; i < id.length; i += 2) target[offset++] = (hexValue[id.charCodeAt(i)]! << 4) | hexValue[id.charCodeAt(i + 1)]!;
  return offset;
}

function idKind(id: string | null, hexChars: number): number {
  return id === null ? idNull : isHex(id, hexChars) ? idHex : idText;
}

export const storedRowCodec: ValueCodec<StoredRow> = {
  bytesMax(row) {
    let bytes = 4 + 5 * 8 + textBytesMax(row.error) + 2 * 5;
    if (row.trace_id !== null) bytes += textBytesMax(row.trace_id);
    if (row.span_id !== null) bytes += textBytesMax(row.span_id);
    const dimensions = row.dimension_scores;
    if (dimensions !== null) {
      bytes += 5;
      for (const name in dimensions) bytes += textBytesMax(name) + 8;
    }
    return bytes;
  },

  write(row, buffer, offset) {
    const target = buffer as FastBuffer;
    const dimensions = row.dimension_scores;
    const trace = idKind(row.trace_id, 32);
    const span = idKind(row.span_id, 16);
    if (row.status !== 'ok' && row.status !== 'error') throw new Error(`a result's status is ok or error, not ${String(row.status)}`);
    target[offset] = storedRowMark;
    target[offset + 1] = layoutVersion;
    target[offset + 2] =
      (row.score !== null ? hasScore : 0) |
      (row.passed !== null ? hasPassed | (row.passed ? passedTrue : 0) : 0) |
      (row.latency_ms !== null ? hasLatency : 0) |
      (row.cost !== null ? hasCost : 0) |
      (row.has_output ? hasOutput : 0) |
      (row.status === 'error' ? statusError : 0) |
      (dimensions !== null ? hasDimensions : 0);
    target[offset + 3] = trace | (span << 2);
    offset = target.writeDoubleLE(row.created_ms, offset + 4);
    offset = target.writeDoubleLE(row.updated_ms, offset);
    if (row.score !== null) offset = target.writeDoubleLE(row.score, offset);
    if (row.latency_ms !== null) offset = target.writeDoubleLE(row.latency_ms, offset);
    if (row.cost !== null) offset = target.writeDoubleLE(row.cost, offset);
    if (dimensions !== null) {
      let count = 0;
      for (const _name in dimensions) count++;
      offset = writeVarint(target, offset, count);
      for (const name in dimensions) {
        offset = writeText(target, offset, name);
        offset = target.writeDoubleLE(dimensions[name]!, offset);
      }
    }
    if (trace === idHex) offset = writeHex(target, offset, row.trace_id!);
    else if (trace === idText) offset = writeText(target, offset, row.trace_id!);
    if (span === idHex) offset = writeHex(target, offset, row.span_id!);
    else if (span === idText) offset = writeText(target, offset, row.span_id!);
    return writeText(target, offset, row.error);
  },

  read(bytes, end) {
    if (bytes[0] !== storedRowMark) return undefined;
    const source = (bytes instanceof Buffer ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, end)) as FastBuffer;
    if (source[1] !== layoutVersion) throw new Error(`a stored result has layout version ${source[1]}, which this service does not read`);
    const flags = source[2]!;
    const ids = source[3]!;
    const created_ms = source.readDoubleLE(4);
    const updated_ms = source.readDoubleLE(12);
    let offset = 20;
    let score: number | null = null;
    let latency_ms: number | null = null;
    let cost: number | null = null;
    if (flags & hasScore) {
      score = source.readDoubleLE(offset);
      offset += 8;
    }
    if (flags & hasLatency) {
      latency_ms = source.readDoubleLE(offset);
      offset += 8;
    }
    if (flags & hasCost) {
      cost = source.readDoubleLE(offset);
      offset += 8;
    }
    let dimension_scores: Record<string, number> | null = null;
    const reader = { offset };
    if (flags & hasDimensions) {
      dimension_scores = {};
      const count = readVarint(source, reader);
      for (let i = 0; i < count; i++) {
        const name = readName(source, reader);
        dimension_scores[name] = source.readDoubleLE(reader.offset);
        reader.offset += 8;
      }
    }
    const trace_id = readId(source, reader, ids & 3, 16);
    const span_id = readId(source, reader, (ids >> 2) & 3, 8);
    const error = readText(source, reader);
    if (reader.offset !== end) throw new Error(`a stored result has ${end - reader.offset} bytes past its layout`);
    return {
      score,
      passed: flags & hasPassed ? (flags & passedTrue) !== 0 : null,
      dimension_scores,
      status: flags & statusError ? 'error' : 'ok',
      error,
      trace_id,
      span_id,
      latency_ms,
      cost,
      created_ms,
      updated_ms,
      has_output: (flags & hasOutput) !== 0,
    };
  },
};

function readVarint(source: Buffer, reader: { offset: number }): number {
  let value = 0;
  let shift = 0;
  for (;;) {
    const byte = source[reader.offset++]!;
    value += (byte & 0x7f) * 2 ** shift;
    if (byte < 0x80) return value;
    shift += 7;
  }
}

function readText(source: FastBuffer, reader: { offset: number }): string {
  const length = readVarint(source, reader);
  const start = reader.offset;
  reader.offset += length;
  return length === 0 ? '' : source.utf8Slice(start, reader.offset);
}

function readId(source: FastBuffer, reader: { offset: number }, kind: number, hexBytes: number): string | null {
  if (kind === idNull) return null;
  if (kind === idText) return readText(source, reader);
  const start = reader.offset;
  reader.offset += hexBytes;
  return source.hexSlice(start, reader.offset);
}

/**
 * A dimension's name: every row of an iteration repeats the same few, so the last names read are
 * kept and a name whose bytes match one is that string again (no new string per row at a start).
 */
const recentNames: { bytes: Buffer; name: string }[] = [];
let nextRecent = 0;
function readName(source: FastBuffer, reader: { offset: number }): string {
  const length = readVarint(source, reader);
  const start = reader.offset;
  reader.offset += length;
  for (const recent of recentNames) {
    const bytes = recent.bytes;
    if (bytes.length !== length) continue;
    let same = true;
    for (let i = 0; i < length; i++) {
      if (bytes[i] !== source[start + i]) {
        same = false;
        break;
      }
    }
    if (same) return recent.name;
  }
  const name = source.utf8Slice(start, reader.offset);
  const entry = { bytes: Buffer.from(source.subarray(start, reader.offset)), name };
  if (recentNames.length < 16) recentNames.push(entry);
  else recentNames[nextRecent++ % 16] = entry;
  return name;
}
