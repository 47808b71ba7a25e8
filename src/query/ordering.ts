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

export function compareValues(a: unknown, b: unknown): number {
  if (a === b) return 0;
  if (a === null || a === undefined) return 1;
  if (b === null || b === undefined) return -1;
  if (typeof a === 'number' && typeof b === 'number') return a - b;
  if (typeof a === 'boolean' && typeof b === 'boolean') return a ? 1 : -1;
  const x = String(a);
  const y = String(b);
  return x < y ? -1 : x > y ? 1 : 0;
}

/**
 * A total order for `keys`, ending with id. The id tiebreak follows the last key's direction,
 * so the exact reverse of an ordering is its reverse iteration (an index serves both).
 */
export function comparatorFor(keys: readonly OrderKey[]): RecordComparator {
  const last = keys[keys.length - 1];
  const tiebreakDescending = last?.descending ?? false;
  const fields = keys.map((key) => key.field);
  const signs = keys.map((key) => (key.descending ? -1 : 1));
  return (a, b) => {
    const left = a as Record<string, unknown>;
    const right = b as Record<string, unknown>;
    for (let i = 0; i < fields.length; i++) {
      const field = fields[i]!;
      const order = compareValues(left[field], right[field]);
      if (order !== 0) return signs[i]! * order;
    }
    const order = compareValues(left.id, right.id);
    return tiebreakDescending ? -order : order;
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
