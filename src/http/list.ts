// The HTTP end of the list pipeline: the query schema names each filter (x-filter), the ordering
// whitelist (x-ordering) and the search fields (x-search); this turns a validated query into a
// ListRequest, runs it, and answers DRF's paginated envelope with absolute next/previous links.
import type { AnySchemaObject } from 'ajv';
import type { Identified } from '../query/collection.ts';
import type { Filter, FilterOp } from '../query/filters.ts';
import { runList, type Listable } from '../query/list.ts';
import { parseOrdering } from '../query/ordering.ts';
import { splitSearchTerms } from '../query/search.ts';
import { parseDateOrDateTime, toTimestamp } from '../validation/datetime.ts';
import { canonicalUuid } from '../validation/validator.ts';
import type { Deps } from './deps.ts';
import { fail } from './errors.ts';
import { withLiveFields } from './representations.ts';
import { replyJsonText, type ApiContext, type PageSizes } from './route.ts';

export interface Envelope<T> {
  count: number;
  next: string | null;
  previous: string | null;
  results: T[];
}

interface FilterDeclaration {
  param: string;
  field: string;
  op: FilterOp;
  parse: (value: unknown) => unknown;
}

export interface ListDeclaration {
  filters: FilterDeclaration[];
  ordering: Set<string>;
  search: string[];
}

const declarations = new WeakMap<AnySchemaObject, ListDeclaration>();

/** What a list query schema declares (read once per schema). */
export function listDeclaration(schema: AnySchemaObject): ListDeclaration {
  let declaration = declarations.get(schema);
  if (declaration) return declaration;
  const filters: FilterDeclaration[] = [];
  for (const [param, property] of Object.entries((schema.properties ?? {}) as Record<string, AnySchemaObject>)) {
    const filter = property['x-filter'] as { field?: string; op: FilterOp } | undefined;
    if (filter) filters.push({ param, field: filter.field ?? param, op: filter.op, parse: parserFor(property, filter.op) });
  }
  declaration = {
    filters,
    ordering: new Set((schema['x-ordering'] as string[] | undefined) ?? []),
    search: (schema['x-search'] as string[] | undefined) ?? [],
  };
  declarations.set(schema, declaration);
  return declaration;
}

function parserFor(property: AnySchemaObject, op: FilterOp): (value: unknown) => unknown {
  if (op === 'in') return (value) => String(value).split(',').map((part) => part.trim()).filter(Boolean);
  if (property.format === 'datetime-or-date') return (value) => toTimestamp(parseDateOrDateTime(String(value))!);
  if (property.format === 'uuid') return (value) => canonicalUuid(String(value));
  return (value) => value;
}

export interface ListOptions<T extends Identified, R> {
  /** $id of the query schema that declares filters, ordering and search. */
  schema: string;
  collection: Listable<T>;
  /** Partitions (projects) the caller may see. */
  partitions: Iterable<string>;
  serialize: (record: T) => R;
  /** Fields that follow other records, appended to each item's cached text (see withLiveFields). */
  liveFields?: (record: T) => object;
  /** Filters the endpoint itself imposes. */
  fixedFilters?: Filter[];
}

/**
 * Answers one page of a resource's list. Each record's JSON text comes from deps.jsonCache
 * (records are immutable), so a hot list is assembled from ready-made texts.
 */
export function replyPage<T extends Identified, R>(ctx: ApiContext, deps: Deps, options: ListOptions<T, R>): void {
  const { limits } = deps.config;
  const query = ctx.state.query;
  const declaration = listDeclaration(deps.validator.documents.get(options.schema)!);
  const filters: Filter[] = [...(options.fixedFilters ?? [])];
  for (const filter of declaration.filters) {
    const value = query[filter.param];
    if (value !== undefined) filters.push({ field: filter.field, op: filter.op, value: filter.parse(value) });
  }
  const request = {
    partitions: options.partitions,
    filters,
    searchTerms: typeof query.search === 'string' ? splitSearchTerms(query.search, limits.searchTermsMax) : [],
    searchFields: declaration.search,
    ordering: typeof query.ordering === 'string' ? parseOrdering(query.ordering, declaration.ordering, limits.orderingFieldsMax) : null,
  };
  const page = paginate(ctx, deps, (offset, limit) => runList(options.collection, { ...request, offset, limit }), (record) => record);
  const { liveFields, serialize } = options;
  const textOf = liveFields
    ? (record: T) => withLiveFields(deps.jsonCache.text(record, serialize), liveFields(record))
    : (record: T) => deps.jsonCache.text(record, serialize);
  const results = page.results.map(textOf).join(',');
  replyJsonText(
    ctx,
    200,
    `{"count":${page.count},"next":${JSON.stringify(page.next)},"previous":${JSON.stringify(page.previous)},"results":[${results}]}`,
  );
}

/** The service's page sizes, which every list uses unless its route says otherwise. */
function listPageSizes(deps: Deps): PageSizes {
  return { sizeDefault: deps.config.limits.pageSizeDefault, sizeMax: deps.config.limits.pageSizeMax };
}

/**
 * DRF's page-number pagination over any source that can count its items and cut a page: the
 * requested page (or "last"), "Invalid page." past the end, and the envelope with its links.
 */
export function paginate<T, R>(
  ctx: ApiContext,
  deps: Deps,
  fetch: (offset: number, limit: number) => { count: number; items: T[] },
  serialize: (item: T) => R,
  sizes: PageSizes = listPageSizes(deps),
): Envelope<R> {
  const { limits } = deps.config;
  const query = ctx.state.query;
  const size = pageSize(query.page_size, sizes.sizeDefault, sizes.sizeMax);
  const requested = pageNumber(query.page, limits.pageNumberMax);
  let page = requested === 'last' ? 1 : requested;
  let result = fetch((page - 1) * size, size);
  const pages = Math.max(1, Math.ceil(result.count / size));
  if (requested === 'last' && pages > 1) {
    page = pages;
    result = fetch((page - 1) * size, size);
  }
  if (page > pages) throw fail.notFound('Invalid page.');
  return {
    count: result.count,
    next: page < pages ? pageLink(ctx, page + 1) : null,
    previous: page > 1 ? pageLink(ctx, page - 1) : null,
    results: result.items.map(serialize),
  };
}

/** DRF's page number: a positive integer (or "last"); anything else is "Invalid page.". */
function pageNumber(raw: unknown, pageMax: number): number | 'last' {
  if (raw === undefined) return 1;
  const text = String(raw).trim();
  if (text === 'last') return 'last';
  if (!/^\+?\d+$/.test(text)) throw fail.notFound('Invalid page.');
  const page = Number(text);
  if (page < 1 || page > pageMax) throw fail.notFound('Invalid page.');
  return page;
}

/** DRF's page_size: a positive integer clamped to the maximum; anything else means the default. */
function pageSize(raw: unknown, sizeDefault: number, sizeMax: number): number {
  if (raw === undefined) return sizeDefault;
  const text = String(raw).trim();
  if (!/^\+?\d+$/.test(text)) return sizeDefault;
  const size = Number(text);
  return size < 1 ? sizeDefault : Math.min(size, sizeMax);
}

/**
 * The absolute URL of another page, as DRF's replace_query_param builds it: every other
 * parameter kept, keys sorted, values form-encoded; page 1 drops `page`. Always the slashed path.
 */
export function pageLink(ctx: ApiContext, page: number): string {
  const params = new Map<string, string[]>();
  for (const [key, value] of new URLSearchParams(ctx.querystring)) {
    const values = params.get(key);
    if (values) values.push(value);
    else params.set(key, [value]);
  }
  params.delete('page');
  if (page > 1) params.set('page', [String(page)]);
  const query = [...params.keys()]
    .sort()
    .flatMap((key) => params.get(key)!.map((value) => `${formEncode(key)}=${formEncode(value)}`))
    .join('&');
  const path = ctx.path.endsWith('/') ? ctx.path : `${ctx.path}/`;
  return `${ctx.protocol}://${ctx.host}${path}${query ? `?${query}` : ''}`;
}

/** Python's quote_plus. */
function formEncode(text: string): string {
  return encodeURIComponent(text)
    .replace(/[!'()*]/g, (char) => `%${char.charCodeAt(0).toString(16).toUpperCase()}`)
    .replace(/%20/g, '+');
}
