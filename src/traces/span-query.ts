// A validated span query string, turned into what the reads need: the list request every list
// makes of its query (validation/list-vocabulary.ts's listRequestOf: the projects to look in,
// filters, search terms and ordering), with two things of the span store on top: the start-time
// filters become the bounds every source ranges over, read with nanosecond precision from the
// query string as sent, and every other filter's value takes the stored form.
import type { AnySchemaObject } from 'ajv';
import type { Limits } from '../config.ts';
import { listDeclaration, listRequestOf } from '../validation/list-vocabulary.ts';
import { allOf, predicateFor, type Filter, type Predicate } from '../query/filters.ts';
import { comparatorFor, type OrderKey, type RecordComparator } from '../query/ordering.ts';
import { searchPredicate } from '../query/search.ts';
import type { Query } from '../validation/validator.ts';
import { nanosHexMax, nanosHexMin, nanosToHex } from './nanos.ts';
import type { SpanRecord } from './span-record.ts';
import type { StartBounds } from './span-store.ts';

export const spanQuerySchema = 'traces.span-query';

/** The trace list's default order: newest first. */
export const newestFirst: readonly OrderKey[] = [{ field: 'start_time_ns', descending: true }];

export interface SpanQuery {
  /** Visible projects, narrowed by the `project` filter. */
  projects: readonly string[];
  /** Every other filter in stored form (start-time filters are the bounds instead). */
  filters: readonly Filter[];
  /** Inclusive start-time bounds; null when no span can fall within them. */
  bounds: StartBounds | null;
  searchTerms: readonly string[];
  searchFields: readonly string[];
  /** null: the endpoint's default ordering. */
  ordering: readonly OrderKey[] | null;
}

export const fullBounds: StartBounds = { min: nanosHexMin, max: nanosHexMax };

/**
 * `query` is the validated query (typed by the schema); `raw` is the query string as sent, read
 * only for start times, which a number cannot hold exactly.
 */
export function parseSpanQuery(
  schema: AnySchemaObject,
  query: Query,
  raw: Readonly<Record<string, string | string[] | undefined>>,
  visibleProjects: readonly string[],
  limits: Limits,
): SpanQuery {
  const declaration = listDeclaration(schema);
  const request = listRequestOf(declaration, query, limits, visibleProjects);
  let min = 0n;
  let max = (1n << 64n) - 1n;
  for (const { param, field, op } of declaration.filters) {
    const value = query[param];
    if (value === undefined || field !== 'start_time_ns') continue;
    const nanos = exactNanos(lastValue(raw[param]) ?? String(value), op);
    if (op === 'gte' && nanos > min) min = nanos;
    if (op === 'lte' && nanos < max) max = nanos;
  }
  const filters: Filter[] = [];
  for (const filter of request.filters) if (filter.field !== 'start_time_ns') filters.push(storedForm(filter));
  return {
    projects: request.partitions,
    filters,
    bounds: min <= max ? { min: nanosToHex(min), max: nanosToHex(max) } : null,
    searchTerms: request.searchTerms,
    searchFields: request.searchFields,
    ordering: request.ordering,
  };
}

/** Ids are stored in lower-case hex, received_at in milliseconds. */
function storedForm(filter: Filter): Filter {
  const { field, value } = filter;
  if (field === 'trace_id' || field === 'span_id') return { ...filter, value: String(value).toLowerCase() };
  if (field === 'received_at') return { ...filter, value: Date.parse(String(value)) };
  return filter;
}

function lastValue(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[value.length - 1] : value;
}

/**
 * A start-time bound in whole nanoseconds: integers exactly, anything else (a decimal, an exponent)
 * rounded inwards, as a span's integer start compares with it.
 */
function exactNanos(text: string, op: Filter['op']): bigint {
  const trimmed = text.trim();
  if (/^[+-]?\d+$/.test(trimmed)) return BigInt(trimmed);
  const number = Number(trimmed);
  if (!Number.isFinite(number)) return number > 0 ? 1n << 64n : -1n;
  return BigInt(op === 'gte' ? Math.ceil(number) : Math.floor(number));
}

/** All of `filters` and the search, as one predicate over stored spans; null when there is nothing to test. */
export function spanPredicate(filters: readonly Filter[], query: Pick<SpanQuery, 'searchTerms' | 'searchFields'>): Predicate | null {
  const predicates = filters.map((filter) =>
    filter.field === 'has_error' ? hasErrorPredicate(filter.value === true) : predicateFor(filter),
  );
  const search = searchPredicate(query.searchTerms, query.searchFields);
  return allOf(search ? [...predicates, search] : predicates);
}

/** has_error=true is status_code 2 (error); has_error=false is any other status. */
function hasErrorPredicate(wanted: boolean): Predicate {
  return (record) => ((record as SpanRecord).status_code === 2) === wanted;
}

export function withinBounds(span: SpanRecord, bounds: StartBounds): boolean {
  return span.start_time_ns >= bounds.min && span.start_time_ns <= bounds.max;
}

export function isFullBounds(bounds: StartBounds): boolean {
  return bounds.min === fullBounds.min && bounds.max === fullBounds.max;
}

/** A total order for `ordering`, ties broken on trace_id then span_id in the last key's direction. */
export function spanComparator(ordering: readonly OrderKey[]): RecordComparator {
  const descending = ordering[ordering.length - 1]?.descending ?? false;
  return comparatorFor([...ordering, { field: 'trace_id', descending }, { field: 'span_id', descending }]);
}
