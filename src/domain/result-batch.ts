// A batch of results (rows as result-row.ts describes them, one per iteration, datapoint and
// attempt): its rows resolved against the dataset version they name, and what writing them
// decides against what the iteration already holds. Pure: ids and time come in with the batch;
// nothing is read from a store.
import type { Dataset, Uuid } from './records.ts';
import { invalid, invalidPk, type FieldErrors } from './rejection.ts';
import { fieldCopier, storedFields, storedRowOf, writtenDefault, type ResultInput, type StoredRow, type WrittenFields } from './result-row.ts';

/**
 * The datapoints of one dataset version as results name them: a datapoint's index is its
 * position in the version (datapoints are kept sorted by order, then as posted), so indexes
 * sort as `datapoint_order` does. Kept apart from the dataset, which may be deleted while
 * results of it are still read.
 */
export interface Roster {
  readonly dataset: Uuid;
  readonly agent: Uuid;
  readonly version: number;
  readonly ids: readonly Uuid[];
  /** Ascending. */
  readonly orders: readonly number[];
}

export function rosterOf(dataset: Dataset): Roster {
  return {
    dataset: dataset.id,
    agent: dataset.agent,
    version: dataset.version,
    ids: dataset.datapoints.map((datapoint) => datapoint.id),
    orders: dataset.datapoints.map((datapoint) => datapoint.order),
  };
}

/** A row resolved against its version: the datapoint's index, every written field (with its default) and the output as JSON text. */
export interface ResolvedRow {
  readonly index: number;
  readonly attempt: number;
  readonly fields: WrittenFields;
  /** 'null' when the row has none (it is not kept). */
  readonly output: string;
}

/** The stored fields a client or a worker writes, and how a row of them is made (see fieldCopier). */
const writtenFields = storedFields.filter((field) => field.writable);
const copyWritten = fieldCopier<WrittenFields>(
  writtenFields.map((field) => field.name),
  writtenFields.map((field) => writtenDefault(field.kind)),
);
/** The written ids kept in lower case. */
const idFields = writtenFields.filter((field) => field.kind === 'hexId').map((field) => field.name);

export interface ResultLimits {
  attemptsPerDatapointMax: number;
  resultOutputCharsMax: number;
  resultDimensionsMax: number;
}

/** How a roster finds a datapoint by id (a Map built once per roster by the caller). */
export type IndexOfId = (id: Uuid) => number | undefined;

/**
 * Resolves every row against `roster`: the rows that resolve, and every row's errors in DRF's
 * nested shape ({} for a good row), or null when there are none. A row naming the same datapoint
 * and attempt as one before it in the batch is an error.
 */
export function resolveRows(
  roster: Roster,
  indexOfId: IndexOfId,
  inputs: readonly ResultInput[],
  limits: ResultLimits,
): { rows: ResolvedRow[]; errors: FieldErrors[] | null } {
  const rows: ResolvedRow[] = [];
  // Errors by the position of their row; the list with {} for every good row is made only if needed.
  const errorsAt = new Map<number, FieldErrors>();
  const seen = new Set<number>();
  inputs.forEach((input, position) => {
    const resolved = resolveRow(roster, indexOfId, input, limits);
    if ('errors' in resolved) {
      errorsAt.set(position, resolved.errors);
      return;
    }
    const key = resolved.row.index * limits.attemptsPerDatapointMax + resolved.row.attempt;
    if (seen.has(key)) {
      errorsAt.set(position, { non_field_errors: ['Another row of this batch has the same datapoint and attempt.'] });
      return;
    }
    seen.add(key);
    rows.push(resolved.row);
  });
  const errors = errorsAt.size === 0 ? null : inputs.map((_, position) => errorsAt.get(position) ?? {});
  return { rows, errors };
}

/** Every row resolved, or the batch refused with every row's errors: nothing is written of a refused batch. */
export function resolveAllRows(roster: Roster, indexOfId: IndexOfId, inputs: readonly ResultInput[], limits: ResultLimits): ResolvedRow[] {
  const { rows, errors } = resolveRows(roster, indexOfId, inputs, limits);
  if (errors) throw invalid({ results: errors });
  return rows;
}

function resolveRow(roster: Roster, indexOfId: IndexOfId, input: ResultInput, limits: ResultLimits): { row: ResolvedRow } | { errors: FieldErrors } {
  const errors: FieldErrors = {};
  const index = datapointIndex(roster, indexOfId, input, errors);
  const attempt = input.attempt ?? 0;
  if (attempt >= limits.attemptsPerDatapointMax) errors.attempt = [`Ensure this value is less than or equal to ${limits.attemptsPerDatapointMax - 1}.`];
  // datapointIndex's failures leave `index` undefined, with their errors.
  if (index === undefined) return { errors: { ...errors, ...resolveFields(input, limits).errors } };
  return resolveRowAt(index, attempt, input, limits, errors);
}

/**
 * A row whose datapoint and attempt are known (a run's task names them): its written fields and
 * output checked and resolved, or its errors (with any `earlier` ones).
 */
export function resolveRowAt(index: number, attempt: number, input: ResultInput, limits: ResultLimits, earlier: FieldErrors = {}): { row: ResolvedRow } | { errors: FieldErrors } {
  const { errors, output } = resolveFields(input, limits);
  for (const _ in { ...earlier, ...errors }) return { errors: { ...earlier, ...errors } };
  return { row: { index, attempt, fields: writtenOf(input), output } };
}

/** A row's own checks (its score, dimensions and output), and its output as JSON text. */
function resolveFields(input: ResultInput, limits: ResultLimits): { errors: FieldErrors; output: string } {
  const errors: FieldErrors = {};
  const status = input.status ?? 'ok';
  if ((input.score ?? null) === null && status === 'ok') {
    errors.score = [input.score === null ? 'This field may not be null.' : 'This field is required.'];
  }
  const dimensions = input.dimension_scores ?? null;
  if (dimensions && countKeys(dimensions) > limits.resultDimensionsMax) {
    errors.dimension_scores = [`Ensure this field has no more than ${limits.resultDimensionsMax} elements.`];
  } else if (dimensions && !Object.keys(dimensions).every(isWellFormed)) {
    errors.dimension_scores = [lonelySurrogate];
  }
  // Text is stored as UTF-8, which has no lone surrogate: one would come back changed.
  if (typeof input.error === 'string' && !isWellFormed(input.error)) errors.error = [lonelySurrogate];
  // Most rows send no output: 'null' without a call to JSON.stringify.
  const output = input.output === undefined || input.output === null ? 'null' : JSON.stringify(input.output);
  if (output.length > limits.resultOutputCharsMax) {
    errors.output = [`Ensure this value has at most ${limits.resultOutputCharsMax} characters as JSON (it has ${output.length}).`];
  }
  return { errors, output };
}

/** The written fields of a row: each as sent, else its default; ids in lower case. */
function writtenOf(input: ResultInput): WrittenFields {
  const fields = copyWritten(input) as Record<string, unknown>;
  for (const name of idFields) {
    const id = fields[name];
    if (typeof id === 'string') fields[name] = id.toLowerCase();
  }
  return fields as WrittenFields;
}

const lonelySurrogate = 'Enter valid text: it holds a lone surrogate (half of a UTF-16 pair), which cannot be stored.';

function isWellFormed(text: string): boolean {
  return (text as string & { isWellFormed(): boolean }).isWellFormed();
}

function countKeys(object: object): number {
  let count = 0;
  for (const _ in object) count++;
  return count;
}

/** The index of the datapoint a row names by `datapoint` or `datapoint_order` (both must agree). */
function datapointIndex(roster: Roster, indexOfId: IndexOfId, input: ResultInput, errors: FieldErrors): number | undefined {
  const id = input.datapoint ?? null;
  const order = input.datapoint_order ?? null;
  if (id === null && order === null) {
    errors.datapoint = ['This field is required.'];
    return undefined;
  }
  const byId = id === null ? undefined : indexOfId(id);
  if (id !== null && byId === undefined) {
    errors.datapoint = [invalidPk(id)];
    return undefined;
  }
  if (order === null) return byId;
  if (byId !== undefined) {
    if (roster.orders[byId] === order) return byId;
    errors.datapoint_order = [`Datapoint ${id} has order ${roster.orders[byId]}, not ${order}.`];
    return undefined;
  }
  const first = lowerBound(roster.orders, order);
  const count = countFrom(roster.orders, first, order);
  if (count === 1) return first;
  errors.datapoint_order = [
    count === 0
      ? `No datapoint has order ${order} in dataset version ${roster.version}.`
      : `${count} datapoints have order ${order} in dataset version ${roster.version}: name one by its id (datapoint).`,
  ];
  return undefined;
}

function lowerBound(sorted: readonly number[], value: number): number {
  let low = 0;
  let high = sorted.length;
  while (low < high) {
    const middle = (low + high) >>> 1;
    if (sorted[middle]! < value) low = middle + 1;
    else high = middle;
  }
  return low;
}

function countFrom(sorted: readonly number[], start: number, value: number): number {
  let end = start;
  while (end < sorted.length && sorted[end] === value) end++;
  return end - start;
}

/** What an iteration holds when a batch is decided: committed rows, and those decided before it. */
export interface IterationResultsView {
  /** The dataset version its results are of, if any. */
  readonly pinned: Roster | undefined;
  readonly rows: number;
  /** The names of the numeric dimensions its rows have. */
  readonly dimensions: ReadonlySet<string>;
  /** The creation time (epoch ms) of the row at (index, attempt), if there is one. */
  existing(index: number, attempt: number): { createdMs: number } | undefined;
}

export interface ResultsBatch {
  readonly roster: Roster;
  readonly rows: readonly ResolvedRow[];
  /** Epoch ms. */
  readonly nowMs: number;
}

export interface IterationLimits {
  resultsPerIterationMax: number;
  resultDimensionsPerIterationMax: number;
}

/** A row as decided: new (created now) or replacing the one there (its created_at kept). */
export interface DecidedRow {
  readonly row: ResolvedRow;
  /** Epoch ms. */
  readonly createdMs: number;
  readonly replaced: boolean;
}

export interface ResultsDecision {
  /** True when this batch pins the iteration to its version. */
  readonly pins: boolean;
  /** Every row, updated now. */
  readonly rows: readonly DecidedRow[];
  readonly created: number;
  readonly replaced: number;
  /** The iteration's rows once this batch is written. */
  readonly rowsAfter: number;
}

/**
 * What writing a batch decides: the first batch pins the iteration to its version and a later
 * one must be of the same version; a row already there is replaced (keeping its created_at; its
 * id is its key's), others are created, up to the iteration's bound.
 */
export function decideResults(view: IterationResultsView, batch: ResultsBatch, limits: IterationLimits): ResultsDecision {
  const { roster } = batch;
  if (view.pinned !== undefined && view.pinned.dataset !== roster.dataset) {
    throw invalid({ dataset: [pinnedElsewhere(view.pinned)] });
  }
  let created = 0;
  const rows = batch.rows.map((row): DecidedRow => {
    const existing = view.existing(row.index, row.attempt);
    if (existing) return { row, createdMs: existing.createdMs, replaced: true };
    created++;
    return { row, createdMs: batch.nowMs, replaced: false };
  });
  const rowsAfter = view.rows + created;
  if (rowsAfter > limits.resultsPerIterationMax) throw invalid({ non_field_errors: [tooManyResults(limits, rowsAfter, 'batch')] });
  const dimensions = new Set(view.dimensions);
  for (const row of batch.rows) for (const name in row.fields.dimension_scores ?? {}) dimensions.add(name);
  if (dimensions.size > limits.resultDimensionsPerIterationMax) throw invalid({ non_field_errors: [tooManyDimensions(limits, dimensions.size, 'batch')] });
  return { pins: view.pinned === undefined, rows, created, replaced: batch.rows.length - created, rowsAfter };
}

/** Why a write is refused that would leave an iteration more results than its bound (a posted batch's, or a run's). */
export function tooManyResults(limits: IterationLimits, rowsAfter: number, writer: 'batch' | 'run'): string {
  return `An iteration holds at most ${limits.resultsPerIterationMax} results; this ${writer} would make ${rowsAfter}.`;
}

/** Why a write is refused that would give an iteration's results more dimension names than their bound. */
export function tooManyDimensions(limits: IterationLimits, names: number, writer: 'batch' | 'result'): string {
  return `An iteration's results have at most ${limits.resultDimensionsPerIterationMax} dimension names; this ${writer} would make ${names}.`;
}

/** Why a batch of another version is refused once an iteration is pinned. */
export function pinnedElsewhere(pinned: Roster): string {
  return `This iteration's results are of dataset version ${pinned.version} (${pinned.dataset}); results of another version need another iteration.`;
}

/** A decided row as stored: its written fields, its times (epoch ms) and whether an output is kept apart. */
export function storedRowOfResolved(row: ResolvedRow, createdMs: number, nowMs: number): StoredRow {
  return storedRowOf(row.fields, { created_at: createdMs, updated_at: nowMs, has_output: row.output !== 'null' });
}
