// OTLP/HTTP export requests and responses, decoded and encoded by protobufjs from the official
// OpenTelemetry .proto files in ./proto. Both encodings end as the same protobufjs message:
// OTLP/JSON goes through the protobuf JSON mapping (`fromObject`) once its hex ids are bytes.
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import protobuf from 'protobufjs';

export type OtlpEncoding = 'protobuf' | 'json';

/** A 64-bit integer as protobufjs reads it: a Long (the `long` package), or a number. */
export interface Int64 {
  low: number;
  high: number;
}

/** The decoded shapes the service reads (protobufjs gives lowerCamelCase fields, defaults on the prototype). */
export interface AnyValue {
  /** Which member of the `value` oneof is set. */
  value?: 'stringValue' | 'boolValue' | 'intValue' | 'doubleValue' | 'arrayValue' | 'kvlistValue' | 'bytesValue';
  stringValue: string;
  boolValue: boolean;
  intValue: Int64 | number;
  doubleValue: number;
  arrayValue: { values: AnyValue[] };
  kvlistValue: { values: KeyValue[] };
  bytesValue: Uint8Array;
}

export interface KeyValue {
  key: string;
  value: AnyValue | null;
}

export interface OtlpEvent {
  timeUnixNano: Int64 | number;
  name: string;
  attributes: KeyValue[];
}

export interface OtlpLink {
  traceId: Uint8Array;
  spanId: Uint8Array;
  traceState: string;
  attributes: KeyValue[];
}

export interface OtlpSpan {
  traceId: Uint8Array;
  spanId: Uint8Array;
  parentSpanId: Uint8Array;
  name: string;
  kind: number;
  startTimeUnixNano: Int64 | number;
  endTimeUnixNano: Int64 | number;
  attributes: KeyValue[];
  events: OtlpEvent[];
  links: OtlpLink[];
  status: { code: number; message: string } | null;
}

export interface ScopeSpans {
  scope: { name: string; version: string } | null;
  spans: OtlpSpan[];
}

export interface ResourceSpans {
  resource: { attributes: KeyValue[] } | null;
  scopeSpans: ScopeSpans[];
}

export interface ExportTraceServiceRequest {
  resourceSpans: ResourceSpans[];
}

/** A body that is not an OTLP export request in its declared encoding. */
export class OtlpDecodeError extends Error {
  constructor(readonly encoding: OtlpEncoding, reason: string) {
    super(reason);
    this.name = 'OtlpDecodeError';
  }
}

const protoDir = fileURLToPath(new URL('./proto/', import.meta.url));
const root = new protobuf.Root();
// Imports in the official files are written from the proto root, not relative to the importer.
root.resolvePath = (_origin, target) => join(protoDir, target);
root.loadSync('opentelemetry/proto/collector/trace/v1/trace_service.proto');
/** The protobufjs type of ExportTraceServiceRequest (clients and tests encode requests with it). */
export const exportRequestType = root.lookupType('opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest');
const responseType = root.lookupType('opentelemetry.proto.collector.trace.v1.ExportTraceServiceResponse');

export function decodeExportRequest(body: Uint8Array, encoding: OtlpEncoding): ExportTraceServiceRequest {
  try {
    if (encoding === 'protobuf') return exportRequestType.decode(body) as unknown as ExportTraceServiceRequest;
    const text = Buffer.from(body.buffer, body.byteOffset, body.byteLength).toString('utf8');
    const parsed: unknown = text.trim() === '' ? {} : JSON.parse(text);
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
      throw new Error('an OTLP/JSON export request is a JSON object');
    }
    return messageFromOtlpJson(parsed) as unknown as ExportTraceServiceRequest;
  } catch (error) {
    // protobufjs reports truncated or malformed input (and input nested past the stack) by throwing.
    throw new OtlpDecodeError(encoding, error instanceof Error ? error.message : String(error));
  }
}

/** An OTLP/JSON export request (already parsed) as a protobufjs message, ready to read or encode. */
export function messageFromOtlpJson(json: object): protobuf.Message {
  return exportRequestType.fromObject(withBinaryIds(camelCaseKeys(json)) as Record<string, unknown>);
}

/** ExportTraceServiceResponse in the request's encoding, with partial_success when spans were refused. */
export function encodeExportResponse(encoding: OtlpEncoding, rejectedSpans: number, errorMessage: string): Uint8Array | object {
  const response = responseType.fromObject(rejectedSpans > 0 ? { partialSuccess: { rejectedSpans, errorMessage } } : {});
  if (encoding === 'protobuf') return responseType.encode(response).finish();
  return responseType.toObject(response, { longs: String });
}

/**
 * The protobuf JSON mapping accepts the original snake_case field names as well as lowerCamelCase;
 * protobufjs reads only the latter. Every object key in an OTLP request is a field name (attribute
 * keys are values of KeyValue.key), so renaming keys never touches user data.
 */
function camelCaseKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(camelCaseKeys);
  if (typeof value !== 'object' || value === null) return value;
  const renamed: Record<string, unknown> = {};
  for (const [key, child] of Object.entries(value)) {
    renamed[key.includes('_') ? key.replace(/_([a-z0-9])/g, (_match, letter: string) => letter.toUpperCase()) : key] = camelCaseKeys(child);
  }
  return renamed;
}

/**
 * OTLP/JSON writes trace and span ids as hex, where the protobuf JSON mapping expects base64: they
 * become bytes before the mapping runs. A malformed id becomes one byte, which no valid id has, so
 * that span is refused later like any other span with a bad id.
 */
function withBinaryIds(request: unknown): unknown {
  for (const resourceSpans of arrayAt(request, 'resourceSpans')) {
    for (const scopeSpans of arrayAt(resourceSpans, 'scopeSpans')) {
      for (const span of arrayAt(scopeSpans, 'spans')) {
        hexFieldsToBytes(span, ['traceId', 'spanId', 'parentSpanId']);
        for (const link of arrayAt(span, 'links')) hexFieldsToBytes(link, ['traceId', 'spanId']);
      }
    }
  }
  return request;
}

function arrayAt(parent: unknown, field: string): unknown[] {
  const value = typeof parent === 'object' && parent !== null ? (parent as Record<string, unknown>)[field] : undefined;
  return Array.isArray(value) ? value : [];
}

const malformedId = new Uint8Array(1);

function hexFieldsToBytes(target: unknown, fields: readonly string[]): void {
  if (typeof target !== 'object' || target === null) return;
  const record = target as Record<string, unknown>;
  for (const field of fields) {
    const hex = record[field];
    if (typeof hex !== 'string') continue;
    record[field] = hex.length % 2 === 0 && /^[0-9a-fA-F]*$/.test(hex) ? Buffer.from(hex, 'hex') : malformedId;
  }
}
