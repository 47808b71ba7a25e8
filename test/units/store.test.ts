import { existsSync, mkdirSync, rmSync } from 'node:fs';
import { open } from 'lmdb';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { Journal, StoreCorruptError, storeFormatVersion } from '../../src/store/journal.ts';
import { storeUpgrades } from '../../src/store-upgrades.ts';
import { compareKeys, prefixEnd, RequiredKeyMissing, type Kv } from '../../src/store/kv.ts';
import { LmdbKv } from '../../src/store/lmdb-kv.ts';
import { MemoryKv } from '../../src/store/memory-kv.ts';
import { createService } from '../../src/service.ts';
import { tempDataDir } from '../helpers/service.ts';
import { pino } from 'pino';

async function withBoth(body: (kv: Kv) => Promise<void>): Promise<void> {
  await body(new MemoryKv());
  const dir = tempDataDir();
  const kv = new LmdbKv(dir);
  try {
    await body(kv);
  } finally {
    await kv.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

const keys = [['a', 1], ['a', 2], ['a', 10], ['a', 'x'], ['a', 1, 'z'], ['b'], ['a', 'x', 3], [5], ['ab'], ['a', 0]];

test('the memory and LMDB stores order keys identically', () =>
  withBoth(async (kv) => {
    const db = kv.db('order');
    await kv.write(keys.map((key) => ({ db, key, value: key.join('/') })));
    const stored = [...db.keys({})].map((key) => JSON.stringify(key));
    assert.equal(stored, [...keys].sort(compareKeys).map((key) => JSON.stringify(key)), kv.kind);
    const prefixed = [...db.range<string>({ start: ['a'], end: prefixEnd(['a']) })].map((entry) => entry.value);
    assert.equal(prefixed, ['a/0', 'a/1', 'a/1/z', 'a/2', 'a/10', 'a/x', 'a/x/3']);
    const reversed = [...db.range<string>({ start: ['a'], end: prefixEnd(['a']), reverse: true, limit: 2 })].map((entry) => entry.value);
    assert.equal(reversed, ['a/x/3', 'a/x']);
  }));

test("a limited range over a whole database counts the entries it yields, never the store's own bookkeeping", () =>
  withBoth(async (kv) => {
    const db = kv.db('records');
    // Objects are stored as msgpack records, whose shared structures lmdb-js keeps in the same database.
    await kv.write(['a', 'b', 'c'].map((id) => ({ db, key: [id], value: { id } })));
    assert.equal([...db.keys({ limit: 1 })], [['a']], kv.kind);
    assert.equal([...db.range<{ id: string }>({ limit: 2 })].map((entry) => entry.value.id), ['a', 'b'], kv.kind);
    assert.equal([...db.range<{ id: string }>({ reverse: true, limit: 2 })].map((entry) => entry.value.id), ['c', 'b'], kv.kind);
    assert.equal([...db.keys({ limit: 0 })], [], kv.kind);
  }));

test('a data directory whose name has a dot is a directory, existing or not (lmdb-js would take it for a file)', async () => {
  const parent = tempDataDir();
  try {
    for (const dir of [`${parent}/data.v2`, `${parent}/empty.d`]) {
      if (dir.endsWith('.d')) mkdirSync(dir);
      const kv = new LmdbKv(dir);
      const db = kv.db('dots');
      await kv.write([{ db, key: ['k'], value: 1 }]);
      await kv.close();
      assert.ok(existsSync(`${dir}/data.mdb`), dir);
    }
  } finally {
    rmSync(parent, { recursive: true, force: true });
  }
});

test('a write is all or nothing; a removal is a write without a value; has() tells a stored key', () =>
  withBoth(async (kv) => {
    const db = kv.db('atomic');
    await kv.write([{ db, key: ['k', 1], value: { n: 1 } }, { db, key: ['k', 2], value: { n: 2 } }]);
    await kv.write([{ db, key: ['k', 1] }]);
    assert.is(db.get(['k', 1]), undefined);
    assert.equal(db.get(['k', 2]), { n: 2 });
    assert.equal([db.has(['k', 1]), db.has(['k', 2]), db.has(['k'])], [false, true, false], kv.kind);
  }));

test('on LMDB a write refused part way through its puts (a key too large) leaves none of them, and a write sharing its transaction is kept', async () => {
  const dir = tempDataDir();
  const kv = new LmdbKv(dir);
  try {
    const db = kv.db('partial');
    const refused = kv.write([{ db, key: ['kept?', 1], value: 1 }, { db, key: ['x'.repeat(4000)], value: 2 }]).then(() => null, (error: unknown) => error);
    const beside = kv.write([{ db, key: ['beside'], value: 3 }]);
    assert.instance(await refused, Error);
    await beside;
    assert.equal([db.get(['kept?', 1]), db.get(['beside'])], [undefined, 3], 'nothing of the refused write, all of the other');
  } finally {
    await kv.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a late write is made when its turn comes and applies only if the key it requires is there by then', () =>
  withBoth(async (kv) => {
    const db = kv.db('requires');
    const first = kv.write([{ db, key: ['entry', 1], value: 1 }]);
    const second = kv.write(() => ({ ops: [{ db, key: ['entry', 2], value: 2 }], requires: { db, key: ['entry', 1] } }));
    await Promise.all([first, second]);
    assert.is(db.get(['entry', 2]), 2, kv.kind);
    const refused = await kv
      .write(() => ({ ops: [{ db, key: ['entry', 4], value: 4 }], requires: { db, key: ['entry', 3] } }))
      .then(() => null, (error: unknown) => error);
    assert.instance(refused, RequiredKeyMissing);
    assert.is(db.get(['entry', 4]), undefined, 'nothing of a refused write is written');
  }));

test('a new store gets the format version; a store of another version is refused', () =>
  withBoth(async (kv) => {
    const journal = new Journal(kv);
    await journal.checkFormat(storeUpgrades);
    assert.is(journal.meta.get(['format']), storeFormatVersion);
    await kv.write([{ db: journal.meta, key: ['format'], value: storeFormatVersion + 1 }]);
    try {
      await journal.checkFormat(storeUpgrades);
      assert.unreachable('a newer format was accepted');
    } catch (error) {
      assert.instance(error, StoreCorruptError);
      assert.match((error as Error).message, /format version 2/);
    }
  }));

test('data without a format version is refused rather than guessed at', () =>
  withBoth(async (kv) => {
    const journal = new Journal(kv);
    await kv.write([journal.appendOp({ kind: 'job', id: 'j' }, 1, [])]);
    const refusal = await journal.checkFormat(storeUpgrades).then(() => null, (error: unknown) => error);
    assert.instance(refusal, StoreCorruptError);
  }));

test('a gap in a journal stops recovery with a clear message', () =>
  withBoth(async (kv) => {
    const journal = new Journal(kv);
    const stream = { kind: 'job', id: 'j1' };
    await kv.write([journal.appendOp(stream, 1, [{}]), journal.appendOp(stream, 2, [{}]), journal.appendOp(stream, 4, [{}])]);
    try {
      [...journal.streams()];
      assert.unreachable('a gap was accepted');
    } catch (error) {
      assert.instance(error, StoreCorruptError);
      assert.match((error as Error).message, /Journal gap in job j1: expected entry 3, found 4/);
    }
  }));

test('streams come back grouped, each with its snapshot and the entries after it', () =>
  withBoth(async (kv) => {
    const journal = new Journal(kv);
    const a = { kind: 'job', id: 'a' };
    const b = { kind: 'job', id: 'b' };
    await kv.write([
      journal.snapshotOp(a, 2, { at: 2 }),
      journal.appendOp(a, 3, ['a3']),
      journal.appendOp(b, 1, ['b1']),
      journal.appendOp(b, 2, ['b2']),
    ]);
    const streams = [...journal.streams()];
    assert.equal(streams.map((stream) => [stream.id, stream.snapshot?.seq ?? 0, stream.entries.map((entry) => entry.seq)]), [
      ['a', 2, [3]],
      ['b', 0, [1, 2]],
    ]);
  }));

test('an undecodable journal record stops the service from starting', async () => {
  const dir = tempDataDir();
  try {
    const service = await createService({ storage: 'lmdb', dataDir: dir, logger: pino({ level: 'silent' }) });
    await service.close();
    const env = open({ path: dir, maxDbs: 32 });
    const raw = env.openDB('journal', { encoding: 'binary' });
    await raw.put(['job', 'broken', 1], Buffer.from([0xc1, 0xc1, 0xc1]));
    await env.close();
    const refusal = await createService({ storage: 'lmdb', dataDir: dir, logger: pino({ level: 'silent' }) }).then(
      (started) => started.close().then(() => null),
      (error: unknown) => error,
    );
    assert.instance(refusal, StoreCorruptError);
    assert.match((refusal as Error).message, /could not be decoded/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test.run();
