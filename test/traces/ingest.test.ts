// OTLP/HTTP ingestion end to end: the real OpenTelemetry exporters (protobuf and JSON, with and
// without gzip) sending to the running service, then the span queries over HTTP.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { gzipSync } from 'node:zlib';
import { exportRequestType } from '../../src/traces/otlp.ts';
import type { KvOp, LateWrite } from '../../src/store/kv.ts';
import { MemoryKv } from '../../src/store/memory-kv.ts';
import type { Client } from '../helpers/client.ts';
import { FaultyKv } from '../helpers/faulty-kv.ts';
import { createApiKey, memberWithProject } from '../helpers/fixtures.ts';
import { withService, type Running } from '../helpers/service.ts';
import { until } from '../helpers/wait.ts';
import { baseNs, exporting, ms, otlpJson, postJson, protobufOf, spanId, SpanKind, SpanStatusCode, traceId } from './helpers.ts';

const responseType = exportRequestType().root.lookupType('opentelemetry.proto.collector.trace.v1.ExportTraceServiceResponse');

async function keyed(running: Running) {
  const { member, project } = await memberWithProject(running.client);
  const key = await createApiKey(member.client, project.id);
  return { member, project, key: key.key as string, keyClient: running.client.as({ apiKey: key.key }) };
}

for (const storage of ['memory', 'lmdb'] as const) {
  test(`the protobuf exporter's spans are listed one row per trace, and a trace answers with its spans in start order (${storage})`, () =>
    withService(
      async (running) => {
        const { member, project, key } = await keyed(running);
        const otel = exporting(running.url, { protocol: 'protobuf', headers: { 'x-api-key': key } });
        // Explicit start times: the SDK's clock has millisecond steps, and equal starts tie on span_id.
        const now = Date.now();
        const root = otel.start('agent.run', { kind: SpanKind.SERVER, attributes: { 'gen_ai.operation.name': 'invoke_agent' }, startTime: now });
        const child = otel.start('llm.call', {
          parent: root,
          kind: SpanKind.CLIENT,
          attributes: { 'gen_ai.request.model': 'claude', tokens: 120 },
          startTime: now + 5,
        });
        child.addEvent('retry', { attempt: 2 });
        child.setStatus({ code: SpanStatusCode.ERROR, message: 'rate limited' });
        child.end(now + 20);
        root.end(now + 30);
        await otel.flush();
        await otel.shutdown();

        const list = await member.client.get('/api/traces/');
        assert.is(list.status, 200);
        assert.is(list.body.count, 1);
        const row = list.body.results[0];
        assert.is(row.name, 'agent.run');
        assert.is(row.parent_span_id, null);
        assert.is(row.project, project.id);
        assert.is(row.kind, 2);
        assert.is(row.operation, 'invoke_agent');
        assert.is(row.service_name, 'test-service');
        assert.is(row.scope_name, 'overmind-tests');
        assert.is(row.scope_version, '1.2.3');
        assert.match(row.trace_id, /^[0-9a-f]{32}$/);
        assert.match(row.span_id, /^[0-9a-f]{16}$/);

        const trace = await member.client.get(`/api/traces/${row.trace_id}/`);
        assert.is(trace.status, 200);
        assert.equal(Object.keys(trace.body), ['trace_id', 'root', 'span_count', 'spans']);
        assert.is(trace.body.span_count, 2);
        assert.equal(trace.body.spans.map((span: any) => span.name), ['agent.run', 'llm.call']);
        const llm = trace.body.spans[1];
        assert.is(llm.parent_span_id, row.span_id);
        assert.is(llm.kind, 3);
        assert.is(llm.status_code, 2);
        assert.is(llm.status_message, 'rate limited');
        assert.equal(llm.attributes, { 'gen_ai.request.model': 'claude', tokens: 120 });
        assert.equal(llm.events.map((event: any) => [event.name, event.attributes]), [['retry', { attempt: 2 }]]);
        // The SDK turns millisecond times into nanoseconds with float error.
        assert.ok(Math.abs(llm.duration_ns - 15_000_000) < 1000, `duration ${llm.duration_ns}`);
        assert.equal(llm.resource_attrs['service.name'], 'test-service');
      },
      { lmdb: storage === 'lmdb' },
    ));
}

test('the JSON exporter with gzip and a Bearer token exports to /api/v1/traces', () =>
  withService(async (running) => {
    const { member, project } = await memberWithProject(running.client);
    const otel = exporting(running.url, {
      protocol: 'json',
      headers: { authorization: `Bearer ${member.access}` },
      gzip: true,
      path: '/api/v1/traces',
      resource: { 'service.name': 'json-service' },
    });
    const now = Date.now();
    ['first', 'second', 'third'].forEach((name, index) => otel.start(name, { startTime: now + index }).end());
    await otel.flush();
    await otel.shutdown();
    const list = await member.client.get('/api/traces/', { ordering: 'start_time_ns' });
    assert.equal(list.body.results.map((row: any) => [row.name, row.project, row.service_name]), [
      ['first', project.id, 'json-service'],
      ['second', project.id, 'json-service'],
      ['third', project.id, 'json-service'],
    ]);
  }));

test('the protobuf exporter with gzip and an API key in the Authorization header is stored', () =>
  withService(async (running) => {
    const { member, key } = await keyed(running);
    const otel = exporting(running.url, { protocol: 'protobuf', headers: { authorization: `Api-Key ${key}` }, gzip: true });
    otel.start('compressed').end();
    await otel.flush();
    await otel.shutdown();
    assert.equal((await member.client.get('/api/traces/')).body.results.map((row: any) => row.name), ['compressed']);
  }));

test('an export answers ExportTraceServiceResponse in the encoding of the request', () =>
  withService(async (running) => {
    const { keyClient } = await keyed(running);
    const body = otlpJson({ 'service.name': 'svc' }, [{ traceId: traceId(1), spanId: spanId(1), start: baseNs, end: baseNs + ms(1) }]);
    const json = await postJson(keyClient, body);
    assert.is(json.status, 200);
    assert.match(json.headers.get('content-type') ?? '', /^application\/json/);
    assert.equal(json.body, {});
    const protobuf = await postProtobuf(running, keyClient, body);
    assert.is(protobuf.status, 200);
    assert.is(protobuf.contentType, 'application/x-protobuf');
    assert.equal(responseType.toObject(responseType.decode(protobuf.bytes)), {});
  }));

test('a retried export stores nothing twice, in either encoding', () =>
  withService(async (running) => {
    const { member, keyClient } = await keyed(running);
    const body = otlpJson({ 'service.name': 'svc' }, [
      { traceId: traceId(7), spanId: spanId(1), start: baseNs, end: baseNs + ms(5) },
      { traceId: traceId(7), spanId: spanId(2), parentSpanId: spanId(1), start: baseNs + ms(1), end: baseNs + ms(2) },
      { traceId: traceId(7), spanId: spanId(2), parentSpanId: spanId(1), start: baseNs + ms(1), end: baseNs + ms(2) },
    ]);
    for (let attempt = 0; attempt < 3; attempt++) assert.is((await postJson(keyClient, body)).status, 200);
    const protobuf = await keyClient.request('POST', '/v1/traces', protobufOf(body), { 'content-type': 'application/x-protobuf' });
    assert.is(protobuf.status, 200);
    assert.is((await member.client.get('/api/traces/', { all_spans: true })).body.count, 2);
    assert.is((await member.client.get('/api/traces/')).body.count, 1);
    assert.is((await member.client.get(`/api/traces/${traceId(7)}/`)).body.span_count, 2);
  }));

test('concurrent copies of one export store each span once', () =>
  withService(async (running) => {
    const { member, keyClient } = await keyed(running);
    const spans = Array.from({ length: 20 }, (_, i) => ({ traceId: traceId(3), spanId: spanId(i + 1), start: baseNs + ms(i), end: baseNs + ms(i + 1) }));
    const replies = await Promise.all(Array.from({ length: 6 }, () => postJson(keyClient, otlpJson({ 'service.name': 'svc' }, spans))));
    assert.equal(replies.map((reply) => reply.status), [200, 200, 200, 200, 200, 200]);
    assert.is((await member.client.get('/api/traces/', { all_spans: true })).body.count, 20);
  }));

test('spans with malformed ids are refused on their own, reported as partial success', () =>
  withService(async (running) => {
    const { member, keyClient } = await keyed(running);
    const body = otlpJson({ 'service.name': 'svc' }, [
      { traceId: traceId(1), spanId: spanId(1), start: baseNs, end: baseNs + ms(1) },
      { traceId: 'abc', spanId: spanId(2), start: baseNs, end: baseNs + ms(1) },
      { traceId: traceId(0), spanId: spanId(3), start: baseNs, end: baseNs + ms(1) },
      { traceId: traceId(1), spanId: 'zz'.repeat(8), start: baseNs, end: baseNs + ms(1) },
      { traceId: traceId(1), spanId: spanId(5), parentSpanId: 'abcd', start: baseNs, end: baseNs + ms(1) },
    ]);
    const reply = await postJson(keyClient, body);
    assert.is(reply.status, 200);
    assert.is(reply.body.partialSuccess.rejectedSpans, '4');
    assert.match(reply.body.partialSuccess.errorMessage, /trace_id must be 16 bytes/);
    const protobuf = await postProtobuf(running, keyClient, body);
    const decoded = responseType.toObject(responseType.decode(protobuf.bytes), { longs: Number });
    assert.is(decoded.partialSuccess.rejectedSpans, 4);
    const spans = await member.client.get('/api/traces/', { all_spans: true });
    assert.equal(spans.body.results.map((span: any) => span.span_id), [spanId(1)]);
  }));

test('an undecodable body is 400 in DRF shape, and stores nothing', () =>
  withService(async (running) => {
    const { member, keyClient } = await keyed(running);
    const garbage = await keyClient.request('POST', '/v1/traces', new Uint8Array([0x0a, 0xff, 0xff, 0xff, 0x0f, 0x01]), {
      'content-type': 'application/x-protobuf',
    });
    assert.is(garbage.status, 400);
    assert.is(garbage.body.code, 'parse_error');
    assert.match(garbage.body.detail, /^Protobuf parse error - /);
    const badJson = await keyClient.request('POST', '/v1/traces', '{"resourceSpans": [', { 'content-type': 'application/json' });
    assert.is(badJson.status, 400);
    assert.is(badJson.body.code, 'parse_error');
    assert.match(badJson.body.detail, /^JSON parse error - /);
    const wrongShape = await keyClient.request('POST', '/v1/traces', '{"resourceSpans": 5}', { 'content-type': 'application/json' });
    assert.is(wrongShape.status, 400);
    assert.match(wrongShape.body.detail, /resourceSpans: array expected/);
    const notObject = await keyClient.request('POST', '/v1/traces', '[1, 2]', { 'content-type': 'application/json' });
    assert.is(notObject.status, 400);
    const notGzip = await keyClient.request('POST', '/v1/traces', '{}', { 'content-type': 'application/json', 'content-encoding': 'gzip' });
    assert.is(notGzip.status, 400);
    assert.match(notGzip.body.detail, /^Gzip parse error - /);
    assert.is((await member.client.get('/api/traces/', { all_spans: true })).body.count, 0);
  }));

test('attribute values nested past the depth limit are refused with 400', () =>
  withService(
    async (running) => {
      const { keyClient } = await keyed(running);
      let value: object = { stringValue: 'deep' };
      for (let i = 0; i < 5; i++) value = { arrayValue: { values: [value] } };
      const body = otlpJson({}, [{ traceId: traceId(1), spanId: spanId(1), start: baseNs, end: baseNs }]) as any;
      body.resourceSpans[0].scopeSpans[0].spans[0].attributes = [{ key: 'deep', value }];
      const reply = await postJson(keyClient, body);
      assert.is(reply.status, 400);
      assert.equal(reply.body, { detail: 'attribute values nest deeper than 4 levels', code: 'parse_error' });
    },
    { limits: { jsonDepthMax: 4 } },
  ));

test('an export in another media type or content encoding is 415', () =>
  withService(async (running) => {
    const { keyClient } = await keyed(running);
    const text = await keyClient.request('POST', '/v1/traces', 'hello', { 'content-type': 'text/plain' });
    assert.is(text.status, 415);
    assert.equal(text.body, { detail: 'Unsupported media type "text/plain" in request.', code: 'unsupported_media_type' });
    const brotli = await keyClient.request('POST', '/v1/traces', '{}', { 'content-type': 'application/json', 'content-encoding': 'br' });
    assert.is(brotli.status, 415);
  }));

test('an export without credentials is 401, with bad credentials 401', () =>
  withService(async (running) => {
    const body = otlpJson({}, [{ traceId: traceId(1), spanId: spanId(1), start: baseNs, end: baseNs }]);
    const anonymous = await postJson(running.client, body);
    assert.is(anonymous.status, 401);
    assert.is(anonymous.body.code, 'not_authenticated');
    const wrongKey = await postJson(running.client.as({ apiKey: `ovr_${'x'.repeat(43)}` }), body);
    assert.is(wrongKey.status, 401);
    assert.is((await postJson(running.client, body, { path: '/api/v1/traces' })).status, 401);
  }));

test('a body over traceBodyBytesMax is 413, counting decompressed bytes', () =>
  withService(
    async (running) => {
      const { member, keyClient } = await keyed(running);
      const spans = Array.from({ length: 30 }, (_, i) => ({ traceId: traceId(1), spanId: spanId(i + 1), start: baseNs, end: baseNs }));
      const body = otlpJson({ 'service.name': 'svc' }, spans);
      assert.ok(JSON.stringify(body).length > 4000 && gzipSync(JSON.stringify(body)).length < 4000);
      const plain = await postJson(keyClient, body);
      assert.is(plain.status, 413);
      assert.is(plain.body.code, 'payload_too_large');
      const compressed = await postJson(keyClient, body, { gzip: true });
      assert.is(compressed.status, 413);
      const more = otlpJson({}, Array.from({ length: 100 }, (_, i) => ({ traceId: traceId(1), spanId: spanId(i + 1), start: baseNs, end: baseNs })));
      assert.ok(protobufOf(more).length > 4000);
      assert.is((await postProtobuf(running, keyClient, more)).status, 413);
      assert.is((await member.client.get('/api/traces/', { all_spans: true })).body.count, 0);
    },
    { limits: { traceBodyBytesMax: 4000 } },
  ));

test('an export of more than spanBatchMax spans is 413', () =>
  withService(
    async (running) => {
      const { member, keyClient } = await keyed(running);
      const spans = (count: number) => Array.from({ length: count }, (_, i) => ({ traceId: traceId(1), spanId: spanId(i + 1), start: baseNs, end: baseNs }));
      const over = await postJson(keyClient, otlpJson({}, spans(4)));
      assert.is(over.status, 413);
      assert.equal(over.body, { detail: 'An export may hold at most 3 spans, not 4.', code: 'payload_too_large' });
      assert.is((await postJson(keyClient, otlpJson({}, spans(3)))).status, 200);
      assert.is((await member.client.get('/api/traces/', { all_spans: true })).body.count, 3);
    },
    { limits: { spanBatchMax: 3 } },
  ));

test('exports past traceQueueSpansMax waiting spans get 503 with Retry-After, the waiting ones complete', async () => {
  const kv = new FaultyKv(new MemoryKv());
  await withService(
    async (running) => {
      // A user token, not an API key: a key's first use records last_used_at, a write of its own.
      const { member } = await memberWithProject(running.client);
      const batch = (n: number) => otlpJson({}, [1, 2].map((i) => ({ traceId: traceId(n), spanId: spanId(i), start: baseNs, end: baseNs })));
      const release = kv.holdWrites();
      const writing = postJson(member.client, batch(1));
      await writeReached(kv);
      // Of two more exports, one waits (the queue was empty) and the other finds it full.
      const [second, third] = [postJson(member.client, batch(2)), postJson(member.client, batch(3))];
      const refused = await Promise.race([second, third]);
      assert.is(refused.status, 503);
      assert.is(refused.body.code, 'unavailable');
      assert.ok(Number(refused.headers.get('retry-after')) >= 1);
      release();
      assert.is((await writing).status, 200);
      assert.equal([(await second).status, (await third).status].sort(), [200, 503]);
      assert.is((await member.client.get('/api/traces/', { all_spans: true })).body.count, 4);
    },
    { kv, limits: { traceQueueSpansMax: 2 } },
  );
});

test('waiting exports are written together, at most traceCommitSpansMax spans per commit', async () => {
  const recording = new RecordingKv();
  const kv = new FaultyKv(recording);
  await withService(
    async (running) => {
      // A user token, not an API key: a key's first use records last_used_at, a write of its own.
      const { member } = await memberWithProject(running.client);
      const spansDb = running.service.deps.traces.store.spans;
      const batch = (n: number) => otlpJson({}, [1, 2].map((i) => ({ traceId: traceId(n), spanId: spanId(i), start: baseNs, end: baseNs })));
      const release = kv.holdWrites();
      const first = postJson(member.client, batch(1));
      await writeReached(kv);
      const rest = [2, 3, 4, 5].map((n) => postJson(member.client, batch(n)));
      // Let the four exports reach the writer's queue behind the held commit.
      await new Promise((resolve) => setTimeout(resolve, 200));
      release();
      for (const reply of await Promise.all([first, ...rest])) assert.is(reply.status, 200);
      const spanCommits = recording.commits.map((ops) => ops.filter((op) => op.db === spansDb).length).filter((count) => count > 0);
      assert.is(spanCommits.reduce((total, count) => total + count, 0), 10);
      assert.ok(spanCommits.every((count) => count <= 4), `commits of ${spanCommits}`);
      assert.ok(spanCommits.some((count) => count === 4), `waiting exports shared a commit: ${spanCommits}`);
      assert.is((await member.client.get('/api/traces/', { all_spans: true })).body.count, 10);
    },
    { kv, limits: { traceCommitSpansMax: 4 } },
  );
});

test('an export whose commit fails is 503 and leaves nothing behind; the next export is stored', async () => {
  const kv = new FaultyKv(new MemoryKv());
  await withService(
    async (running) => {
      // A user token, not an API key: a key's first use records last_used_at, a write of its own.
      const { member } = await memberWithProject(running.client);
      const body = otlpJson({}, [{ traceId: traceId(1), spanId: spanId(1), start: baseNs, end: baseNs }]);
      kv.failWith = new Error('disk full');
      const failed = await postJson(member.client, body);
      kv.failWith = null;
      assert.is(failed.status, 503);
      assert.is(failed.body.code, 'unavailable');
      assert.is((await member.client.get('/api/traces/', { all_spans: true })).body.count, 0);
      assert.is((await postJson(member.client, body)).status, 200);
      assert.is((await member.client.get('/api/traces/', { all_spans: true })).body.count, 1);
    },
    { kv },
  );
});

/** Posts `json` transcoded to protobuf with the client's credentials; the answer as bytes. */
async function postProtobuf(running: Running, client: Client, json: object) {
  const credentials = client.credentials as { apiKey: string };
  const response = await fetch(`${running.url}/v1/traces`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-protobuf', 'x-api-key': credentials.apiKey },
    body: protobufOf(json) as BodyInit,
  });
  return { status: response.status, contentType: response.headers.get('content-type'), bytes: new Uint8Array(await response.arrayBuffer()) };
}

/** Resolves once a write has reached the store (and is held there). */
function writeReached(kv: FaultyKv): Promise<void> {
  const before = kv.writes;
  return until(() => kv.writes > before, 'a write reached the store');
}

/** A MemoryKv that remembers the ops of every commit. */
class RecordingKv extends MemoryKv {
  commits: KvOp[][] = [];

  override write(late: readonly KvOp[] | (() => LateWrite)): Promise<void> {
    const write = typeof late === 'function' ? late() : { ops: late };
    this.commits.push([...write.ops]);
    return super.write(() => write);
  }
}

test.run();
