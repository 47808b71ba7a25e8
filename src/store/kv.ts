// The one storage interface: named ordered key-value databases with atomic, durable write
// transactions. LMDB implements it on disk and MemoryKv in memory, so the journal, snapshots and
// span store are written once and run identically in both modes.

/** Keys are tuples of strings and non-negative integers, ordered element by element. */
export type KeyPart = string | number;
export type Key = readonly KeyPart[];

export interface RangeOptions {
  /** Inclusive lower bound. */
  start?: Key;
  /** Exclusive upper bound. */
  end?: Key;
  reverse?: boolean;
  limit?: number;
}

export interface Entry<V = unknown> {
  key: Key;
  value: V;
}

export interface KvDb {
  get<V>(key: Key): V | undefined;
  /** Whether the key is stored, without reading its value. */
  has(key: Key): boolean;
  range<V>(options: RangeOptions): Iterable<Entry<V>>;
  keys(options: RangeOptions): Iterable<Key>;
}

/** One key of one database. */
export interface KvRef {
  db: KvDb;
  key: Key;
}

/** One change in a write: a put when `value` is present, otherwise a removal. */
export interface KvOp extends KvRef {
  value?: unknown;
}

/** The ops of a write made when its transaction begins, and the key the write then requires. */
export interface LateWrite {
  ops: readonly KvOp[];
  requires?: KvRef;
}

/**
 * A write refused because the key it required was not in the store when its transaction began:
 * the write it was built on did not land. Nothing of it was written.
 */
export class RequiredKeyMissing extends Error {
  constructor(required: KvRef) {
    super(`the write required ${JSON.stringify(required.key)}, which is not in the store`);
    this.name = 'RequiredKeyMissing';
  }
}

export interface KvStats {
  /** Bytes the store occupies (0 in memory). */
  bytes: number;
}

/**
 * A database's own value layout, for values written often enough that msgpack's cost counts
 * (result rows): values are written as `write` lays them out, and read by `read`. Values of the
 * database written before it had a codec are msgpack, which never starts with the bytes a codec's
 * values start with: `read` answers undefined for those, and they are read as msgpack. In memory
 * values are kept as they are, without a codec.
 */
export interface ValueCodec<V = unknown> {
  /** The most bytes `write` takes for `value`. */
  bytesMax(value: V): number;
  /** Lays `value` out in `target` from `offset` (with bytesMax(value) bytes free); returns where it ends. */
  write(value: V, target: Buffer, offset: number): number;
  /** The value laid out in `bytes` (bytes 0 to `end`), or undefined when they are not of this layout. */
  read(bytes: Uint8Array, end: number): V | undefined;
}

export interface Kv {
  readonly kind: 'lmdb' | 'memory';
  /**
   * A database, by name; a codec, if any, lays out its values. The same database may be opened
   * with more than one codec (a store upgrade reads an older layout beside the current one): each
   * handle reads and writes through its own.
   */
  db(name: string, codec?: ValueCodec): KvDb;
  /**
   * Applies every op in one transaction, all or nothing, and resolves once it is durable.
   * It is the only way anything is written. Writes are applied in the order they were made, each
   * succeeding or failing on its own. `ops` may be a function, called when the write's
   * transaction begins (every earlier write applied by then): a writer can go on adding to a write
   * until the store gets to it. Its `requires`, if any, must then be in the store, or the write
   * fails with RequiredKeyMissing, writing nothing: a write made while the one it builds on is
   * still in flight cannot outlive that one's failure.
   */
  write(ops: readonly KvOp[] | (() => LateWrite)): Promise<void>;
  stats(): KvStats;
  /**
   * Lets go of memory that only recovery needed: recovery reads the whole store once, and on
   * LMDB those mapped pages would otherwise stay resident (they remain in the OS page cache).
   */
  releaseRecoveryPages(): Promise<void>;
  /** A consistent copy of the whole store into `path` (LMDB only). */
  backup(path: string): Promise<void>;
  close(): Promise<void>;
}

/** The smallest key greater than every key that starts with `prefix`. */
export function prefixEnd(prefix: Key): Key {
  // Strings sort after numbers and '\uffff' after every character we store, so appending it
  // bounds every key that extends the prefix.
  return [...prefix, '\uffff'];
}

/** Element-wise order: numbers before strings, numbers numerically, strings by code unit. */
export function compareKeys(a: Key, b: Key): number {
  const length = Math.min(a.length, b.length);
  for (let i = 0; i < length; i++) {
    const x = a[i];
    const y = b[i];
    if (x === y) continue;
    const xNumber = typeof x === 'number';
    if (xNumber !== (typeof y === 'number')) return xNumber ? -1 : 1;
    return x < y ? -1 : 1;
  }
  return a.length - b.length;
}
