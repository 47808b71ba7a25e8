// Where spans live: LMDB databases (MemoryKv in memory mode) with the secondary indexes their
// queries range over, so that no span is held as a JavaScript object between requests.
//
//   spans            [project, start, trace_id, span_id]                   -> the span, less its key (time order per project)
//   traces-by-start  [project, at, trace_id]                               -> TraceEntry: its spans, its head, its tokens, its since
//   trace-order      [project, head start, trace_id]                       -> head span_id
//   span-links       [project, agent|job|iteration, id, since, trace_id]   -> [start, span_id][] of that trace
//   span-counts      [project, all|agent|job|iteration, id, service_name]  -> spans
//                    [project, 'traces']                                   -> traces
//
// `start` is a span's start time as 16 hex digits. A trace's head (its row in the trace list) is
// its root span, or its earliest span while no root has arrived. Everything but the span itself
// is kept per trace, not per span: a write costs one put per span plus a few per trace, which is
// what makes ingest fast (LMDB puts run on the main thread inside the write transaction). A
// trace's entry is rewritten whole whenever it changes, so a trace holds at most
// `spansPerTraceMax` spans. New traces are keyed by time wherever the key allows: a trace's link
// entries carry `since` (its head's start when it was first stored, kept in its entry), so new
// traces append to the link index instead of landing on a random page each (on a million spans a
// random insert cost ~4x an append). A trace's entry is keyed by `at`, its start when it was
// first stored (so `at` and `since` are the same start), and found by its id through TracePlaces
// (in memory). Stores written by earlier builds are brought to this layout once, when they open
// (span-layout.ts), so the decisions here know no other.
//
// This module decides the ops of each change; SpanWriter runs those decisions one at a time, so
// reads here see committed state only and no decision races another.
import assert from 'node:assert/strict';
import { defaultLimits } from '../config.ts';
import { prefixEnd, type Key, type Kv, type KvDb, type KvOp } from '../store/kv.ts';
import { assertNoOlderLayout, spanDbNames, type LinkRef, type SpanRef, type TraceEntry } from './span-layout.ts';
import { isRoot, type SpanRecord } from './span-record.ts';
import { TracePlaces, type TracePlace } from './trace-places.ts';

export const linkDims = ['agent', 'job', 'iteration'] as const;
export type LinkDim = (typeof linkDims)[number];
/** A counter dimension: every span of the project, or those linked to one record. */
export type CountDim = 'all' | LinkDim;

/** What one ingest did: spans stored, and new spans refused because their trace was full. */
export interface Ingested {
  stored: number;
  refused: number;
}

/** Inclusive start-time bounds as hex (see nanos.ts). */
export interface StartBounds {
  min: string;
  max: string;
}

export class SpanStore {
  readonly spans: KvDb;
  readonly traces: KvDb;
  readonly order: KvDb;
  readonly links: KvDb;
  readonly counts: KvDb;
  /** Where each trace's entries are: a trace is found by its id, a new one is new without a read. */
  readonly places: TracePlaces;

  constructor(
    readonly kv: Kv,
    private readonly spansPerTraceMax: number = defaultLimits.spansPerTraceMax,
  ) {
    assertNoOlderLayout(kv);
    this.spans = kv.db(spanDbNames.spans);
    this.traces = kv.db(spanDbNames.traces);
    this.order = kv.db(spanDbNames.order);
    this.links = kv.db(spanDbNames.links);
    this.counts = kv.db(spanDbNames.counts);
    this.places = new TracePlaces(this.traces);
  }

  // ---- decisions (run by SpanWriter only) ----

  /**
   * Ops storing every span not stored yet (by trace_id and span_id, in any project; the first
   * copy wins), with its trace, links and counters. A new span whose trace already holds
   * `spansPerTraceMax` spans (in its project) is refused. Returns what became of each batch.
   */
  ingestOps(batches: readonly (readonly SpanRecord[])[]): { ops: KvOp[]; stored: number[]; refused: number[] } {
    this.places.refresh();
    const ops: KvOp[] = [];
    const edits = new TraceEdits(this, this.spansPerTraceMax);
    const stored: number[] = [];
    const refused: number[] = [];
    for (const spans of batches) {
      let added = 0;
      let full = 0;
      for (const span of spans) {
        const outcome = edits.addSpan(span);
        if (outcome === 'added') {
          added++;
          ops.push({ db: this.spans, key: spanKey(span), value: toStored(span) });
        } else if (outcome === 'refused') {
          full++;
        }
      }
      stored.push(added);
      refused.push(full);
    }
    ops.push(...edits.ops());
    return { ops, stored, refused };
  }

  /**
   * Ops removing up to `limit` of a project's oldest spans, those starting before `before` (hex)
   * or all of them when it is null, with everything that indexes or counts them.
   */
  removalOps(project: string, before: string | null, limit: number): { ops: KvOp[]; removed: number } {
    this.places.refresh();
    const ops: KvOp[] = [];
    const edits = new TraceEdits(this, this.spansPerTraceMax);
    let removed = 0;
    const end = before === null ? prefixEnd([project]) : [project, before];
    for (const { key, value } of this.spans.range<StoredSpan>({ start: [project], end, limit })) {
      const span = fromStored(key, value);
      ops.push({ db: this.spans, key });
      edits.removeSpan(span);
      removed++;
    }
    ops.push(...edits.ops());
    return { ops, removed };
  }

  // ---- reads ----

  head(project: string, traceId: string): SpanRef | undefined {
    return this.entry(project, traceId)?.head;
  }

  /** The tokens of every span of one trace of a project. */
  traceTokens(project: string, traceId: string): number {
    return this.entry(project, traceId)?.tokens ?? 0;
  }

  /** The entry stored at a place, if any (a place may be stale). */
  entryAt(traceId: string, place: TracePlace): TraceEntry | undefined {
    return this.traces.get<TraceEntry>(this.places.entryKey(traceId, place.project, place.at));
  }

  private entry(project: string, traceId: string): TraceEntry | undefined {
    for (const place of this.places.of(traceId)) {
      if (place.project !== project) continue;
      const entry = this.entryAt(traceId, place);
      if (entry) return entry;
    }
    return undefined;
  }

  isHead(span: SpanRecord): boolean {
    return this.head(span.project, span.trace_id)?.[0] === span.span_id;
  }

  /** A project's spans in start order (then trace_id, span_id), within `bounds`. */
  *spansOf(project: string, bounds: StartBounds, reverse: boolean): Generator<SpanRecord> {
    const range = { start: [project, bounds.min], end: prefixEnd([project, bounds.max]), reverse };
    for (const { key, value } of this.spans.range<StoredSpan>(range)) yield fromStored(key, value);
  }

  /** Trace heads of a project in head start order, within `bounds`. */
  *headsOf(project: string, bounds: StartBounds, reverse: boolean): Generator<SpanRecord> {
    const range = { start: [project, bounds.min], end: prefixEnd([project, bounds.max]), reverse };
    for (const { key, value } of this.order.range<string>(range)) {
      const span = this.spanAt([project, key[1]!, key[2]!, value]);
      if (span) yield span;
    }
  }

  /** Spans linked to one agent, job or iteration, in start order, within `bounds`. */
  *linkedSpans(project: string, dim: LinkDim, id: string, bounds: StartBounds, reverse: boolean): Generator<SpanRecord> {
    const keys: Key[] = [];
    for (const [traceId, refs] of this.linkEntries(project, dim, id)) {
      for (const [start, spanId] of refs) if (start >= bounds.min && start <= bounds.max) keys.push([project, start, traceId, spanId]);
    }
    yield* this.spansAt(keys, reverse);
  }

  /** Heads of the traces with a span linked to one agent, job or iteration that is the head itself. */
  *linkedHeads(project: string, dim: LinkDim, id: string, bounds: StartBounds, reverse: boolean): Generator<SpanRecord> {
    const keys: Key[] = [];
    for (const [traceId, refs] of this.linkEntries(project, dim, id)) {
      const head = this.head(project, traceId);
      if (head && head[1] >= bounds.min && head[1] <= bounds.max && refs.some((ref) => ref[1] === head[0])) {
        keys.push([project, head[1], traceId, head[0]]);
      }
    }
    yield* this.spansAt(keys, reverse);
  }

  /** Every stored span of one trace, in every project. */
  *spansOfTrace(traceId: string): Generator<SpanRecord> {
    for (const key of this.spanKeysOfTrace(traceId)) {
      const span = this.spanAt(key);
      if (span) yield span;
    }
  }

  /** The keys of every span of a trace, in every project that holds some ([project, start, trace_id, span_id]). */
  spanKeysOfTrace(traceId: string): Key[] {
    const keys: Key[] = [];
    for (const place of this.places.of(traceId)) {
      for (const [spanId, start] of this.entryAt(traceId, place)?.spans ?? []) keys.push([place.project, start, traceId, spanId]);
    }
    return keys;
  }

  /** Spans per service name, for every span of the project or those linked to one record. */
  serviceCounts(project: string, dim: CountDim, id: string): Map<string, number> {
    const services = new Map<string, number>();
    const prefix = [project, dim, id];
    for (const { key, value } of this.counts.range<number>({ start: prefix, end: prefixEnd(prefix) })) {
      services.set(key[3] as string, value);
    }
    return services;
  }

  spanCount(project: string, dim: CountDim, id: string): number {
    let total = 0;
    for (const count of this.serviceCounts(project, dim, id).values()) total += count;
    return total;
  }

  traceCount(project: string): number {
    return this.counts.get<number>([project, 'traces']) ?? 0;
  }

  /** Every project that holds spans. */
  *projects(): Generator<string> {
    let start: Key = [];
    for (;;) {
      const [first] = this.counts.keys({ start, limit: 1 });
      if (!first) return;
      const project = first[0] as string;
      yield project;
      start = prefixEnd([project]);
    }
  }

  /** Link entries of one record: the trace id ends the key. */
  private *linkEntries(project: string, dim: LinkDim, id: string): Generator<[traceId: string, refs: readonly LinkRef[]]> {
    const prefix = [project, dim, id];
    for (const { key, value } of this.links.range<LinkRef[]>({ start: prefix, end: prefixEnd(prefix) })) {
      yield [key[key.length - 1] as string, value];
    }
  }

  /** The spans at `keys` ([project, start, trace_id, span_id]), in key order. */
  private *spansAt(keys: Key[], reverse: boolean): Generator<SpanRecord> {
    keys.sort((a, b) => compareTuples(a, b) * (reverse ? -1 : 1));
    for (const key of keys) {
      const span = this.spanAt(key);
      if (span) yield span;
    }
  }

  /** The span at a key of spanKeysOfTrace; undefined once retention has removed it. */
  spanAt(key: Key): SpanRecord | undefined {
    const stored = this.spans.get<StoredSpan>(key);
    return stored && fromStored(key, stored);
  }
}

/** What the spans database holds: a span without the fields its key already carries. */
type StoredSpan = Omit<SpanRecord, 'project' | 'start_time_ns' | 'trace_id' | 'span_id'>;

/** Spelled out rather than spread: one object shape for every span, which msgpack encodes fastest. */
function toStored(span: SpanRecord): StoredSpan {
  return {
    parent_span_id: span.parent_span_id,
    agent: span.agent,
    job: span.job,
    iteration: span.iteration,
    name: span.name,
    kind: span.kind,
    operation: span.operation,
    service_name: span.service_name,
    end_time_ns: span.end_time_ns,
    duration_ns: span.duration_ns,
    status_code: span.status_code,
    tokens: span.tokens,
    received_at: span.received_at,
    detail: span.detail,
    resource: span.resource,
  };
}

/**
 * Spelled out too: a spread of the decoded value, then the key's fields, took 37% of a retention
 * removal's time (bench/retention.ts).
 */
function fromStored(key: Key, stored: StoredSpan): SpanRecord {
  return {
    trace_id: key[2] as string,
    span_id: key[3] as string,
    parent_span_id: stored.parent_span_id,
    project: key[0] as string,
    agent: stored.agent,
    job: stored.job,
    iteration: stored.iteration,
    name: stored.name,
    kind: stored.kind,
    operation: stored.operation,
    service_name: stored.service_name,
    start_time_ns: key[1] as string,
    end_time_ns: stored.end_time_ns,
    duration_ns: stored.duration_ns,
    status_code: stored.status_code,
    // Spans stored before tokens were counted have none.
    tokens: stored.tokens ?? 0,
    received_at: stored.received_at,
    detail: stored.detail,
    resource: stored.resource,
  };
}

export function spanKey(span: SpanRecord): Key {
  return [span.project, span.start_time_ns, span.trace_id, span.span_id];
}

/** Order of keys whose parts are all strings. */
function compareTuples(a: Key, b: Key): number {
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return a[i]! < b[i]! ? -1 : 1;
  return 0;
}

/** Whether `a` heads a trace before `b`: a root beats any other span, then the earlier start. */
function headPrecedes(a: SpanRef, b: SpanRef): boolean {
  if (a[2] !== b[2]) return a[2];
  return a[1] < b[1] || (a[1] === b[1] && a[0] < b[0]);
}

function headOf(spans: readonly SpanRef[]): SpanRef | undefined {
  let head: SpanRef | undefined;
  for (const span of spans) if (!head || headPrecedes(span, head)) head = span;
  return head;
}

/** The spans of one trace linked to one record, as a decision changes them. */
interface LinkChange {
  dim: LinkDim;
  id: string;
  added: LinkRef[];
  removed: Set<string>;
}

/** A trace of one project as a decision changes it. */
interface TraceState {
  project: string;
  traceId: string;
  before: TraceEntry | undefined;
  /** The start its stored entry is keyed by, undefined for a new trace. */
  at: string | undefined;
  spans: SpanRef[];
  ids: Set<string>;
  removed: Set<string>;
  tokens: number;
  changed: boolean;
  /** By dimension and record id ("job\n<id>"). */
  links: Map<string, LinkChange>;
}

/** What became of a span offered to a decision. */
type Outcome = 'added' | 'known' | 'refused';

/**
 * The per-trace, per-link and counter edits of one decision: everything read once, changed in
 * memory, and written as new values at the end.
 */
class TraceEdits {
  /** trace_id -> project -> state, loaded on first sight of the trace. */
  private readonly traces = new Map<string, Map<string, TraceState>>();
  private readonly counts = new Map<string, { key: Key; delta: number }>();
  private readonly lastCounts: Partial<Record<CountDim | 'traces', { project: string; id: string; service: string; change: { delta: number } }>> = {};

  constructor(
    private readonly store: SpanStore,
    private readonly spansPerTraceMax: number,
  ) {}

  /**
   * Adds a span unless one with its ids is stored (in any project) or already added by this
   * decision, or its trace is full.
   */
  addSpan(span: SpanRecord): Outcome {
    const states = this.traceStates(span.trace_id);
    for (const state of states.values()) if (state.ids.has(span.span_id)) return 'known';
    const state = this.traceState(states, span.project, span.trace_id);
    if (state.spans.length >= this.spansPerTraceMax) return 'refused';
    state.spans.push([span.span_id, span.start_time_ns, isRoot(span)]);
    state.ids.add(span.span_id);
    state.tokens += span.tokens;
    state.changed = true;
    for (const dim of linkDims) {
      const id = span[dim];
      if (id !== null) linkChange(state, dim, id).added.push([span.start_time_ns, span.span_id]);
    }
    this.countSpan(span, 1);
    return 'added';
  }

  removeSpan(span: SpanRecord): void {
    const state = this.traceState(this.traceStates(span.trace_id), span.project, span.trace_id);
    state.removed.add(span.span_id);
    state.tokens -= span.tokens;
    state.changed = true;
    for (const dim of linkDims) {
      const id = span[dim];
      if (id !== null) linkChange(state, dim, id).removed.add(span.span_id);
    }
    this.countSpan(span, -1);
  }

  ops(): KvOp[] {
    const { store } = this;
    const ops: KvOp[] = [];
    for (const byProject of this.traces.values()) {
      for (const state of byProject.values()) if (state.changed) this.traceOps(state, ops);
    }
    for (const { key, delta } of this.counts.values()) {
      if (delta === 0) continue;
      const next = (store.counts.get<number>(key) ?? 0) + delta;
      ops.push({ db: store.counts, key, ...(next > 0 ? { value: next } : {}) });
    }
    return ops;
  }

  private traceOps(state: TraceState, ops: KvOp[]): void {
    const { store } = this;
    const { project, traceId, before } = state;
    const spans = state.removed.size > 0 ? state.spans.filter((ref) => !state.removed.has(ref[0])) : state.spans;
    const head = headOf(spans);
    const headMoved = !before || !head || before.head[0] !== head[0];
    // A trace keeps the `since` of its first entry for as long as it has spans (none: it had no
    // entry and has no span, so it has no link entry either).
    const since = before ? before.since : head?.[1];
    if (before && headMoved) ops.push({ db: store.order, key: [project, before.head[1], traceId] });
    if (since !== undefined) for (const link of state.links.values()) this.linkOps(state, link, since, ops);
    if (!head) {
      if (state.at !== undefined) {
        ops.push(entryOp(store, state, state.at));
        store.places.left(traceId, project, state.at);
      }
      this.count(project, 'traces', '', '', -1);
      return;
    }
    if (!before) this.count(project, 'traces', '', '', 1);
    if (headMoved) ops.push({ db: store.order, key: [project, head[1], traceId], value: head[0] });
    // An entry stays keyed by the start it was first stored at.
    const at = state.at ?? head[1];
    if (state.at === undefined) store.places.added(traceId, project, at);
    const entry: TraceEntry = { head, spans, tokens: state.tokens, since: since ?? head[1] };
    ops.push(entryOp(store, state, at, entry));
  }

  /** The trace's link entry for one record, rewritten with the spans added and removed. */
  private linkOps(state: TraceState, link: LinkChange, since: string, ops: KvOp[]): void {
    const { links } = this.store;
    const key = [state.project, link.dim, link.id, since, state.traceId];
    // A new trace has no entry yet: only a trace stored before needs reading.
    const refs = state.before ? [...(links.get<LinkRef[]>(key) ?? []), ...link.added] : link.added;
    const kept = link.removed.size > 0 ? refs.filter((ref) => !link.removed.has(ref[1])) : refs;
    ops.push({ db: links, key, ...(kept.length > 0 ? { value: kept } : {}) });
  }

  private traceStates(traceId: string): Map<string, TraceState> {
    let byProject = this.traces.get(traceId);
    if (!byProject) {
      byProject = new Map();
      for (const place of this.store.places.of(traceId)) {
        const entry = this.store.entryAt(traceId, place);
        if (!entry) continue;
        assert.ok(entry.since !== undefined && entry.tokens !== undefined, 'a stored trace entry is of the current layout (migrated when the store opened)');
        byProject.set(place.project, newTraceState(place.project, traceId, entry, place.at));
      }
      this.traces.set(traceId, byProject);
    }
    return byProject;
  }

  private traceState(states: Map<string, TraceState>, project: string, traceId: string): TraceState {
    let state = states.get(project);
    if (!state) states.set(project, (state = newTraceState(project, traceId, undefined, undefined)));
    return state;
  }

  private countSpan(span: SpanRecord, delta: number): void {
    this.count(span.project, 'all', '', span.service_name, delta);
    for (const dim of linkDims) {
      const id = span[dim];
      if (id !== null) this.count(span.project, dim, id, span.service_name, delta);
    }
  }

  /** Counts spans per (project, dimension, id, service), or traces per project when `dim` is 'traces'. */
  private count(project: string, dim: CountDim | 'traces', id: string, service: string, delta: number): void {
    // Consecutive spans usually share every counter: the last one of each dimension is at hand.
    const last = this.lastCounts[dim];
    if (last && last.project === project && last.id === id && last.service === service) {
      last.change.delta += delta;
      return;
    }
    const text = `${project}\n${dim}\n${id}\n${service}`;
    let change = this.counts.get(text);
    if (!change) this.counts.set(text, (change = { key: dim === 'traces' ? [project, 'traces'] : [project, dim, id, service], delta: 0 }));
    change.delta += delta;
    this.lastCounts[dim] = { project, id, service, change };
  }
}

function newTraceState(project: string, traceId: string, before: TraceEntry | undefined, at: string | undefined): TraceState {
  return {
    project,
    traceId,
    before,
    at,
    spans: before ? [...before.spans] : [],
    ids: new Set(before?.spans.map((ref) => ref[0])),
    removed: new Set(),
    tokens: before ? before.tokens : 0,
    changed: false,
    links: new Map(),
  };
}

/** Puts (or, without an entry, removes) a trace's entry at the start it is keyed by. */
function entryOp(store: SpanStore, state: TraceState, at: string, entry?: TraceEntry): KvOp {
  const key = store.places.entryKey(state.traceId, state.project, at);
  return entry ? { db: store.traces, key, value: entry } : { db: store.traces, key };
}

function linkChange(state: TraceState, dim: LinkDim, id: string): LinkChange {
  const text = `${dim}\n${id}`;
  let link = state.links.get(text);
  if (!link) state.links.set(text, (link = { dim, id, added: [], removed: new Set() }));
  return link;
}
