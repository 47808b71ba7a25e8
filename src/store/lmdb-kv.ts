// The on-disk Kv: one LMDB environment, msgpack values with shared record structures (smaller
// values, much faster decoding at recovery), every write through `transaction()` so that writes
// keep their order, and synced commits so that a resolved write is durable. Commits overlap their
// syncs: the next transaction begins while the one before is being flushed, and each write
// resolves only once its own commit is flushed (data synced, then its meta page).
import { mkdirSync, mkdtempSync, renameSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { open, type Database, type Key as LmdbKey, type RootDatabase } from 'lmdb';
import { RequiredKeyMissing, type Entry, type Key, type Kv, type KvDb, type KvOp, type LateWrite, type RangeOptions, type ValueCodec } from './kv.ts';

/** lmdb returns a one-element key as the bare element; the Kv contract is always a tuple. */
function asTuple(key: unknown): Key {
  return Array.isArray(key) ? key : [key as string | number];
}

class LmdbDb implements KvDb {
  constructor(public handle: Database) {}

  get<V>(key: Key): V | undefined {
    return this.handle.get(key as LmdbKey) as V | undefined;
  }

  has(key: Key): boolean {
    return this.handle.doesExist(key as LmdbKey);
  }

  *range<V>(options: RangeOptions): Iterable<Entry<V>> {
    for (const { key, value } of ours(this.handle.getRange(toLmdbRange(options)), (entry) => entry.key, options.limit)) {
      yield { key: asTuple(key), value: value as V };
    }
  }

  *keys(options: RangeOptions): Iterable<Key> {
    for (const key of ours(this.handle.getKeys(toLmdbRange(options)), (key) => key, options.limit)) yield asTuple(key);
  }
}

/**
 * msgpackr keeps its shared record structures under a Symbol key in the same database; it is
 * lmdb's bookkeeping, not ours, so ranges skip it. It sorts first, so lmdb's own limit would count
 * it: the limit counts the entries yielded instead.
 */
function* ours<T>(items: Iterable<T>, keyOf: (item: T) => unknown, limit = Infinity): Generator<T> {
  if (limit <= 0) return;
  for (const item of items) {
    if (typeof keyOf(item) === 'symbol') continue;
    yield item;
    if (--limit === 0) return;
  }
}

/**
 * Our ranges are [start, end) whatever the direction. lmdb walks a reverse range from `start`
 * (its upper bound) down to `end`, so the bounds swap and their inclusiveness with them. The
 * limit is LmdbDb's to apply (above).
 */
function toLmdbRange(options: RangeOptions) {
  if (!options.reverse) {
    return { start: options.start as LmdbKey | undefined, end: options.end as LmdbKey | undefined };
  }
  return {
    ...(options.end ? { start: options.end as LmdbKey, exclusiveStart: true } : {}),
    ...(options.start ? { end: options.start as LmdbKey, inclusiveEnd: true } : {}),
    reverse: true,
  };
}

/** The service's LMDB environment at `path` (also opened alone by bench/store-commit-child.ts). */
export function openEnvironment(path: string): RootDatabase {
  return open({
    path,
    // DATA_DIR is always a directory: lmdb-js would take a name with a dot (./data.v2) for a file.
    noSubdir: false,
    maxDbs: 32,
    // lmdb-js's overlapping sync: a commit's flush (fdatasync of its pages, then a synced meta
    // page) runs on its write thread while the next transaction begins, instead of inside the
    // write lock; a write still resolves only after its own flush (lmdb-js 3 sets a commit's
    // "committed" flag once mdb_txn_commit has synced it), so an acknowledged write is durable.
    // After a crash of the machine the store opens at its last flushed commit; after a crash of
    // the process only, at its last commit, whose pages the OS still holds.
    overlappingSync: true,
    // A transaction rewrites the free-page list it loaded. Snapshots free many journal pages at
    // once (a shutdown frees them all), and with lmdb-js's defaults (50,000 / 75,000 pages) every
    // later commit rewrote ~64,000 page numbers: 650 ms per commit instead of 1 ms, measured on a
    // store of 100,000 jobs. Loading a little at a time keeps commits small; a transaction needing
    // more pages than it loaded grows the file instead.
    maxFreeSpaceToLoad: 1000,
    maxFreeSpaceToRetain: 2000,
  } as Parameters<typeof open>[0]);
}

function openDatabase(env: RootDatabase, name: string, codec: ValueCodec | undefined): Database {
  const msgpack = env.openDB(name, { encoding: 'msgpack', sharedStructuresKey: Symbol.for('structures') });
  if (!codec) return msgpack;
  // The same database again, its values through the codec; values written before it are
  // msgpack, read by the handle above (with the shared structures they were written with).
  const legacy = (msgpack as unknown as { decoder: { decode(bytes: Uint8Array): unknown } }).decoder;
  return env.openDB(name, { encoder: codecEncoder(codec, legacy) } as Parameters<RootDatabase['openDB']>[1]);
}

/** lmdb-js's encoder modes (msgpackr's): the answer may be a buffer with start/end, and the bytes are copied before the next encode. */
const reuseBufferMode = 512;
const resetBufferMode = 1024;

/**
 * A codec as lmdb-js's encoder. Values are laid out in one buffer of its own, the way lmdb-js
 * uses msgpackr: inside a write transaction lmdb-js copies each value before it encodes the next,
 * so the same bytes are reused; otherwise each value keeps its own. Reading, lmdb-js hands over
 * its own buffer, which the codec copies out of (a value of the older layout is copied first).
 */
function codecEncoder(codec: ValueCodec, legacy: { decode(bytes: Uint8Array): unknown }) {
  // allocUnsafeSlow: lmdb-js takes the address of the buffer's own memory, so it must start it.
  let target = Buffer.allocUnsafeSlow(64 * 1024) as Buffer & { start?: number; end?: number };
  let position = 0;
  return {
    copyBuffers: true,
    encode(value: unknown, mode = 0): Uint8Array {
      const bytesMax = codec.bytesMax(value);
      if (position + bytesMax > target.length) {
        target = Buffer.allocUnsafeSlow(Math.max(64 * 1024, bytesMax));
        position = 0;
      }
      const start = position;
      const end = codec.write(value, target, start);
      if (end - start > bytesMax) throw new Error(`a value took ${end - start} bytes, more than the ${bytesMax} its codec allowed`);
      if (!(mode & reuseBufferMode) || !(mode & resetBufferMode)) {
        position = end;
        return target.subarray(start, end);
      }
      target.start = start;
      target.end = end;
      return target;
    },
    decode(bytes: Uint8Array): unknown {
      const end = bytes.length;
      const value = codec.read(bytes, end);
      return value !== undefined ? value : legacy.decode(Uint8Array.prototype.slice.call(bytes, 0, end));
    },
  };
}

/** lmdb-js's transactionAsync as it is (its typings leave out `asChild`, and that it answers a promise). */
interface ChildTransactions {
  transactionAsync(callback: () => void, asChild: true): Promise<void>;
}

export class LmdbKv implements Kv {
  readonly kind = 'lmdb' as const;
  private env: RootDatabase;
  /** Each database's handles, by the codec they read and write through (none: msgpack). */
  private readonly dbs = new Map<string, Map<ValueCodec | undefined, LmdbDb>>();

  constructor(readonly path: string) {
    mkdirSync(path, { recursive: true });
    this.env = openEnvironment(path);
  }

  db(name: string, codec?: ValueCodec): KvDb {
    let handles = this.dbs.get(name);
    if (!handles) this.dbs.set(name, (handles = new Map()));
    let db = handles.get(codec);
    if (!db) handles.set(codec, (db = new LmdbDb(openDatabase(this.env, name, codec))));
    return db;
  }

  /** Closing and reopening the environment unmaps every page recovery touched. */
  async releaseRecoveryPages(): Promise<void> {
    await this.env.close();
    this.env = openEnvironment(this.path);
    for (const [name, handles] of this.dbs) for (const [codec, db] of handles) db.handle = openDatabase(this.env, name, codec);
  }

  /**
   * lmdb-js runs the callbacks of queued transactions in order when their LMDB transaction begins
   * (several share one commit when they wait together), and a commit that fails does not stop the
   * next one: late ops are made and `requires` is checked in the callback, where reads see every
   * earlier write, before anything is put. Each callback runs as a child transaction: lmdb-js
   * commits the others of a shared transaction when one throws, so one that throws part way
   * through its puts (a value its encoder refuses) must leave none of them behind.
   */
  write(late: readonly KvOp[] | (() => LateWrite)): Promise<void> {
    // Not async: an async function's frame would hold `late`, and the ops it made, until the
    // commit is durable.
    return (this.env as unknown as ChildTransactions).transactionAsync(() => {
      const { ops, requires } = typeof late === 'function' ? late() : { ops: late, requires: undefined };
      if (requires && !requires.db.has(requires.key)) throw new RequiredKeyMissing(requires);
      for (const op of ops) {
        const handle = (op.db as LmdbDb).handle;
        if (op.value === undefined) handle.remove(op.key as LmdbKey);
        else handle.put(op.key as LmdbKey, op.value);
      }
    }, true);
  }

  stats() {
    const stats = this.env.getStats() as { pageSize: number; treeBranchPageCount?: number; lastPageNumber?: number };
    return { bytes: (stats.lastPageNumber ?? 0) * stats.pageSize };
  }

  /**
   * A compacted, consistent copy of the whole environment (one read transaction) into the file
   * `path`. LMDB copies a directory-mode environment into a directory, so it is made beside the
   * target and its data file moved into place.
   */
  async backup(path: string): Promise<void> {
    const scratch = mkdtempSync(join(dirname(path), '.backup-'));
    try {
      await this.env.backup(scratch, true);
      renameSync(join(scratch, 'data.mdb'), path);
    } finally {
      rmSync(scratch, { recursive: true, force: true });
    }
  }

  async close(): Promise<void> {
    await this.env.close();
  }
}
