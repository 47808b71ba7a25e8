// A result row, described once: how one candidate (a job iteration) did on one datapoint of one
// dataset version in one attempt. `resultRowFields` is the one list of a row's fields; the types
// below, the stored layout (src/results/stored-row.ts), the in-memory columns
// (src/results/result-table.ts), the rows as read and answered (src/results/result-store.ts) and
// a batch's rows as resolved (result-batch.ts) are all made by looping over it, and a test holds
// it to schemas/results/result-response.json and results-write.json.
//
// Adding an optional field is one entry at the END of the stored fields (its kind has a presence
// bit, so rows stored before it read as null without being rewritten) plus its property in
// result-response.json (and in results-write.json when clients write it).

/** A result's status: ok, or an error (a run that failed is counted apart, never scored). */
export const resultStatuses = ['ok', 'error'] as const;
export type ResultStatus = (typeof resultStatuses)[number];

/**
 * How a stored field is kept. Each kind has a value type, flag bits in the row's flag word
 * (presence, or the value itself), and a payload laid out by the codec where present.
 *   number   number | null    1 bit: present; payload f64
 *   boolean  boolean | null   2 bits: known, true
 *   status   ResultStatus     1 bit: error
 *   flag     boolean          1 bit
 *   text     string           payload: varint length, UTF-8
 *   hexId    string | null    2 bits: null, hex (payload: its bytes), text (payload: as text)
 *   numbers  {name: number} | null   1 bit: present; payload varint count, then name and f64 each
 *   time     epoch ms         payload f64 (an ISO 8601 text on the wire)
 */
export const fieldKindBits = { number: 1, boolean: 2, status: 1, flag: 1, text: 0, hexId: 2, numbers: 1, time: 0 } as const;
export type FieldKind = keyof typeof fieldKindBits;

/** A stored field's value, by kind. */
export interface KindValues {
  number: number | null;
  boolean: boolean | null;
  status: ResultStatus;
  flag: boolean;
  text: string;
  hexId: string | null;
  numbers: Readonly<Record<string, number>> | null;
  time: number;
}

export interface StoredField {
  readonly name: string;
  readonly kind: FieldKind;
  /** On the wire (result-response.json); `has_output` is the store's own. */
  readonly wire: boolean;
  /** Written by clients (results-write.json) and workers; the others are the service's. */
  readonly writable: boolean;
  /** Held in memory as a column of the iteration's table (summaries, comparisons, decisions read it). */
  readonly column: boolean;
  /** hexId: the bytes of an id in hex. */
  readonly hexBytes?: number;
}

/**
 * The fields a row keeps, in the order the stored layout lays them out. Never reorder or remove
 * one (rows are stored in this order); add new ones at the end, of a kind with a presence bit.
 */
export const storedFields = [
  { name: 'score', kind: 'number', wire: true, writable: true, column: true },
  { name: 'passed', kind: 'boolean', wire: true, writable: true, column: true },
  { name: 'dimension_scores', kind: 'numbers', wire: true, writable: true, column: true },
  { name: 'status', kind: 'status', wire: true, writable: true, column: true },
  { name: 'error', kind: 'text', wire: true, writable: true, column: false },
  { name: 'trace_id', kind: 'hexId', wire: true, writable: true, column: false, hexBytes: 16 },
  { name: 'span_id', kind: 'hexId', wire: true, writable: true, column: false, hexBytes: 8 },
  { name: 'latency_ms', kind: 'number', wire: true, writable: true, column: false },
  { name: 'cost', kind: 'number', wire: true, writable: true, column: false },
  { name: 'created_at', kind: 'time', wire: true, writable: false, column: true },
  { name: 'updated_at', kind: 'time', wire: true, writable: false, column: false },
  /** Whether an output is kept (apart, in result-outputs): a row replacing it without one removes it. */
  { name: 'has_output', kind: 'flag', wire: false, writable: false, column: true },
] as const satisfies readonly StoredField[];

type Stored = (typeof storedFields)[number];
type StoredName = Stored['name'];

/** A row as stored: what its key (iteration, datapoint index, attempt) and its version do not say. */
export type StoredRow = { readonly [F in Stored as F['name']]: KindValues[F['kind']] };

/** The fields a batch row writes (the others are the service's: times, and whether an output is kept). */
export type WrittenName = Extract<Stored, { writable: true }>['name'];
export type WrittenFields = { readonly [F in Extract<Stored, { writable: true }> as F['name']]: KindValues[F['kind']] };

/** The fields a row's key and its version name. */
export const keyFields = ['id', 'iteration', 'datapoint', 'datapoint_order', 'attempt'] as const;

/**
 * A row as answered: its key's fields, its stored fields (times as ISO text) and its `output`
 * as JSON text (only the detail shows it).
 */
export type ResultRecord = {
  readonly id: string;
  readonly iteration: string;
  readonly datapoint: string;
  readonly datapoint_order: number;
  readonly attempt: number;
  readonly output: string;
} & { readonly [F in Extract<Stored, { wire: true }> as F['name']]: F['kind'] extends 'time' ? string : KindValues[F['kind']] };

/** A row as lists show it: all but its output. */
export type ListedRow = Omit<ResultRecord, 'output'>;

/** A row as a client or a worker sends it (validated against schemas/results/results-write.json first). */
export type ResultInput = {
  datapoint?: string | null;
  datapoint_order?: number | null;
  attempt?: number | null;
  output?: unknown;
} & { [F in WrittenName]?: WrittenFields[F] | null };

/**
 * A stored row from the fields given: each field the first object's, else the second's, else its
 * default, which is what a row stored before that field existed reads (its flag bits zero).
 */
export function storedRowOf(first: object, second?: object): StoredRow {
  return copyStored(first, second);
}

// Rows are made by the million (every stored row is read at each start, and a write makes each
// row twice), so their objects are made by an object literal of the table's names, compiled once:
// V8 builds a literal's object at ~0.01 us, against ~0.16-0.25 us for an object filled in by
// names from a list and ~3.8 us for a spread copy grown by more fields (Node 20, measured here);
// the literal's shape is also the same for every row. The names are the table's own, never input.

/** A function that makes an object of these fields, in this order, from their values. */
export function objectMaker<T>(names: readonly string[]): (values: readonly unknown[]) => T {
  const fields = names.map((name, i) => `${JSON.stringify(name)}: values[${i}]`).join(', ');
  return new Function('values', `return { ${fields} };`) as (values: readonly unknown[]) => T;
}

/** A function that copies these fields from up to two objects (the first's, else the second's, else the default) into a new one. */
export function fieldCopier<T>(names: readonly string[], defaults: readonly unknown[]): (first: object, second?: object) => T {
  const fields = names.map((name, i) => {
    const key = JSON.stringify(name);
    return `${key}: first[${key}] ?? second[${key}] ?? defaults[${i}]`;
  });
  const make = new Function('defaults', 'none', `return (first, second = none) => ({ ${fields.join(', ')} });`);
  return make(defaults, Object.freeze({})) as (first: object, second?: object) => T;
}

/** A stored row from its fields' values, in table order. */
export const storedRowFromValues = objectMaker<StoredRow>(storedFields.map((field) => field.name));
const copyStored = fieldCopier<StoredRow>(
  storedFields.map((field) => field.name),
  storedFields.map((field) => writtenDefault(field.kind)),
);

/** What a field holds when a row leaves it out (or sends null): as its kind reads with its flag bits zero. */
export function writtenDefault(kind: FieldKind): unknown {
  return kind === 'text' ? '' : kind === 'status' ? 'ok' : kind === 'flag' ? false : null;
}

// ---- the row's flag word ----
//
// Each stored field's flag bits, in table order from bit 0; the rest of the 32 are spare (zero in
// every row this build writes; a row with one set was written by a newer build). The in-memory
// tables keep the same word per row, so a bit has one name and one value everywhere.

export interface FieldBits {
  readonly field: StoredField;
  /** Its first bit's position in the word. */
  readonly shift: number;
  /** Its bits, once shifted down. */
  readonly mask: number;
}

export const flagWordBits = 32;

/** Every stored field with where its bits are. */
export const fieldBits: readonly FieldBits[] = (() => {
  let shift = 0;
  const placed = storedFields.map((field) => {
    const bits = fieldKindBits[field.kind];
    const placedField = { field, shift, mask: 2 ** bits - 1 };
    shift += bits;
    return placedField;
  });
  if (shift > flagWordBits) throw new Error(`a result row's fields need ${shift} flag bits; the word has ${flagWordBits}`);
  return placed;
})();

/** The bits this build uses (as an int32 mask): any other set in a stored row is a newer build's. */
export const usedFlagBits = fieldBits.reduce((used, { shift, mask }) => used | (mask << shift), 0);

function bitOf(name: StoredName, within = 0): number {
  return 1 << (fieldBits.find((bits) => bits.field.name === name)!.shift + within);
}

/** Whether `id` is `chars` lowercase hex digits (kept as its bytes rather than as text). */
export function isHexId(id: string, chars: number): boolean {
  return id.length === chars && /^[0-9a-f]*$/.test(id);
}

/** A stored field's bits in the flag word (before its shift), from its kind and value. */
export function bitsOf(field: StoredField, value: unknown): number {
  switch (field.kind) {
    case 'number':
    case 'numbers':
      return value === null ? 0 : 1;
    case 'boolean':
      return value === null ? 0 : value ? 3 : 1;
    case 'status':
      return value === 'error' ? 1 : 0;
    case 'flag':
      return value ? 1 : 0;
    case 'hexId':
      return value === null ? 0 : isHexId(value as string, field.hexBytes! * 2) ? 1 : 2;
    case 'text':
    case 'time':
      return 0;
  }
}

/** A row's flag word (as an unsigned 32-bit number), or the bits of some of its fields only (`of`). */
export function flagWordOf(row: StoredRow, of: readonly FieldBits[] = fieldBits): number {
  let word = 0;
  for (const { field, shift } of of) word |= bitsOf(field, (row as Record<string, unknown>)[field.name]) << shift;
  return word >>> 0;
}

/** The flag word's bits that answers read from memory (views of the columns, the writer). */
export const rowFlags = {
  /** A pass verdict is known; `passedTrue` says which. */
  passedKnown: bitOf('passed'),
  passedTrue: bitOf('passed', 1),
  /** Status error. */
  error: bitOf('status'),
  hasOutput: bitOf('has_output'),
} as const;

// ---- ids ----

/**
 * A result's id, made from what names the row: its iteration, its datapoint's index in the
 * version and its attempt. The same row always has the same id (a replaced row keeps it, a
 * client can retry without learning it), nothing is stored for it, and the row is found from its
 * id without an index. The layout is a UUID of version 8 (RFC 9562's custom version):
 *
 *   iiiiiiii-iiii-8aaa-8000-0000xxxxxxxx
 *
 * i: the iteration id's first 48 bits (rows of another iteration do not resolve in this one);
 * aaa: the attempt (12 bits); xxxxxxxx: the datapoint's index (32 bits).
 */
export function resultIdOf(iteration: string, index: number, attempt: number): string {
  return `${iteration.slice(0, 13)}-8${hex(attempt, 3)}-8000-0000${hex(index, 8)}`;
}

/** The (index, attempt) a result id names in `iteration`, or undefined when it names none there. */
export function resultKeyOf(iteration: string, id: string): { index: number; attempt: number } | undefined {
  if (id.length !== 36 || id.slice(0, 13) !== iteration.slice(0, 13) || id.slice(13, 15) !== '-8' || id.slice(18, 28) !== '-8000-0000') return undefined;
  const attempt = parseHex(id.slice(15, 18));
  const index = parseHex(id.slice(28));
  return attempt === undefined || index === undefined ? undefined : { index, attempt };
}

function hex(value: number, digits: number): string {
  return value.toString(16).padStart(digits, '0');
}

function parseHex(text: string): number | undefined {
  return /^[0-9a-f]+$/.test(text) ? parseInt(text, 16) : undefined;
}
