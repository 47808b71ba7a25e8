// How much one trace may hold (spansPerTraceMax), and stores written before this build's layout:
// link entries keyed without `since`, and span details packed as SpanDetail.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { MemoryKv } from '../../src/store/memory-kv.ts';
import { exportRequestType } from '../../src/traces/otlp.ts';
import { pack, spanJson, type SpanRecord } from '../../src/traces/span-record.ts';
import { migrateSpanLayout } from '../../src/traces/span-layout.ts';
import { SpanStore } from '../../src/traces/span-store.ts';
import { fullBounds } from '../../src/traces/span-query.ts';
import { createApiKey, memberWithProject } from '../helpers/fixtures.ts';
import { withService } from '../helpers/service.ts';
import { baseNs, ms, otlpJson, postJson, protobufOf, spanId, traceId } from './helpers.ts';

const responseType = exportRequestType().root.lookupType('opentelemetry.proto.collector.trace.v1.ExportTraceServiceResponse');

test('new spans of a trace that holds spansPerTraceMax spans are refused, counted in partial_success; resent ones are not', () =>
  withService(
    async ({ client, url }) => {
      const { member, project } = await memberWithProject(client);
      const key = (await createApiKey(member.client, project.id)).key as string;
      const keyClient = client.as({ apiKey: key });
      const body = otlpJson({ 'service.name': 'svc' }, [
        ...[1, 2, 3, 4, 5].map((n) => ({ traceId: traceId(1), spanId: spanId(n), name: `s${n}`, start: baseNs + ms(n), end: baseNs + ms(n + 1) })),
        { traceId: traceId(2), spanId: spanId(6), name: 'other trace', start: baseNs, end: baseNs },
      ]);
      const first = await postJson(keyClient, body);
      assert.is(first.status, 200);
      assert.is(first.body.partialSuccess.rejectedSpans, '2');
      assert.match(first.body.partialSuccess.errorMessage, /a trace holds at most 3 spans/);
      const trace = await member.client.get(`/api/traces/${traceId(1)}/`);
      assert.equal(trace.body.spans.map((span: any) => span.name), ['s1', 's2', 's3']);
      assert.is((await member.client.get(`/api/traces/${traceId(2)}/`)).body.span_count, 1);
      // The three stored spans are duplicates now, not refusals; the other two are refused again.
      const again = await fetch(`${url}/v1/traces`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-protobuf', 'x-api-key': key },
        body: protobufOf(body) as BodyInit,
      });
      const decoded = responseType.toObject(responseType.decode(new Uint8Array(await again.arrayBuffer())), { longs: Number });
      assert.is(decoded.partialSuccess.rejectedSpans, 2);
      assert.is((await member.client.get('/api/traces/', { all_spans: true })).body.count, 4);
    },
    { limits: { spansPerTraceMax: 3 } },
  ));

const project = 'project-a';

function span(trace: number, n: number, fields: Partial<SpanRecord> = {}): SpanRecord {
  const start = (1000 + n).toString(16).padStart(16, '0');
  return {
    trace_id: traceId(trace), span_id: spanId(n), parent_span_id: '', project, agent: null, job: 'job-1', iteration: null,
    name: `span ${n}`, kind: 1, operation: '', service_name: 'svc', start_time_ns: start, end_time_ns: start,
    duration_ns: 0, status_code: 0, tokens: 0, received_at: 0,
    detail: pack({ status_message: '', attributes: { n }, events: [], links: [], scope_name: 'scope', scope_version: '1' }),
    resource: pack({ 'service.name': 'svc' }),
    ...fields,
  };
}

test('the limit counts per trace, across batches and decisions, and a repeated span is never refused', async () => {
  const store = new SpanStore(new MemoryKv(), 2);
  const first = store.ingestOps([[span(1, 1), span(1, 2), span(1, 3)], [span(1, 4), span(2, 5)]]);
  assert.equal(first.stored, [2, 1]);
  assert.equal(first.refused, [1, 1]);
  await store.kv.write(first.ops);
  const again = store.ingestOps([[span(1, 1), span(1, 6)]]);
  assert.equal([again.stored, again.refused], [[0], [1]]);
  assert.is(store.spanCount(project, 'all', ''), 3);
});

test('a trace stored before link entries carried `since` is migrated when the store opens: its link entries are keyed by its start', async () => {
  const kv = new MemoryKv();
  const earlier = new SpanStore(kv);
  // As an earlier build wrote one span of a trace: no `since` in its entry, links keyed without it.
  const old = span(1, 1);
  const { trace_id, span_id, start_time_ns, project: _, ...stored } = old;
  const ref = [span_id, start_time_ns, true] as const;
  await kv.write([
    { db: earlier.spans, key: [project, start_time_ns, trace_id, span_id], value: stored },
    { db: kv.db('traces'), key: [trace_id, project], value: { head: ref, spans: [ref], tokens: 0 } },
    { db: earlier.order, key: [project, start_time_ns, trace_id], value: span_id },
    { db: earlier.links, key: [project, 'job', 'job-1', trace_id], value: [[start_time_ns, span_id]] },
    { db: earlier.counts, key: [project, 'all', '', 'svc'], value: 1 },
    { db: earlier.counts, key: [project, 'job', 'job-1', 'svc'], value: 1 },
    { db: earlier.counts, key: [project, 'traces'], value: 1 },
  ]);
  // The store opens on it: its entry and link entry are migrated first.
  await migrateSpanLayout(kv);
  const store = new SpanStore(kv);
  await kv.write(store.ingestOps([[span(1, 2, { parent_span_id: spanId(1) }), span(2, 3)]]).ops);
  const linked = (trace: number) => [...store.linkedSpans(project, 'job', 'job-1', fullBounds, false)].filter((s) => s.trace_id === traceId(trace));
  assert.equal(linked(1).map((s) => s.span_id), [spanId(1), spanId(2)]);
  assert.equal([...store.links.keys({})].map((key) => key.length).sort(), [5, 5]);
  assert.equal([...store.linkedHeads(project, 'job', 'job-1', fullBounds, false)].map((s) => s.span_id), [spanId(1), spanId(3)]);
  await kv.write(store.removalOps(project, null, 10).ops);
  for (const db of [store.spans, store.traces, kv.db('traces'), store.order, store.links, store.counts]) assert.equal([...db.keys({})], []);
});

test('a span whose detail was packed as a SpanDetail (stores written before) reads as it did', () => {
  const json = spanJson(span(1, 1));
  assert.equal([json.attributes, json.events, json.links, json.scope_name, json.scope_version, json.resource_attrs], [
    { n: 1 }, [], [], 'scope', '1', { 'service.name': 'svc' },
  ]);
});

test.run();
