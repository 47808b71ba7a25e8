// Where results live: their own LMDB databases (MemoryKv in memory mode), written once each and
// replaced in place, never inside a job's snapshot:
//
//   results          [iteration, index, attempt] -> StoredRow: the row less what its key and version say,
//                                                  in its own layout (stored-row.ts; older rows msgpack)
//   result-outputs   [iteration, index, attempt] -> the row's `output` as JSON text (absent when null)
//   result-pins      [iteration]                 -> the dataset id its results are of
//   result-rosters   [dataset]                   -> Roster: the version's datapoint ids and orders
//
// `index` is the datapoint's position in its version, so a range over one iteration reads its
// rows in datapoint order, then attempt. A roster is written with the first pin to its version and
// removed with the last: results stay readable after the dataset version itself is deleted.
//
// In memory each live iteration's rows are a ResultTable of compact columns, built once when the
// store opens (a scan of every row) and changed only by committed writes (`applyCommitted`). The
// ops of each change are decided by ResultWriter, one commit at a time.
import { StoreCorruptError } from '../store/journal.ts';
import { prefixEnd, type Key, type Kv, type KvDb, type KvOp, type ValueCodec } from '../store/kv.ts';
import { resultIdOf, type DecidedRow, type ResultRecord, type Roster } from '../domain/results.ts';
import { ResultTable } from './result-table.ts';
import { storedRowCodec, type StoredRow } from './stored-row.ts';

/** A row as lists show it: the whole record but its output. */
export type ListedRow = Omit<ResultRecord, 'output'>;

export class ResultStore {
  readonly rows: KvDb;
  readonly outputs: KvDb;
  readonly pins: KvDb;
  readonly rosterDb: KvDb;
  /** Committed rows of each live iteration that has results. */
  private readonly tables = new Map<string, ResultTable>();
  /** Every pin stored or decided (iteration -> dataset), live or waiting to be purged. */
  private readonly storedPins = new Map<string, string>();
  /** Every roster stored or decided, by dataset (reads reuse it rather than build it again). */
  private readonly rosters = new Map<string, Roster>();
  private readonly indexes = new WeakMap<Roster, Map<string, number>>();

  constructor(readonly kv: Kv) {
    this.rows = kv.db('results', storedRowCodec as ValueCodec);
    this.outputs = kv.db('result-outputs');
    this.pins = kv.db('result-pins');
    this.rosterDb = kv.db('result-rosters');
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
      this.storedPins.set(iteration, value);
      if (isLive(iteration, roster)) this.tables.set(iteration, new ResultTable(roster));
      else purge.add(iteration);
    }
    for (const { key, value } of this.rows.range<StoredRow>({})) {
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

  /** Every iteration whose results are stored or decided, with its version (live or not). */
  *pinned(): Generator<[iteration: string, roster: Roster]> {
    for (const [iteration, dataset] of this.storedPins) yield [iteration, this.rosters.get(dataset)!];
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

  // ---- ops (decided by ResultWriter, one commit at a time) ----
  //
  // A decision runs when its transaction begins, where every earlier write is applied: whether a
  // version's roster is stored is read from the store itself. Which iterations name a version is
  // noted here as pins are decided, ahead of their commits, so that a purge never removes a
  // roster a pin in flight names; a failed commit leaves its pin noted (a roster kept longer,
  // at worst, until the next start reads the pins again).

  /** Ops pinning an iteration to a roster's version, storing the roster unless it is. */
  pinOps(iteration: string, roster: Roster): KvOp[] {
    const ops: KvOp[] = [{ db: this.pins, key: [iteration], value: roster.dataset }];
    if (!this.rosterDb.has([roster.dataset])) ops.push({ db: this.rosterDb, key: [roster.dataset], value: roster });
    this.storedPins.set(iteration, roster.dataset);
    this.rosters.set(roster.dataset, roster);
    return ops;
  }

  /**
   * Ops putting one row, its output apart: a null output is not kept, and removes the one a row
   * it replaces kept. Returns the row as stored (what its table takes once it is durable).
   */
  rowOps(iteration: string, decided: DecidedRow, nowMs: number, replacesOutput: boolean, ops: KvOp[]): StoredRow {
    const { row } = decided;
    const key = [iteration, row.index, row.attempt];
    const stored = storedRowOf(decided, nowMs);
    ops.push({ db: this.rows, key, value: stored });
    if (row.fields.output !== 'null') ops.push({ db: this.outputs, key, value: row.fields.output });
    else if (replacesOutput) ops.push({ db: this.outputs, key });
    return stored;
  }

  /**
   * Ops removing up to `limit` of an iteration's rows; once none are left, its pin too, and its
   * roster when no other pin names it. `done` once nothing of the iteration is left.
   */
  purgeOps(iteration: string, limit: number): { ops: KvOp[]; removed: number; done: boolean } {
    const ops: KvOp[] = [];
    let removed = 0;
    for (const key of this.rows.keys({ start: [iteration], end: prefixEnd([iteration]), limit })) {
      ops.push({ db: this.rows, key }, { db: this.outputs, key });
      removed++;
    }
    if (removed === limit) return { ops, removed, done: false };
    const dataset = this.storedPins.get(iteration);
    if (dataset !== undefined) {
      ops.push({ db: this.pins, key: [iteration] });
      this.storedPins.delete(iteration);
      if (![...this.storedPins.values()].includes(dataset)) {
        ops.push({ db: this.rosterDb, key: [dataset] });
        this.rosters.delete(dataset);
      }
    }
    return { ops, removed, done: true };
  }

  // ---- committed changes ----

  /** A committed write: its rows into the iteration's table (made with its first rows). */
  applyCommitted(iteration: string, roster: Roster, rows: readonly { index: number; attempt: number; stored: StoredRow }[]): void {
    let table = this.tables.get(iteration);
    if (!table) this.tables.set(iteration, (table = new ResultTable(roster)));
    for (const { index, attempt, stored } of rows) table.put(index, attempt, stored);
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
}

function listedRow(iteration: string, row: StoredRow, roster: Roster, index: number, attempt: number): ListedRow {
  return {
    id: resultIdOf(iteration, index, attempt),
    datapoint: roster.ids[index]!,
    datapoint_order: roster.orders[index]!,
    attempt,
    score: row.score,
    passed: row.passed,
    dimension_scores: row.dimension_scores,
    status: row.status,
    error: row.error,
    trace_id: row.trace_id,
    span_id: row.span_id,
    latency_ms: row.latency_ms,
    cost: row.cost,
    created_at: new Date(row.created_ms).toISOString(),
    updated_at: new Date(row.updated_ms).toISOString(),
  };
}

/** Epoch ms of an ISO time; rows created by one batch share theirs, so the last one is kept. */
let lastParsed = { text: '', ms: 0 };
function epochMs(text: string): number {
  if (text !== lastParsed.text) lastParsed = { text, ms: Date.parse(text) };
  return lastParsed.ms;
}

/** A row as stored, in one shape (msgpackr encodes it as one record structure); `nowMs` is its updated_at. */
function storedRowOf(decided: DecidedRow, nowMs: number): StoredRow {
  const record = decided.row.fields;
  return {
    score: record.score,
    passed: record.passed,
    dimension_scores: record.dimension_scores,
    status: record.status,
    error: record.error,
    trace_id: record.trace_id,
    span_id: record.span_id,
    latency_ms: record.latency_ms,
    cost: record.cost,
    created_ms: decided.replaced ? epochMs(decided.created_at) : nowMs,
    updated_ms: nowMs,
    has_output: record.output !== 'null',
  };
}
