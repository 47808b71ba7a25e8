// Where results live: their own LMDB databases (MemoryKv in memory mode), written once each and
// replaced in place, never inside a job's snapshot:
//
//   results          [iteration, index, attempt] -> StoredRow: the row less what its key and version say,
//                                                  in its own layout (stored-row.ts)
//   result-outputs   [iteration, index, attempt] -> the row's `output` as JSON text (absent when null)
//   result-pins      [iteration]                 -> the dataset id its results are of
//   result-rosters   [dataset]                   -> Roster: the version's datapoint ids and orders
//
// `index` is the datapoint's position in its version, so a range over one iteration reads its
// rows in datapoint order, then attempt. A roster is written with the first pin to its version and
// removed with the last: results stay readable after the dataset version itself is deleted.
//
// In memory the store holds what is committed and nothing else: each live iteration's rows as a
// ResultTable of compact columns (built once when the store opens, from a scan of every row), the
// pins and the rosters. The op builders below read it and the databases, and change nothing; the
// writer (result-writer.ts) decides with them, and applies what a commit did once it is durable.
import assert from 'node:assert/strict';
import type { Roster } from '../domain/result-batch.ts';
import { keyFields, objectMaker, resultIdOf, storedFields, type ListedRow, type ResultRecord, type StoredRow } from '../domain/result-row.ts';
import { StoreCorruptError } from '../store/journal.ts';
import { prefixEnd, type Key, type Kv, type KvDb, type KvOp, type ValueCodec } from '../store/kv.ts';
import { ResultTable } from './result-table.ts';
import { storedRowCodec } from './stored-row.ts';

export const resultDbNames = { rows: 'results', outputs: 'result-outputs', pins: 'result-pins', rosters: 'result-rosters' } as const;

export interface ResultStoreOptions {
  attemptsPerDatapointMax: number;
  /** Read every row back as it is stored and assert it is the same (tests, debugging). */
  checkCodec?: boolean;
}

/** A row put by a commit, as its table takes it once the commit is durable. */
export interface PutRow {
  readonly index: number;
  readonly attempt: number;
  readonly stored: StoredRow;
}

export class ResultStore {
  readonly rows: KvDb;
  readonly outputs: KvDb;
  readonly pins: KvDb;
  readonly rosterDb: KvDb;
  /** Committed rows of each live iteration that has results. */
  private readonly tables = new Map<string, ResultTable>();
  /** Every committed pin (iteration -> dataset), live or waiting to be purged. */
  private readonly pinned = new Map<string, string>();
  /** Every committed roster, by dataset (reads reuse it rather than build it again). */
  private readonly rosters = new Map<string, Roster>();
  private readonly indexes = new WeakMap<Roster, Map<string, number>>();

  constructor(readonly kv: Kv, private readonly options: ResultStoreOptions) {
    this.rows = kv.db(resultDbNames.rows, storedRowCodec({ checked: options.checkCodec }) as ValueCodec);
    this.outputs = kv.db(resultDbNames.outputs);
    this.pins = kv.db(resultDbNames.pins);
    this.rosterDb = kv.db(resultDbNames.rosters);
  }

  /**
   * Reads what is stored: rosters, pins, and every row of a live iteration into its table.
   * Returns the iterations whose results are to be purged (gone while the service was down, or
   * whose purge did not finish).
   */
  load(isLive: (iteration: string, roster: Roster) => boolean): string[] {
    for (const { key, value } of this.rosterDb.range<Roster>({})) this.rosters.set(key[0] as string, value);
    const purge = new Set<string>();
    for (const { key, value } of this.pins.range<string>({})) {
      const iteration = key[0] as string;
      const roster = this.rosters.get(value);
      if (!roster) throw new StoreCorruptError(`results of iteration ${iteration} are pinned to dataset ${value}, whose roster is not stored`);
      this.pinned.set(iteration, value);
      if (isLive(iteration, roster)) this.tables.set(iteration, this.newTable(roster));
      else purge.add(iteration);
    }
    // Only the columns are read: the rest of a row is read from the store when it is asked for.
    const columns = this.kv.db(resultDbNames.rows, storedRowCodec({ columnsOnly: true }) as ValueCodec);
    for (const { key, value } of columns.range<StoredRow>({})) {
      const iteration = key[0] as string;
      const table = this.tables.get(iteration);
      if (table) table.put(key[1] as number, key[2] as number, value);
      else purge.add(iteration);
    }
    return [...purge];
  }

  /** The committed results of a live iteration, if it has any. */
  table(iteration: string): ResultTable | undefined {
    return this.tables.get(iteration);
  }

  /** Every iteration's table. */
  allTables(): IterableIterator<ResultTable> {
    return this.tables.values();
  }

  /** Every iteration whose results are stored, with its version (live or not). */
  *pinnedIterations(): Generator<[iteration: string, roster: Roster]> {
    for (const [iteration, dataset] of this.pinned) yield [iteration, this.rosters.get(dataset)!];
  }

  /** The dataset an iteration's stored results are of. */
  pinOf(iteration: string): string | undefined {
    return this.pinned.get(iteration);
  }

  /** The iterations whose stored results are of `dataset`. */
  *pinnedTo(dataset: string): Generator<string> {
    for (const [iteration, pinned] of this.pinned) if (pinned === dataset) yield iteration;
  }

  roster(dataset: string): Roster | undefined {
    return this.rosters.get(dataset);
  }

  /** A roster's datapoint ids to their index (built on first use, kept as long as the roster). */
  indexOfId(roster: Roster): (id: string) => number | undefined {
    let index = this.indexes.get(roster);
    if (!index) {
      index = new Map(roster.ids.map((id, i) => [id, i]));
      this.indexes.set(roster, index);
    }
    const found = index;
    return (id) => found.get(id);
  }

  // ---- ops (made when a commit's transaction begins: the databases hold every earlier commit) ----

  /**
   * Ops pinning an iteration to a roster's version, storing the roster unless it is stored or the
   * same commit stores it (`storing`, the commit's own: a run pins all its iterations at once, and a
   * roster of 20,000 datapoints is 2 MB).
   */
  pinOps(iteration: string, roster: Roster, storing: Set<string>): KvOp[] {
    const ops: KvOp[] = [{ db: this.pins, key: [iteration], value: roster.dataset }];
    if (!storing.has(roster.dataset) && !this.rosterDb.has([roster.dataset])) {
      storing.add(roster.dataset);
      ops.push({ db: this.rosterDb, key: [roster.dataset], value: roster });
    }
    return ops;
  }

  /**
   * Ops putting one row, its output apart: a null output ('null') is not kept, and removes the
   * one a row it replaces kept.
   */
  rowOps(iteration: string, row: PutRow, output: string, replacesOutput: boolean, ops: KvOp[]): void {
    const key = [iteration, row.index, row.attempt];
    ops.push({ db: this.rows, key, value: row.stored });
    if (output !== 'null') ops.push({ db: this.outputs, key, value: output });
    else if (replacesOutput) ops.push({ db: this.outputs, key });
  }

  /** Ops removing up to `limit` of an iteration's rows (with their outputs). */
  rowRemovalOps(iteration: string, limit: number): { ops: KvOp[]; removed: number } {
    const ops: KvOp[] = [];
    let removed = 0;
    for (const key of this.rows.keys({ start: [iteration], end: prefixEnd([iteration]), limit })) {
      ops.push({ db: this.rows, key }, { db: this.outputs, key });
      removed++;
    }
    return { ops, removed };
  }

  /** Ops removing an iteration's pin, and its version's roster when `lastPin`. */
  unpinOps(iteration: string, dataset: string, lastPin: boolean): KvOp[] {
    const ops: KvOp[] = [{ db: this.pins, key: [iteration] }];
    if (lastPin) ops.push({ db: this.rosterDb, key: [dataset] });
    return ops;
  }

  // ---- committed changes (applied once durable) ----

  /**
   * A committed write: its pin (the first makes it), and its rows into the iteration's table
   * unless the iteration went meanwhile (`live` false: they are purged, its table is not made).
   */
  applyWritten(iteration: string, roster: Roster, rows: readonly PutRow[], live: boolean): void {
    const pinned = this.pinned.get(iteration);
    assert.ok(pinned === undefined || pinned === roster.dataset, "an iteration's results stay of one version");
    this.pinned.set(iteration, roster.dataset);
    if (!this.rosters.has(roster.dataset)) this.rosters.set(roster.dataset, roster);
    if (!live) return;
    let table = this.tables.get(iteration);
    if (!table) this.tables.set(iteration, (table = this.newTable(roster)));
    for (const { index, attempt, stored } of rows) table.put(index, attempt, stored);
  }

  /** A committed removal of an iteration's pin (and of its roster when it was the last pin). */
  applyUnpinned(iteration: string, dataset: string, lastPin: boolean): void {
    assert.equal(this.pinned.get(iteration), dataset, 'an unpinned iteration was pinned to its version');
    this.pinned.delete(iteration);
    if (!lastPin) return;
    assert.ok(![...this.pinned.values()].includes(dataset), 'a roster is removed with its last pin');
    this.rosters.delete(dataset);
  }

  /** The iteration's results are no longer answered (they are being purged). */
  forget(iteration: string): void {
    this.tables.delete(iteration);
  }

  // ---- reads ----

  /** One row with its output, as its detail shows it. */
  row(iteration: string, roster: Roster, index: number, attempt: number): ResultRecord | undefined {
    const key: Key = [iteration, index, attempt];
    const listed = this.listedRow(iteration, roster, index, attempt);
    if (!listed) return undefined;
    return { ...listed, output: this.outputs.get<string>(key) ?? 'null' };
  }

  /** One row without its output, as lists show it. */
  listedRow(iteration: string, roster: Roster, index: number, attempt: number): ListedRow | undefined {
    const row = this.rows.get<StoredRow>([iteration, index, attempt]);
    return row && listedRow(iteration, row, roster, index, attempt);
  }

  /** The rows of one datapoint, by attempt. */
  *rowsOfDatapoint(iteration: string, roster: Roster, index: number): Generator<ListedRow> {
    const prefix = [iteration, index];
    for (const { key, value } of this.rows.range<StoredRow>({ start: prefix, end: prefixEnd(prefix) })) {
      yield listedRow(iteration, value, roster, index, key[2] as number);
    }
  }

  private newTable(roster: Roster): ResultTable {
    return new ResultTable(roster, this.options.attemptsPerDatapointMax);
  }
}

/** The stored fields on the wire, with their kinds (times are written out as ISO 8601). */
const wireFields = storedFields.filter((field) => field.wire);
/** How a listed row is made: its key's fields, then its stored fields on the wire (see objectMaker). */
const listedFromValues = objectMaker<ListedRow>([...keyFields, ...wireFields.map((field) => field.name)]);

/** A stored row as lists show it: its key's fields, then every stored field on the wire. */
function listedRow(iteration: string, row: StoredRow, roster: Roster, index: number, attempt: number): ListedRow {
  const values: unknown[] = [resultIdOf(iteration, index, attempt), iteration, roster.ids[index]!, roster.orders[index]!, attempt];
  for (const field of wireFields) {
    const value = row[field.name as keyof StoredRow];
    values.push(field.kind === 'time' ? new Date(value as number).toISOString() : value);
  }
  return listedFromValues(values);
}
