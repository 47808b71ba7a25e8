// From a decoded OTLP export request to span records (pure: time and links come in as
// arguments). A span whose ids are malformed is refused on its own and counted, as OTLP's
// partial success reports it; the rest of the request is kept.
import type { JsonValue } from './json-text.ts';
import { uint64Difference, uint64ToHex } from './nanos.ts';
import type { ExportRequest, OtlpSpan } from './otlp-wire.ts';
import { evaluationOf, type SpanEvaluation } from './span-evaluation.ts';
import { pack, type SpanRecord } from './span-record.ts';
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
  /** What is kept of its detail: its shown fields as sent (OtlpSpan.shown, span-record.ts). */
  otlp: Uint8Array;
  scope: { name: string; version: string };
  /** The result the span reports about its case, if it reports one (span-evaluation.ts). */
  evaluation: SpanEvaluation | null;
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

export function countSpans(request: ExportRequest): number {
  let count = 0;
  for (const resourceSpans of request.resourceSpans) for (const scopeSpans of resourceSpans.scopeSpans) count += scopeSpans.spans.length;
  return count;
}

export function draftSpans(request: ExportRequest, depthMax: number): Drafted {
  const spans: SpanDraft[] = [];
  let rejected = 0;
  for (const resourceSpans of request.resourceSpans) {
    const attributes = checkedDepth(resourceSpans.attributes, depthMax);
    const resource: ResourceDraft = {
      attributes,
      packed: pack(attributes),
      serviceName: stringAttribute(attributes, 'service.name') ?? '',
      projectHint: stringAttribute(attributes, linkAttributes.project),
    };
    for (const { scope, spans: sent } of resourceSpans.scopeSpans) {
      for (const span of sent) {
        const draft = draftSpan(span, resource, scope, depthMax);
        if (draft) spans.push(draft);
        else rejected++;
      }
    }
  }
  return { spans, rejected };
}

function draftSpan(span: OtlpSpan, resource: ResourceDraft, scope: { name: string; version: string }, depthMax: number): SpanDraft | null {
  const traceId = validId(span.traceId, 16);
  const spanId = validId(span.spanId, 8);
  const parentSpanId = span.parentSpanId === '' ? '' : validId(span.parentSpanId, 8, true);
  if (traceId === null || spanId === null || parentSpanId === null) return null;
  const attributes = checkedDepth(span.attributes, depthMax);
  for (const { attributes } of span.events) checkedDepth(attributes, depthMax);
  for (const { attributes } of span.links) checkedDepth(attributes, depthMax);
  const durationNs = uint64Difference(span.endTimeUnixNano, span.startTimeUnixNano);
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
    duration_ns: durationNs,
    status_code: span.statusCode,
    tokens: tokensOf(attributes),
    otlp: span.shown,
    scope,
    evaluation: evaluationOf({
      attributes,
      resourceAttributes: resource.attributes,
      traceId,
      spanId,
      statusCode: span.statusCode,
      statusMessage: span.statusMessage,
      durationNs,
    }),
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
    detail: { otlp: draft.otlp, scope_name: draft.scope.name, scope_version: draft.scope.version },
    resource: draft.resource.packed,
  };
}

/**
 * An id of `bytes` bytes (in hex); null when it has another length or is all zeros, unless
 * `zerosMeanNone`, when all zeros mean no id ('').
 */
function validId(hex: string, bytes: number, zerosMeanNone = false): string | null {
  if (hex.length !== bytes * 2) return null;
  if (!allZeros.test(hex)) return hex;
  return zerosMeanNone ? '' : null;
}

const allZeros = /^0+$/;

function operationOf(attributes: Attributes): string {
  for (const key of operationAttributes) {
    const value = stringAttribute(attributes, key);
    if (value) return value;
  }
  return '';
}

/**
 * The attributes as sent, once no value nests deeper than `depthMax` levels (the attributes
 * themselves are the first level, as a JSON body's depth counts).
 */
function checkedDepth(attributes: Attributes, depthMax: number): Attributes {
  for (const key in attributes) checkNesting(attributes[key]!, 2, depthMax);
  return attributes;
}

function checkNesting(value: JsonValue, depth: number, depthMax: number): void {
  if (typeof value !== 'object' || value === null) return;
  if (depth > depthMax) throw new AttributeDepthError(depthMax);
  if (Array.isArray(value)) for (const item of value) checkNesting(item, depth + 1, depthMax);
  else for (const key in value) checkNesting(value[key]!, depth + 1, depthMax);
}

function stringAttribute(attributes: Attributes, key: string): string | null {
  const value = attributes[key];
  return typeof value === 'string' ? value : null;
}

/** A span attribute, else the same attribute of its resource (one agent per process is common). */
function linkHint(span: Attributes, resource: Attributes, key: string): string | null {
  return stringAttribute(span, key) ?? stringAttribute(resource, key);
}
