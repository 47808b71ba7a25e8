// django-filter's lookups as predicates over records. Values arrive already typed by the query
// schema; SQL semantics hold: a null field matches no comparison.

export type FilterOp = 'exact' | 'icontains' | 'gte' | 'lte' | 'in';

export interface Filter {
  field: string;
  op: FilterOp;
  value: unknown;
}

export type Predicate = (record: object) => boolean;

export function predicateFor(filter: Filter): Predicate {
  const { field, value } = filter;
  switch (filter.op) {
    case 'exact':
      return (record) => (record as Record<string, unknown>)[field] === value;
    case 'icontains': {
      const needle = String(value).toLowerCase();
      return (record) => {
        const found = (record as Record<string, unknown>)[field];
        return typeof found === 'string' && found.toLowerCase().includes(needle);
      };
    }
    case 'gte':
      return (record) => {
        const found = (record as Record<string, unknown>)[field];
        return found !== null && found !== undefined && (found as number | string) >= (value as number | string);
      };
    case 'lte':
      return (record) => {
        const found = (record as Record<string, unknown>)[field];
        return found !== null && found !== undefined && (found as number | string) <= (value as number | string);
      };
    case 'in': {
      const allowed = new Set(value as unknown[]);
      return (record) => allowed.has((record as Record<string, unknown>)[field]);
    }
  }
}

/** All of `predicates`, or null when there are none (so callers can take the fast path). */
export function allOf(predicates: readonly Predicate[]): Predicate | null {
  if (predicates.length === 0) return null;
  if (predicates.length === 1) return predicates[0]!;
  return (record) => predicates.every((predicate) => predicate(record));
}
