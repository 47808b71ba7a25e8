// The in-memory Kv for STORAGE=memory and tests: the same ordered, transactional contract with
// nothing on disk. Values are kept by reference, which is safe because everything written is
// immutable state, so snapshots and journal entries cost almost no extra memory.
import { SortedList } from '../query/sorted-list.ts';
import { compareKeys, RequiredKeyMissing, type Entry, type Key, type Kv, type KvDb, type KvOp, type LateWrite, type RangeOptions, type ValueCodec } from './kv.ts';

type Stored = Entry<unknown>;
const byKey = (a: Stored, b: Stored) => compareKeys(a.key, b.key);
const probe = (key: Key): Stored => ({ key, value: undefined });

class MemoryDb implements KvDb {
  readonly entries = new SortedList<Stored>(byKey);

  get<V>(key: Key): V | undefined {
    return this.entries.find(probe(key))?.value as V | undefined;
  }

  has(key: Key): boolean {
    return this.entries.find(probe(key)) !== undefined;
  }

  *range<V>(options: RangeOptions): Iterable<Entry<V>> {
    const from = options.start ? this.entries.bisectLeft(probe(options.start)) : 0;
    const to = options.end ? this.entries.bisectLeft(probe(options.end)) : this.entries.length;
    const count = Math.min(to - from, options.limit ?? Infinity);
    if (count <= 0) return;
    let yielded = 0;
    const start = options.reverse ? this.entries.length - to : from;
    for (const entry of this.entries.iterate(start, options.reverse)) {
      yield entry as Entry<V>;
      if (++yielded === count) return;
    }
  }

  *keys(options: RangeOptions): Iterable<Key> {
    for (const entry of this.range(options)) yield entry.key;
  }
}

export class MemoryKv implements Kv {
  readonly kind = 'memory' as const;
  private readonly dbs = new Map<string, MemoryDb>();

  /** Values are kept as they are: a codec is for stored bytes. */
  db(name: string, _codec?: ValueCodec): KvDb {
    let db = this.dbs.get(name);
    if (!db) {
      db = new MemoryDb();
      this.dbs.set(name, db);
    }
    return db;
  }

  async write(late: readonly KvOp[] | (() => LateWrite)): Promise<void> {
    const { ops, requires } = typeof late === 'function' ? late() : { ops: late, requires: undefined };
    if (requires && !requires.db.has(requires.key)) throw new RequiredKeyMissing(requires);
    for (const op of ops) {
      const entries = (op.db as MemoryDb).entries;
      entries.delete(probe(op.key));
      if (op.value !== undefined) entries.add({ key: [...op.key], value: op.value });
    }
  }

  stats() {
    return { bytes: 0 };
  }

  async releaseRecoveryPages(): Promise<void> {}

  async backup(): Promise<void> {
    throw new Error('backup needs STORAGE=lmdb: memory storage has nothing on disk to copy');
  }

  async close(): Promise<void> {}
}
