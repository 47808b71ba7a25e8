// The results database's own row layout (src/results/stored-row.ts): every row reads back as it
// was written, and a store whose rows were written as msgpack (before the layout) still loads,
// old and new rows side by side.
import { rmSync } from 'node:fs';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import type { Roster } from '../../src/domain/results.ts';
import { ResultStore } from '../../src/results/result-store.ts';
import { storedRowCodec, storedRowMark, type StoredRow } from '../../src/results/stored-row.ts';
import { LmdbKv } from '../../src/store/lmdb-kv.ts';
import { tempDataDir } from '../helpers/service.ts';

const base: StoredRow = {
  score: 0.75,
  passed: true,
  dimension_scores: { accuracy: 0.5, tone: 1 },
  status: 'ok',
  error: '',
  trace_id: '0123456789abcdef0123456789abcdef',
  span_id: '0123456789abcdef',
  latency_ms: 120.5,
  cost: 0.0003,
  created_ms: 1_700_000_000_123,
  updated_ms: 1_700_000_999_456,
  has_output: true,
};

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

function encode(row: StoredRow): Buffer {
  const target = Buffer.alloc(storedRowCodec.bytesMax(row) + 16);
  const end = storedRowCodec.write(row, target, 8);
  assert.ok(end - 8 <= storedRowCodec.bytesMax(row), 'within its bound');
  return target.subarray(8, end);
}

test('every row reads back as it was written', () => {
  for (const row of rows) {
    const bytes = encode(row);
    assert.is(bytes[0], storedRowMark);
    assert.equal(storedRowCodec.read(bytes, bytes.length), row);
    // From a plain Uint8Array too (lmdb-js's own buffers), and with its order of fields.
    const plain = new Uint8Array(bytes);
    const read = storedRowCodec.read(plain, plain.length)!;
    assert.equal(Object.keys(read), Object.keys(base));
    assert.equal(read, row);
  }
  assert.ok(Object.is(storedRowCodec.read(encode({ ...base, score: -0 }), encode({ ...base, score: -0 }).length)!.score, -0));
});

test('bytes of another layout are not read as a row', () => {
  assert.is(storedRowCodec.read(Uint8Array.of(0x40, 1, 2), 3), undefined);
  assert.is(storedRowCodec.read(Uint8Array.of(0x8c), 1), undefined);
});

const roster: Roster = { dataset: 'd0000000-0000-4000-8000-000000000000', agent: 'a0000000-0000-4000-8000-000000000000', version: 1, ids: ['p0', 'p1', 'p2', 'p3'], orders: [0, 1, 2, 3] };
const iteration = 'i0000000-0000-4000-8000-000000000000';

test('a store whose rows were written as msgpack (before the layout) loads, and takes rows of the layout beside them', async () => {
  const dir = tempDataDir();
  try {
    // Written as before: the results database without a codec is msgpack with shared structures.
    let kv = new LmdbKv(dir);
    const old = kv.db('results');
    await kv.write([
      { db: kv.db('result-rosters'), key: [roster.dataset], value: roster },
      { db: kv.db('result-pins'), key: [iteration], value: roster.dataset },
      { db: old, key: [iteration, 0, 0], value: rows[0] },
      { db: old, key: [iteration, 1, 0], value: rows[1] },
    ]);
    await kv.write([{ db: old, key: [iteration, 2, 1], value: rows[5] }]);
    await kv.close();

    kv = new LmdbKv(dir);
    let store = new ResultStore(kv);
    assert.equal(store.load(() => true), []);
    assert.is(store.table(iteration)!.rows, 3);
    assert.equal(store.rows.get([iteration, 0, 0]), rows[0]);
    assert.equal(store.rows.get([iteration, 2, 1]), rows[5]);
    assert.is(store.listedRow(iteration, roster, 1, 0)!.status, 'error');
    // A row of the layout replaces an old one, another is new.
    await kv.write([
      { db: store.rows, key: [iteration, 1, 0], value: rows[2] },
      { db: store.rows, key: [iteration, 3, 0], value: rows[3] },
    ]);
    await kv.releaseRecoveryPages();
    assert.equal(store.rows.get([iteration, 1, 0]), rows[2]);
    await kv.close();

    kv = new LmdbKv(dir);
    store = new ResultStore(kv);
    assert.equal(store.load(() => true), []);
    assert.is(store.table(iteration)!.rows, 4);
    assert.equal(
      [...store.rows.range<StoredRow>({})].map(({ key, value }) => [key, value]),
      [
        [[iteration, 0, 0], rows[0]],
        [[iteration, 1, 0], rows[2]],
        [[iteration, 2, 1], rows[5]],
        [[iteration, 3, 0], rows[3]],
      ],
    );
    assert.equal([...store.rowsOfDatapoint(iteration, roster, 2)].map((row) => row.attempt), [1]);
    const purge = store.purgeOps(iteration, 10);
    assert.ok(purge.done);
    await kv.write(purge.ops);
    assert.equal([...store.rows.range({})], []);
    await kv.close();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test.run();
