import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { createAgent, createDataset, datapoints } from '../helpers/agent-fixtures.ts';
import { idsByCreation } from '../helpers/creation-order.ts';
import { createApiKey, createProject, memberWithProject, registerUser } from '../helpers/fixtures.ts';
import { withService } from '../helpers/service.ts';

const datasetFields = ['id', 'agent', 'created_at', 'version', 'num_datapoints', 'generator_model', 'metadata', 'name', 'policy_hash', 'source'];
const datapointFields = ['id', 'expected_output', 'input', 'order', 'persona', 'tags'];
const uuidPattern = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const missingId = '00000000-0000-4000-8000-000000000000';
const invalidPk = (id: string) => `Invalid pk "${id}" - object does not exist.`;

async function agentOfNewMember(client: any) {
  const { member, project } = await memberWithProject(client);
  const agent = await createAgent(member.client, project.id);
  return { member, project, agent };
}

test('creating a dataset answers it in full: version 1, ids and orders for every datapoint', () =>
  withService(async ({ client }) => {
    const { member, agent } = await agentOfNewMember(client);
    const reply = await member.client.post('/api/datasets/', {
      agent: agent.id,
      datapoints: [
        { input: { q: 'first' }, expected_output: 'one', persona: ' novice ', tags: ['a'], id: missingId, extra: 1 },
        { input: 'second' },
        {},
      ],
      id: missingId, version: 99, num_datapoints: 7, unknown: true,
    });
    assert.is(reply.status, 201, reply.text);
    assert.equal(Object.keys(reply.body), [...datasetFields, 'datapoints']);
    const body = reply.body;
    assert.match(body.id, uuidPattern);
    assert.is.not(body.id, missingId);
    assert.is(body.agent, agent.id);
    assert.is(body.version, 1);
    assert.is(body.num_datapoints, 3);
    for (const field of ['generator_model', 'name', 'policy_hash']) assert.is(body[field], '', field);
    assert.is(body.metadata, null);
    assert.is(body.source, 'seed');
    assert.equal(Object.keys(body.datapoints[0]), datapointFields);
    assert.equal(body.datapoints.map((point: any) => point.order), [0, 1, 2]);
    assert.equal(body.datapoints[0], { ...body.datapoints[0], input: { q: 'first' }, expected_output: 'one', persona: 'novice', tags: ['a'] });
    assert.equal(body.datapoints[2], { id: body.datapoints[2].id, expected_output: null, input: null, order: 2, persona: '', tags: null });
    const ids = body.datapoints.map((point: any) => point.id);
    assert.ok(ids.every((id: string) => uuidPattern.test(id) && id !== missingId));
    assert.is(new Set(ids).size, 3);
    assert.equal((await member.client.get(`/api/datasets/${body.id}/`)).body, body);
    assert.is((await member.client.get(`/api/agents/${agent.id}/`)).body.active_dataset, body.id);
  }));

test('every dataset field is stored and returned exactly', () =>
  withService(async ({ client }) => {
    const { member, agent } = await agentOfNewMember(client);
    const fields = { generator_model: 'gpt-4o', metadata: { seed: [1, 2], nested: { ok: true } }, name: 'Holdout', policy_hash: 'f'.repeat(64), source: 'synthetic' };
    const reply = await member.client.post('/api/datasets/', { agent: agent.id, datapoints: [], ...fields });
    assert.is(reply.status, 201, reply.text);
    for (const [field, value] of Object.entries(fields)) assert.equal(reply.body[field], value, field);
    assert.equal(reply.body.datapoints, []);
    assert.is(reply.body.num_datapoints, 0);
    for (const source of ['seed', 'augmented', 'production', null]) {
      assert.is((await member.client.post('/api/datasets/', { agent: agent.id, datapoints: [], source })).status, 201, String(source));
    }
  }));

test('datapoints are kept sorted by order, then by their position in the post', () =>
  withService(async ({ client }) => {
    const { member, agent } = await agentOfNewMember(client);
    const reply = await member.client.post('/api/datasets/', {
      agent: agent.id,
      datapoints: [{ order: 5, input: 'a' }, { order: 1, input: 'b' }, { order: 5, input: 'c' }, { input: 'd' }, { order: 0, input: 'e' }, { order: null, input: 'f' }],
    });
    assert.equal(reply.body.datapoints.map((point: any) => [point.input, point.order]), [
      ['e', 0], ['b', 1], ['d', 3], ['a', 5], ['c', 5], ['f', 5],
    ]);
    const listed = await member.client.get(`/api/datasets/${reply.body.id}/datapoints/`);
    assert.equal(listed.body.results, reply.body.datapoints);
  }));

test('fields are validated with DRF wording, nested datapoint errors per item', () =>
  withService(async ({ client }) => {
    const { member, agent } = await agentOfNewMember(client);
    const missing = await member.client.post('/api/datasets/', {});
    assert.is(missing.status, 400);
    assert.equal(missing.body, { agent: ['This field is required.'], datapoints: ['This field is required.'] });
    const bad = await member.client.post('/api/datasets/', {
      agent: 5, datapoints: { not: 'a list' }, name: 'n'.repeat(256), generator_model: 'g'.repeat(129), policy_hash: 'p'.repeat(65),
      source: 'scraped', make_active: 'yes', metadata: { any: 'thing' },
    });
    assert.equal(bad.body, {
      agent: ['Incorrect type. Expected pk value, received int.'],
      datapoints: { non_field_errors: ['Expected a list of items but got type "dict".'] },
      name: ['Ensure this field has no more than 255 characters.'],
      generator_model: ['Ensure this field has no more than 128 characters.'],
      policy_hash: ['Ensure this field has no more than 64 characters.'],
      source: ['"scraped" is not a valid choice.'],
      make_active: ['Must be a valid boolean.'],
    });
    const items = await member.client.post('/api/datasets/', {
      agent: agent.id,
      datapoints: [{ order: 0 }, { order: -1 }, 'text', { persona: 'x'.repeat(129), order: 1.5 }, { order: '3' }],
    });
    assert.equal(items.body, {
      datapoints: [
        {},
        { order: ['Ensure this value is greater than or equal to 0.'] },
        { non_field_errors: ['Invalid data. Expected a dictionary, but got str.'] },
        { persona: ['Ensure this field has no more than 128 characters.'], order: ['A valid integer is required.'] },
        { order: ['A valid integer is required.'] },
      ],
    });
    const atBounds = await member.client.post('/api/datasets/', {
      agent: agent.id, name: 'n'.repeat(255), generator_model: 'g'.repeat(128), policy_hash: 'p'.repeat(64),
      datapoints: [{ persona: 'x'.repeat(128), order: 0 }],
    });
    assert.is(atBounds.status, 201, atBounds.text);
  }));

test('datapoint order takes 0 up to the int64 maximum and nothing beyond', () =>
  withService(async ({ client }) => {
    const { member, agent } = await agentOfNewMember(client);
    const post = (order: string) =>
      member.client.request('POST', '/api/datasets/', `{"agent":"${agent.id}","datapoints":[{"order":${order}}]}`, { 'content-type': 'application/json' });
    const max = await post('9223372036854775807');
    assert.is(max.status, 201);
    const over = await post('9223372036854777856');
    assert.equal(over.body, { datapoints: [{ order: ['Ensure this value is less than or equal to 9223372036854775807.'] }] });
  }));

test('the agent must be a live agent the caller can see', () =>
  withService(async ({ client }) => {
    const { member, project, agent } = await agentOfNewMember(client);
    const stranger = await agentOfNewMember(client);
    const unknown = await member.client.post('/api/datasets/', { agent: missingId, datapoints: [] });
    assert.is(unknown.status, 400);
    assert.equal(unknown.body, { agent: [invalidPk(missingId)] });
    const foreign = await member.client.post('/api/datasets/', { agent: stranger.agent.id, datapoints: [] });
    assert.equal(foreign.body, { agent: [invalidPk(stranger.agent.id)] });
    const doomed = await createAgent(member.client, project.id);
    await member.client.delete(`/api/agents/${doomed.id}/`);
    const deleted = await member.client.post('/api/datasets/', { agent: doomed.id, datapoints: [] });
    assert.equal(deleted.body, { agent: [invalidPk(doomed.id)] });
    assert.is((await member.client.post('/api/datasets/', { agent: agent.id, datapoints: [] })).status, 201);
  }));

test('versions count per agent and are never reused after a delete', () =>
  withService(async ({ client }) => {
    const { member, project, agent } = await agentOfNewMember(client);
    const other = await createAgent(member.client, project.id);
    assert.is((await createDataset(member.client, agent.id)).version, 1);
    const second = await createDataset(member.client, agent.id);
    assert.is(second.version, 2);
    assert.is((await createDataset(member.client, other.id)).version, 1);
    assert.is((await member.client.delete(`/api/datasets/${second.id}/`)).status, 204);
    assert.is((await createDataset(member.client, agent.id)).version, 3);
  }));

test('20 concurrent posts for one agent get versions 1 to 20 exactly', () =>
  withService(async ({ client }) => {
    const { member, agent } = await agentOfNewMember(client);
    const replies = await Promise.all(
      Array.from({ length: 20 }, (_, i) => member.client.post('/api/datasets/', { agent: agent.id, name: `v${i}`, datapoints: datapoints(i) })),
    );
    assert.ok(replies.every((reply) => reply.status === 201));
    assert.equal(replies.map((reply) => reply.body.version).sort((a, b) => a - b), Array.from({ length: 20 }, (_, i) => i + 1));
    const listed = await member.client.get('/api/datasets/', { agent: agent.id, ordering: 'version', page_size: 100 });
    assert.equal(listed.body.results.map((item: any) => item.version), Array.from({ length: 20 }, (_, i) => i + 1));
  }));

test('make_active (true unless sent false or null) makes the new version active; activate switches; deleting the active one clears it', () =>
  withService(async ({ client }) => {
    const { member, agent } = await agentOfNewMember(client);
    const activeAgent = async () => (await member.client.get(`/api/agents/${agent.id}/`)).body.active_dataset;
    const byDefault = await createDataset(member.client, agent.id);
    assert.is(await activeAgent(), byDefault.id);
    const first = await createDataset(member.client, agent.id, { make_active: true });
    assert.is(await activeAgent(), first.id);
    const second = await createDataset(member.client, agent.id, { make_active: false });
    await createDataset(member.client, agent.id, { make_active: null });
    assert.is(await activeAgent(), first.id);
    const activated = await member.client.post(`/api/datasets/${second.id}/activate/`);
    assert.is(activated.status, 200);
    assert.equal(activated.body, second);
    assert.is(await activeAgent(), second.id);
    assert.is((await member.client.post(`/api/datasets/${second.id}/activate`)).status, 200);
    assert.is((await member.client.delete(`/api/datasets/${first.id}/`)).status, 204);
    assert.is(await activeAgent(), second.id);
    const deleted = await member.client.delete(`/api/datasets/${second.id}/`);
    assert.is(deleted.status, 204);
    assert.is(deleted.text, '');
    assert.is(await activeAgent(), null);
    assert.is((await member.client.get(`/api/datasets/${second.id}/`)).status, 404);
    assert.is((await member.client.delete(`/api/datasets/${second.id}/`)).status, 404);
    assert.is((await member.client.post(`/api/datasets/${second.id}/activate/`)).status, 404);
  }));

test('no operation modifies a dataset', () =>
  withService(async ({ client }) => {
    const { member, agent } = await agentOfNewMember(client);
    const dataset = await createDataset(member.client, agent.id);
    for (const method of ['PUT', 'PATCH']) {
      const reply = await member.client.request(method, `/api/datasets/${dataset.id}/`, { name: 'changed' });
      assert.is(reply.status, 405, method);
      assert.is(reply.body.code, 'method_not_allowed');
    }
    assert.equal((await member.client.get(`/api/datasets/${dataset.id}/`)).body, dataset);
  }));

test('a dataset holds at most datapointsPerDatasetMax datapoints', () =>
  withService(
    async ({ client }) => {
      const { member, agent } = await agentOfNewMember(client);
      assert.is((await member.client.post('/api/datasets/', { agent: agent.id, datapoints: datapoints(5) })).status, 201);
      const over = await member.client.post('/api/datasets/', { agent: agent.id, datapoints: datapoints(6) });
      assert.is(over.status, 400);
      assert.equal(over.body, { datapoints: { non_field_errors: ['Ensure this field has no more than 5 elements.'] } });
      assert.is((await member.client.get('/api/datasets/')).body.count, 1);
    },
    { limits: { datapointsPerDatasetMax: 5 } },
  ));

test('only the dataset route reads bodies up to datasetBodyBytesMax; larger bodies are 413', () =>
  withService(
    async ({ client }) => {
      const { member, project, agent } = await agentOfNewMember(client);
      const padding = 'x'.repeat(3000);
      const agentReply = await member.client.post('/api/agents/', { name: 'n', slug: 's', project: project.id, description: padding });
      assert.is(agentReply.status, 413);
      assert.is(agentReply.body.code, 'payload_too_large');
      const fits = await member.client.post('/api/datasets/', { agent: agent.id, datapoints: [{ input: padding }, { input: padding }] });
      assert.is(fits.status, 201, fits.text);
      const tooLarge = await member.client.post('/api/datasets/', { agent: agent.id, datapoints: Array(5).fill({ input: padding }) });
      assert.is(tooLarge.status, 413);
      assert.is(tooLarge.body.code, 'payload_too_large');
      assert.is((await member.client.get('/api/datasets/')).body.count, 1);
    },
    { limits: { bodyBytesMax: 2000, datasetBodyBytesMax: 10_000 } },
  ));

test('the list answers datasets without datapoints, newest first', () =>
  withService(async ({ client }) => {
    const { member, agent } = await agentOfNewMember(client);
    const first = await createDataset(member.client, agent.id);
    const second = await createDataset(member.client, agent.id);
    const listed = await member.client.get('/api/datasets/');
    assert.is(listed.status, 200);
    assert.is(listed.body.count, 2);
    assert.equal(Object.keys(listed.body.results[0]), datasetFields);
    const newest = idsByCreation([first, second], 'newest first');
    const { datapoints: _omitted, ...summary } = newest[0] === second.id ? second : first;
    assert.equal(listed.body.results[0], summary);
    assert.equal(listed.body.results.map((item: any) => item.id), newest);
  }));

test('the list filters by agent, generator_model, name, source, version and version range', () =>
  withService(async ({ client }) => {
    const { member, project, agent } = await agentOfNewMember(client);
    const other = await createAgent(member.client, project.id);
    const v1 = await createDataset(member.client, agent.id, { name: 'Gold', generator_model: 'g1', source: 'seed' });
    const v2 = await createDataset(member.client, agent.id, { name: 'Silver', generator_model: 'g2', source: 'synthetic' });
    const v3 = await createDataset(member.client, agent.id, { name: 'Gold', generator_model: 'g1', source: 'synthetic' });
    const o1 = await createDataset(member.client, other.id, { name: 'Gold', source: 'production' });
    const ids = async (query: Record<string, string | number>) =>
      (await member.client.get('/api/datasets/', query)).body.results.map((item: any) => item.id).sort();
    const sorted = (...items: any[]) => items.map((item) => item.id).sort();
    assert.equal(await ids({ agent: agent.id }), sorted(v1, v2, v3));
    assert.equal(await ids({ agent: other.id.toUpperCase() }), sorted(o1));
    assert.equal(await ids({ generator_model: 'g1' }), sorted(v1, v3));
    assert.equal(await ids({ name: 'Gold' }), sorted(v1, v3, o1));
    assert.equal(await ids({ source: 'synthetic' }), sorted(v2, v3));
    assert.equal(await ids({ version: 1 }), sorted(v1, o1));
    assert.equal(await ids({ version_min: 2 }), sorted(v2, v3));
    assert.equal(await ids({ version_max: 2, agent: agent.id }), sorted(v1, v2));
    assert.equal(await ids({ version_min: 2, version_max: 2 }), sorted(v2));
    assert.equal((await member.client.get('/api/datasets/', { agent: 'x' })).body, { agent: ['Enter a valid UUID.'] });
    assert.equal((await member.client.get('/api/datasets/', { version: 'two' })).body, { version: ['Enter a number.'] });
    assert.equal((await member.client.get('/api/datasets/', { version_min: 'x' })).body, { version_min: ['Enter a number.'] });
    const badSource = await member.client.get('/api/datasets/', { source: 'scraped' });
    assert.is(badSource.status, 400);
    assert.equal(badSource.body, { source: ['Select a valid choice. scraped is not one of the available choices.'] });
  }));

test('the list searches names and orders by the whitelist', () =>
  withService(async ({ client }) => {
    const { member, agent } = await agentOfNewMember(client);
    const b = await createDataset(member.client, agent.id, { name: 'beta holdout', datapoints: datapoints(1) });
    const a = await createDataset(member.client, agent.id, { name: 'alpha train', datapoints: datapoints(3) });
    const c = await createDataset(member.client, agent.id, { name: 'gamma Holdout', datapoints: datapoints(2) });
    const ids = async (query: Record<string, string>) =>
      (await member.client.get('/api/datasets/', query)).body.results.map((item: any) => item.id);
    assert.equal((await ids({ search: 'HOLDOUT' })).sort(), [b.id, c.id].sort());
    assert.equal(await ids({ search: 'holdout gamma' }), [c.id]);
    assert.equal(await ids({ ordering: 'name' }), [a.id, b.id, c.id]);
    assert.equal(await ids({ ordering: '-version' }), [c.id, a.id, b.id]);
    assert.equal(await ids({ ordering: 'num_datapoints' }), [b.id, c.id, a.id]);
    assert.equal(await ids({ ordering: 'created_at' }), idsByCreation([b, a, c], 'oldest first'));
  }));

test('datapoints page in order by default, with the usual envelope', () =>
  withService(async ({ client }) => {
    const { member, agent } = await agentOfNewMember(client);
    const dataset = await createDataset(member.client, agent.id, { datapoints: datapoints(30) });
    const path = `/api/datasets/${dataset.id}/datapoints/`;
    const first = await member.client.get(path);
    assert.is(first.status, 200);
    assert.is(first.body.count, 30);
    assert.equal(first.body.results, dataset.datapoints.slice(0, 25));
    assert.match(first.body.next, new RegExp(`/api/datasets/${dataset.id}/datapoints/\\?page=2$`));
    assert.is(first.body.previous, null);
    const second = await member.client.get(path, { page: 2 });
    assert.equal(second.body.results, dataset.datapoints.slice(25));
    assert.is(second.body.next, null);
    assert.match(second.body.previous, new RegExp(`/api/datasets/${dataset.id}/datapoints/$`));
    const small = await member.client.get(path, { page_size: 4, page: 3 });
    assert.equal(small.body.results.map((point: any) => point.order), [8, 9, 10, 11]);
    assert.is((await member.client.get(path, { page: 3 })).status, 404);
    assert.is((await member.client.get(path, { page: 'x' })).status, 404);
  }));

test('datapoints are searched by persona and ordered by the whitelist', () =>
  withService(async ({ client }) => {
    const { member, agent } = await agentOfNewMember(client);
    const dataset = await createDataset(member.client, agent.id, {
      datapoints: [
        { persona: 'expert user', input: 1 }, { persona: 'novice', input: 2 }, { persona: null, input: 3 }, { persona: 'expert admin', input: 4 },
      ],
    });
    const inputs = async (query: Record<string, string>) =>
      (await member.client.get(`/api/datasets/${dataset.id}/datapoints/`, query)).body.results.map((point: any) => point.input);
    assert.equal(await inputs({ search: 'EXPERT' }), [1, 4]);
    assert.equal(await inputs({ search: 'expert admin' }), [4]);
    assert.equal(await inputs({ ordering: '-order' }), [4, 3, 2, 1]);
    assert.equal(await inputs({ ordering: 'persona' }), [4, 1, 2, 3]);
    assert.equal(await inputs({ ordering: 'input' }), [1, 2, 3, 4]);
  }));

test('the datapoints listing applies agent, generator_model and version filters to the dataset itself', () =>
  withService(async ({ client }) => {
    const { member, project, agent } = await agentOfNewMember(client);
    const other = await createAgent(member.client, project.id);
    await createDataset(member.client, agent.id);
    const dataset = await createDataset(member.client, agent.id, { generator_model: 'g1' });
    const path = `/api/datasets/${dataset.id}/datapoints/`;
    const status = async (query: Record<string, string | number>) => (await member.client.get(path, query)).status;
    assert.is(await status({ agent: agent.id, version: 2, generator_model: 'g1' }), 200);
    assert.is(await status({ version_min: 2, version_max: 2 }), 200);
    assert.is(await status({ agent: other.id }), 404);
    assert.is(await status({ version: 1 }), 404);
    assert.is(await status({ version_min: 3 }), 404);
    assert.is(await status({ version_max: 1 }), 404);
    assert.is(await status({ generator_model: 'g2' }), 404);
    assert.is(await status({ name: 'not a datapoints filter', source: 'seed' }), 200);
    assert.equal((await member.client.get(path, { version: 'x' })).body, { version: ['Enter a number.'] });
    assert.equal((await member.client.get(path, { agent: 'x' })).body, { agent: ['Enter a valid UUID.'] });
  }));

test('a dataset at the default limit of 100,000 datapoints is accepted and pages quickly', () =>
  withService(async ({ client }) => {
    const { member, agent } = await agentOfNewMember(client);
    const posted = await member.client.post('/api/datasets/', {
      agent: agent.id,
      datapoints: Array.from({ length: 100_000 }, (_, i) => ({ input: i, order: 100_000 - i })),
    });
    assert.is(posted.status, 201, posted.text.slice(0, 200));
    assert.is(posted.body.num_datapoints, 100_000);
    const path = `/api/datasets/${posted.body.id}/datapoints/`;
    const started = performance.now();
    for (let page = 1; page <= 20; page++) {
      const reply = await member.client.get(path, { page: 2000 - page, page_size: 50 });
      assert.is(reply.status, 200);
      assert.is(reply.body.results[0].order, (2000 - page - 1) * 50 + 1);
    }
    const perPageMs = (performance.now() - started) / 20;
    assert.ok(perPageMs < 100, `${perPageMs.toFixed(1)} ms per page`);
    const reversed = await member.client.get(path, { ordering: '-order' });
    assert.is(reversed.body.results[0].input, 0);
    const over = await member.client.post('/api/datasets/', { agent: agent.id, datapoints: Array(100_001).fill({}) });
    assert.equal(over.body, { datapoints: { non_field_errors: ['Ensure this field has no more than 100000 elements.'] } });
  }));

test("other projects' datasets are 404 and invisible; an API key sees only its own project", () =>
  withService(async ({ client }) => {
    const { member, project, agent } = await agentOfNewMember(client);
    const secondProject = await createProject(member.client);
    const elsewhereAgent = await createAgent(member.client, secondProject.id);
    const dataset = await createDataset(member.client, agent.id);
    const elsewhere = await createDataset(member.client, elsewhereAgent.id);
    const stranger = await registerUser(client);
    for (const [method, path] of [
      ['GET', `/api/datasets/${dataset.id}/`], ['DELETE', `/api/datasets/${dataset.id}/`],
      ['POST', `/api/datasets/${dataset.id}/activate/`], ['GET', `/api/datasets/${dataset.id}/datapoints/`],
    ]) {
      assert.is((await stranger.client.request(method!, path!)).status, 404, `${method} ${path}`);
    }
    assert.is((await stranger.client.get('/api/datasets/')).body.count, 0);
    const key = await createApiKey(member.client, project.id);
    const keyClient = client.as({ apiKey: key.key });
    assert.equal((await keyClient.get('/api/datasets/')).body.results.map((item: any) => item.id), [dataset.id]);
    assert.is((await keyClient.get(`/api/datasets/${elsewhere.id}/`)).status, 404);
    assert.is((await keyClient.get(`/api/datasets/${elsewhere.id}/datapoints/`)).status, 404);
    const intoOther = await keyClient.post('/api/datasets/', { agent: elsewhereAgent.id, datapoints: [] });
    assert.equal(intoOther.body, { agent: [invalidPk(elsewhereAgent.id)] });
    assert.is((await keyClient.post('/api/datasets/', { agent: agent.id, datapoints: [] })).status, 201);
    assert.is((await client.get('/api/datasets/')).status, 401);
    assert.is((await member.client.get('/api/datasets/not-a-uuid/')).status, 404);
  }));

test("a deleted agent's datasets stay readable, can be activated and deleted", () =>
  withService(async ({ client }) => {
    const { member, agent } = await agentOfNewMember(client);
    const dataset = await createDataset(member.client, agent.id);
    await member.client.delete(`/api/agents/${agent.id}/`);
    assert.is((await member.client.get(`/api/datasets/${dataset.id}/datapoints/`)).body.count, 3);
    assert.is((await member.client.post(`/api/datasets/${dataset.id}/activate/`)).status, 200);
    assert.is((await member.client.delete(`/api/datasets/${dataset.id}/`)).status, 204);
    assert.is((await member.client.get('/api/datasets/')).body.count, 0);
  }));

test.run();
