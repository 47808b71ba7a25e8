// Result rows as earlier builds stored them, rewritten in the current layout (stored-row.ts) once,
// when the store opens: a store upgrade (createService hands it to Journal.checkFormat, which runs
// it before anything reads the store and records it as done), so that the service reads one layout.
//
// Earlier builds wrote, and stores written by them may hold, side by side:
//   - msgpack records (before 21749c7): { score, passed, dimension_scores, status, error,
//     trace_id, span_id, latency_ms, cost, created_ms, updated_ms, has_output };
//   - layout 1 (21749c7 to 7ce2ded): 0xc1, 1, a flags byte (score, passed, passed true, latency,
//     cost, has_output, status error, dimension_scores), an ids byte (trace_id in bits 0-1,
//     span_id in bits 2-3: 0 null, 1 hex as its bytes, 2 text), f64 created_ms and updated_ms,
//     f64 score, latency_ms, cost where present, dimension_scores (varint count, then varint-length
//     UTF-8 name and f64 each), trace_id and span_id where present, error (varint-length UTF-8).
// Rows are rewritten a bounded number per commit, in key order. One interrupted runs again when
// the store opens next: rows it rewrote are of the current layout by then, and left as they are.
import { storedRowOf, type StoredRow } from '../domain/result-row.ts';
import type { StoreUpgrade } from '../store/journal.ts';
import type { Key, Kv, KvOp, ValueCodec } from '../store/kv.ts';
import { readHex, readText, readVarint, storedRowCodec, storedRowMark, storedRowVersion } from './stored-row.ts';
import { resultDbNames } from './result-store.ts';

/** Rows rewritten per commit: each commit is short, and what the upgrade holds is bounded. */
const rowsPerCommitMax = 5_000;

/** A row as an earlier build stored it (msgpack, or layout 1). */
interface EarlierRow {
  readonly score: number | null;
  readonly passed: boolean | null;
  readonly dimension_scores: Readonly<Record<string, number>> | null;
  readonly status: 'ok' | 'error';
  readonly error: string;
  readonly trace_id: string | null;
  readonly span_id: string | null;
  readonly latency_ms: number | null;
  readonly cost: number | null;
  readonly created_ms: number;
  readonly updated_ms: number;
  readonly has_output: boolean;
}

/** Read through the upgrade's own handle: a row of the current layout is only recognised. */
const current = Symbol('current layout');

/** Reads layout 1, and recognises the current layout; anything else is msgpack (read by the store). */
const earlierRows: ValueCodec<EarlierRow | typeof current> = {
  bytesMax() {
    throw new Error('the upgrade only reads through this codec');
  },
  write() {
    throw new Error('the upgrade only reads through this codec');
  },
  read(bytes, end) {
    if (bytes[0] !== storedRowMark) return undefined;
    if (bytes[1] === storedRowVersion) return current;
    if (bytes[1] !== 1) throw new Error(`a stored result has layout version ${bytes[1]}, which this build does not know`);
    return readLayout1(Buffer.from(bytes.buffer, bytes.byteOffset, end), end);
  },
};

export interface ResultRowUpgrade {
  /** Rows rewritten in the current layout, by the layout they had. */
  fromMsgpack: number;
  fromLayout1: number;
}

/**
 * Rewrites every row of an earlier layout in the current one; rows already in it are left as
 * they are. In memory values are kept as they are (no layout): nothing to rewrite.
 */
export async function upgradeStoredRows(kv: Kv, perCommitMax = rowsPerCommitMax): Promise<ResultRowUpgrade> {
  const upgrade: ResultRowUpgrade = { fromMsgpack: 0, fromLayout1: 0 };
  if (kv.kind === 'memory') return upgrade;
  const earlier = kv.db(resultDbNames.rows, earlierRows as ValueCodec);
  const rows = kv.db(resultDbNames.rows, storedRowCodec() as ValueCodec);
  let after: Key | undefined;
  for (;;) {
    const ops: KvOp[] = [];
    let last: Key | undefined;
    for (const { key, value } of earlier.range<EarlierRow | typeof current | Uint8Array>(after ? { start: after } : {})) {
      if (after && last === undefined && sameKey(key, after)) continue;
      last = key;
      if (value === current) continue;
      const row = value as EarlierRow & { layout?: 1 };
      if (row.layout === 1) upgrade.fromLayout1++;
      else upgrade.fromMsgpack++;
      ops.push({ db: rows, key, value: currentOf(row) });
      if (ops.length >= perCommitMax) break;
    }
    if (ops.length > 0) await kv.write(ops);
    if (ops.length < perCommitMax) return upgrade;
    after = last;
  }
}

export const resultRowsUpgrade: StoreUpgrade = { name: 'result-rows-layout-2', run: upgradeStoredRows };

/** An earlier row in the current form: its times renamed, the fields it did not have as a row without them reads. */
function currentOf(row: EarlierRow): StoredRow {
  return storedRowOf(row, { created_at: row.created_ms, updated_at: row.updated_ms });
}

function sameKey(a: Key, b: Key): boolean {
  return a.length === b.length && a.every((part, i) => part === b[i]);
}

// ---- layout 1 ----

const layout1 = { score: 1, passed: 2, passedTrue: 4, latency: 8, cost: 16, output: 32, error: 64, dimensions: 128 } as const;

function readLayout1(source: Buffer, end: number): EarlierRow & { layout: 1 } {
  const flags = source[2]!;
  const ids = source[3]!;
  const reader = { offset: 4 };
  const double = () => {
    const value = source.readDoubleLE(reader.offset);
    reader.offset += 8;
    return value;
  };
  const created_ms = double();
  const updated_ms = double();
  const score = flags & layout1.score ? double() : null;
  const latency_ms = flags & layout1.latency ? double() : null;
  const cost = flags & layout1.cost ? double() : null;
  let dimension_scores: Record<string, number> | null = null;
  if (flags & layout1.dimensions) {
    dimension_scores = {};
    const count = readVarint(source, reader);
    for (let i = 0; i < count; i++) {
      const name = readText(source, reader);
      dimension_scores[name] = double();
    }
  }
  const id = (kind: number, bytes: number) => (kind === 0 ? null : kind === 2 ? readText(source, reader) : readHex(source, reader, bytes));
  const trace_id = id(ids & 3, 16);
  const span_id = id((ids >> 2) & 3, 8);
  const error = readText(source, reader);
  if (reader.offset !== end) throw new Error(`a stored result of layout 1 has ${end - reader.offset} bytes past its layout`);
  return {
    layout: 1,
    score,
    passed: flags & layout1.passed ? (flags & layout1.passedTrue) !== 0 : null,
    dimension_scores,
    status: flags & layout1.error ? 'error' : 'ok',
    error,
    trace_id,
    span_id,
    latency_ms,
    cost,
    created_ms,
    updated_ms,
    has_output: (flags & layout1.output) !== 0,
  };
}
