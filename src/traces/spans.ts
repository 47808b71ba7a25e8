// From a decoded OTLP export request to span records (pure: time and links come in as
// arguments). A span whose ids are malformed is refused on its own and counted, as OTLP's
// partial success reports it; the rest of the request is kept.
import type { AnyValue, ExportTraceServiceRequest, KeyValue, OtlpEvent, OtlpLink, OtlpSpan } from './otlp.ts';
import { int64ToExact, uint64Difference, uint64ToBigInt, uint64ToHex } from './nanos.ts';
import { pack, type SpanDetail, type SpanEvent, type SpanLink, type SpanRecord } from './span-record.ts';
import type { JsonValue } from './json-text.ts';
import { tokensOf, type Attributes } from './span-type.ts';

/** Resource and span attributes that link spans to the service's records. */
export const linkAttributes = {
  project: 'overmind.project.id',
  agentId: 'overmind.agent.id',
  agentName: 'overmind.agent.name',
  job: 'overmind.job.id',
  iteration: 'overmind.iteration.id',
} as const;

/** Span attributes naming the span's operation, first one present wins. */
const operationAttributes = ['overmind.operation', 'gen_ai.operation.name'];

export interface ResourceDraft {
  attributes: Attributes;
  /** The attributes packed once for every span of the resource. */
  packed: Uint8Array;
  serviceName: string;
  /** `overmind.project.id` as sent, for callers that are users rather than API keys. */
  projectHint: string | null;
}

/** What a span asks to be linked to; the links are checked against the caller's records later. */
export interface LinkHints {
  agentId: string | null;
  agentName: string | null;
  job: string | null;
  iteration: string | null;
}

export interface SpanDraft {
  resource: ResourceDraft;
  hints: LinkHints;
  trace_id: string;
  span_id: string;
  parent_span_id: string;
  name: string;
  kind: number;
  operation: string;
  start_time_ns: string;
  end_time_ns: string;
  duration_ns: number;
  status_code: number;
  tokens: number;
  detail: SpanDetail;
}

export interface Drafted {
  spans: SpanDraft[];
  rejected: number;
}

export interface SpanLinks {
  project: string;
  agent: string | null;
  job: string | null;
  iteration: string | null;
}

/** Attribute values nested deeper than the limit, which the service will not store. */
export class AttributeDepthError extends Error {
  constructor(depthMax: number) {
    super(`attribute values nest deeper than ${depthMax} levels`);
    this.name = 'AttributeDepthError';
  }
}

export const idRefusal = 'trace_id must be 16 bytes and span_id 8 bytes, neither all zeros; parent_span_id empty or 8 bytes';

export function countSpans(request: ExportTraceServiceRequest): number {
  let count = 0;
  for (const resourceSpans of request.resourceSpans) for (const scopeSpans of resourceSpans.scopeSpans) count += scopeSpans.spans.length;
  return count;
}

export function draftSpans(request: ExportTraceServiceRequest, depthMax: number): Drafted {
  const spans: SpanDraft[] = [];
  let rejected = 0;
  for (const resourceSpans of request.resourceSpans) {
    const attributes = attributesJson(resourceSpans.resource?.attributes ?? [], depthMax);
    const resource: ResourceDraft = {
      attributes,
      packed: pack(attributes),
      serviceName: stringAttribute(attributes, 'service.name') ?? '',
      projectHint: stringAttribute(attributes, linkAttributes.project),
    };
    for (const scopeSpans of resourceSpans.scopeSpans) {
      const scope = { name: scopeSpans.scope?.name ?? '', version: scopeSpans.scope?.version ?? '' };
      for (const span of scopeSpans.spans) {
        const draft = draftSpan(span, resource, scope, depthMax);
        if (draft) spans.push(draft);
        else rejected++;
      }
    }
  }
  return { spans, rejected };
}

function draftSpan(span: OtlpSpan, resource: ResourceDraft, scope: { name: string; version: string }, depthMax: number): SpanDraft | null {
  const traceId = idHex(span.traceId, 16);
  const spanId = idHex(span.spanId, 8);
  const parentSpanId = span.parentSpanId.length === 0 ? '' : idHex(span.parentSpanId, 8, true);
  if (traceId === null || spanId === null || parentSpanId === null) return null;
  const attributes = attributesJson(span.attributes, depthMax);
  return {
    resource,
    hints: {
      agentId: linkHint(attributes, resource.attributes, linkAttributes.agentId),
      agentName: linkHint(attributes, resource.attributes, linkAttributes.agentName),
      job: linkHint(attributes, resource.attributes, linkAttributes.job),
      iteration: linkHint(attributes, resource.attributes, linkAttributes.iteration),
    },
    trace_id: traceId,
    span_id: spanId,
    parent_span_id: parentSpanId,
    name: span.name,
    kind: span.kind,
    operation: operationOf(attributes),
    start_time_ns: uint64ToHex(span.startTimeUnixNano),
    end_time_ns: uint64ToHex(span.endTimeUnixNano),
    duration_ns: uint64Difference(span.endTimeUnixNano, span.startTimeUnixNano),
    status_code: span.status?.code ?? 0,
    tokens: tokensOf(attributes),
    detail: {
      status_message: span.status?.message ?? '',
      attributes,
      events: span.events.length === 0 ? [] : span.events.map((event) => eventJson(event, depthMax)),
      links: span.links.length === 0 ? [] : span.links.map((link) => linkJson(link, depthMax)),
      scope_name: scope.name,
      scope_version: scope.version,
    },
  };
}

/** `receivedAt` in milliseconds since the epoch. */
export function spanRecord(draft: SpanDraft, links: SpanLinks, receivedAt: number): SpanRecord {
  return {
    trace_id: draft.trace_id,
    span_id: draft.span_id,
    parent_span_id: draft.parent_span_id,
    project: links.project,
    agent: links.agent,
    job: links.job,
    iteration: links.iteration,
    name: draft.name,
    kind: draft.kind,
    operation: draft.operation,
    service_name: draft.resource.serviceName,
    start_time_ns: draft.start_time_ns,
    end_time_ns: draft.end_time_ns,
    duration_ns: draft.duration_ns,
    status_code: draft.status_code,
    tokens: draft.tokens,
    received_at: receivedAt,
    detail: pack(draft.detail),
    resource: draft.resource.packed,
  };
}

function eventJson(event: OtlpEvent, depthMax: number): SpanEvent {
  return { name: event.name, time_ns: uint64ToBigInt(event.timeUnixNano), attributes: attributesJson(event.attributes, depthMax) };
}

function linkJson(link: OtlpLink, depthMax: number): SpanLink {
  return {
    trace_id: bytesHex(link.traceId),
    span_id: bytesHex(link.spanId),
    trace_state: link.traceState,
    attributes: attributesJson(link.attributes, depthMax),
  };
}

/** Lower-case hex of an id of `length` bytes; null when it has another length or is all zeros. */
function idHex(bytes: Uint8Array, length: number, zerosMeanNone = false): string | null {
  if (bytes.length !== length) return null;
  let zeros = true;
  for (let i = 0; i < length && zeros; i++) zeros = bytes[i] === 0;
  if (zeros) return zerosMeanNone ? '' : null;
  return bytesHex(bytes);
}

function bytesHex(bytes: Uint8Array): string {
  // protobufjs decodes bytes as Buffers in Node; anything else is wrapped without copying.
  return (Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)).toString('hex');
}

function operationOf(attributes: Attributes): string {
  for (const key of operationAttributes) {
    const value = stringAttribute(attributes, key);
    if (value) return value;
  }
  return '';
}

/** Attributes as a JSON object; a repeated key keeps its last value. */
function attributesJson(keyValues: readonly KeyValue[], depthMax: number, depth = 1): Attributes {
  if (depth > depthMax) throw new AttributeDepthError(depthMax);
  const attributes: Attributes = {};
  for (const { key, value } of keyValues) attributes[key] = anyValueJson(value, depthMax, depth);
  return attributes;
}

function anyValueJson(value: AnyValue | null, depthMax: number, depth: number): JsonValue {
  switch (value?.value) {
    case 'stringValue':
      return value.stringValue;
    case 'boolValue':
      return value.boolValue;
    case 'intValue':
      return int64ToExact(value.intValue);
    case 'doubleValue':
      return value.doubleValue;
    case 'bytesValue':
      return Buffer.from(value.bytesValue).toString('base64');
    case 'arrayValue': {
      if (depth >= depthMax) throw new AttributeDepthError(depthMax);
      const items: JsonValue[] = [];
      for (const item of value.arrayValue.values) items.push(anyValueJson(item, depthMax, depth + 1));
      return items;
    }
    case 'kvlistValue':
      return attributesJson(value.kvlistValue.values, depthMax, depth + 1);
    default:
      return null;
  }
}

function stringAttribute(attributes: Attributes, key: string): string | null {
  const value = attributes[key];
  return typeof value === 'string' ? value : null;
}

/** A span attribute, else the same attribute of its resource (one agent per process is common). */
function linkHint(span: Attributes, resource: Attributes, key: string): string | null {
  return stringAttribute(span, key) ?? stringAttribute(resource, key);
}
