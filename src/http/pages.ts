// The HTTP end of the list pipeline: turns a validated query into a list request by what its query
// schema declares (validation/list-vocabulary.ts's listRequestOf), runs it (query/list.ts's
// runList, or a list's own `read`; both read their pages through query/read-page.ts), and answers
// DRF's paginated envelope with absolute next/previous links. Each list endpoint keeps its answers
// until what they were read from changes (Lists.endpoint).
import type { Limits } from '../config.ts';
import type { JsonCache } from '../json-cache.ts';
import type { Identified } from '../query/collection.ts';
import type { Filter } from '../query/filters.ts';
import { runList, type Listable, type ListRequest } from '../query/list.ts';
import { cutPage, pageNumber, pageSize, type Page, type PageSizes } from '../query/pagination.ts';
import { listDeclaration, listRequestOf, type ListDeclaration } from '../validation/list-vocabulary.ts';
import type { Validator } from '../validation/validator.ts';
import { AnswerCache } from './answer-cache.ts';
import { withLiveFields } from './representations.ts';
import { replyJsonText, type ApiContext } from './route.ts';

export interface Envelope<T> {
  count: number;
  next: string | null;
  previous: string | null;
  results: T[];
}

export interface ListOptions<T extends object, R> {
  /** $id of the query schema that declares filters, ordering and search. */
  schema: string;
  serialize: (record: T) => R;
  /**
   * An item's JSON text, when it is not an immutable record whose text the JSON cache keeps
   * (a result row read from the store for the page).
   */
  text?: (item: T) => string;
  /** Fields that follow other records, appended to each item's cached text (see withLiveFields). */
  liveFields?: LiveFields<T>;
  /** Changes whenever what `text` writes of the same items may have (a run's counts follow its tasks). */
  textVersion?: () => number | string;
}

export interface LiveFields<T> {
  of(record: T): object;
  /** Changes whenever what `of` answers may have (query/versions.ts). */
  version(): number;
}

/** Items a list reads its pages from by itself (not a read-model collection): results of one iteration. */
export interface Readable<T> {
  /** Changes whenever what `read` answers may have (query/versions.ts; several joined in a string). */
  readonly version: number | string;
  read(request: ListRequest): Page<T>;
}

/** What one request lists. */
export interface ListScope<T extends object> {
  /** A read-model collection (or sorted records) of identified records, or items read by themselves. */
  collection: Listable<Extract<T, Identified>> | Readable<T>;
  /** Partitions (projects) the caller may see; the query's partition parameter narrows them. */
  partitions: readonly string[];
  /** Filters the endpoint itself imposes. */
  fixedFilters?: readonly Filter[];
}

/**
 * Lists as every endpoint runs them: what a list's query schema declares (the validator), the
 * service's limits and page sizes, and the JSON text of immutable records (the JSON cache). Built
 * once per service; the routes that list take it by name.
 */
export class Lists {
  /** The service's page sizes, which every list uses unless its route says otherwise. */
  private readonly pageSizes: PageSizes;

  constructor(
    private readonly validator: Validator,
    private readonly limits: Limits,
    private readonly jsonCache: JsonCache,
  ) {
    this.pageSizes = { sizeDefault: limits.pageSizeDefault, sizeMax: limits.pageSizeMax };
  }

  /**
   * The handler of one list endpoint: answers one page of a scope. An answer depends only on the
   * request (its URL, the partitions and fixed filters), the listed records and their live fields,
   * so it is kept as the bytes sent until the list's or the live fields' version changes: a page
   * asked for again is sent as it was made (AnswerCache).
   */
  endpoint<T extends object, R>(options: ListOptions<T, R>): (ctx: ApiContext, scope: ListScope<T>) => void {
    const declaration = listDeclaration(this.validator.documents.get(options.schema)!);
    const answers = new AnswerCache(this.limits.listAnswerCacheBytesMax);
    return (ctx, scope) => {
      // Newlines cannot occur in a header or a request line, so they separate the parts unambiguously.
      const fixed = scope.fixedFilters ? JSON.stringify(scope.fixedFilters) : '';
      const key = `${ctx.protocol}\n${ctx.host}\n${ctx.path}\n${ctx.querystring}\n${scope.partitions.join(',')}\n${fixed}`;
      const version = `${scope.collection.version} ${options.liveFields?.version() ?? ''} ${options.textVersion?.() ?? ''}`;
      replyJsonText(ctx, 200, answers.get(key, version, () => this.pageText(ctx, options, declaration, scope)));
    };
  }

  /**
   * DRF's page-number pagination over any source that can count its items and cut a page (the
   * decisions are query/pagination.ts's): the envelope with its absolute links.
   */
  paginate<T, R>(
    ctx: ApiContext,
    fetch: (offset: number, limit: number) => Page<T>,
    serialize: (item: T) => R,
    sizes: PageSizes = this.pageSizes,
  ): Envelope<R> {
    const query = ctx.state.query;
    const page = cutPage(pageNumber(query.page, this.limits.pageNumberMax), pageSize(query.page_size, sizes), fetch);
    return {
      count: page.count,
      next: page.number < page.pages ? pageLink(ctx, page.number + 1) : null,
      previous: page.number > 1 ? pageLink(ctx, page.number - 1) : null,
      results: page.items.map(serialize),
    };
  }

  /**
   * One page of a scope as DRF's envelope. Each record's JSON text comes from the JSON cache
   * (records are immutable), so a page is assembled from ready-made texts.
   */
  private pageText<T extends object, R>(ctx: ApiContext, options: ListOptions<T, R>, declaration: ListDeclaration, scope: ListScope<T>): string {
    const request = listRequestOf(declaration, ctx.state.query, this.limits, scope.partitions, scope.fixedFilters);
    const { collection } = scope;
    const read = 'read' in collection ? (asked: ListRequest) => collection.read(asked) : (asked: ListRequest) => runList(collection, asked) as Page<T>;
    const page = this.paginate(ctx, (offset, limit) => read({ ...request, offset, limit }), (record) => record);
    const results = page.results.map(this.itemText(options)).join(',');
    return `{"count":${page.count},"next":${JSON.stringify(page.next)},"previous":${JSON.stringify(page.previous)},"results":[${results}]}`;
  }

  /** How a list's items are written: their own text, or their record's cached text with any live fields. */
  private itemText<T extends object, R>({ text, liveFields, serialize }: ListOptions<T, R>): (item: T) => string {
    if (text) return text;
    if (liveFields) return (record) => withLiveFields(this.jsonCache.text(record, serialize), liveFields.of(record));
    return (record) => this.jsonCache.text(record, serialize);
  }
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
