// The span queries: every filter (on the span list, the trace list, the services listing and one
// trace), search, ordering, pagination, validation of filter values, and visibility.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { createAgent } from '../helpers/agent-fixtures.ts';
import type { Client } from '../helpers/client.ts';
import { createApiKey, memberWithProject } from '../helpers/fixtures.ts';
import { createIteration, createJob } from '../helpers/job-fixtures.ts';
import { withService, type Running } from '../helpers/service.ts';
import { baseNs, ms, otlpJson, postJson, spanId, traceId } from './helpers.ts';

/**
 * One project with three traces (T3's root never arrived) across three services, and a second
 * user's project whose spans must stay invisible.
 *
 *   T1  r1 agent.run  checkout  kind 2  0 ms     100 ms  ok     agent, job
 *       c1 llm.call   checkout  kind 3  10 ms    50 ms   error  job, operation chat
 *       c2 db.query   payments  kind 3  20 ms    5 ms           iteration
 *   T2  r2 agent.run  search    kind 2  1000 ms  300 ms         agent
 *   T3  c3 llm.call   search    kind 3  2000 ms  1500 ms error  operation embeddings (parent missing)
 *       c4 tool.call  search    kind 1  2500 ms  10 ms
 */
async function seed(running: Running) {
  const { member, project } = await memberWithProject(running.client);
  const agent = await createAgent(member.client, project.id);
  const job = await createJob(member.client, { project: project.id });
  const iteration = await createIteration(member.client, job.id);
  const keyClient = running.client.as({ apiKey: (await createApiKey(member.client, project.id)).key });
  const at = (milliseconds: number) => baseNs + ms(milliseconds);
  await postJson(keyClient, otlpJson({ 'service.name': 'checkout' }, [
    { traceId: traceId(1), spanId: spanId(1), name: 'agent.run', kind: 2, start: at(0), end: at(100), status: { code: 1 },
      attributes: { 'overmind.agent.id': agent.id, 'overmind.job.id': job.id } },
    { traceId: traceId(1), spanId: spanId(2), parentSpanId: spanId(1), name: 'llm.call', kind: 3, start: at(10), end: at(60),
      status: { code: 2, message: 'boom' }, attributes: { 'overmind.job.id': job.id, 'gen_ai.operation.name': 'chat' } },
  ]));
  await postJson(keyClient, otlpJson({ 'service.name': 'payments' }, [
    { traceId: traceId(1), spanId: spanId(3), parentSpanId: spanId(1), name: 'db.query', kind: 3, start: at(20), end: at(25),
      attributes: { 'overmind.iteration.id': iteration.id } },
  ]));
  await postJson(keyClient, otlpJson({ 'service.name': 'search' }, [
    { traceId: traceId(2), spanId: spanId(4), name: 'agent.run', kind: 2, start: at(1000), end: at(1300), attributes: { 'overmind.agent.id': agent.id } },
    { traceId: traceId(3), spanId: spanId(5), parentSpanId: spanId(99), name: 'llm.call', kind: 3, start: at(2000), end: at(3500),
      status: { code: 2 }, attributes: { 'overmind.operation': 'embeddings' } },
    { traceId: traceId(3), spanId: spanId(6), parentSpanId: spanId(5), name: 'tool.call', kind: 1, start: at(2500), end: at(2510) },
  ]));
  const stranger = await memberWithProject(running.client);
  const strangerKey = await createApiKey(stranger.member.client, stranger.project.id);
  await postJson(running.client.as({ apiKey: strangerKey.key }), otlpJson({ 'service.name': 'secret' }, [
    { traceId: traceId(9), spanId: spanId(9), name: 'hidden', start: at(50), end: at(60) },
  ]));
  return { client: member.client, project, agent, job, iteration, stranger, at };
}

const names: Record<string, string> = {
  [spanId(1)]: 'r1', [spanId(2)]: 'c1', [spanId(3)]: 'c2', [spanId(4)]: 'r2', [spanId(5)]: 'c3', [spanId(6)]: 'c4', [spanId(9)]: 'hidden',
};

/** The named spans of a span or trace list, in answer order. */
async function listed(client: Client, query: Record<string, string | number | boolean> = {}): Promise<string[]> {
  const reply = await client.get('/api/traces/', { page_size: 100, ...query });
  assert.is(reply.status, 200, reply.text);
  assert.is(reply.body.count, reply.body.results.length);
  return reply.body.results.map((span: any) => names[span.span_id]);
}

const spansWhere = (client: Client, query: Record<string, string | number | boolean>) => listed(client, { all_spans: true, ...query });

async function services(client: Client, query: Record<string, string | number | boolean> = {}): Promise<string[]> {
  const reply = await client.get('/api/traces/services/', query);
  assert.is(reply.status, 200, reply.text);
  return reply.body.results;
}

test('the trace list has one row per trace, newest first, the earliest span standing in for a missing root', () =>
  withService(async (running) => {
    const { client } = await seed(running);
    assert.equal(await listed(client), ['c3', 'r2', 'r1']);
    assert.equal(await spansWhere(client, {}), ['c4', 'c3', 'r2', 'c2', 'c1', 'r1']);
  }));

test('a root that arrives after its children takes over the trace row', () =>
  withService(async (running) => {
    const { client } = await seed(running);
    const keyClient = running.client.as({ apiKey: (await createApiKey(client, (await client.get('/api/projects/')).body.results[0].id)).key });
    await postJson(keyClient, otlpJson({ 'service.name': 'search' }, [
      { traceId: traceId(3), spanId: spanId(99), name: 'late.root', start: baseNs + ms(2600), end: baseNs + ms(4000) },
    ]));
    const rows = (await client.get('/api/traces/')).body.results.map((row: any) => row.name);
    assert.equal(rows, ['late.root', 'agent.run', 'agent.run']);
    const trace = await client.get(`/api/traces/${traceId(3)}/`);
    assert.is(trace.body.root.name, 'late.root');
    assert.equal(trace.body.spans.map((span: any) => span.name), ['llm.call', 'tool.call', 'late.root']);
  }));

test('one trace answers its root, span count and spans in start order; unknown, hidden and malformed ids are 404', () =>
  withService(async (running) => {
    const { client } = await seed(running);
    const t1 = await client.get(`/api/traces/${traceId(1).toUpperCase()}/`);
    assert.is(t1.status, 200);
    assert.is(t1.body.trace_id, traceId(1));
    assert.is(names[t1.body.root.span_id], 'r1');
    assert.is(t1.body.span_count, 3);
    assert.equal(t1.body.spans.map((span: any) => names[span.span_id]), ['r1', 'c1', 'c2']);
    const t3 = await client.get(`/api/traces/${traceId(3)}`);
    assert.is(names[t3.body.root.span_id], 'c3');
    for (const path of [`/api/traces/${traceId(4)}/`, `/api/traces/${traceId(9)}/`, '/api/traces/xyz/', `/api/traces/${traceId(1)}0/`]) {
      const missing = await client.get(path);
      assert.is(missing.status, 404, path);
      assert.equal(missing.body, { detail: 'Not found.', code: 'not_found' });
    }
  }));

test('the services listing is the sorted distinct non-empty service names the caller can see', () =>
  withService(async (running) => {
    const { client, stranger } = await seed(running);
    const reply = await client.get('/api/traces/services');
    assert.equal(reply.body, { count: 3, next: null, previous: null, results: ['checkout', 'payments', 'search'] });
    assert.equal(await services(stranger.member.client), ['secret']);
  }));

test('agent, job and iteration filters match their linked spans everywhere', () =>
  withService(async (running) => {
    const { client, agent, job, iteration } = await seed(running);
    assert.equal(await spansWhere(client, { agent: agent.id }), ['r2', 'r1']);
    assert.equal(await spansWhere(client, { job: job.id }), ['c1', 'r1']);
    assert.equal(await spansWhere(client, { iteration: iteration.id.toUpperCase() }), ['c2']);
    assert.equal(await listed(client, { agent: agent.id }), ['r2', 'r1']);
    assert.equal(await listed(client, { iteration: iteration.id }), []);
    assert.equal(await services(client, { agent: agent.id }), ['checkout', 'search']);
    assert.equal(await services(client, { job: job.id }), ['checkout']);
    assert.equal(await services(client, { iteration: iteration.id }), ['payments']);
    assert.equal(await services(client, { job: job.id, agent: agent.id }), ['checkout']);
    assert.equal(await spansWhere(client, { job: job.id, agent: agent.id }), ['r1']);
    const trace = await client.get(`/api/traces/${traceId(1)}/`, { job: job.id });
    assert.is(trace.body.span_count, 2);
  }));

test('trace_id and span_id filters are exact (any case)', () =>
  withService(async (running) => {
    const { client } = await seed(running);
    assert.equal(await spansWhere(client, { trace_id: traceId(1).toUpperCase() }), ['c2', 'c1', 'r1']);
    assert.equal(await spansWhere(client, { trace_id: traceId(1).slice(0, 30) }), []);
    assert.equal(await spansWhere(client, { span_id: spanId(2) }), ['c1']);
    assert.equal(await listed(client, { trace_id: traceId(3) }), ['c3']);
    assert.equal(await services(client, { trace_id: traceId(1) }), ['checkout', 'payments']);
    assert.equal(await services(client, { trace_id: traceId(9) }), []);
    assert.equal(await services(client, { span_id: spanId(3) }), ['payments']);
  }));

test('has_error, status_code and kind filter by the OTLP numbers', () =>
  withService(async (running) => {
    const { client } = await seed(running);
    assert.equal(await spansWhere(client, { has_error: true }), ['c3', 'c1']);
    assert.equal(await spansWhere(client, { has_error: false }), ['c4', 'r2', 'c2', 'r1']);
    assert.equal(await spansWhere(client, { status_code: 2 }), ['c3', 'c1']);
    assert.equal(await spansWhere(client, { status_code: 1 }), ['r1']);
    assert.equal(await spansWhere(client, { kind: 3 }), ['c3', 'c2', 'c1']);
    assert.equal(await listed(client, { has_error: true }), ['c3']);
    assert.equal(await services(client, { has_error: true }), ['checkout', 'search']);
    assert.equal(await services(client, { kind: 1 }), ['search']);
  }));

test('duration filters compare duration_ns, the _ms ones after multiplying by 1,000,000', () =>
  withService(async (running) => {
    const { client } = await seed(running);
    assert.equal(await spansWhere(client, { min_duration_ms: 100 }), ['c3', 'r2', 'r1']);
    assert.equal(await spansWhere(client, { max_duration_ms: 10 }), ['c4', 'c2']);
    assert.equal(await spansWhere(client, { min_duration_ms: 0.005, max_duration_ms: 0.0075 }), []);
    assert.equal(await spansWhere(client, { duration_ns__gte: 50_000_000, duration_ns__lte: 300_000_000 }), ['r2', 'c1', 'r1']);
    assert.equal(await services(client, { min_duration_ms: 1000 }), ['search']);
    assert.equal(await listed(client, { max_duration_ms: 100 }), ['r1']);
  }));

test('name, operation and service_name are case-insensitive contains; service_name__in is an exact list', () =>
  withService(async (running) => {
    const { client } = await seed(running);
    assert.equal(await spansWhere(client, { name: 'LLM' }), ['c3', 'c1']);
    assert.equal(await spansWhere(client, { operation: 'CHA' }), ['c1']);
    assert.equal(await spansWhere(client, { operation: 'embed' }), ['c3']);
    assert.equal(await spansWhere(client, { service_name: 'EARC' }), ['c4', 'c3', 'r2']);
    assert.equal(await spansWhere(client, { service_name__in: 'checkout, payments' }), ['c2', 'c1', 'r1']);
    assert.equal(await spansWhere(client, { service_name__in: 'check' }), []);
    assert.equal(await services(client, { service_name: 'ch' }), ['checkout', 'search']);
    assert.equal(await services(client, { service_name__in: 'payments,search,nothing' }), ['payments', 'search']);
    assert.equal(await services(client, { name: 'db' }), ['payments']);
  }));

test('start_time_ns bounds are inclusive and exact to the nanosecond', () =>
  withService(async (running) => {
    const { client, at } = await seed(running);
    assert.equal(await spansWhere(client, { start_time_ns__gte: String(at(1000)) }), ['c4', 'c3', 'r2']);
    assert.equal(await spansWhere(client, { start_time_ns__gte: String(at(10) + 1n) }), ['c4', 'c3', 'r2', 'c2']);
    assert.equal(await spansWhere(client, { start_time_ns__lte: String(at(10)) }), ['c1', 'r1']);
    assert.equal(await spansWhere(client, { start_time_ns__lte: String(at(10) - 1n) }), ['r1']);
    assert.equal(await spansWhere(client, { start_time_ns__gte: String(at(10)), start_time_ns__lte: String(at(20)) }), ['c2', 'c1']);
    assert.equal(await spansWhere(client, { start_time_ns__lte: -1 }), []);
    assert.equal(await listed(client, { start_time_ns__gte: String(at(1500)) }), ['c3']);
    assert.equal(await services(client, { start_time_ns__lte: String(at(15)) }), ['checkout']);
    const text = (await client.get(`/api/traces/${traceId(1)}/`)).text;
    assert.ok(text.includes(`"start_time_ns":${at(10)}`), 'start times are written as exact integers');
  }));

test('received_at bounds take a date-time or a date', () =>
  withService(async (running) => {
    const { client } = await seed(running);
    assert.is((await spansWhere(client, { received_at__gte: '2000-01-01' })).length, 6);
    assert.equal(await spansWhere(client, { received_at__lte: '2000-01-01T00:00:00Z' }), []);
    assert.equal(await spansWhere(client, { received_at__gte: '2999-01-01 10:00' }), []);
    assert.equal(await services(client, { received_at__gte: '2999-01-01' }), []);
  }));

test('the project filter narrows to one visible project; another project shows nothing', () =>
  withService(async (running) => {
    const { client, project, stranger } = await seed(running);
    assert.is((await spansWhere(client, { project: project.id })).length, 6);
    assert.equal(await spansWhere(client, { project: stranger.project.id }), []);
    assert.equal(await services(client, { project: stranger.project.id }), []);
    assert.is((await client.get(`/api/traces/${traceId(1)}/`, { project: stranger.project.id })).status, 404);
  }));

test('search matches every term in name, service_name, trace_id or span_id, ignoring case', () =>
  withService(async (running) => {
    const { client } = await seed(running);
    assert.equal(await spansWhere(client, { search: 'LLM checkout' }), ['c1']);
    assert.equal(await spansWhere(client, { search: spanId(4) }), ['r2']);
    assert.equal(await spansWhere(client, { search: `${traceId(3)},tool` }), ['c4']);
    assert.equal(await services(client, { search: 'query' }), ['payments']);
    assert.equal(await listed(client, { search: 'agent' }), ['r2', 'r1']);
  }));

test('filters on one trace narrow its spans; its root is the first of those; none left is 404', () =>
  withService(async (running) => {
    const { client } = await seed(running);
    const children = await client.get(`/api/traces/${traceId(1)}/`, { kind: 3 });
    assert.is(children.body.span_count, 2);
    assert.is(names[children.body.root.span_id], 'c1');
    assert.equal(children.body.spans.map((span: any) => names[span.span_id]), ['c1', 'c2']);
    assert.is((await client.get(`/api/traces/${traceId(1)}/`, { has_error: true, service_name: 'payments' })).status, 404);
    const ordered = await client.get(`/api/traces/${traceId(1)}/`, { ordering: '-duration_ns' });
    assert.equal(ordered.body.spans.map((span: any) => names[span.span_id]), ['r1', 'c1', 'c2']);
  }));

test('one trace answers at most traceDetailSpansMax spans, and counts them all', () =>
  withService(
    async (running) => {
      const { client } = await seed(running);
      const trace = await client.get(`/api/traces/${traceId(1)}/`);
      assert.is(trace.body.span_count, 3);
      assert.equal(trace.body.spans.map((span: any) => names[span.span_id]), ['r1', 'c1']);
    },
    { limits: { traceDetailSpansMax: 2 } },
  ));

test('ordering takes any span field, several fields, and ignores unknown ones', () =>
  withService(async (running) => {
    const { client } = await seed(running);
    assert.equal(await spansWhere(client, { ordering: 'start_time_ns' }), ['r1', 'c1', 'c2', 'r2', 'c3', 'c4']);
    assert.equal(await spansWhere(client, { ordering: 'duration_ns' }), ['c2', 'c4', 'c1', 'r1', 'r2', 'c3']);
    assert.equal(await spansWhere(client, { ordering: '-service_name,name' }), ['r2', 'c3', 'c4', 'c2', 'r1', 'c1']);
    assert.equal(await spansWhere(client, { ordering: 'bogus' }), ['c4', 'c3', 'r2', 'c2', 'c1', 'r1']);
    assert.equal(await listed(client, { ordering: '-duration_ns' }), ['c3', 'r2', 'r1']);
    assert.equal(await listed(client, { ordering: 'start_time_ns' }), ['r1', 'r2', 'c3']);
    const paged = await client.get('/api/traces/', { all_spans: true, ordering: 'name', page_size: 2, page: 2 });
    assert.equal(paged.body.results.map((span: any) => names[span.span_id]), ['c2', 'c1']);
  }));

test('lists are paginated with absolute next and previous links; a page past the end is "Invalid page."', () =>
  withService(async (running) => {
    const { client } = await seed(running);
    const first = await client.get('/api/traces/', { all_spans: true, page_size: 4 });
    assert.is(first.body.count, 6);
    assert.is(first.body.previous, null);
    assert.match(first.body.next, /^http:\/\/127\.0\.0\.1:\d+\/api\/traces\/\?all_spans=true&page=2&page_size=4$/);
    const second = await client.get(first.body.next.replace(running.url, ''));
    assert.equal(second.body.results.map((span: any) => names[span.span_id]), ['c1', 'r1']);
    assert.match(second.body.previous, /\/api\/traces\/\?all_spans=true&page_size=4$/);
    assert.is(second.body.next, null);
    const last = await client.get('/api/traces/', { all_spans: true, page_size: 4, page: 'last' });
    assert.is(last.body.results.length, 2);
    for (const page of ['3', '0', 'abc']) {
      const invalid = await client.get('/api/traces/', { all_spans: true, page_size: 4, page });
      assert.is(invalid.status, 404);
      assert.equal(invalid.body, { detail: 'Invalid page.', code: 'not_found' });
    }
    const servicesPage = await client.get('/api/traces/services/', { page_size: 2, page: 2 });
    assert.equal(servicesPage.body.results, ['search']);
    assert.match(servicesPage.body.previous, /\/api\/traces\/services\/\?page_size=2$/);
    assert.is((await client.get('/api/traces/services/', { page: 2 })).status, 404);
    const empty = await client.get('/api/traces/', { name: 'nothing-matches' });
    assert.equal(empty.body, { count: 0, next: null, previous: null, results: [] });
  }));

test('bad filter values are 400 field errors in django-filter wording', () =>
  withService(async (running) => {
    const { client } = await seed(running);
    const cases: [Record<string, string>, Record<string, string[]>][] = [
      [{ kind: 'server' }, { kind: ['Enter a number.'] }],
      [{ agent: 'not-a-uuid' }, { agent: ['Enter a valid UUID.'] }],
      [{ job: '12' }, { job: ['Enter a valid UUID.'] }],
      [{ has_error: 'maybe' }, { has_error: ['Enter a valid boolean.'] }],
      [{ received_at__gte: 'yesterday' }, { received_at__gte: ['Enter a valid date/time.'] }],
      [{ min_duration_ms: 'long', start_time_ns__gte: 'x' }, { min_duration_ms: ['Enter a number.'], start_time_ns__gte: ['Enter a number.'] }],
    ];
    for (const path of ['/api/traces/', '/api/traces/services/', `/api/traces/${traceId(1)}/`]) {
      for (const [query, errors] of cases) {
        const reply = await client.get(path, query);
        assert.is(reply.status, 400, `${path} ${JSON.stringify(query)}`);
        assert.equal(reply.body, errors);
      }
    }
    assert.is((await client.get('/api/traces/', { kind: '', agent: '' })).status, 200);
  }));

test('the span queries need credentials, and an API key sees only its own project', () =>
  withService(async (running) => {
    const { client, project } = await seed(running);
    for (const path of ['/api/traces/', '/api/traces/services/', `/api/traces/${traceId(1)}/`]) {
      const reply = await running.client.get(path);
      assert.is(reply.status, 401, path);
      assert.is(reply.body.code, 'not_authenticated');
    }
    const other = (await client.post('/api/projects/', { name: 'other', slug: `other-${process.pid}` })).body;
    const otherKey = running.client.as({ apiKey: (await createApiKey(client, other.id)).key });
    assert.equal(await listed(otherKey), []);
    assert.equal(await services(otherKey), []);
    const ownKey = running.client.as({ apiKey: (await createApiKey(client, project.id)).key });
    assert.equal(await services(ownKey), ['checkout', 'payments', 'search']);
  }));

test('spans across several projects merge in one newest-first list', () =>
  withService(async (running) => {
    const { client, at } = await seed(running);
    const second = (await client.post('/api/projects/', { name: 'second', slug: `second-${process.pid}` })).body;
    const keyClient = running.client.as({ apiKey: (await createApiKey(client, second.id)).key });
    await postJson(keyClient, otlpJson({ 'service.name': 'elsewhere' }, [
      { traceId: traceId(20), spanId: spanId(20), name: 'between', start: at(1500), end: at(1501) },
    ]));
    names[spanId(20)] = 'between';
    assert.equal(await listed(client), ['c3', 'between', 'r2', 'r1']);
    const page = await client.get('/api/traces/', { all_spans: true, page_size: 3, page: 2 });
    assert.is(page.body.count, 7);
    assert.equal(page.body.results.map((span: any) => names[span.span_id]), ['r2', 'c2', 'c1']);
    assert.equal(await services(client), ['checkout', 'elsewhere', 'payments', 'search']);
  }));

test.run();
