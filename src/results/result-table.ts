// One iteration's results as the answers need them in memory: a few typed columns per row (its
// datapoint, attempt, score, pass, status and creation time, and each numeric dimension), about
// 30 bytes a row plus 8 per dimension, never the row objects themselves. The rows are in
// the store (ResultStore); summaries, comparisons and the choice of a list's page read these
// columns, and only the rows a page shows are read from the store.
import type { Roster } from '../domain/results.ts';
import { nextVersion } from '../query/versions.ts';
import type { StoredRow } from './stored-row.ts';

const passedUnknown = 0;
const passedFalse = 1;
const passedTrue = 2;
const passMask = 3;
const errorFlag = 4;
const outputFlag = 8;
const noSlot = -1;

/**
 * An iteration's results as views read them in bulk (summaries, comparisons): plain data, so
 * that the same pure functions read it in place or on a worker thread (which gets a copy). A
 * datapoint's rows are the chain head[index], next[slot], ... (-1 ends it), in attempt order.
 */
export interface ResultColumns {
  /** Datapoints of the version (head's length). */
  readonly datapoints: number;
  readonly rows: number;
  readonly errorRows: number;
  readonly head: Int32Array;
  readonly next: Int32Array;
  /** NaN where a row has no score. */
  readonly score: Float64Array;
  readonly flags: Uint8Array;
  /** Each numeric dimension's column (NaN where a row has none). */
  readonly dimensions: Readonly<Record<string, Float64Array>>;
}

/** Flag bits of ResultColumns.flags. */
export const rowFlags = { passMask, passedTrue, passedFalse, error: errorFlag } as const;

/** What a row contributes to the columns: its stored form's fields that answers read from memory. */
export type TableRow = Pick<StoredRow, 'score' | 'passed' | 'status' | 'dimension_scores' | 'created_ms' | 'has_output'>;

export class ResultTable {
  /** Changes whenever a row is put (query/versions.ts): answers made from the table are kept until then. */
  version = nextVersion();
  /** Rows held. */
  rows = 0;
  /** Rows whose status is `error`. */
  errorRows = 0;
  private capacity = 0;
  private datapoint = new Int32Array(0);
  private attemptOf = new Int32Array(0);
  private scoreOf = new Float64Array(0);
  private flags = new Uint8Array(0);
  /** The next slot of the same datapoint, by attempt (-1: none). */
  private next = new Int32Array(0);
  /** Each row's created_at in ms. */
  private createdMs = new Float64Array(0);
  /** The last created_at written out: a batch's rows share one. */
  private lastCreated = { ms: NaN, text: '' };
  /** Per datapoint index, its first slot (lowest attempt), -1 when it has no row. */
  private readonly head: Int32Array;
  /** Each numeric dimension's value per slot (NaN where the row has none), while some row has it. */
  private readonly dimensionColumns = new Map<string, Float64Array>();
  /** How many rows have each dimension: a column no row uses any more is dropped. */
  private readonly dimensionRows = new Map<string, number>();

  constructor(readonly roster: Roster) {
    this.head = new Int32Array(roster.ids.length).fill(noSlot);
  }

  get datapoints(): number {
    return this.head.length;
  }

  /** The names of the numeric dimensions any row has, sorted. */
  dimensionNames(): string[] {
    return [...this.dimensionColumns.keys()].sort();
  }

  /** The slot of the row at (index, attempt), or -1. */
  slotOf(index: number, attempt: number): number {
    for (let slot = this.head[index]!; slot !== noSlot; slot = this.next[slot]!) {
      const at = this.attemptOf[slot]!;
      if (at === attempt) return slot;
      if (at > attempt) break;
    }
    return noSlot;
  }

  /** Puts the row at (index, attempt), replacing the one there. */
  put(index: number, attempt: number, row: TableRow): void {
    let slot = this.slotOf(index, attempt);
    if (slot === noSlot) {
      slot = this.append(index, attempt);
    } else if (this.flags[slot]! & errorFlag) {
      this.errorRows--;
    }
    this.scoreOf[slot] = row.score ?? NaN;
    const pass = row.passed === null ? passedUnknown : row.passed ? passedTrue : passedFalse;
    this.flags[slot] = pass | (row.status === 'error' ? errorFlag : 0) | (row.has_output ? outputFlag : 0);
    if (row.status === 'error') this.errorRows++;
    this.createdMs[slot] = row.created_ms;
    this.clearDimensions(slot);
    const dimensions = row.dimension_scores;
    if (dimensions) {
      for (const name in dimensions) {
        this.dimensionColumn(name)[slot] = dimensions[name]!;
        this.dimensionRows.set(name, this.dimensionRows.get(name)! + 1);
      }
    }
    this.version = nextVersion();
  }

  // ---- reading a slot ----

  indexAt(slot: number): number {
    return this.datapoint[slot]!;
  }

  attemptAt(slot: number): number {
    return this.attemptOf[slot]!;
  }

  /** The score, or null when the row has none. */
  scoreAt(slot: number): number | null {
    const score = this.scoreOf[slot]!;
    return Number.isNaN(score) ? null : score;
  }

  passedAt(slot: number): boolean | null {
    const pass = this.flags[slot]! & passMask;
    return pass === passedUnknown ? null : pass === passedTrue;
  }

  isError(slot: number): boolean {
    return (this.flags[slot]! & errorFlag) !== 0;
  }

  /** A numeric dimension's value at a slot, or NaN. */
  dimensionAt(name: string, slot: number): number {
    return this.dimensionColumns.get(name)?.[slot] ?? NaN;
  }

  createdAt(slot: number): string {
    const ms = this.createdMs[slot]!;
    if (ms !== this.lastCreated.ms) this.lastCreated = { ms, text: new Date(ms).toISOString() };
    return this.lastCreated.text;
  }

  /** Whether the row keeps an output (one it is replaced by without must remove it). */
  hasOutput(slot: number): boolean {
    return (this.flags[slot]! & outputFlag) !== 0;
  }

  /**
   * The columns as they are now, for views that read every row: views of the table's own arrays
   * (no copy), valid until the table next changes (it replaces its arrays as it grows).
   */
  columns(): ResultColumns {
    const rows = this.rows;
    const dimensions: Record<string, Float64Array> = {};
    for (const name of this.dimensionNames()) dimensions[name] = this.dimensionColumns.get(name)!.subarray(0, rows);
    return {
      datapoints: this.head.length,
      rows,
      errorRows: this.errorRows,
      head: this.head,
      next: this.next.subarray(0, rows),
      score: this.scoreOf.subarray(0, rows),
      flags: this.flags.subarray(0, rows),
      dimensions,
    };
  }

  /** The slots of one datapoint, by attempt. */
  *slotsOf(index: number): Generator<number> {
    for (let slot = this.head[index]!; slot !== noSlot; slot = this.next[slot]!) yield slot;
  }

  /** Every slot in datapoint order, then attempt (backwards when `reverse`). */
  *slotsInOrder(reverse = false): Generator<number> {
    const count = this.head.length;
    for (let i = 0; i < count; i++) {
      const index = reverse ? count - 1 - i : i;
      if (this.head[index] === noSlot) continue;
      if (!reverse) {
        yield* this.slotsOf(index);
        continue;
      }
      const slots = [...this.slotsOf(index)];
      for (let j = slots.length - 1; j >= 0; j--) yield slots[j]!;
    }
  }

  /** A new slot for (index, attempt), linked into its datapoint's chain in attempt order. */
  private append(index: number, attempt: number): number {
    if (this.rows === this.capacity) this.grow();
    const slot = this.rows++;
    this.datapoint[slot] = index;
    this.attemptOf[slot] = attempt;
    let previous = noSlot;
    let current = this.head[index]!;
    while (current !== noSlot && this.attemptOf[current]! < attempt) {
      previous = current;
      current = this.next[current]!;
    }
    this.next[slot] = current;
    if (previous === noSlot) this.head[index] = slot;
    else this.next[previous] = slot;
    return slot;
  }

  private grow(): void {
    const capacity = Math.max(64, this.capacity * 2);
    this.datapoint = grown(this.datapoint, capacity);
    this.attemptOf = grown(this.attemptOf, capacity);
    this.scoreOf = grown(this.scoreOf, capacity);
    this.flags = grown(this.flags, capacity);
    this.next = grown(this.next, capacity);
    this.createdMs = grown(this.createdMs, capacity);
    for (const [name, column] of this.dimensionColumns) this.dimensionColumns.set(name, grown(column, capacity, NaN));
    this.capacity = capacity;
  }

  /** The slot's row has no dimension any more (it is being replaced). */
  private clearDimensions(slot: number): void {
    for (const [name, column] of this.dimensionColumns) {
      if (Number.isNaN(column[slot]!)) continue;
      column[slot] = NaN;
      const rows = this.dimensionRows.get(name)! - 1;
      if (rows > 0) this.dimensionRows.set(name, rows);
      else {
        this.dimensionColumns.delete(name);
        this.dimensionRows.delete(name);
      }
    }
  }

  private dimensionColumn(name: string): Float64Array {
    let column = this.dimensionColumns.get(name);
    if (!column) {
      this.dimensionColumns.set(name, (column = new Float64Array(this.capacity).fill(NaN)));
      this.dimensionRows.set(name, 0);
    }
    return column;
  }
}

type TypedArray = Int32Array | Float64Array | Uint8Array;

function grown<T extends TypedArray>(array: T, length: number, fill?: number): T {
  const bigger = new (array.constructor as new (length: number) => T)(length);
  bigger.set(array);
  if (fill !== undefined) bigger.fill(fill, array.length);
  return bigger;
}
