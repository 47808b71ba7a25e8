// The fields the original service's trace views carry beside OTLP's own: is_root, span_type and
// total_tokens, derived from what each span stores.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { MemoryKv } from '../../src/store/memory-kv.ts';
import { pack, type SpanRecord } from '../../src/traces/span-record.ts';
import { SpanStore } from '../../src/traces/span-store.ts';
import { spanTypeOf, tokensOf } from '../../src/traces/span-type.ts';
import { createApiKey, memberWithProject } from '../helpers/fixtures.ts';
import { withService } from '../helpers/service.ts';
import { baseNs, ms, otlpJson, postJson, spanId, traceId } from './helpers.ts';

test('span_type: the explicit attribute, else the operation, else tool, retrieval or model attributes, else workflow', () => {
  assert.is(spanTypeOf('chat', { 'overmind.span_type': ' guardrail ' }), 'guardrail');
  assert.is(spanTypeOf('', { 'overclaw.span_type': 'retrieval' }), 'retrieval');
  assert.is(spanTypeOf('chat', {}), 'llm_call');
  assert.is(spanTypeOf('Embeddings', {}), 'llm_call');
  assert.is(spanTypeOf('execute_tool', {}), 'tool_call');
  assert.is(spanTypeOf('invoke_agent', {}), 'workflow');
  assert.is(spanTypeOf('', { 'gen_ai.tool.name': 'search_kb' }), 'tool_call');
  assert.is(spanTypeOf('', { 'db.system': 'postgresql' }), 'retrieval');
  assert.is(spanTypeOf('', { 'gen_ai.request.model': 'gpt-4o' }), 'llm_call');
  assert.is(spanTypeOf('', { 'gen_ai.usage.input_tokens': 3 }), 'llm_call');
  assert.is(spanTypeOf('unknown-op', { 'http.method': 'GET' }), 'workflow');
  assert.is(spanTypeOf('', { 'overmind.span_type': '' }), 'workflow');
});

test('tokens: a sent total, else input plus output; anything not a whole non-negative count is ignored', () => {
  assert.is(tokensOf({ 'gen_ai.usage.total_tokens': 30, 'gen_ai.usage.input_tokens': 1 }), 30);
  assert.is(tokensOf({ 'gen_ai.usage.input_tokens': 12, 'gen_ai.usage.output_tokens': 8 }), 20);
  assert.is(tokensOf({ 'gen_ai.usage.prompt_tokens': 5, 'gen_ai.usage.completion_tokens': 2 }), 7);
  assert.is(tokensOf({ 'llm.usage.total_tokens': '42' }), 42);
  assert.is(tokensOf({ 'gen_ai.usage.total_tokens': 9007199254740993n }), 0);
  assert.is(tokensOf({ 'gen_ai.usage.total_tokens': -5, 'gen_ai.usage.output_tokens': 4 }), 4);
  assert.is(tokensOf({ 'gen_ai.usage.total_tokens': 2.5 }), 0);
  assert.is(tokensOf({}), 0);
});

test('trace rows count the whole trace\'s tokens; spans their own; every span says whether it is the root and its type', () =>
  withService(async ({ client }) => {
    const { member, project } = await memberWithProject(client);
    const keyClient = client.as({ apiKey: (await createApiKey(member.client, project.id)).key });
    const at = (milliseconds: number) => baseNs + ms(milliseconds);
    const body = otlpJson({ 'service.name': 'agent' }, [
      { traceId: traceId(1), spanId: spanId(1), name: 'run', start: at(0), end: at(100), attributes: { 'gen_ai.operation.name': 'invoke_agent' } },
      { traceId: traceId(1), spanId: spanId(2), parentSpanId: spanId(1), name: 'llm', start: at(10), end: at(50),
        attributes: { 'gen_ai.request.model': 'gpt-4o', 'gen_ai.usage.input_tokens': 100, 'gen_ai.usage.output_tokens': 20 } },
      { traceId: traceId(1), spanId: spanId(3), parentSpanId: spanId(1), name: 'tool', start: at(60), end: at(70),
        attributes: { 'gen_ai.tool.name': 'lookup', 'gen_ai.usage.total_tokens': 5 } },
      { traceId: traceId(2), spanId: spanId(4), name: 'lonely', start: at(200), end: at(210) },
    ]);
    assert.is((await postJson(keyClient, body)).status, 200);
    const rows = (await member.client.get('/api/traces/', { ordering: 'start_time_ns' })).body.results;
    assert.equal(rows.map((row: any) => [row.span_id, row.is_root, row.span_type, row.total_tokens]), [
      [spanId(1), true, 'workflow', 125],
      [spanId(4), true, 'workflow', 0],
    ]);
    const spans = (await member.client.get('/api/traces/', { all_spans: true, ordering: 'start_time_ns' })).body.results;
    assert.equal(spans.map((span: any) => [span.span_id, span.is_root, span.span_type, span.total_tokens]), [
      [spanId(1), true, 'workflow', 0],
      [spanId(2), false, 'llm_call', 120],
      [spanId(3), false, 'tool_call', 5],
      [spanId(4), true, 'workflow', 0],
    ]);
    const trace = (await member.client.get(`/api/traces/${traceId(1)}/`)).body;
    assert.equal([trace.root.span_id, trace.root.total_tokens], [spanId(1), 125]);
    assert.equal(trace.spans.map((span: any) => span.total_tokens), [0, 120, 5]);
    // A span sent again is not counted twice; a later span of the trace adds to its total.
    await postJson(keyClient, body);
    await postJson(keyClient, otlpJson({ 'service.name': 'agent' }, [
      { traceId: traceId(1), spanId: spanId(5), parentSpanId: spanId(1), name: 'late', start: at(80), end: at(90), attributes: { 'gen_ai.usage.total_tokens': 1 } },
    ]));
    assert.is((await member.client.get('/api/traces/', { ordering: 'start_time_ns' })).body.results[0].total_tokens, 126);
  }));

test("a trace's token total follows its spans as they are stored and removed", async () => {
  const kv = new MemoryKv();
  const store = new SpanStore(kv);
  const span = (n: number, tokens: number): SpanRecord => ({
    trace_id: traceId(1), span_id: spanId(n), parent_span_id: n === 1 ? '' : spanId(1), project: 'p', agent: null, job: null,
    iteration: null, name: 's', kind: 1, operation: '', service_name: 'svc', start_time_ns: n.toString(16).padStart(16, '0'),
    end_time_ns: n.toString(16).padStart(16, '0'), duration_ns: 0, status_code: 0, tokens, received_at: 0,
    detail: pack({ status_message: '', attributes: {}, events: [], links: [], scope_name: '', scope_version: '' }), resource: pack({}),
  });
  await kv.write(store.ingestOps([[span(1, 3), span(2, 4)], [span(2, 4), span(3, 10)]]).ops);
  assert.is(store.traceTokens('p', traceId(1)), 17);
  await kv.write(store.removalOps('p', null, 1).ops);
  assert.is(store.traceTokens('p', traceId(1)), 14);
  await kv.write(store.removalOps('p', null, 5).ops);
  assert.is(store.traceTokens('p', traceId(1)), 0);
});

test.run();
