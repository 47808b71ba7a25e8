// Where an actor's stream stands, as the commits it has started make it: its seq, its snapshot's,
// which entries that snapshot covers are still stored, and the parts the snapshot references.
// They change together (a commit appends, a snapshot is written, covered entries go), so they
// are one value with one method for each of those; an actor whose commit failed replaces its
// cursor with the one the store holds (`loaded`).
import assert from 'node:assert/strict';
import type { RecoveredStream } from '../store/journal.ts';

/** Entries to remove: those after `after`, through `through`. */
export interface EntryRange {
  after: number;
  through: number;
}

export class StreamCursor {
  #seq: number;
  #snapshotSeq: number;
  /** Entries the snapshot covers that are still stored: after #removedThrough, through #coveredThrough. */
  #removedThrough: number;
  #coveredThrough: number;
  readonly #storedParts: Set<string>;

  private constructor(seq: number, snapshotSeq: number, removedThrough: number, coveredThrough: number, storedParts: Set<string>) {
    this.#seq = seq;
    this.#snapshotSeq = snapshotSeq;
    this.#removedThrough = removedThrough;
    this.#coveredThrough = coveredThrough;
    this.#storedParts = storedParts;
  }

  /**
   * The cursor of a stream as recovered (none: a new stream): its seq is its last entry's (or its
   * snapshot's), and covered entries still stored are removed from the first on, however many
   * commits that takes.
   */
  static loaded(stream: RecoveredStream | undefined, storedParts: Set<string>): StreamCursor {
    const snapshotSeq = stream?.snapshot?.seq ?? 0;
    const seq = stream?.entries.at(-1)?.seq ?? snapshotSeq;
    assert.ok(snapshotSeq <= seq, 'a stream ends at or after its snapshot');
    const covered = stream?.covered;
    return new StreamCursor(seq, snapshotSeq, covered ? covered.from - 1 : snapshotSeq, covered ? covered.through : snapshotSeq, storedParts);
  }

  /** The seq of the working state: that of the last commit started. */
  get seq(): number {
    return this.#seq;
  }

  /** The seq of the last snapshot written or being written. */
  get snapshotSeq(): number {
    return this.#snapshotSeq;
  }

  /** The last entry removed; entries after it, through the snapshot's, are covered and still stored. */
  get removedThrough(): number {
    return this.#removedThrough;
  }

  /** The parts the snapshot references (stored once, kept while unchanged). */
  get storedParts(): ReadonlySet<string> {
    return this.#storedParts;
  }

  /** Entries journaled since the last snapshot. */
  get sinceSnapshot(): number {
    return this.#seq - this.#snapshotSeq;
  }

  /** A commit of `eventful` messages starts: the seq moves past them. Returns the seq before it. */
  advance(eventful: number): number {
    const previous = this.#seq;
    assert.ok(this.#snapshotSeq <= previous, 'a snapshot never runs ahead of the journal');
    this.#seq = previous + eventful;
    return previous;
  }

  /** The next covered entries to remove, at most `removalsMax`, oldest first; counted as removed. */
  removeCovered(removalsMax: number): EntryRange | undefined {
    if (this.#removedThrough >= this.#coveredThrough) return undefined;
    const range = { after: this.#removedThrough, through: Math.min(this.#coveredThrough, this.#removedThrough + removalsMax) };
    this.#removedThrough = range.through;
    return range;
  }

  /**
   * What a snapshot covering the entries through `journaledSeq` removes with it: at most
   * `removalsMax` of the entries still stored, oldest first (counted once the snapshot is written).
   */
  snapshotRemoval(seq: number, journaledSeq: number, removalsMax: number): EntryRange {
    assert.ok(this.#snapshotSeq <= journaledSeq && journaledSeq <= seq, 'a snapshot covers what was written, and no earlier snapshot is ahead of it');
    return { after: this.#removedThrough, through: Math.min(journaledSeq, this.#removedThrough + removalsMax) };
  }

  /**
   * A snapshot at `seq` is written, covering the entries through `journaledSeq`, with the parts
   * it added and those it no longer references, and the entries through `removedThrough` removed.
   */
  snapshotWritten(seq: number, journaledSeq: number, removedThrough: number, parts: { newParts: Iterable<readonly [string, unknown]>; staleParts: Iterable<string> }): void {
    this.#snapshotSeq = seq;
    this.#removedThrough = removedThrough;
    this.#coveredThrough = journaledSeq;
    for (const [part] of parts.newParts) this.#storedParts.add(part);
    for (const part of parts.staleParts) this.#storedParts.delete(part);
  }
}
