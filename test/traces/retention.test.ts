// Spans over time: retention pruning, removal with a deleted project, and surviving a restart.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { pino } from 'pino';
import { configWith } from '../../src/config.ts';
import { MemoryKv } from '../../src/store/memory-kv.ts';
import { pack, type SpanRecord } from '../../src/traces/span-record.ts';
import { Traces } from '../../src/traces/traces.ts';
import type { Client } from '../helpers/client.ts';
import { createApiKey, memberWithProject } from '../helpers/fixtures.ts';
import { start, withService } from '../helpers/service.ts';
import { until } from '../helpers/wait.ts';
import { baseNs, ms, otlpJson, postJson, spanId, traceId } from './helpers.ts';

const dayNs = 86_400_000_000_000n;
const baseMs = Number(baseNs / 1_000_000n);

async function names(client: Client, query: Record<string, string | boolean> = {}): Promise<string[]> {
  return (await client.get('/api/traces/', { page_size: 100, ...query })).body.results.map((span: any) => span.name);
}

test('spans that started more than TRACE_RETENTION_DAYS ago are pruned, batch by batch', () =>
  withService(
    async (running) => {
      const { member, project } = await memberWithProject(running.client);
      const keyClient = running.client.as({ apiKey: (await createApiKey(member.client, project.id)).key });
      await postJson(keyClient, otlpJson({ 'service.name': 'old-service' }, [
        { traceId: traceId(1), spanId: spanId(1), name: 'old root', start: baseNs, end: baseNs + ms(1) },
        { traceId: traceId(2), spanId: spanId(2), name: 'old b1', start: baseNs + dayNs, end: baseNs + dayNs },
        { traceId: traceId(2), spanId: spanId(3), parentSpanId: spanId(2), name: 'old b2', start: baseNs + dayNs, end: baseNs + dayNs },
      ]));
      await postJson(keyClient, otlpJson({ 'service.name': 'new-service' }, [
        { traceId: traceId(1), spanId: spanId(4), parentSpanId: spanId(1), name: 'recent child', start: baseNs + 5n * dayNs, end: baseNs + 5n * dayNs },
        { traceId: traceId(3), spanId: spanId(5), name: 'recent root', start: baseNs + 9n * dayNs, end: baseNs + 9n * dayNs },
      ]));
      assert.equal(await names(member.client), ['recent root', 'old b1', 'old root']);
      assert.is(await running.service.deps.traces.pruneExpired(), 3);
      assert.equal(await names(member.client), ['recent root', 'recent child']);
      assert.equal(await names(member.client, { all_spans: true }), ['recent root', 'recent child']);
      assert.equal((await member.client.get('/api/traces/services/')).body.results, ['new-service']);
      const trace = await member.client.get(`/api/traces/${traceId(1)}/`);
      assert.is(trace.body.root.name, 'recent child');
      assert.is((await member.client.get(`/api/traces/${traceId(2)}/`)).status, 404);
      assert.is(await running.service.deps.traces.pruneExpired(), 0);
    },
    { clock: { nowMs: () => baseMs + 10 * 86_400_000 }, traceRetentionDays: 7, limits: { tracePruneSpansMax: 2 } },
  ));

test('without TRACE_RETENTION_DAYS nothing is pruned', () =>
  withService(
    async (running) => {
      const { member, project } = await memberWithProject(running.client);
      const keyClient = running.client.as({ apiKey: (await createApiKey(member.client, project.id)).key });
      await postJson(keyClient, otlpJson({}, [{ traceId: traceId(1), spanId: spanId(1), name: 'ancient', start: 1n, end: 2n }]));
      assert.is(await running.service.deps.traces.pruneExpired(), 0);
      assert.equal(await names(member.client), ['ancient']);
    },
    { clock: { nowMs: () => baseMs } },
  ));

test('deleting a project removes its spans and leaves other projects\' alone', () =>
  withService(
    async (running) => {
      const { member, project } = await memberWithProject(running.client);
      const kept = (await member.client.post('/api/projects/', { name: 'kept', slug: `kept-${process.pid}` })).body;
      for (const [target, n] of [[project.id, 1], [kept.id, 2]] as const) {
        const keyClient = running.client.as({ apiKey: (await createApiKey(member.client, target)).key });
        const spans = [1, 2, 3, 4, 5].map((i) => ({ traceId: traceId(n * 10 + (i % 2)), spanId: spanId(n * 10 + i), name: `p${n}`, start: baseNs + ms(i), end: baseNs + ms(i) }));
        await postJson(keyClient, otlpJson({ 'service.name': `service-${n}` }, spans));
      }
      assert.is((await member.client.delete(`/api/projects/${project.id}/`)).status, 204);
      assert.equal(await names(member.client, { all_spans: true }), ['p2', 'p2', 'p2', 'p2', 'p2']);
      const { store } = running.service.deps.traces;
      await until(() => [...store.projects()].length === 1, 'the deleted project\'s spans are removed');
      assert.equal([...store.projects()], [kept.id]);
      assert.equal([...store.spans.keys({ start: [project.id], end: [project.id, '\uffff'] })], []);
      assert.equal((await member.client.get('/api/traces/services/')).body.results, ['service-2']);
    },
    { limits: { tracePruneSpansMax: 2 } },
  ));

test('spans survive a restart of the LMDB store', async () => {
  const first = await start({ lmdb: true });
  let client: Client;
  try {
    const { member, project } = await memberWithProject(first.client);
    client = member.client;
    const keyClient = first.client.as({ apiKey: (await createApiKey(member.client, project.id)).key });
    await postJson(keyClient, otlpJson({ 'service.name': 'durable' }, [
      { traceId: traceId(1), spanId: spanId(1), name: 'root', start: baseNs, end: baseNs + ms(2) },
      { traceId: traceId(1), spanId: spanId(2), parentSpanId: spanId(1), name: 'child', start: baseNs + ms(1), end: baseNs + ms(2) },
    ]));
  } finally {
    await first.stop({ keepData: true });
  }
  const second = await start({ lmdb: true, dataDir: first.dataDir });
  try {
    const restarted = second.client.as(client!.credentials);
    assert.equal(await names(restarted), ['root']);
    assert.is((await restarted.get(`/api/traces/${traceId(1)}/`)).body.span_count, 2);
    assert.equal((await restarted.get('/api/traces/services/')).body.results, ['durable']);
  } finally {
    await second.stop();
  }
});

test('at start, spans of projects that no longer exist are removed', async () => {
  const kv = new MemoryKv();
  const options = { kv, config: configWith({ limits: { tracePruneSpansMax: 1 } }), clock: { nowMs: () => baseMs }, logger: pino({ level: 'silent' }), outcome: () => {} };
  const before = new Traces(options);
  await before.ingest(['gone', 'here'].flatMap((project, p) => [1, 2, 3].map((i) => record(project, p * 10 + i))));
  await before.close();
  const after = new Traces(options);
  after.start((project) => project === 'here');
  await until(() => [...after.store.projects()].join() === 'here', 'the removal resumed after the restart');
  assert.is(after.store.spanCount('here', 'all', ''), 3);
  await after.close();
});

function record(project: string, n: number): SpanRecord {
  return {
    trace_id: traceId(n), span_id: spanId(n), parent_span_id: '', project, agent: null, job: null, iteration: null,
    name: 'span', kind: 1, operation: '', service_name: 'svc', start_time_ns: n.toString(16).padStart(16, '0'),
    end_time_ns: n.toString(16).padStart(16, '0'), duration_ns: 0, status_code: 0, tokens: 0, received_at: baseMs,
    detail: pack({ status_message: '', attributes: {}, events: [], links: [], scope_name: '', scope_version: '' }),
    resource: pack({}),
  };
}

test.run();
