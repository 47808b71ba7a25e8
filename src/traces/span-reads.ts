// The span queries, over the store's indexes. Each project in view contributes one source: the
// spans of the trace named by trace_id, else those linked to the smallest of the agent, job or
// iteration filtered on, else all of the project's spans (or trace heads) in start order; the
// start-time bounds are part of every range. In the default ordering (or its reverse) sources
// merge in index order and a page stops reading once it is full, whenever counters give the count.
import { isReverseOf, isSameOrdering, type RecordComparator } from '../query/ordering.ts';
import type { Filter } from '../query/filters.ts';
import type { Page } from '../query/pagination.ts';
import { pageOf, selectFirst, where, type Source } from '../query/sources.ts';
import { predicateFor } from '../query/filters.ts';
import { isRoot, type SpanRecord } from './span-record.ts';
import { linkDims, type LinkDim, type SpanStore, type StartBounds } from './span-store.ts';
import { isFullBounds, newestFirst, spanComparator, spanPredicate, withinBounds, type SpanQuery } from './span-query.ts';

/** Every span, or one row per trace (its head). */
export type ListMode = 'spans' | 'heads';

/** A source of one project's spans in index order, and the filter it already satisfies. */
interface SpanSource extends Source<SpanRecord> {
  implied: Filter | null;
}

/** Index order: start time, then trace_id, then span_id. */
const indexOrder: RecordComparator = (a, b) => {
  const x = a as SpanRecord;
  const y = b as SpanRecord;
  if (x.start_time_ns !== y.start_time_ns) return x.start_time_ns < y.start_time_ns ? -1 : 1;
  if (x.trace_id !== y.trace_id) return x.trace_id < y.trace_id ? -1 : 1;
  return x.span_id < y.span_id ? -1 : x.span_id > y.span_id ? 1 : 0;
};

export function listSpans(store: SpanStore, query: SpanQuery, mode: ListMode, offset: number, limit: number): Page<SpanRecord> {
  const bounds = query.bounds;
  if (!bounds) return { count: 0, items: [] };
  const ordering = query.ordering ?? newestFirst;
  const indexed = isSameOrdering(ordering, newestFirst) || isReverseOf(ordering, newestFirst);
  const reverse = isSameOrdering(ordering, newestFirst);
  const sources = query.projects.map((project): Source<SpanRecord> => {
    const source = sourceFor(store, project, query, bounds, mode, reverse);
    const predicate = spanPredicate(residual(query.filters, source.implied), query);
    return { items: where(source.items, predicate), size: predicate ? null : source.size };
  });
  if (!indexed) return selectFirst(sources.map((source) => source.items), spanComparator(ordering), offset, limit);
  return pageOf(sources, reverse ? (a, b) => indexOrder(b, a) : indexOrder, offset, limit);
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
    const unanswered = residual(query.filters, link?.filter ?? null).filter((filter) => !nameFilters.includes(filter));
    if (unanswered.length === 0 && query.searchTerms.length === 0 && isFullBounds(bounds)) {
      for (const name of candidates) found.add(name);
      continue;
    }
    // Counters cannot answer: scan, stopping once every candidate service has been seen.
    const source = sourceFor(store, project, query, bounds, 'spans', true);
    const predicate = spanPredicate(residual(query.filters, source.implied), query);
    const missing = new Set([...candidates].filter((name) => !found.has(name)));
    for (const span of source.items) {
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

/** One trace's visible spans that match the query; null when there are none. */
export function traceView(store: SpanStore, traceId: string, query: SpanQuery, spansMax: number): TraceView | null {
  const bounds = query.bounds;
  if (!bounds) return null;
  const projects = new Set(query.projects);
  const predicate = spanPredicate(query.filters, query);
  const spans = [...store.spansOfTrace(traceId)].filter(
    (span) => projects.has(span.project) && withinBounds(span, bounds) && (!predicate || predicate(span)),
  );
  if (spans.length === 0) return null;
  const root = spans.reduce((best, span) => (headsBefore(span, best) ? span : best));
  spans.sort(query.ordering ? spanComparator(query.ordering) : indexOrder);
  return { root, spanCount: spans.length, spans: spans.slice(0, spansMax) };
}

/** A root before any other span, then the earlier start, then the smaller span_id. */
function headsBefore(a: SpanRecord, b: SpanRecord): boolean {
  if (isRoot(a) !== isRoot(b)) return isRoot(a);
  return indexOrder(a, b) < 0;
}

function sourceFor(store: SpanStore, project: string, query: SpanQuery, bounds: StartBounds, mode: ListMode, reverse: boolean): SpanSource {
  const full = isFullBounds(bounds);
  const trace = query.filters.find((filter) => filter.field === 'trace_id' && filter.op === 'exact');
  if (trace) {
    const spans = [...store.spansOfTrace(String(trace.value))]
      .filter((span) => span.project === project && withinBounds(span, bounds) && (mode === 'spans' || store.isHead(span)))
      .sort(reverse ? (a, b) => indexOrder(b, a) : indexOrder);
    return { items: spans, implied: trace, size: null };
  }
  const link = smallestLink(store, project, query.filters);
  const traces = store.traceCount(project);
  if (link && (mode === 'spans' || link.size < traces)) {
    if (mode === 'spans') {
      return { items: store.linkedSpans(project, link.dim, link.id, bounds, reverse), implied: link.filter, size: full ? link.size : null };
    }
    return { items: store.linkedHeads(project, link.dim, link.id, bounds, reverse), implied: link.filter, size: null };
  }
  if (mode === 'heads') return { items: store.headsOf(project, bounds, reverse), implied: null, size: full ? traces : null };
  return { items: store.spansOf(project, bounds, reverse), implied: null, size: full ? store.spanCount(project, 'all', '') : null };
}

/** Of the agent, job and iteration filters, the one with the fewest spans in the project. */
function smallestLink(store: SpanStore, project: string, filters: readonly Filter[]) {
  let best: { filter: Filter; dim: LinkDim; id: string; size: number } | null = null;
  for (const filter of filters) {
    const dim = linkDims.find((candidate) => candidate === filter.field);
    if (!dim || filter.op !== 'exact') continue;
    const id = String(filter.value);
    const size = store.spanCount(project, dim, id);
    if (!best || size < best.size) best = { filter, dim, id, size };
  }
  return best;
}

function residual(filters: readonly Filter[], implied: Filter | null): Filter[] {
  return implied ? filters.filter((filter) => filter !== implied) : [...filters];
}
