// Streams of events on a Kv. Each actor owns one stream: journal entries [kind, id, seq] hold the
// events of one accepted message; a snapshot [kind, id] holds the state as of a seq; parts
// [kind, id, part] hold large immutable pieces of a snapshot (a dataset's datapoints) written
// once. A snapshot and the removal of the entries it covers happen in one transaction, so the
// journal never grows without bound and recovery is always snapshot + contiguous suffix.
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

  /** Checks (or, on an empty store, writes) the format version. */
  async checkFormat(): Promise<void> {
    const found = this.meta.get<number>(['format']);
    if (found === undefined) {
      const empty = isEmpty(this.entries) && isEmpty(this.snapshots);
      if (!empty) throw new StoreCorruptError('The store holds data but no format version');
      await this.kv.write([{ db: this.meta, key: ['format'], value: storeFormatVersion }]);
      return;
    }
    if (found !== storeFormatVersion) {
      throw new StoreCorruptError(`The store has format version ${found}; this build reads version ${storeFormatVersion}`);
    }
  }

  appendOp(stream: StreamRef, seq: number, events: readonly unknown[]): KvOp {
    assert.ok(Number.isSafeInteger(seq) && seq > 0, 'a journal entry has a positive sequence number');
    return { db: this.entries, key: [stream.kind, stream.id, seq], value: events };
  }

  /** Writes a snapshot at `seq` and drops the entries it covers (after the previous snapshot). */
  snapshotOps(stream: StreamRef, seq: number, state: unknown, previousSnapshotSeq: number, lastWrittenSeq: number): KvOp[] {
    assert.ok(previousSnapshotSeq <= lastWrittenSeq && lastWrittenSeq <= seq, 'a snapshot covers what was written, and no earlier snapshot is ahead of it');
    const ops: KvOp[] = [{ db: this.snapshots, key: [stream.kind, stream.id], value: { seq, state } }];
    for (let covered = previousSnapshotSeq + 1; covered <= lastWrittenSeq; covered++) {
      ops.push({ db: this.entries, key: [stream.kind, stream.id, covered] });
    }
    return ops;
  }

  /** Removes a whole stream: its entries, snapshot and parts. */
  dropOps(stream: StreamRef, previousSnapshotSeq: number, lastWrittenSeq: number, partIds: Iterable<string>): KvOp[] {
    assert.ok(previousSnapshotSeq <= lastWrittenSeq, 'a stream ends at or after its snapshot');
    const ops: KvOp[] = [{ db: this.snapshots, key: [stream.kind, stream.id] }];
    for (let seq = previousSnapshotSeq + 1; seq <= lastWrittenSeq; seq++) {
      ops.push({ db: this.entries, key: [stream.kind, stream.id, seq] });
    }
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
      const stream: RecoveredStream = { kind: String(key[0]), id: String(key[1]), snapshot: undefined, entries: [] };
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
    const stream: RecoveredStream = { ...ref, snapshot: this.snapshots.get<StoredSnapshot>([ref.kind, ref.id]), entries: [] };
    const range = this.entries.range<unknown[]>({ start: [ref.kind, ref.id], end: prefixEnd([ref.kind, ref.id]) });
    for (const entry of this.decoding('journal entry', range)) {
      this.appendRecovered(stream, Number(entry.key[2]), entry.value);
    }
    return stream;
  }

  private appendRecovered(stream: RecoveredStream, seq: number, events: unknown): void {
    const snapshotSeq = stream.snapshot?.seq ?? 0;
    if (seq <= snapshotSeq) return; // covered by the snapshot
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
