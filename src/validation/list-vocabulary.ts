// The list vocabulary of query schemas, read in one place: each filter (`x-filter`: the record
// field it tests, its operation, and a scale for unit conversions), the parameter naming the
// partition (`x-partition`: the project, which narrows the projects searched rather than
// filtering records), the ordering whitelist (`x-ordering`) and the search fields (`x-search`).
// The list pipeline, the span queries and the API document all read a query schema through this,
// and `listRequestOf` is the one translation of a validated query into what a list is asked
// (filters, search terms, ordering, partitions): list endpoints (http/pages.ts) run it as it is,
// the span queries (traces/span-query.ts) add their start-time bounds on top, and a dataset's
// datapoints URL tests the datasets list's filters with `filtersOf`.
import type { AnySchemaObject } from 'ajv';
import type { Limits } from '../config.ts';
import type { Filter, FilterOp } from '../query/filters.ts';
import type { ListSelection } from '../query/list.ts';
import { parseOrdering } from '../query/ordering.ts';
import { splitSearchTerms } from '../query/search.ts';
import { parseDateOrDateTime, toTimestamp } from './datetime.ts';
import { canonicalUuid } from './validator.ts';

export interface FilterDeclaration {
  /** The query parameter. */
  param: string;
  /** The record field it tests (the parameter's name unless said otherwise). */
  field: string;
  op: FilterOp;
  /** What the value is multiplied by before it is compared (milliseconds to nanoseconds). */
  scale: number | undefined;
  /** The value as the filter compares it (UUIDs canonical, dates as timestamps, lists split). */
  parse: (value: unknown) => unknown;
}

export interface ListDeclaration {
  filters: FilterDeclaration[];
  /** The parameter that names one partition (project), if the list takes one. */
  partition: string | null;
  ordering: Set<string>;
  search: string[];
}

const declarations = new WeakMap<AnySchemaObject, ListDeclaration>();

/** What a list query schema declares (read once per schema). */
export function listDeclaration(schema: AnySchemaObject): ListDeclaration {
  let declaration = declarations.get(schema);
  if (declaration) return declaration;
  const filters: FilterDeclaration[] = [];
  let partition: string | null = null;
  for (const [param, property] of Object.entries((schema.properties ?? {}) as Record<string, AnySchemaObject>)) {
    if (property['x-partition'] === true) partition = param;
    const filter = property['x-filter'] as { field?: string; op: FilterOp; scale?: number } | undefined;
    if (filter) filters.push({ param, field: filter.field ?? param, op: filter.op, scale: filter.scale, parse: parserFor(property, filter.op) });
  }
  declaration = {
    filters,
    partition,
    ordering: new Set((schema['x-ordering'] as string[] | undefined) ?? []),
    search: (schema['x-search'] as string[] | undefined) ?? [],
  };
  declarations.set(schema, declaration);
  return declaration;
}

/** The visible partitions a query searches: all of them, or the one its partition parameter names. */
export function partitionsOf(declaration: ListDeclaration, query: Readonly<Record<string, unknown>>, visible: readonly string[]): string[] {
  const named = declaration.partition === null ? undefined : query[declaration.partition];
  if (typeof named !== 'string') return [...visible];
  const wanted = canonicalUuid(named);
  return visible.filter((partition) => partition === wanted);
}

/**
 * What a validated query asks of a list: the visible partitions it searches, `fixed` filters (the
 * endpoint's own) then every declared filter it gives, its search terms and its ordering.
 */
export function listRequestOf(
  declaration: ListDeclaration,
  query: Readonly<Record<string, unknown>>,
  limits: Pick<Limits, 'searchTermsMax' | 'orderingFieldsMax'>,
  visible: readonly string[],
  fixed: readonly Filter[] = [],
): ListSelection {
  const { search, ordering } = query;
  return {
    partitions: partitionsOf(declaration, query, visible),
    filters: filtersOf(declaration, query, fixed),
    // DRF's SearchFilter leaves a list without search fields as it is, whatever `search` says.
    searchTerms: typeof search === 'string' && declaration.search.length > 0 ? splitSearchTerms(search, limits.searchTermsMax) : [],
    searchFields: declaration.search,
    ordering: typeof ordering === 'string' ? parseOrdering(ordering, declaration.ordering, limits.orderingFieldsMax) : null,
  };
}

/**
 * `fixed`, then each declared filter the query gives, its value as the filter compares it: parsed,
 * or multiplied by the declared scale.
 */
export function filtersOf(declaration: ListDeclaration, query: Readonly<Record<string, unknown>>, fixed: readonly Filter[] = []): Filter[] {
  const filters = [...fixed];
  for (const { param, field, op, scale, parse } of declaration.filters) {
    const value = query[param];
    if (value !== undefined) filters.push({ field, op, value: scale === undefined ? parse(value) : (value as number) * scale });
  }
  return filters;
}

function parserFor(property: AnySchemaObject, op: FilterOp): (value: unknown) => unknown {
  if (op === 'in') return (value) => String(value).split(',').map((part) => part.trim()).filter(Boolean);
  if (property.format === 'datetime-or-date') return (value) => toTimestamp(parseDateOrDateTime(String(value))!);
  if (property.format === 'uuid') return (value) => canonicalUuid(String(value));
  return (value) => value;
}
