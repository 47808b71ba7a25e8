// The results database's own row layout (src/results/stored-row.ts): every row reads back as it
// was written, bits it does not know are refused, and stores written by earlier builds (msgpack
// records, then layout 1) are rewritten in the current layout once, when the store opens, an
// interrupted rewrite resuming where it stopped.
import { rmSync } from 'node:fs';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import type { Roster } from '../../src/domain/result-batch.ts';
import { storedRowOf, type StoredRow } from '../../src/domain/result-row.ts';
import { ResultStore, resultDbNames } from '../../src/results/result-store.ts';
import { storedRowCodec, storedRowMark, storedRowVersion } from '../../src/results/stored-row.ts';
import { upgradeStoredRows } from '../../src/results/stored-row-upgrade.ts';
import { storeUpgrades } from '../../src/store-upgrades.ts';
import { Journal } from '../../src/store/journal.ts';
import type { Kv, ValueCodec } from '../../src/store/kv.ts';
import { LmdbKv } from '../../src/store/lmdb-kv.ts';
import { tempDataDir } from '../helpers/service.ts';

const base: StoredRow = storedRowOf({
  score: 0.75,
  passed: true,
  dimension_scores: { accuracy: 0.5, tone: 1 },
  status: 'ok',
  error: '',
  trace_id: '0123456789abcdef0123456789abcdef',
  span_id: '0123456789abcdef',
  latency_ms: 120.5,
  cost: 0.0003,
  created_at: 1_700_000_000_123,
  updated_at: 1_700_000_999_456,
  has_output: true,
});

const rows: StoredRow[] = [
  base,
  { ...base, score: null, passed: null, dimension_scores: null, status: 'error', error: 'timed out', trace_id: null, span_id: null, latency_ms: null, cost: null, has_output: false },
  { ...base, passed: false, dimension_scores: {}, score: -0.25, latency_ms: 0, cost: 0 },
  // Ids that are not lowercase hex are kept as text.
  { ...base, trace_id: '0123456789ABCDEF0123456789ABCDEF', span_id: 'not hex at all!!' },
  { ...base, trace_id: '', span_id: 'é' },
  { ...base, dimension_scores: { 'naïve score': 1e-300, '名前': 1.7976931348623157e308, ['x'.repeat(64)]: -3 }, error: 'é😀'.repeat(2000) },
  { ...base, error: 'x'.repeat(41), score: Number.MAX_SAFE_INTEGER },
  { ...base, error: 'y'.repeat(42), score: 1e21 },
  { ...base, error: '\u0000'.repeat(200) },
  // More dimensions than a byte counts (the count is a varint: no limit of the layout's own).
  { ...base, dimension_scores: Object.fromEntries(Array.from({ length: 200 }, (_, i) => [`d${i}`, i / 7])) },
];

const codec = storedRowCodec({ checked: true });

function encode(row: StoredRow): Buffer {
  const target = Buffer.alloc(codec.bytesMax(row) + 16);
  const end = codec.write(row, target, 8);
  assert.ok(end - 8 <= codec.bytesMax(row), 'within its bound');
  return target.subarray(8, end);
}

test('every row reads back as it was written, with its fields in the table\'s order', () => {
  for (const row of rows) {
    const bytes = encode(row);
    assert.equal([bytes[0], bytes[1]], [storedRowMark, storedRowVersion]);
    assert.equal(codec.read(bytes, bytes.length), row);
    // From a plain Uint8Array too (lmdb-js's own buffers).
    const plain = new Uint8Array(bytes);
    const read = codec.read(plain, plain.length)!;
    assert.equal(Object.keys(read), Object.keys(base));
    assert.equal(read, row);
  }
  assert.ok(Object.is(codec.read(encode({ ...base, score: -0 }), encode({ ...base, score: -0 }).length)!.score, -0));
});

test('a columns-only read (the load at start) gives the column fields as written and the others as a row without them', () => {
  const columns = storedRowCodec({ columnsOnly: true });
  for (const row of rows) {
    const bytes = encode(row);
    const read = columns.read(bytes, bytes.length)!;
    assert.equal(Object.keys(read), Object.keys(base));
    assert.equal(
      { score: read.score, passed: read.passed, dimension_scores: read.dimension_scores, status: read.status, created_at: read.created_at, has_output: read.has_output },
      { score: row.score, passed: row.passed, dimension_scores: row.dimension_scores, status: row.status, created_at: row.created_at, has_output: row.has_output },
    );
    assert.equal([read.error, read.trace_id, read.span_id, read.latency_ms, read.cost, read.updated_at], ['', null, null, null, null, 0]);
  }
});

test('the checked codec refuses a row that does not read back as written', () => {
  const target = Buffer.alloc(1024);
  assert.throws(() => codec.write({ ...base, status: 'ok', extra: 1 } as StoredRow, target, 0), /reads back as it was written/);
  assert.throws(() => codec.write({ ...base, status: 'pending' } as unknown as StoredRow, target, 0), /status is ok or error/);
});

test('bytes without the mark are left to msgpack; another version of the layout, or flag bits this build does not know, are refused', () => {
  assert.is(codec.read(Uint8Array.of(0x92, 1, 2), 3), undefined);
  assert.throws(() => codec.read(Uint8Array.of(storedRowMark, 1, 0, 0, 0, 0), 6), /not of layout 2/);
  const bytes = Buffer.from(encode(base));
  bytes.writeUInt32LE((bytes.readUInt32LE(2) | 2 ** 31) >>> 0, 2);
  assert.throws(() => codec.read(bytes, bytes.length), /flag bits 2147483648 this build does not know/);
});

// ---- stores written by earlier builds ----

/** Layout 1, as builds 21749c7 to 7ce2ded wrote it (described in stored-row-upgrade.ts). */
const layout1: ValueCodec<StoredRow> = {
  bytesMax: (row) => 64 + 3 * (row.error.length + JSON.stringify(row.dimension_scores ?? {}).length + 64),
  write(row, target, offset) {
    const text = (value: string, at: number) => {
      const bytes = Buffer.from(value, 'utf8');
      let length = bytes.length;
      while (length >= 0x80) {
        target[at++] = (length & 0x7f) | 0x80;
        length >>>= 7;
      }
      target[at++] = length;
      return at + bytes.copy(target, at);
    };
    const idKind = (id: string | null, chars: number) => (id === null ? 0 : new RegExp(`^[0-9a-f]{${chars}}$`).test(id) ? 1 : 2);
    const trace = idKind(row.trace_id, 32);
    const span = idKind(row.span_id, 16);
    target[offset] = 0xc1;
    target[offset + 1] = 1;
    target[offset + 2] = (row.score !== null ? 1 : 0) | (row.passed !== null ? 2 | (row.passed ? 4 : 0) : 0) | (row.latency_ms !== null ? 8 : 0) |
      (row.cost !== null ? 16 : 0) | (row.has_output ? 32 : 0) | (row.status === 'error' ? 64 : 0) | (row.dimension_scores !== null ? 128 : 0);
    target[offset + 3] = trace | (span << 2);
    let at = target.writeDoubleLE(row.created_at, offset + 4);
    at = target.writeDoubleLE(row.updated_at, at);
    for (const value of [row.score, row.latency_ms, row.cost]) if (value !== null) at = target.writeDoubleLE(value, at);
    if (row.dimension_scores !== null) {
      const names = Object.keys(row.dimension_scores);
      target[at++] = names.length; // fewer than 128 here
      for (const name of names) at = target.writeDoubleLE(row.dimension_scores[name]!, text(name, at));
    }
    if (trace === 1) at += target.write(row.trace_id!, at, 'hex');
    else if (trace === 2) at = text(row.trace_id!, at);
    if (span === 1) at += target.write(row.span_id!, at, 'hex');
    else if (span === 2) at = text(row.span_id!, at);
    return text(row.error, at);
  },
  read: () => undefined,
};

/** A row as msgpack records held it (before 21749c7). */
const asMsgpack = (row: StoredRow) => {
  const { created_at, updated_at, ...rest } = row;
  return { ...rest, created_ms: created_at, updated_ms: updated_at };
};

const roster: Roster = { dataset: 'd0000000-0000-4000-8000-000000000000', agent: 'a0000000-0000-4000-8000-000000000000', version: 1, ids: ['p0', 'p1', 'p2', 'p3', 'p4'], orders: [0, 1, 2, 3, 4] };
const iteration = 'i0000000-0000-4000-8000-000000000000';
/** Up to 100 dimensions in layout 1's one-byte test encoding. */
const earlyRows = rows.filter((row) => Object.keys(row.dimension_scores ?? {}).length < 100);

/** A store as earlier builds left it: msgpack rows, layout-1 rows and current rows side by side, with their pin and roster. */
async function earlierStore(kv: Kv): Promise<[key: number[], row: StoredRow][]> {
  const msgpack = kv.db(resultDbNames.rows);
  const first = kv.db(resultDbNames.rows, layout1 as ValueCodec);
  const current = kv.db(resultDbNames.rows, storedRowCodec() as ValueCodec);
  const expected: [number[], StoredRow][] = [];
  const ops = earlyRows.map((row, i) => {
    const key = [i % 5, Math.floor(i / 5)];
    expected.push([key, row]);
    const db = i % 3 === 0 ? msgpack : i % 3 === 1 ? first : current;
    return { db, key: [iteration, ...key], value: i % 3 === 0 ? asMsgpack(row) : row };
  });
  await kv.write([
    { db: kv.db(resultDbNames.rosters), key: [roster.dataset], value: roster },
    { db: kv.db(resultDbNames.pins), key: [iteration], value: roster.dataset },
    ...ops,
  ]);
  return expected.sort(([a], [b]) => a[0]! - b[0]! || a[1]! - b[1]!);
}

async function withLmdb(body: (dir: string) => Promise<void>): Promise<void> {
  const dir = tempDataDir();
  try {
    await body(dir);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

test('a store with msgpack and layout-1 rows is rewritten in the current layout once, when it opens; a second opening changes nothing', () =>
  withLmdb(async (dir) => {
    let kv = new LmdbKv(dir);
    // The store of an earlier build: its format written, the span upgrade done, the rows' not.
    await kv.write([
      { db: kv.db('meta'), key: ['format'], value: 1 },
      { db: kv.db('meta'), key: ['upgraded', 'span-layout'], value: true },
      { db: kv.db('snapshots'), key: ['project', 'x'], value: { seq: 1, state: null } },
    ]);
    const expected = await earlierStore(kv);
    await kv.close();

    kv = new LmdbKv(dir);
    await new Journal(kv).checkFormat(storeUpgrades);
    const store = new ResultStore(kv, { attemptsPerDatapointMax: 100, checkCodec: true });
    assert.equal(store.load(() => true), []);
    assert.equal([...store.rows.range<StoredRow>({})].map(({ key, value }) => [key.slice(1), value]), expected);
    assert.is(store.table(iteration)!.rows, expected.length);
    assert.is(store.listedRow(iteration, roster, 1, 0)!.status, 'error');
    assert.is(new Journal(kv).meta.get(['upgraded', 'result-rows-layout-2']), true);
    assert.equal(await upgradeStoredRows(kv), { fromMsgpack: 0, fromLayout1: 0 }, 'nothing of an earlier layout is left');
    await kv.close();
  }));

test('an upgrade interrupted by a failed commit rewrites the rest when the store opens next, and what it rewrote stays', () =>
  withLmdb(async (dir) => {
    const lmdb = new LmdbKv(dir);
    const expected = await earlierStore(lmdb);
    let commits = 0;
    const failing: Kv = Object.assign(Object.create(lmdb) as LmdbKv, {
      write: (ops: Parameters<Kv['write']>[0]) => (++commits === 2 ? Promise.reject(new Error('disk full')) : lmdb.write(ops)),
    });
    await upgradeStoredRows(failing, 2).then(
      () => assert.unreachable('the second commit failed'),
      (error: unknown) => assert.match((error as Error).message, /disk full/),
    );
    const done = await upgradeStoredRows(lmdb, 2);
    const earlier = expected.filter((_, i) => i % 3 !== 2).length;
    assert.ok(done.fromMsgpack + done.fromLayout1 === earlier - 2, `the two rows of the first commit stay rewritten (${JSON.stringify(done)})`);
    const store = new ResultStore(lmdb, { attemptsPerDatapointMax: 100 });
    assert.equal([...store.rows.range<StoredRow>({})].map(({ key, value }) => [key.slice(1), value]), expected);
    await lmdb.close();
  }));

test('rows of one version load into their table and are removed a few at a time with their pin and roster', () =>
  withLmdb(async (dir) => {
    const kv = new LmdbKv(dir);
    const store = new ResultStore(kv, { attemptsPerDatapointMax: 100, checkCodec: true });
    const ops = rows.slice(0, 4).map((row, i) => ({ db: store.rows, key: [iteration, i, 0], value: row }));
    const storing = new Set<string>();
    const pins = [...store.pinOps(iteration, roster, storing), ...store.pinOps('another-iteration', roster, storing)];
    assert.equal(pins.map((op) => op.db === store.pins ? 'pin' : 'roster'), ['pin', 'roster', 'pin'], 'one commit stores a roster once, however many iterations it pins');
    await kv.write([...pins.slice(0, 2), ...ops]);
    assert.equal(store.load(() => true), []);
    assert.is(store.table(iteration)!.rows, 4);
    assert.equal([...store.rowsOfDatapoint(iteration, roster, 2)].map((row) => [row.attempt, row.trace_id]), [[0, rows[2]!.trace_id]]);
    const firstRemoval = store.rowRemovalOps(iteration, 3);
    assert.is(firstRemoval.removed, 3);
    await kv.write(firstRemoval.ops);
    const rest = store.rowRemovalOps(iteration, 3);
    assert.is(rest.removed, 1);
    await kv.write([...rest.ops, ...store.unpinOps(iteration, roster.dataset, true)]);
    store.applyUnpinned(iteration, roster.dataset, true);
    assert.equal([[...store.rows.keys({})], store.pins.has([iteration]), store.rosterDb.has([roster.dataset]), store.roster(roster.dataset)], [[], false, false, undefined]);
    await kv.close();
  }));

test.run();
