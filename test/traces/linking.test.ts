// Which project a span lands in, and the agent, job and iteration it links to.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { createAgent } from '../helpers/agent-fixtures.ts';
import type { Client } from '../helpers/client.ts';
import { idsByCreation } from '../helpers/creation-order.ts';
import { createApiKey, createProject, memberWithProject, registerUser } from '../helpers/fixtures.ts';
import { createIteration, createJob } from '../helpers/job-fixtures.ts';
import { withService } from '../helpers/service.ts';
import { baseNs, exporting, ms, otlpJson, postJson, spanId, traceId, type JsonSpan } from './helpers.ts';

let serial = 0;
/** One span with fresh ids and the given attributes. */
function span(attributes: Record<string, string> = {}): JsonSpan {
  serial++;
  return { traceId: traceId(serial), spanId: spanId(serial), start: baseNs + ms(serial), end: baseNs + ms(serial + 1), attributes };
}

async function allSpans(client: Client): Promise<any[]> {
  return (await client.get('/api/traces/', { all_spans: true, page_size: 100 })).body.results;
}

test("an API key's spans land in its project, whatever overmind.project.id says", () =>
  withService(async ({ client }) => {
    const { member, project } = await memberWithProject(client);
    const other = await createProject(member.client);
    const key = await createApiKey(member.client, project.id);
    const reply = await postJson(client.as({ apiKey: key.key }), otlpJson({ 'overmind.project.id': other.id }, [span()]));
    assert.is(reply.status, 200);
    assert.equal((await allSpans(member.client)).map((row) => row.project), [project.id]);
  }));

test("a user's spans land in overmind.project.id when a member, else in the oldest membership", () =>
  withService(async ({ client }) => {
    const member = await registerUser(client);
    const oldest = await createProject(member.client);
    const newer = await createProject(member.client);
    const stranger = await memberWithProject(client);
    const user = client.as({ token: member.access });
    assert.is((await postJson(user, otlpJson({ 'overmind.project.id': newer.id.toUpperCase() }, [span({ case: 'named' })]))).status, 200);
    assert.is((await postJson(user, otlpJson({ 'overmind.project.id': stranger.project.id }, [span({ case: 'not a member' })]))).status, 200);
    assert.is((await postJson(user, otlpJson({ 'overmind.project.id': 'not-a-uuid' }, [span({ case: 'malformed' })]))).status, 200);
    assert.is((await postJson(user, otlpJson({}, [span({ case: 'absent' })]))).status, 200);
    const placed = Object.fromEntries((await allSpans(member.client)).map((row) => [row.attributes.case, row.project]));
    // Each membership was made with its project: the oldest by created_at, then by project id.
    const [first] = idsByCreation([oldest, newer], 'oldest first');
    assert.equal(placed, { named: newer.id, 'not a member': first, malformed: first, absent: first });
    assert.equal(await allSpans(stranger.member.client), []);
  }));

test('a user with no project cannot export: 400', () =>
  withService(async ({ client }) => {
    const loner = await registerUser(client);
    const reply = await postJson(client.as({ token: loner.access }), otlpJson({}, [span()]));
    assert.is(reply.status, 400);
    assert.equal(reply.body, { detail: 'No project to store these spans in: the caller is not a member of any project.', code: 'invalid' });
  }));

test('overmind.agent.name creates the agent, slugified, the first time it is seen, and links to it after', () =>
  withService(async ({ client }) => {
    const { member, project } = await memberWithProject(client);
    const keyClient = client.as({ apiKey: (await createApiKey(member.client, project.id)).key });
    await postJson(keyClient, otlpJson({}, [span({ 'overmind.agent.name': '  Support Bot — Ünïcode! ' })]));
    await postJson(keyClient, otlpJson({ 'overmind.agent.name': 'Support Bot — Ünïcode!' }, [span()]));
    await postJson(keyClient, otlpJson({}, [span({ 'overmind.agent.name': '***' })]));
    const agents = (await member.client.get('/api/agents/')).body.results;
    assert.equal(agents.map((agent: any) => [agent.name, agent.slug, agent.project]), [['Support Bot — Ünïcode!', 'support-bot-unicode', project.id]]);
    assert.equal((await allSpans(member.client)).map((row) => row.agent), [null, agents[0].id, agents[0].id]);
  }));

test('an agent name whose slug is taken links to the existing live agent', () =>
  withService(async ({ client }) => {
    const { member, project } = await memberWithProject(client);
    const existing = await createAgent(member.client, project.id, { name: 'Planner', slug: 'planner' });
    const keyClient = client.as({ apiKey: (await createApiKey(member.client, project.id)).key });
    await postJson(keyClient, otlpJson({}, [span({ 'overmind.agent.name': 'PLANNER' })]));
    assert.equal((await allSpans(member.client)).map((row) => row.agent), [existing.id]);
    assert.is((await member.client.get('/api/agents/')).body.count, 1);
  }));

test('concurrent first sightings of an agent name create one agent', () =>
  withService(async ({ client }) => {
    const { member, project } = await memberWithProject(client);
    const keyClient = client.as({ apiKey: (await createApiKey(member.client, project.id)).key });
    const replies = await Promise.all(
      Array.from({ length: 8 }, () => postJson(keyClient, otlpJson({ 'overmind.agent.name': 'Racer' }, [span(), span()]))),
    );
    assert.ok(replies.every((reply) => reply.status === 200));
    const agents = (await member.client.get('/api/agents/')).body.results;
    assert.is(agents.length, 1);
    assert.equal(new Set((await allSpans(member.client)).map((row) => row.agent)), new Set([agents[0].id]));
  }));

test('overmind.agent.id, overmind.job.id and overmind.iteration.id link records of the span\'s own project only', () =>
  withService(async ({ client }) => {
    const { member, project } = await memberWithProject(client);
    const agent = await createAgent(member.client, project.id);
    const job = await createJob(member.client, { project: project.id });
    const iteration = await createIteration(member.client, job.id);
    const other = await memberWithProject(client);
    const foreignAgent = await createAgent(other.member.client, other.project.id);
    const foreignJob = await createJob(other.member.client, { project: other.project.id });
    const keyClient = client.as({ apiKey: (await createApiKey(member.client, project.id)).key });
    await postJson(keyClient, otlpJson({ 'service.name': 'linker' }, [
      span({ 'overmind.agent.id': agent.id.toUpperCase(), 'overmind.job.id': job.id, 'overmind.iteration.id': iteration.id, case: 'own' }),
      span({ 'overmind.agent.id': foreignAgent.id, 'overmind.job.id': foreignJob.id, case: 'foreign' }),
      span({ 'overmind.agent.id': 'nope', 'overmind.job.id': '00000000-0000-0000-0000-000000000000', case: 'unknown' }),
      span({ 'overmind.agent.id': agent.id, 'overmind.agent.name': 'Ignored Name', case: 'id wins' }),
    ]));
    const links = Object.fromEntries((await allSpans(member.client)).map((row) => [row.attributes.case, [row.agent, row.job, row.iteration]]));
    assert.equal(links, {
      own: [agent.id, job.id, iteration.id],
      foreign: [null, null, null],
      unknown: [null, null, null],
      'id wins': [agent.id, null, null],
    });
    assert.is((await member.client.get('/api/agents/')).body.count, 1);
  }));

test('service_name is the resource attribute service.name, empty when absent', () =>
  withService(async ({ client }) => {
    const { member, project } = await memberWithProject(client);
    const keyClient = client.as({ apiKey: (await createApiKey(member.client, project.id)).key });
    await postJson(keyClient, otlpJson({ 'service.name': 'checkout' }, [span()]));
    await postJson(keyClient, otlpJson({}, [span()]));
    assert.equal((await allSpans(member.client)).map((row) => row.service_name).sort(), ['', 'checkout']);
    assert.equal((await member.client.get('/api/traces/services/')).body.results, ['checkout']);
  }));

test('links set on the resource apply to every span of it (the exporter sets them once per process)', () =>
  withService(async (running) => {
    const { member, project } = await memberWithProject(running.client);
    const job = await createJob(member.client, { project: project.id });
    const key = await createApiKey(member.client, project.id);
    const otel = exporting(running.url, {
      protocol: 'protobuf',
      headers: { 'x-api-key': key.key },
      resource: { 'overmind.agent.name': 'Exporter Agent', 'overmind.job.id': job.id },
    });
    otel.start('one').end();
    otel.start('two', { attributes: { 'overmind.job.id': 'not-this-job' } }).end();
    await otel.flush();
    await otel.shutdown();
    const agent = (await member.client.get('/api/agents/')).body.results[0];
    assert.is(agent.slug, 'exporter-agent');
    const links = Object.fromEntries((await allSpans(member.client)).map((row) => [row.name, [row.agent, row.job]]));
    assert.equal(links, { one: [agent.id, job.id], two: [agent.id, null] });
  }));

test.run();
