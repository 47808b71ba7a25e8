// The span queries, over the store's indexes. The store supplies one source per project in view,
// in index order (start time, then trace_id, span_id): the spans of the trace named by trace_id,
// else those linked to the smallest of the agent, job or iteration filtered on (query/read-page.ts's
// `narrowest` over the link counters), else all of the project's spans (or trace heads); the
// start-time bounds are part of every range. Pages are read by the one reader (readPage): in
// index order or its reverse (the default, newest first, reads the sources backwards) they merge
// and a page stops reading once it is full whenever counters give the count. The service names
// scan the same sources, stopping once every name the counters hold has been seen.
import type { Filter } from '../query/filters.ts';
import type { Key } from '../store/kv.ts';
import type { OrderKey, RecordComparator } from '../query/ordering.ts';
import type { Page } from '../query/pagination.ts';
import { narrowest, othersThan, readPage, type PageSource } from '../query/read-page.ts';
import { where } from '../query/sources.ts';
import { predicateFor } from '../query/filters.ts';
import { isRoot, type SpanRecord } from './span-record.ts';
import { linkDims, type LinkDim, type SpanStore, type StartBounds } from './span-store.ts';
import { isFullBounds, newestFirst, spanComparator, spanPredicate, withinBounds, type SpanQuery } from './span-query.ts';

/** Every span, or one row per trace (its head). */
export type ListMode = 'spans' | 'heads';

/** Index order: start time, then trace_id, then span_id. */
const indexOrder: RecordComparator = (a, b) => {
  const x = a as SpanRecord;
  const y = b as SpanRecord;
  if (x.start_time_ns !== y.start_time_ns) return x.start_time_ns < y.start_time_ns ? -1 : 1;
  if (x.trace_id !== y.trace_id) return x.trace_id < y.trace_id ? -1 : 1;
  return x.span_id < y.span_id ? -1 : x.span_id > y.span_id ? 1 : 0;
};

const reverseIndexOrder: RecordComparator = (a, b) => indexOrder(b, a);

/** Index order as ordering keys (spanComparator breaks its ties on trace_id, span_id as the index does). */
const startOrder: readonly OrderKey[] = [{ field: 'start_time_ns', descending: false }];

export function listSpans(store: SpanStore, query: SpanQuery, mode: ListMode, offset: number, limit: number): Page<SpanRecord> {
  const bounds = query.bounds;
  if (!bounds) return { count: 0, items: [] };
  return readPage<SpanRecord>({
    // Each source tests what its own narrowing leaves (it differs between projects).
    sources: query.projects.map((project) => {
      const { source, implied } = spanSource(store, project, query, bounds, mode);
      const predicate = spanPredicate(othersThan(query.filters, implied), query);
      return predicate ? { items: (reverse) => where(source.items(reverse), predicate), size: null } : source;
    }),
    sourceOrder: startOrder,
    compareInSourceOrder: indexOrder,
    ordering: query.ordering ?? newestFirst,
    comparatorFor: spanComparator,
    predicate: null,
    offset,
    limit,
  });
}

/** The distinct non-empty service names of the spans the query matches, sorted. */
export function serviceNames(store: SpanStore, query: SpanQuery): string[] {
  const bounds = query.bounds;
  if (!bounds) return [];
  const nameFilters = query.filters.filter((filter) => filter.field === 'service_name');
  const found = new Set<string>();
  for (const project of query.projects) {
    const link = smallestLink(store, project, query.filters);
    const counted = link ? store.serviceCounts(project, link.dim, link.id) : store.serviceCounts(project, 'all', '');
    const candidates = new Set(
      [...counted.keys()].filter((name) => name !== '' && nameFilters.every((filter) => predicateFor(filter)({ service_name: name }))),
    );
    const unanswered = othersThan(query.filters, link?.filter ?? null).filter((filter) => !nameFilters.includes(filter));
    if (unanswered.length === 0 && query.searchTerms.length === 0 && isFullBounds(bounds)) {
      for (const name of candidates) found.add(name);
      continue;
    }
    // Counters cannot answer: scan (newest first), stopping once every candidate service has been seen.
    const { source, implied } = spanSource(store, project, query, bounds, 'spans');
    const predicate = spanPredicate(othersThan(query.filters, implied), query);
    const missing = new Set([...candidates].filter((name) => !found.has(name)));
    for (const span of source.items(true)) {
      if (missing.size === 0) break;
      if (missing.has(span.service_name) && (!predicate || predicate(span))) {
        found.add(span.service_name);
        missing.delete(span.service_name);
      }
    }
  }
  return [...found].sort();
}

export interface TraceView {
  root: SpanRecord;
  spanCount: number;
  spans: SpanRecord[];
}

/**
 * Of a trace's span keys (SpanStore.spanKeysOfTrace: [project, start, trace_id, span_id]), those
 * of a project the query sees and within its bounds: only they are read, so a trace of another
 * project, or outside the bounds, answers 404 without its spans being read.
 */
export function visibleTraceKeys(keys: readonly Key[], query: SpanQuery): Key[] {
  const bounds = query.bounds;
  if (!bounds) return [];
  const projects = new Set(query.projects);
  return keys.filter((key) => projects.has(key[0] as string) && (key[1] as string) >= bounds.min && (key[1] as string) <= bounds.max);
}

/** Of one trace's spans (as read: src/traces/trace-answer.ts), those visible that match the query; null when there are none. */
export function traceView(traceSpans: readonly SpanRecord[], query: SpanQuery, spansMax: number): TraceView | null {
  const bounds = query.bounds;
  if (!bounds) return null;
  const projects = new Set(query.projects);
  const predicate = spanPredicate(query.filters, query);
  const spans = traceSpans.filter((span) => projects.has(span.project) && withinBounds(span, bounds) && (!predicate || predicate(span)));
  if (spans.length === 0) return null;
  const root = spans.reduce((best, span) => (headsBefore(span, best) ? span : best));
  const page = readPage<SpanRecord>({
    sources: [{ items: (reverse) => spans.sort(reverse ? reverseIndexOrder : indexOrder), size: spans.length }],
    sourceOrder: startOrder,
    compareInSourceOrder: indexOrder,
    ordering: query.ordering ?? startOrder,
    comparatorFor: spanComparator,
    predicate: null,
    offset: 0,
    limit: spansMax,
  });
  return { root, spanCount: page.count, spans: page.items };
}

/** A root before any other span, then the earlier start, then the smaller span_id. */
function headsBefore(a: SpanRecord, b: SpanRecord): boolean {
  if (isRoot(a) !== isRoot(b)) return isRoot(a);
  return indexOrder(a, b) < 0;
}

/** A project's spans (or heads) within bounds in index order, and the filter they already satisfy. */
function spanSource(store: SpanStore, project: string, query: SpanQuery, bounds: StartBounds, mode: ListMode): { source: PageSource<SpanRecord>; implied: Filter | null } {
  const full = isFullBounds(bounds);
  const trace = query.filters.find((filter) => filter.field === 'trace_id' && filter.op === 'exact');
  if (trace) {
    const traceId = String(trace.value);
    const keep = (span: SpanRecord) => span.project === project && withinBounds(span, bounds) && (mode === 'spans' || store.isHead(span));
    return { source: { items: (reverse) => spansOfTrace(store, traceId, keep).sort(reverse ? reverseIndexOrder : indexOrder), size: null }, implied: trace };
  }
  const link = smallestLink(store, project, query.filters);
  const traces = store.traceCount(project);
  if (link && (mode === 'spans' || link.size < traces)) {
    const { dim, id } = link;
    const source: PageSource<SpanRecord> = mode === 'spans'
      ? { items: (reverse) => store.linkedSpans(project, dim, id, bounds, reverse), size: full ? link.size : null }
      : { items: (reverse) => store.linkedHeads(project, dim, id, bounds, reverse), size: null };
    return { source, implied: link.filter };
  }
  if (mode === 'heads') return { source: { items: (reverse) => store.headsOf(project, bounds, reverse), size: full ? traces : null }, implied: null };
  const size = full ? store.spanCount(project, 'all', '') : null;
  return { source: { items: (reverse) => store.spansOf(project, bounds, reverse), size }, implied: null };
}

/** The spans of one trace that `keep` keeps, as the store yields them. */
function spansOfTrace(store: SpanStore, traceId: string, keep: (span: SpanRecord) => boolean): SpanRecord[] {
  const spans: SpanRecord[] = [];
  for (const span of store.spansOfTrace(traceId)) if (keep(span)) spans.push(span);
  return spans;
}

/** Of the agent, job and iteration filters, the one with the fewest spans in the project. */
function smallestLink(store: SpanStore, project: string, filters: readonly Filter[]) {
  const link = narrowest(filters, (filter) => (isLinkDim(filter.field) ? store.spanCount(project, filter.field, String(filter.value)) : null));
  return link && { filter: link.filter, dim: link.filter.field as LinkDim, id: String(link.filter.value), size: link.size };
}

function isLinkDim(field: string): field is LinkDim {
  return (linkDims as readonly string[]).includes(field);
}
