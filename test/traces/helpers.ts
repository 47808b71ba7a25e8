// Fixtures for the trace tests: real OpenTelemetry SDK exporters pointed at the running service,
// and hand-built OTLP/JSON bodies for exact control over ids and times.
import { context, trace, SpanKind, SpanStatusCode, type Attributes, type Span, type Tracer } from '@opentelemetry/api';
import { OTLPTraceExporter as HttpJsonExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { OTLPTraceExporter as ProtobufExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BasicTracerProvider, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { gzipSync } from 'node:zlib';
import * as assert from 'uvu/assert';
import { exportRequestType, messageFromOtlpJson } from '../../src/traces/otlp.ts';
import type { Client, Reply } from '../helpers/client.ts';

export { SpanKind, SpanStatusCode };

type ExporterConfig = NonNullable<ConstructorParameters<typeof ProtobufExporter>[0]>;

export interface ExporterOptions {
  /** OTLP/HTTP protobuf or OTLP/HTTP JSON. */
  protocol: 'protobuf' | 'json';
  headers: Record<string, string>;
  resource?: Attributes;
  gzip?: boolean;
  /** Which ingest path: the OTLP default (/v1/traces) or the API's (/api/v1/traces). */
  path?: '/v1/traces' | '/api/v1/traces';
}

export interface Exporting {
  tracer: Tracer;
  /** Starts a span as a child of `parent` (or a root), at `startTime` (ms since the epoch) or now. */
  start(name: string, options?: { parent?: Span; kind?: SpanKind; attributes?: Attributes; startTime?: number }): Span;
  /** Waits until every ended span is exported, and fails the test if an export failed. */
  flush(): Promise<void>;
  shutdown(): Promise<void>;
}

/** A tracer provider exporting every ended span to the service with a real OTLP exporter. */
export function exporting(baseUrl: string, options: ExporterOptions): Exporting {
  const config = {
    url: `${baseUrl}${options.path ?? '/v1/traces'}`,
    headers: options.headers,
    ...(options.gzip ? { compression: 'gzip' as ExporterConfig['compression'] } : {}),
  };
  const exporter = options.protocol === 'protobuf' ? new ProtobufExporter(config) : new HttpJsonExporter(config);
  const failures: unknown[] = [];
  const processor = new SimpleSpanProcessor({
    export: (spans, done) =>
      exporter.export(spans, (result) => {
        if (result.error) failures.push(result.error);
        done(result);
      }),
    shutdown: () => exporter.shutdown(),
    forceFlush: () => exporter.forceFlush(),
  });
  const provider = new BasicTracerProvider({
    resource: resourceFromAttributes({ 'service.name': 'test-service', ...options.resource }),
    spanProcessors: [processor],
  });
  const tracer = provider.getTracer('overmind-tests', '1.2.3');
  return {
    tracer,
    start(name, { parent, kind, attributes, startTime } = {}) {
      const parentContext = parent ? trace.setSpan(context.active(), parent) : context.active();
      return tracer.startSpan(name, { kind, attributes, startTime }, parentContext);
    },
    async flush() {
      await provider.forceFlush();
      assert.equal(failures.map(String), [], 'every export succeeded');
    },
    shutdown: () => provider.shutdown(),
  };
}

export interface JsonSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name?: string;
  kind?: number;
  /** Nanoseconds since the epoch. */
  start: bigint;
  end: bigint;
  attributes?: Record<string, string | number | boolean>;
  status?: { code: number; message?: string };
}

/** An OTLP/JSON export request with one resource. */
export function otlpJson(resource: Record<string, string>, spans: JsonSpan[]): object {
  return {
    resourceSpans: [
      {
        resource: { attributes: keyValues(resource) },
        scopeSpans: [
          {
            scope: { name: 'hand-built', version: '0.1' },
            spans: spans.map((span) => ({
              traceId: span.traceId,
              spanId: span.spanId,
              parentSpanId: span.parentSpanId ?? '',
              name: span.name ?? 'span',
              kind: span.kind ?? 1,
              startTimeUnixNano: span.start.toString(),
              endTimeUnixNano: span.end.toString(),
              attributes: keyValues(span.attributes ?? {}),
              ...(span.status ? { status: span.status } : {}),
            })),
          },
        ],
      },
    ],
  };
}

function keyValues(attributes: Record<string, string | number | boolean>) {
  return Object.entries(attributes).map(([key, value]) => ({
    key,
    value:
      typeof value === 'string'
        ? { stringValue: value }
        : typeof value === 'boolean'
          ? { boolValue: value }
          : Number.isInteger(value)
            ? { intValue: value }
            : { doubleValue: value },
  }));
}

/** Posts an OTLP/JSON body as the client; `gzip` compresses it. */
export function postJson(client: Client, body: object, options: { gzip?: boolean; path?: string } = {}): Promise<Reply> {
  const text = JSON.stringify(body);
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (options.gzip) headers['content-encoding'] = 'gzip';
  return client.request('POST', options.path ?? '/v1/traces', options.gzip ? gzipSync(text) : text, headers);
}

/** OTLP/JSON transcoded to protobuf, as the protobuf exporter would send it. */
export function protobufOf(json: object): Uint8Array {
  return exportRequestType().encode(messageFromOtlpJson(json)).finish();
}

/** A hex id of `bytes` bytes built from a small number, so tests can name ids. */
export function hexId(bytes: 8 | 16, n: number): string {
  return n.toString(16).padStart(bytes * 2, '0');
}

export const traceId = (n: number) => hexId(16, n);
export const spanId = (n: number) => hexId(8, n);

/** A fixed base time: 2026-01-01T00:00:00Z in nanoseconds. */
export const baseNs = 1_767_225_600_000_000_000n;
export const ms = (n: number) => BigInt(n) * 1_000_000n;
