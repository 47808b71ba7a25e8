// A span as the service keeps it. The fields every filter, search and ordering reads are plain
// fields; what is only ever shown (attributes, events, links, scope, and the resource attributes,
// packed once per resource) is packed into msgpack blobs, so scans decode a few fields rather than
// arbitrary attribute maps, and arbitrary attribute keys never reach LMDB's shared structures.
// A span's detail is kept as its OTLP fields were sent, beside its scope: re-encoding its
// attributes cost more than anything else of a span but its key, and it is decoded again only
// when shown. It is a field of the stored span (encoded with it, in one pass); stores written
// before hold it packed on its own, as a PackedDetail or as the SpanDetail itself, which read the same.
import { Packr } from 'msgpackr';
import type { JsonValue } from './json-text.ts';
import { hexToNanos, uint64ToBigInt } from './nanos.ts';
import { readSpan, type OtlpSpan } from './otlp-wire.ts';
import { spanTypeOf, type Attributes } from './span-type.ts';

export interface SpanRecord {
  readonly trace_id: string;
  readonly span_id: string;
  /** '' for a root span. */
  readonly parent_span_id: string;
  readonly project: string;
  readonly agent: string | null;
  readonly job: string | null;
  readonly iteration: string | null;
  readonly name: string;
  /** OTLP SpanKind: 0 unspecified, 1 internal, 2 server, 3 client, 4 producer, 5 consumer. */
  readonly kind: number;
  readonly operation: string;
  readonly service_name: string;
  /** Nanoseconds since the epoch as 16 hex digits (see nanos.ts). */
  readonly start_time_ns: string;
  readonly end_time_ns: string;
  readonly duration_ns: number;
  /** 0 unset, 1 ok, 2 error. */
  readonly status_code: number;
  /** The tokens the span reports using (span-type.ts), so a trace can sum them without its attributes. */
  readonly tokens: number;
  /** Milliseconds since the epoch. */
  readonly received_at: number;
  /** The span's detail: its OTLP fields as sent, or (stores written before) a packed blob. */
  readonly detail: KeptDetail | Uint8Array;
  /** The resource's attributes, packed (one blob shared by every span of the resource). */
  readonly resource: Uint8Array;
}

// Type aliases, not interfaces: they must be assignable to JsonValue for the writer.
export type SpanEvent = {
  name: string;
  time_ns: bigint;
  attributes: Attributes;
};

export type SpanLink = {
  trace_id: string;
  span_id: string;
  trace_state: string;
  attributes: Attributes;
};

export interface SpanDetail {
  status_message: string;
  attributes: Attributes;
  events: SpanEvent[];
  links: SpanLink[];
  scope_name: string;
  scope_version: string;
}

/** How a span's detail is kept: its OTLP fields as sent (see OtlpSpan.shown) and its scope. */
export interface KeptDetail {
  otlp: Uint8Array;
  scope_name: string;
  scope_version: string;
}

// Plain msgpack maps (no record extension): the blob stands alone and bigints round-trip.
const packr = new Packr({ useRecords: false });

export function pack(value: KeptDetail | SpanDetail | Attributes): Uint8Array {
  return packr.pack(value);
}

function unpack<T extends KeptDetail | SpanDetail | Attributes>(packed: Uint8Array): T {
  return packr.unpack(packed) as T;
}

/** The detail of a span as it arrived. */
export function spanDetail(span: OtlpSpan, scope: { name: string; version: string }): SpanDetail {
  return {
    status_message: span.statusMessage,
    attributes: span.attributes,
    events: span.events.map((event) => ({ name: event.name, time_ns: uint64ToBigInt(event.timeUnixNano), attributes: event.attributes })),
    links: span.links.map((link) => ({ trace_id: link.traceId, span_id: link.spanId, trace_state: link.traceState, attributes: link.attributes })),
    scope_name: scope.name,
    scope_version: scope.version,
  };
}

/** The detail a span shows, however its store kept it. */
export function shownDetail(kept: KeptDetail | Uint8Array): SpanDetail {
  const detail = kept instanceof Uint8Array ? unpack<KeptDetail | SpanDetail>(kept) : kept;
  if (!('otlp' in detail)) return detail;
  return spanDetail(readSpan(detail.otlp), { name: detail.scope_name, version: detail.scope_version });
}

export const isRoot = (span: SpanRecord): boolean => span.parent_span_id === '';

/**
 * The wire representation of a span. `totalTokens` is the span's own count, except where the span
 * stands for its whole trace (a trace list row, a trace's root), which shows the trace's total.
 */
export function spanJson(span: SpanRecord, totalTokens: number = span.tokens): { [key: string]: JsonValue } {
  const detail = shownDetail(span.detail);
  return {
    trace_id: span.trace_id,
    span_id: span.span_id,
    parent_span_id: span.parent_span_id === '' ? null : span.parent_span_id,
    is_root: isRoot(span),
    span_type: spanTypeOf(span.operation, detail.attributes),
    total_tokens: totalTokens,
    project: span.project,
    agent: span.agent,
    job: span.job,
    iteration: span.iteration,
    name: span.name,
    kind: span.kind,
    operation: span.operation,
    service_name: span.service_name,
    start_time_ns: hexToNanos(span.start_time_ns),
    end_time_ns: hexToNanos(span.end_time_ns),
    duration_ns: span.duration_ns,
    status_code: span.status_code,
    status_message: detail.status_message,
    attributes: detail.attributes,
    events: detail.events,
    links: detail.links,
    resource_attrs: unpack<Attributes>(span.resource),
    scope_name: detail.scope_name,
    scope_version: detail.scope_version,
    received_at: new Date(span.received_at).toISOString(),
  };
}
