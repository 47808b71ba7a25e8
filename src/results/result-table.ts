// One iteration's committed results as the answers need them in memory: per row its datapoint,
// attempt and the flag bits of the fields held here, and a column per stored field the table of src/domain/result-row.ts marks
// `column` (score and created_at as numbers, each numeric dimension of dimension_scores), about
// 30 bytes a row plus 8 per dimension, never the row objects themselves. The rows are in the store
// (ResultStore); summaries, comparisons and the choice of a list's page read these columns, and
// only the rows a page shows are read from the store.
import assert from 'node:assert/strict';
import type { Roster } from '../domain/result-batch.ts';
import { fieldBits, flagWordOf, rowFlags, storedFields, type StoredRow } from '../domain/result-row.ts';
import { nextVersion } from '../query/versions.ts';
import type { ResultColumns } from '../views/result-columns.ts';

const noSlot = -1;

/** The flag bits of the fields kept in memory (in the places the stored word has them): 16 bits hold them. */
const columnBits = fieldBits.filter(({ field }) => field.column);
if (columnBits.some(({ shift, mask }) => mask << shift >= 2 ** 16)) throw new Error("a column field's flag bits lie past bit 15: the tables' flags column needs a wider type");
/** The stored fields kept as a number column (NaN where a row has none). */
const numberColumns = storedFields.filter((field) => field.column && (field.kind === 'number' || field.kind === 'time')).map((field) => field.name);
/** The stored field kept as one column per name it holds. */
const dimensionsField = storedFields.find((field) => field.column && field.kind === 'numbers')!.name;

type NumberColumn = (typeof numberColumns)[number];
/** Each number column's place in the table's list of them. */
const numberColumnAt = new Map(numberColumns.map((name, i) => [name, i]));

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
  private flags = new Uint16Array(0);
  /** The next slot of the same datapoint, by attempt (-1: none). */
  private next = new Int32Array(0);
  /** The number columns, in numberColumns' order. */
  private values: Float64Array[] = numberColumns.map(() => new Float64Array(0));
  /** Per datapoint index, its first slot (lowest attempt), -1 when it has no row. */
  private readonly head: Int32Array;
  /** Each numeric dimension's value per slot (NaN where the row has none), while some row has it. */
  private readonly dimensionColumns = new Map<string, Float64Array>();
  /** How many rows have each dimension: a column no row uses any more is dropped. */
  private readonly dimensionRows = new Map<string, number>();

  constructor(readonly roster: Roster, private readonly attemptsMax: number) {
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
  put(index: number, attempt: number, row: StoredRow): void {
    assert.ok(Number.isInteger(index) && index >= 0 && index < this.head.length, 'a row names a datapoint of its version');
    assert.ok(Number.isInteger(attempt) && attempt >= 0 && attempt < this.attemptsMax, 'a row names an attempt within the bound');
    let slot = this.slotOf(index, attempt);
    if (slot === noSlot) slot = this.append(index, attempt);
    else if (this.flags[slot]! & rowFlags.error) this.errorRows--;
    const word = flagWordOf(row, columnBits);
    this.flags[slot] = word;
    if (word & rowFlags.error) this.errorRows++;
    for (let i = 0; i < numberColumns.length; i++) this.values[i]![slot] = (row[numberColumns[i]! as NumberColumn] as number | null) ?? NaN;
    this.clearDimensions(slot);
    const dimensions = row[dimensionsField];
    if (dimensions) {
      for (const name in dimensions) {
        this.dimensionColumn(name)[slot] = dimensions[name]!;
        this.dimensionRows.set(name, this.dimensionRows.get(name)! + 1);
      }
    }
    assert.ok(this.errorRows >= 0 && this.errorRows <= this.rows, 'error rows are counted among the rows');
    this.version = nextVersion();
  }

  /** Rows of an attempt at or above `attempt` (those a run of `attempt` attempts would not replace). */
  rowsFromAttempt(attempt: number): number {
    let count = 0;
    for (let slot = 0; slot < this.rows; slot++) if (this.attemptOf[slot]! >= attempt) count++;
    return count;
  }

  // ---- reading a slot ----

  indexAt(slot: number): number {
    return this.datapoint[slot]!;
  }

  attemptAt(slot: number): number {
    return this.attemptOf[slot]!;
  }

  /** A number column's value, or null when the row has none. */
  valueAt(name: NumberColumn, slot: number): number | null {
    const value = this.values[numberColumnAt.get(name)!]![slot]!;
    return Number.isNaN(value) ? null : value;
  }

  passedAt(slot: number): boolean | null {
    const word = this.flags[slot]!;
    return word & rowFlags.passedKnown ? (word & rowFlags.passedTrue) !== 0 : null;
  }

  isError(slot: number): boolean {
    return (this.flags[slot]! & rowFlags.error) !== 0;
  }

  /** Whether the row keeps an output (one it is replaced by without must remove it). */
  hasOutput(slot: number): boolean {
    return (this.flags[slot]! & rowFlags.hasOutput) !== 0;
  }

  /**
   * The columns as they are now, for views that read every row: views of the table's own arrays
   * (no copy), valid until the table next changes (it replaces its arrays as it grows).
   */
  columns(): ResultColumns {
    const rows = this.rows;
    // No prototype: a dimension may be named anything ("__proto__", "constructor") and stay a dimension.
    const dimensions: Record<string, Float64Array> = Object.create(null);
    for (const name of this.dimensionNames()) dimensions[name] = this.dimensionColumns.get(name)!.subarray(0, rows);
    return {
      datapoints: this.head.length,
      rows,
      errorRows: this.errorRows,
      head: this.head,
      next: this.next.subarray(0, rows),
      score: this.values[numberColumnAt.get('score')!]!.subarray(0, rows),
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
    assert.ok(this.rows <= this.head.length * this.attemptsMax, 'a table holds at most one row per datapoint and attempt');
    return slot;
  }

  private grow(): void {
    const capacity = Math.max(64, this.capacity * 2);
    this.datapoint = grown(this.datapoint, capacity);
    this.attemptOf = grown(this.attemptOf, capacity);
    this.flags = grown(this.flags, capacity);
    this.next = grown(this.next, capacity);
    this.values = this.values.map((column) => grown(column, capacity, NaN));
    for (const [name, column] of this.dimensionColumns) this.dimensionColumns.set(name, grown(column, capacity, NaN));
    this.capacity = capacity;
  }

  /** The slot's row has no dimension any more (it is being replaced). */
  private clearDimensions(slot: number): void {
    for (const [name, column] of this.dimensionColumns) {
      if (Number.isNaN(column[slot]!)) continue;
      column[slot] = NaN;
      const rows = this.dimensionRows.get(name)! - 1;
      assert.ok(rows >= 0, "a dimension's rows are never negative");
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

type TypedArray = Int32Array | Uint16Array | Float64Array;

function grown<T extends TypedArray>(array: T, length: number, fill?: number): T {
  const bigger = new (array.constructor as new (length: number) => T)(length);
  bigger.set(array);
  if (fill !== undefined) bigger.fill(fill, array.length);
  return bigger;
}
