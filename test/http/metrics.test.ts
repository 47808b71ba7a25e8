import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { MemoryKv } from '../../src/store/memory-kv.ts';
import type { Client } from '../helpers/client.ts';
import { FaultyKv } from '../helpers/faulty-kv.ts';
import { memberWithProject } from '../helpers/fixtures.ts';
import { withService } from '../helpers/service.ts';
import { until } from '../helpers/wait.ts';
import { baseNs, ms, otlpJson, postJson, spanId, traceId } from '../traces/helpers.ts';

interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

const sampleLine = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/;
const labelPair = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)",?/gy;

/** Parses Prometheus text format 0.0.4 strictly: every line is a comment, blank, or a sample of a declared metric. */
function parseMetrics(text: string): { types: Map<string, string>; samples: Sample[] } {
  const types = new Map<string, string>();
  const samples: Sample[] = [];
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('# HELP ')) continue;
    const type = /^# TYPE (\S+) (counter|gauge|histogram|summary|untyped)$/.exec(line);
    if (type) {
      assert.not.ok(types.has(type[1]!), `${type[1]} is declared twice`);
      types.set(type[1]!, type[2]!);
      continue;
    }
    const sample = sampleLine.exec(line);
    assert.ok(sample, `not a sample line: ${line}`);
    const [, name, labelText = '', valueText] = sample!;
    const labels: Record<string, string> = {};
    let consumed = 0;
    labelPair.lastIndex = 0;
    for (let match; (match = labelPair.exec(labelText)); consumed = labelPair.lastIndex) labels[match[1]!] = match[2]!;
    assert.is(consumed, labelText.length, `labels of ${line}`);
    // Prometheus reads values as Go's ParseFloat does: NaN and Inf in any case.
    const value = /^nan$/i.test(valueText!) ? NaN : /^[+-]?inf$/i.test(valueText!) ? (valueText!.startsWith('-') ? -Infinity : Infinity) : Number(valueText);
    assert.ok(!Number.isNaN(value) || /^nan$/i.test(valueText!), `value of ${line}`);
    const family = name!.replace(/_(bucket|sum|count)$/, '');
    assert.ok(types.has(name!) || types.get(family) === 'histogram' || types.get(family) === 'summary', `${name} has no TYPE`);
    samples.push({ name: name!, labels, value });
  }
  return { types, samples };
}

async function scrape(client: Client) {
  const reply = await client.get('/metrics');
  assert.is(reply.status, 200);
  assert.is(reply.headers.get('content-type'), 'text/plain; version=0.0.4; charset=utf-8');
  return { text: reply.text, ...parseMetrics(reply.text) };
}

function value(samples: Sample[], name: string, labels: Record<string, string> = {}): number {
  const found = samples.filter((sample) => sample.name === name && Object.entries(labels).every(([key, wanted]) => sample.labels[key] === wanted));
  return found.reduce((sum, sample) => sum + sample.value, 0);
}

const requestCount = (samples: Sample[], labels: Record<string, string>) => value(samples, 'http_request_duration_seconds_count', labels);

test('GET /metrics needs no credentials and parses as Prometheus text with service and process metrics', () =>
  withService(async ({ client }) => {
    const { types } = await scrape(client);
    const expected = [
      'http_request_duration_seconds', 'overmind_mailbox_messages', 'overmind_mailbox_deepest_messages', 'overmind_store_size_bytes',
      'overmind_store_healthy', 'overmind_spans_ingested_total', 'process_cpu_seconds_total', 'process_resident_memory_bytes',
      'nodejs_heap_size_used_bytes', 'nodejs_eventloop_lag_seconds',
    ];
    for (const name of expected) assert.ok(types.has(name), `${name} is missing`);
    assert.is(types.get('http_request_duration_seconds'), 'histogram');
    assert.is(types.get('overmind_spans_ingested_total'), 'counter');
  }));

test('request counts move per route pattern and status, never per raw path', () =>
  withService(async ({ client }) => {
    const { member, project } = await memberWithProject(client);
    const before = (await scrape(client)).samples;
    await member.client.get(`/api/projects/${project.id}/`);
    await member.client.get(`/api/projects/${project.id}`);
    await member.client.get('/api/projects/7d444840-9dc0-11d1-b245-5ffdce74fad2/');
    await member.client.get('/api/no-such-thing/at/all/');
    await member.client.request('PUT', '/health');
    const { samples, text } = await scrape(client);
    const moved = (labels: Record<string, string>) => requestCount(samples, labels) - requestCount(before, labels);
    assert.is(moved({ method: 'GET', route: '/api/projects/:id', status: '200' }), 2);
    assert.is(moved({ method: 'GET', route: '/api/projects/:id', status: '404' }), 1);
    assert.is(moved({ method: 'GET', route: 'unmatched', status: '404' }), 1);
    assert.is(moved({ method: 'PUT', status: '405' }), 1);
    const buckets = samples.filter((sample) => sample.name === 'http_request_duration_seconds_bucket' && sample.labels.route === '/api/projects/:id');
    assert.ok(buckets.some((sample) => sample.labels.le === '+Inf'));
    assert.not.ok(text.includes(project.id), 'a record id appears in the metrics');
    assert.not.ok(text.includes('no-such-thing'), 'a raw path appears in the metrics');
    const routes = new Set(samples.filter((sample) => sample.labels.route).map((sample) => sample.labels.route!));
    for (const route of routes) assert.ok(route === 'unmatched' || route.startsWith('/'), `route label ${route}`);
  }));

test('the metrics name no tenant: no emails, names, slugs or ids', () =>
  withService(async ({ client }) => {
    const { member, project } = await memberWithProject(client);
    await member.client.patch(`/api/projects/${project.id}/`, { name: 'Secret Tenant Name', description: 'confidential' });
    const { text } = await scrape(client);
    for (const secret of [member.email, project.slug, 'Secret Tenant Name', 'confidential', project.id]) {
      assert.not.ok(text.includes(secret), `the metrics show ${secret}`);
    }
    assert.not.ok(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/.test(text), 'a UUID appears in the metrics');
  }));

test('ingested spans are counted once each, and the store size is reported', () =>
  withService(
    async ({ client }) => {
      const { member, project } = await memberWithProject(client);
      const spans = [1, 2, 3].map((n) => ({ traceId: traceId(1), spanId: spanId(n), start: baseNs, end: baseNs + ms(n) }));
      const body = otlpJson({ 'service.name': 'metered', 'overmind.project.id': project.id }, spans);
      assert.is((await postJson(member.client, body)).status, 200);
      assert.is(value((await scrape(client)).samples, 'overmind_spans_ingested_total'), 3);
      assert.is((await postJson(member.client, body)).status, 200);
      const { samples } = await scrape(client);
      assert.is(value(samples, 'overmind_spans_ingested_total'), 3, 'a span sent again is not counted again');
      assert.ok(value(samples, 'overmind_store_size_bytes') > 0, 'an LMDB store has a size');
    },
    { lmdb: true },
  ));

test('waiting messages show as mailbox depths per actor kind, and a failed store as unhealthy', async () => {
  const kv = new FaultyKv(new MemoryKv());
  await withService(
    async ({ client }) => {
      const { member, project } = await memberWithProject(client);
      const release = kv.holdWrites();
      const writes = [1, 2, 3, 4].map((n) => member.client.patch(`/api/projects/${project.id}/`, { description: `update ${n}` }));
      let samples: Sample[] = [];
      try {
        await until(async () => {
          samples = (await scrape(client)).samples;
          return value(samples, 'overmind_mailbox_messages', { kind: 'project' }) === 3;
        }, 'three messages wait in the project mailbox');
      } finally {
        release();
        await Promise.all(writes);
      }
      // The first update was being written; the other three waited in the project's mailbox.
      assert.is(value(samples, 'overmind_mailbox_messages', { kind: 'project' }), 3);
      assert.is(value(samples, 'overmind_mailbox_deepest_messages', { kind: 'project' }), 3);
      assert.is(value(samples, 'overmind_mailbox_messages', { kind: 'agent' }), 0);
      assert.is(value((await scrape(client)).samples, 'overmind_mailbox_messages', { kind: 'project' }), 0);
      assert.is(value((await scrape(client)).samples, 'overmind_store_healthy'), 1);

      kv.failWith = new Error('disk full');
      assert.is((await member.client.patch(`/api/projects/${project.id}/`, { description: 'lost' })).status, 503);
      assert.is(value((await scrape(client)).samples, 'overmind_store_healthy'), 0);
      kv.failWith = null;
    },
    // One commit in flight at a time, so that the later updates wait in the mailbox.
    { kv, limits: { commitsInFlightMax: 1 } },
  );
});

test('commits are counted per actor kind with the messages they carried: messages that waited together share one', async () => {
  const kv = new FaultyKv(new MemoryKv());
  await withService(
    async ({ client }) => {
      const { member, project } = await memberWithProject(client);
      const before = (await scrape(client)).samples;
      const release = kv.holdWrites();
      const writes = [1, 2, 3, 4].map((n) => member.client.patch(`/api/projects/${project.id}/`, { description: `update ${n}` }));
      await until(async () => value((await scrape(client)).samples, 'overmind_mailbox_messages', { kind: 'project' }) === 3, 'three updates wait');
      release();
      await Promise.all(writes);
      const after = (await scrape(client)).samples;
      const moved = (name: string, kind: string) => value(after, name, { kind }) - value(before, name, { kind });
      // The first update alone, then the three that waited behind it in one commit.
      assert.equal([moved('overmind_actor_commits_total', 'project'), moved('overmind_actor_commit_messages_total', 'project')], [2, 4]);
      assert.equal([moved('overmind_actor_commits_total', 'agent'), moved('overmind_actor_commit_messages_total', 'agent')], [0, 0]);
      assert.ok(value(after, 'overmind_actor_commits_total', { kind: 'identity' }) >= 1, 'the sign-up was committed');
    },
    { kv, limits: { commitsInFlightMax: 1 } },
  );
});

test('two services in one process keep their own figures', () =>
  withService(async (first) =>
    withService(async (second) => {
      const before = requestCount((await scrape(second.client)).samples, { route: '/health' });
      for (let i = 0; i < 3; i++) await first.client.get('/health');
      assert.is(requestCount((await scrape(second.client)).samples, { route: '/health' }), before);
      assert.ok(requestCount((await scrape(first.client)).samples, { route: '/health' }) >= 3);
    }),
  ));

test.run();
