// Streams of events on a Kv. Each actor owns one stream: journal entries [kind, id, seq] hold the
// events of one accepted message; a snapshot [kind, id] holds the state as of a seq; parts
// [kind, id, part] hold large immutable pieces of a snapshot (a dataset's datapoints) written
// once. Recovery is always snapshot + contiguous suffix. The entries a snapshot covers are
// removed by its owner in ascending slices, beginning in the snapshot's own commit: removing
// thousands of them at once held every writer behind one long commit. Until they are gone,
// covered entries are skipped by recovery, which reports where they begin (`coveredFrom`).
import assert from 'node:assert/strict';
import { prefixEnd, type Kv, type KvDb, type KvOp } from './kv.ts';

export const storeFormatVersion = 1;

export interface StreamRef {
  kind: string;
  id: string;
}

export interface StoredSnapshot {
  seq: number;
  state: unknown;
}

export interface RecoveredStream extends StreamRef {
  snapshot: StoredSnapshot | undefined;
  /** Entries after the snapshot, contiguous from snapshot.seq + 1 (or 1). */
  entries: { seq: number; events: unknown[] }[];
  /** The first and last entries the snapshot covers that are still stored, if any. */
  covered: { from: number; through: number } | undefined;
}

/**
 * A change of how a layer above the journal lays out its data (spans keyed another way, result
 * rows in a new layout), made once when a store opens: `checkFormat` runs each one a store has
 * not had yet, before anything reads the store, and records it in `meta`. One interrupted (a
 * crash) runs again in full when the store opens next, so it must leave what it already changed
 * as it is. The module that owns the layout defines its upgrade; whoever opens a store hands
 * `checkFormat` the whole list (src/store-upgrades.ts).
 */
export interface StoreUpgrade {
  readonly name: string;
  run(kv: Kv): Promise<unknown>;
}

export class StoreCorruptError extends Error {
  constructor(message: string) {
    super(`${message}. The store under DATA_DIR cannot be trusted; restore a backup or investigate before starting.`);
    this.name = 'StoreCorruptError';
  }
}

export class Journal {
  readonly entries: KvDb;
  readonly snapshots: KvDb;
  readonly parts: KvDb;
  readonly meta: KvDb;

  constructor(readonly kv: Kv) {
    this.entries = kv.db('journal');
    this.snapshots = kv.db('snapshots');
    this.parts = kv.db('parts');
    this.meta = kv.db('meta');
  }

  /**
   * Checks (or, on an empty store, writes) the format version, then runs the `upgrades` the store
   * has not had, in order. An empty store has nothing of an earlier layout: it is written as
   * having had them all (nothing writes to a store before its format is checked).
   */
  async checkFormat(upgrades: readonly StoreUpgrade[]): Promise<void> {
    const found = this.meta.get<number>(['format']);
    if (found === undefined) {
      const empty = isEmpty(this.entries) && isEmpty(this.snapshots);
      if (!empty) throw new StoreCorruptError('The store holds data but no format version');
      const upgraded = upgrades.map(({ name }): KvOp => ({ db: this.meta, key: ['upgraded', name], value: true }));
      await this.kv.write([{ db: this.meta, key: ['format'], value: storeFormatVersion }, ...upgraded]);
      return;
    }
    if (found !== storeFormatVersion) {
      throw new StoreCorruptError(`The store has format version ${found}; this build reads version ${storeFormatVersion}`);
    }
    for (const upgrade of upgrades) {
      if (this.meta.has(['upgraded', upgrade.name])) continue;
      await upgrade.run(this.kv);
      await this.kv.write([{ db: this.meta, key: ['upgraded', upgrade.name], value: true }]);
    }
  }

  appendOp(stream: StreamRef, seq: number, events: readonly unknown[]): KvOp {
    assert.ok(Number.isSafeInteger(seq) && seq > 0, 'a journal entry has a positive sequence number');
    return { db: this.entries, key: [stream.kind, stream.id, seq], value: events };
  }

  /** Writes a snapshot at `seq` (covering every entry through it, written or not). */
  snapshotOp(stream: StreamRef, seq: number, state: unknown): KvOp {
    assert.ok(Number.isSafeInteger(seq) && seq > 0, 'a snapshot has a positive sequence number');
    return { db: this.snapshots, key: [stream.kind, stream.id], value: { seq, state } };
  }

  /** Removes the entries after `removedThrough` through `through` (covered ones, or a whole stream's). */
  removalOps(stream: StreamRef, removedThrough: number, through: number): KvOp[] {
    const ops: KvOp[] = [];
    for (let seq = removedThrough + 1; seq <= through; seq++) ops.push({ db: this.entries, key: [stream.kind, stream.id, seq] });
    return ops;
  }

  /** Removes a whole stream: its entries after `removedThrough` (none before it is stored), snapshot and parts. */
  dropOps(stream: StreamRef, removedThrough: number, lastWrittenSeq: number, partIds: Iterable<string>): KvOp[] {
    assert.ok(removedThrough <= lastWrittenSeq, 'a stream ends at or after its snapshot');
    const ops: KvOp[] = [{ db: this.snapshots, key: [stream.kind, stream.id] }, ...this.removalOps(stream, removedThrough, lastWrittenSeq)];
    for (const part of partIds) ops.push({ db: this.parts, key: [stream.kind, stream.id, part] });
    return ops;
  }

  partOp(stream: StreamRef, part: string, value: unknown): KvOp {
    return { db: this.parts, key: [stream.kind, stream.id, part], value };
  }

  readPart(stream: StreamRef, part: string): unknown {
    const value = this.parts.get([stream.kind, stream.id, part]);
    if (value === undefined) {
      throw new StoreCorruptError(`Part ${part} of ${stream.kind} ${stream.id} is missing`);
    }
    return value;
  }

  /** Every stream, in key order: snapshot plus the contiguous journal suffix. */
  *streams(): Generator<RecoveredStream> {
    const snapshots = this.decoding('snapshot', this.snapshots.range<StoredSnapshot>({}));
    const entries = this.decoding('journal entry', this.entries.range<unknown[]>({}));
    let snapshot = snapshots.next();
    let entry = entries.next();
    while (!snapshot.done || !entry.done) {
      const fromSnapshot = !snapshot.done &&
        (entry.done || compareStream(snapshot.value.key, entry.value.key) <= 0);
      const key = fromSnapshot ? snapshot.value!.key : entry.value!.key;
      const stream: RecoveredStream = { kind: String(key[0]), id: String(key[1]), snapshot: undefined, entries: [], covered: undefined };
      if (fromSnapshot) {
        stream.snapshot = snapshot.value!.value;
        snapshot = snapshots.next();
      }
      while (!entry.done && entry.value.key[0] === stream.kind && entry.value.key[1] === stream.id) {
        this.appendRecovered(stream, Number(entry.value.key[2]), entry.value.value);
        entry = entries.next();
      }
      yield stream;
    }
  }

  /** One stream as the store holds it now (an actor reloads after a failed commit). */
  loadStream(ref: StreamRef): RecoveredStream {
    const stream: RecoveredStream = { ...ref, snapshot: this.snapshots.get<StoredSnapshot>([ref.kind, ref.id]), entries: [], covered: undefined };
    const range = this.entries.range<unknown[]>({ start: [ref.kind, ref.id], end: prefixEnd([ref.kind, ref.id]) });
    for (const entry of this.decoding('journal entry', range)) {
      this.appendRecovered(stream, Number(entry.key[2]), entry.value);
    }
    return stream;
  }

  private appendRecovered(stream: RecoveredStream, seq: number, events: unknown): void {
    const snapshotSeq = stream.snapshot?.seq ?? 0;
    if (seq <= snapshotSeq) {
      // Covered by the snapshot, not removed yet: skipped, and where the covered entries lie noted.
      stream.covered = { from: stream.covered?.from ?? seq, through: seq };
      return;
    }
    const expected = (stream.entries.at(-1)?.seq ?? snapshotSeq) + 1;
    if (seq !== expected) {
      throw new StoreCorruptError(`Journal gap in ${stream.kind} ${stream.id}: expected entry ${expected}, found ${seq}`);
    }
    if (!Array.isArray(events)) {
      throw new StoreCorruptError(`Journal entry ${seq} of ${stream.kind} ${stream.id} is not a list of events`);
    }
    stream.entries.push({ seq, events });
  }

  /** Re-raises a decoding failure with where it happened. */
  private *decoding<V>(what: string, range: Iterable<{ key: readonly (string | number)[]; value: V }>) {
    const iterator = range[Symbol.iterator]();
    let last: readonly (string | number)[] | undefined;
    while (true) {
      let step: IteratorResult<{ key: readonly (string | number)[]; value: V }>;
      try {
        step = iterator.next();
      } catch (error) {
        const where = last ? `after ${JSON.stringify(last)}` : 'at the start';
        throw new StoreCorruptError(`A ${what} ${where} could not be decoded (${(error as Error).message})`);
      }
      if (step.done) return;
      last = step.value.key;
      yield step.value;
    }
  }
}

function compareStream(a: readonly (string | number)[], b: readonly (string | number)[]): number {
  if (a[0] !== b[0]) return String(a[0]) < String(b[0]) ? -1 : 1;
  if (a[1] !== b[1]) return String(a[1]) < String(b[1]) ? -1 : 1;
  return 0;
}

function isEmpty(db: KvDb): boolean {
  for (const _ of db.keys({ limit: 1 })) return false;
  return true;
}
