// DRF's OrderingFilter: `ordering=a,-b`, unknown fields ignored, ties broken on id. Values order
// as PostgreSQL orders them: null after everything ascending (and so first descending).

export interface OrderKey {
  field: string;
  descending: boolean;
}

export type RecordComparator = (a: object, b: object) => number;

/** Parses `ordering` against a whitelist; null when nothing usable was asked for. */
export function parseOrdering(raw: string | undefined, allowed: ReadonlySet<string>, fieldsMax: number): OrderKey[] | null {
  if (!raw) return null;
  const keys: OrderKey[] = [];
  for (const part of raw.split(',')) {
    const term = part.trim();
    const descending = term.startsWith('-');
    const field = descending ? term.slice(1) : term;
    if (!allowed.has(field) || keys.some((key) => key.field === field)) continue;
    keys.push({ field, descending });
    if (keys.length === fieldsMax) break;
  }
  return keys.length > 0 ? keys : null;
}

/**
 * Orders two values of one field: a field's values share a type (strings compare by code unit,
 * numbers numerically, false before true), and null comes after everything.
 */
export function compareValues(a: unknown, b: unknown): number {
  if (a === b) return 0;
  if (a === null || a === undefined) return 1;
  if (b === null || b === undefined) return -1;
  return (a as number | string) < (b as number | string) ? -1 : 1;
}

type Row = Record<string, unknown>;

/**
 * A total order for `keys`, ending with id. The id tiebreak follows the last key's direction,
 * so the exact reverse of an ordering is its reverse iteration (an index serves both). One- and
 * two-key orderings (every default) get straight-line comparators: recovery sorts a million
 * records with them.
 */
export function comparatorFor(keys: readonly OrderKey[]): RecordComparator {
  const tiebreak = keys[keys.length - 1]?.descending ? -1 : 1;
  const byId = (a: Row, b: Row) => tiebreak * compareValues(a.id, b.id);
  const [first, second] = keys;
  if (keys.length === 1) {
    const field = first!.field;
    const sign = first!.descending ? -1 : 1;
    return (a, b) => sign * compareValues((a as Row)[field], (b as Row)[field]) || byId(a as Row, b as Row);
  }
  if (keys.length === 2) {
    const [field1, field2] = [first!.field, second!.field];
    const [sign1, sign2] = [first!.descending ? -1 : 1, second!.descending ? -1 : 1];
    return (a, b) =>
      sign1 * compareValues((a as Row)[field1], (b as Row)[field1]) ||
      sign2 * compareValues((a as Row)[field2], (b as Row)[field2]) ||
      byId(a as Row, b as Row);
  }
  return (a, b) => {
    for (const key of keys) {
      const order = compareValues((a as Row)[key.field], (b as Row)[key.field]);
      if (order !== 0) return key.descending ? -order : order;
    }
    return byId(a as Row, b as Row);
  };
}

/** True when `keys` is `reference` with every direction flipped. */
export function isReverseOf(keys: readonly OrderKey[], reference: readonly OrderKey[]): boolean {
  return keys.length === reference.length &&
    keys.every((key, i) => key.field === reference[i]!.field && key.descending !== reference[i]!.descending);
}

export function isSameOrdering(keys: readonly OrderKey[], reference: readonly OrderKey[]): boolean {
  return keys.length === reference.length &&
    keys.every((key, i) => key.field === reference[i]!.field && key.descending === reference[i]!.descending);
}
