// OTLP/HTTP export requests and responses. A protobuf body is read straight from the wire
// (otlp-wire.ts); an OTLP/JSON body goes through the protobuf JSON mapping of protobufjs, from the
// official OpenTelemetry .proto files in ./proto, once its hex ids are bytes, and is read from
// the protobuf it encodes to, so both encodings end in the same ExportRequest.
import { createRequire } from 'node:module';
import { join } from 'node:path';
import type { Message, Type } from 'protobufjs';
import { protoDir } from '../assets.ts';
import { readExportRequest, type ExportRequest } from './otlp-wire.ts';

export type OtlpEncoding = 'protobuf' | 'json';

/** A body that is not an OTLP export request in its declared encoding. */
export class OtlpDecodeError extends Error {
  constructor(readonly encoding: OtlpEncoding, reason: string) {
    super(reason);
    this.name = 'OtlpDecodeError';
  }
}

const require = createRequire(import.meta.url);
let types: { request: Type; response: Type } | undefined;

/**
 * The OTLP message types, made on first use from the .proto files by the whole of protobufjs (the
 * wire reader needs only its minimal part): ~90 ms left out of the start.
 */
function otlpTypes(): { request: Type; response: Type } {
  if (!types) {
    // CommonJS, so required synchronously here.
    const protobuf = require('protobufjs') as typeof import('protobufjs');
    const root = new protobuf.Root();
    // Imports in the official files are written from the proto root, not relative to the importer.
    root.resolvePath = (_origin, target) => join(protoDir, target);
    root.loadSync('opentelemetry/proto/collector/trace/v1/trace_service.proto');
    types = {
      request: root.lookupType('opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest'),
      response: root.lookupType('opentelemetry.proto.collector.trace.v1.ExportTraceServiceResponse'),
    };
  }
  return types;
}

/** The protobufjs type of ExportTraceServiceRequest (clients and tests encode requests with it). */
export function exportRequestType(): Type {
  return otlpTypes().request;
}

export function decodeExportRequest(body: Uint8Array, encoding: OtlpEncoding): ExportRequest {
  if (encoding === 'protobuf') return decoded(encoding, () => readExportRequest(body, true));
  const transcoded = protobufOfOtlpJson(body);
  if ('error' in transcoded) throw new OtlpDecodeError(encoding, transcoded.error);
  return readTranscoded(transcoded.bytes);
}

/**
 * An OTLP/JSON body as the protobuf it maps to, or why it maps to none: the JSON half of decoding,
 * which a compute task runs off the event loop for a long body (~30 ns a byte: 150 ms for 10,000
 * spans). Answers the error rather than throwing it, so that it crosses a worker thread as data.
 */
export function protobufOfOtlpJson(body: Uint8Array): { bytes: Uint8Array } | { error: string } {
  // Made outside the reading: .proto files that cannot be loaded are the service's fault (500), not the request's (400).
  const requestType = exportRequestType();
  try {
    const text = Buffer.from(body.buffer, body.byteOffset, body.byteLength).toString('utf8');
    const parsed: unknown = text.trim() === '' ? {} : JSON.parse(text);
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
      throw new Error('an OTLP/JSON export request is a JSON object');
    }
    return { bytes: requestType.encode(messageFromOtlpJson(parsed)).finish() };
  } catch (error) {
    return { error: error instanceof Error ? error.message : String(error) };
  }
}

/** The export request an OTLP/JSON body transcoded to (protobufOfOtlpJson), read as the JSON's. */
export function readTranscoded(bytes: Uint8Array): ExportRequest {
  return decoded('json', () => readExportRequest(bytes, false));
}

/** What `read` reads; the readers report truncated or malformed input (and input nested past the stack) by throwing. */
function decoded(encoding: OtlpEncoding, read: () => ExportRequest): ExportRequest {
  try {
    return read();
  } catch (error) {
    throw new OtlpDecodeError(encoding, error instanceof Error ? error.message : String(error));
  }
}

/** An OTLP/JSON export request (already parsed) as a protobufjs message, ready to read or encode. */
export function messageFromOtlpJson(json: object): Message {
  const request = exportRequestType();
  const object = withBinaryIds(camelCaseKeys(json));
  checkNumericFields(request, object, []);
  return request.fromObject(object as Record<string, unknown>);
}

const int32Range = [-(2n ** 31n), 2n ** 31n - 1n] as const;
const uint32Range = [0n, 2n ** 32n - 1n] as const;
const int64Range = [-(2n ** 63n), 2n ** 63n - 1n] as const;
const uint64Range = [0n, 2n ** 64n - 1n] as const;
const integerRanges: Readonly<Record<string, readonly [bigint, bigint]>> = {
  int32: int32Range, sint32: int32Range, sfixed32: int32Range, uint32: uint32Range, fixed32: uint32Range,
  int64: int64Range, sint64: int64Range, sfixed64: int64Range, uint64: uint64Range, fixed64: uint64Range,
};
const integerText = /^-?[0-9]+$/;

/** A message type's fields that checkNumericFields looks at: its integer, enum and message fields. */
interface NumericFields {
  integers: { name: string; type: string; range: readonly [bigint, bigint]; repeated: boolean }[];
  enums: { name: string; type: string; values: Readonly<Record<string, number>> }[];
  messages: { name: string; type: Type; repeated: boolean }[];
}

const numericFieldsByType = new WeakMap<Type, NumericFields>();

function numericFieldsOf(type: Type): NumericFields {
  let plan = numericFieldsByType.get(type);
  if (!plan) {
    plan = { integers: [], enums: [], messages: [] };
    for (const field of type.fieldsArray) {
      const range = integerRanges[field.type];
      const nested = field.resolve().resolvedType;
      if (range) plan.integers.push({ name: field.name, type: field.type, range, repeated: field.repeated });
      else if (nested && 'fieldsArray' in nested) plan.messages.push({ name: field.name, type: nested as Type, repeated: field.repeated });
      else if (nested && 'values' in nested && !field.repeated) plan.enums.push({ name: field.name, type: nested.name, values: nested.values });
    }
    numericFieldsByType.set(type, plan);
  }
  return plan;
}

/**
 * Every integer field of a message as the protobuf JSON mapping takes it, a decimal string or an
 * integral number within the field's range, and every enum field, a name or an integer (made a
 * number here). protobufjs's fromObject would wrap an integer out of range (modulo 2^64) and read
 * anything else as 0; such a request is refused instead, as the mapping says. `at`: the field
 * names and indexes down to this message, written out only in an error (a path made for every
 * span would cost more than the check).
 */
function checkNumericFields(type: Type, message: unknown, at: (string | number)[]): void {
  if (typeof message !== 'object' || message === null || Array.isArray(message)) return;
  const object = message as Record<string, unknown>;
  const { integers, enums, messages } = numericFieldsOf(type);
  for (const field of integers) {
    const value = object[field.name];
    if (value === undefined || value === null) continue;
    if (!field.repeated || !Array.isArray(value)) {
      if (!isIntegerIn(value, field.range)) integerRefused(value, field, [...at, field.name]);
      continue;
    }
    for (let index = 0; index < value.length; index++) {
      if (!isIntegerIn(value[index], field.range)) integerRefused(value[index], field, [...at, field.name, index]);
    }
  }
  // An enum is one of its names or an integer (an int32: proto3's enums are open), as a number or
  // a decimal string; protobufjs reads a name it does not know, or the integer as a string, as 0.
  for (const field of enums) {
    const value = object[field.name];
    if (value === undefined || value === null || (typeof value === 'string' && Object.hasOwn(field.values, value))) continue;
    if (!isIntegerIn(value, int32Range)) enumRefused(value, field.type, [...at, field.name]);
    object[field.name] = Number(value);
  }
  for (const { name, type: nested, repeated } of messages) {
    const value = object[name];
    if (value === undefined || value === null) continue;
    at.push(name);
    if (!repeated || !Array.isArray(value)) {
      checkNumericFields(nested, value, at);
    } else {
      for (let index = 0; index < value.length; index++) {
        at.push(index);
        checkNumericFields(nested, value[index], at);
        at.pop();
      }
    }
    at.pop();
  }
}

function isIntegerIn(value: unknown, [min, max]: readonly [bigint, bigint]): boolean {
  if (typeof value === 'number') return Number.isInteger(value) && BigInt(value) >= min && BigInt(value) <= max;
  if (typeof value !== 'string' || !integerText.test(value)) return false;
  const exact = BigInt(value);
  return exact >= min && exact <= max;
}

function integerRefused(value: unknown, { type, range }: { type: string; range: readonly [bigint, bigint] }, at: readonly (string | number)[]): never {
  throw new Error(`${pathOf(at)}: ${JSON.stringify(value)} is not a ${type} (an integer from ${range[0]} to ${range[1]})`);
}

function enumRefused(value: unknown, type: string, at: readonly (string | number)[]): never {
  throw new Error(`${pathOf(at)}: ${JSON.stringify(value)} is not a ${type} (one of its names, or an integer)`);
}

function pathOf(at: readonly (string | number)[]): string {
  return at.map((part) => (typeof part === 'number' ? `[${part}]` : `.${part}`)).join('').slice(1);
}

/** ExportTraceServiceResponse in the request's encoding, with partial_success when spans were refused. */
export function encodeExportResponse(encoding: OtlpEncoding, rejectedSpans: number, errorMessage: string): Uint8Array | object {
  const { response: responseType } = otlpTypes();
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
