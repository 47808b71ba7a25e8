import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { createAgent, createDataset } from '../helpers/agent-fixtures.ts';
import { idsByCreation } from '../helpers/creation-order.ts';
import { createApiKey, createProject, memberWithProject, registerUser } from '../helpers/fixtures.ts';
import { withService } from '../helpers/service.ts';

const fullFields = [
  'id', 'created_at', 'updated_at', 'name', 'project', 'slug', 'active_dataset', 'agent_description', 'agent_path',
  'analyzer_model', 'backtest_metadata', 'backtest_model_suggestions', 'consistency_rules', 'dataset_has_expected_output',
  'dataset_input_keys', 'dataset_size', 'description', 'display_name', 'entrypoint_fn', 'eval_dataset', 'evaluation_criteria',
  'fixed_elements', 'improvement_metadata', 'input_schema', 'is_deleted', 'model', 'optimizable_elements', 'output_fields',
  'output_schema', 'policy_data', 'policy_markdown', 'proposed_criteria', 'status', 'structure_weight', 'tool_analysis',
  'tool_config', 'tool_usage_weight', 'total_points', 'tags',
];

const listFields = [
  'id', 'created_at', 'name', 'project', 'slug', 'updated_at', 'agent_path', 'analyzer_model', 'dataset_has_expected_output',
  'dataset_size', 'description', 'display_name', 'entrypoint_fn', 'model', 'status', 'structure_weight', 'tags',
  'tool_usage_weight', 'total_points',
];

const unknownFields = [
  'agent_description', 'backtest_metadata', 'backtest_model_suggestions', 'consistency_rules', 'dataset_input_keys',
  'eval_dataset', 'evaluation_criteria', 'fixed_elements', 'improvement_metadata', 'input_schema', 'optimizable_elements',
  'output_fields', 'output_schema', 'policy_data', 'proposed_criteria', 'tool_analysis', 'tool_config', 'tags',
];

const invalidPk = (id: string) => `Invalid pk "${id}" - object does not exist.`;
const missingId = '00000000-0000-4000-8000-000000000000';

test('creating an agent answers the full agent; omitted text reads "", the model\'s defaults, other omitted fields null', () =>
  withService(async ({ client }) => {
    const { member, project } = await memberWithProject(client);
    const reply = await member.client.post('/api/agents/', {
      name: '  Support bot ', slug: 'support', project: project.id,
      id: missingId, created_at: '2000-01-01T00:00:00Z', not_a_field: 1,
    });
    assert.is(reply.status, 201);
    assert.equal(Object.keys(reply.body), fullFields);
    assert.is(reply.body.name, 'Support bot');
    assert.is(reply.body.project, project.id);
    assert.is.not(reply.body.id, missingId);
    assert.is.not(reply.body.created_at, '2000-01-01T00:00:00Z');
    assert.is(reply.body.created_at, reply.body.updated_at);
    assert.is(reply.body.is_deleted, false);
    const text = ['agent_path', 'analyzer_model', 'description', 'display_name', 'entrypoint_fn', 'model', 'policy_markdown', 'status'];
    const modelDefaults: Record<string, unknown> = { dataset_has_expected_output: false, dataset_size: 0 };
    for (const field of fullFields.filter((name) => !['id', 'created_at', 'updated_at', 'name', 'project', 'slug', 'is_deleted'].includes(name))) {
      assert.is(reply.body[field], text.includes(field) ? '' : field in modelDefaults ? modelDefaults[field] : null, field);
    }
    const nulled = await member.client.post('/api/agents/', {
      name: 'Nulled', slug: 'nulled', project: project.id, dataset_has_expected_output: null, dataset_size: null,
    });
    assert.is(nulled.body.dataset_has_expected_output, null);
    assert.is(nulled.body.dataset_size, null);
    const again = await member.client.get(`/api/agents/${reply.body.id}/`);
    assert.equal(again.body, reply.body);
  }));

test('every field is stored and returned exactly, unknown JSON values included', () =>
  withService(async ({ client }) => {
    const { member, project } = await memberWithProject(client);
    const values: Record<string, unknown> = {
      agent_path: 'agents/support.py', analyzer_model: 'gpt-4o', dataset_has_expected_output: true,
      dataset_size: 9007199254740991, description: 'Answers tickets', display_name: 'Support', entrypoint_fn: 'run',
      is_deleted: false, model: 'claude', policy_markdown: '# Policy', status: 'active', structure_weight: 12.5,
      tool_usage_weight: -0.25, total_points: 0,
    };
    const shapes: unknown[] = [{ nested: [1, 2.5, { deep: null }] }, [true, 'x'], 'text', 42, false, 0, { '': '' }, [], {}];
    unknownFields.forEach((field, i) => (values[field] = shapes[i % shapes.length]));
    const reply = await member.client.post('/api/agents/', { name: 'All', slug: 'all', project: project.id, ...values });
    assert.is(reply.status, 201, reply.text);
    for (const [field, value] of Object.entries(values)) assert.equal(reply.body[field], value, field);
    const retrieved = await member.client.get(`/api/agents/${reply.body.id}/`);
    assert.equal(retrieved.body, reply.body);
  }));

test('required fields, nulls and types are checked with DRF wording', () =>
  withService(async ({ client }) => {
    const { member, project } = await memberWithProject(client);
    const missing = await member.client.post('/api/agents/', {});
    assert.is(missing.status, 400);
    assert.equal(missing.body, {
      name: ['This field is required.'], project: ['This field is required.'], slug: ['This field is required.'],
    });
    const nulls = await member.client.post('/api/agents/', { name: null, slug: null, project: null });
    assert.equal(nulls.body, {
      name: ['This field may not be null.'], slug: ['This field may not be null.'], project: ['This field may not be null.'],
    });
    const types = await member.client.post('/api/agents/', {
      name: 5, slug: ['s'], project: 7, dataset_size: 1.5, structure_weight: 'heavy', total_points: true,
      dataset_has_expected_output: 'yes', model: {}, status: 3, active_dataset: 'not-a-uuid', tool_usage_weight: [],
    });
    assert.equal(types.body, {
      name: ['Not a valid string.'],
      slug: ['Not a valid string.'],
      project: ['Incorrect type. Expected pk value, received int.'],
      dataset_size: ['A valid integer is required.'],
      structure_weight: ['A valid number is required.'],
      total_points: ['A valid number is required.'],
      dataset_has_expected_output: ['Must be a valid boolean.'],
      model: ['Not a valid string.'],
      status: ['Not a valid string.'],
      active_dataset: ['Must be a valid UUID.'],
      tool_usage_weight: ['A valid number is required.'],
    });
    const badProject = await member.client.post('/api/agents/', { name: 'n', slug: 's', project: 'nope' });
    assert.equal(badProject.body, { project: ['Must be a valid UUID.'] });
    const optionalNulls: Record<string, null> = {};
    for (const field of fullFields.slice(6)) optionalNulls[field] = null;
    const accepted = await member.client.post('/api/agents/', { name: 'n', slug: 's', project: project.id, ...optionalNulls });
    assert.is(accepted.status, 201, accepted.text);
    assert.is(accepted.body.is_deleted, false);
    assert.is(accepted.body.model, null);
  }));

test('string lengths are bounded exactly as the Agent table says', () =>
  withService(async ({ client }) => {
    const { member, project } = await memberWithProject(client);
    const bounds: [field: string, max: number][] = [
      ['name', 255], ['slug', 255], ['display_name', 512], ['agent_path', 512], ['entrypoint_fn', 255],
      ['model', 128], ['analyzer_model', 128], ['status', 20],
    ];
    let n = 0;
    for (const [field, max] of bounds) {
      const base = { name: 'n', slug: `s${++n}`, project: project.id };
      const atMax = await member.client.post('/api/agents/', { ...base, [field]: 'x'.repeat(max) });
      assert.is(atMax.status, 201, `${field} at ${max}: ${atMax.text}`);
      const over = await member.client.post('/api/agents/', { ...base, slug: `over${n}`, [field]: 'x'.repeat(max + 1) });
      assert.is(over.status, 400, field);
      assert.equal(over.body, { [field]: [`Ensure this field has no more than ${max} characters.`] });
    }
    for (const field of ['name', 'slug', 'status']) {
      const blank = await member.client.post('/api/agents/', { name: 'n', slug: 'blank', project: project.id, [field]: '   ' });
      assert.equal(blank.body, { [field]: ['This field may not be blank.'] }, field);
    }
    const emptyOptional = await member.client.post('/api/agents/', { name: 'n', slug: 'empty', project: project.id, model: '', description: '' });
    assert.is(emptyOptional.status, 201);
    assert.is(emptyOptional.body.model, '');
  }));

test('dataset_size takes the whole int64 range and nothing beyond it', () =>
  withService(async ({ client }) => {
    const { member, project } = await memberWithProject(client);
    const post = (slug: string, size: string) =>
      member.client.request('POST', '/api/agents/', `{"name":"n","slug":"${slug}","project":"${project.id}","dataset_size":${size}}`, {
        'content-type': 'application/json',
      });
    assert.is((await post('max', '9223372036854775807')).status, 201);
    assert.is((await post('min', '-9223372036854775808')).status, 201);
    assert.is((await post('zero', '0')).status, 201);
    const over = await post('over', '9223372036854777856');
    assert.equal(over.body, { dataset_size: ['Ensure this value is less than or equal to 9223372036854775807.'] });
    const under = await post('under', '-9223372036854777856');
    assert.equal(under.body, { dataset_size: ['Ensure this value is greater than or equal to -9223372036854775808.'] });
  }));

test('the project must be one the caller can see', () =>
  withService(async ({ client }) => {
    const { member } = await memberWithProject(client);
    const stranger = await memberWithProject(client);
    const unknown = await member.client.post('/api/agents/', { name: 'n', slug: 's', project: missingId });
    assert.is(unknown.status, 400);
    assert.equal(unknown.body, { project: [invalidPk(missingId)] });
    const foreign = await member.client.post('/api/agents/', { name: 'n', slug: 's', project: stranger.project.id });
    assert.equal(foreign.body, { project: [invalidPk(stranger.project.id)] });
  }));

test('(project, slug) is unique among live agents; another project may reuse a slug; a delete frees it', () =>
  withService(async ({ client }) => {
    const { member, project } = await memberWithProject(client);
    const other = await createProject(member.client);
    const first = await createAgent(member.client, project.id, { slug: 'bot' });
    const clash = await member.client.post('/api/agents/', { name: 'x', slug: 'bot', project: project.id });
    assert.is(clash.status, 400);
    assert.equal(clash.body, { non_field_errors: ['The fields project, slug must make a unique set.'] });
    await createAgent(member.client, other.id, { slug: 'bot' });
    const second = await createAgent(member.client, project.id, { slug: 'bot-2' });
    const rename = await member.client.patch(`/api/agents/${second.id}/`, { slug: 'bot' });
    assert.equal(rename.body, { non_field_errors: ['The fields project, slug must make a unique set.'] });
    assert.is((await member.client.delete(`/api/agents/${first.id}/`)).status, 204);
    assert.is((await member.client.patch(`/api/agents/${second.id}/`, { slug: 'bot' })).status, 200);
    const third = await member.client.post('/api/agents/', { name: 'x', slug: 'bot', project: project.id });
    assert.is(third.status, 400);
  }));

test('concurrent creates with one slug: exactly one is created', () =>
  withService(async ({ client }) => {
    const { member, project } = await memberWithProject(client);
    const replies = await Promise.all(
      Array.from({ length: 12 }, (_, i) => member.client.post('/api/agents/', { name: `racer ${i}`, slug: 'race', project: project.id })),
    );
    const statuses = replies.map((reply) => reply.status).sort();
    assert.equal(statuses, [201, ...Array(11).fill(400)]);
    const listed = await member.client.get('/api/agents/', { slug: 'race' });
    assert.is(listed.body.count, 1);
  }));

test('PATCH changes only what is sent and answers the full agent', () =>
  withService(async ({ client }) => {
    const { member, project } = await memberWithProject(client);
    const agent = await createAgent(member.client, project.id, { model: 'm1', description: 'd', tags: ['a'] });
    const reply = await member.client.patch(`/api/agents/${agent.id}`, { model: 'm2', tags: { b: 1 }, id: missingId, created_at: 'x' });
    assert.is(reply.status, 200);
    assert.equal(Object.keys(reply.body), fullFields);
    assert.is(reply.body.id, agent.id);
    assert.is(reply.body.model, 'm2');
    assert.equal(reply.body.tags, { b: 1 });
    assert.is(reply.body.description, 'd');
    assert.is(reply.body.created_at, agent.created_at);
    assert.ok(reply.body.updated_at >= agent.updated_at);
    const cleared = await member.client.patch(`/api/agents/${agent.id}/`, { description: null });
    assert.is(cleared.body.description, null);
    const invalid = await member.client.patch(`/api/agents/${agent.id}/`, { name: '', status: 'x'.repeat(21) });
    assert.equal(invalid.body, { name: ['This field may not be blank.'], status: ['Ensure this field has no more than 20 characters.'] });
    assert.equal((await member.client.get(`/api/agents/${agent.id}/`)).body, cleared.body);
  }));

test('PUT requires name, project and slug, and keeps the optional fields it is not sent', () =>
  withService(async ({ client }) => {
    const { member, project } = await memberWithProject(client);
    const agent = await createAgent(member.client, project.id, { model: 'm1', total_points: 50 });
    const partial = await member.client.put(`/api/agents/${agent.id}/`, { name: 'only name' });
    assert.is(partial.status, 400);
    assert.equal(partial.body, { project: ['This field is required.'], slug: ['This field is required.'] });
    const full = await member.client.put(`/api/agents/${agent.id}/`, { name: 'renamed', slug: agent.slug, project: project.id, total_points: 75 });
    assert.is(full.status, 200);
    assert.is(full.body.name, 'renamed');
    assert.is(full.body.total_points, 75);
    assert.is(full.body.model, 'm1');
  }));

test('active_dataset must name a dataset of this agent', () =>
  withService(async ({ client }) => {
    const { member, project } = await memberWithProject(client);
    const agent = await createAgent(member.client, project.id);
    const other = await createAgent(member.client, project.id);
    const own = await createDataset(member.client, agent.id);
    const foreign = await createDataset(member.client, other.id);
    const atCreate = await member.client.post('/api/agents/', { name: 'n', slug: 'new', project: project.id, active_dataset: own.id });
    assert.equal(atCreate.body, { active_dataset: [invalidPk(own.id)] });
    const wrong = await member.client.patch(`/api/agents/${agent.id}/`, { active_dataset: foreign.id });
    assert.is(wrong.status, 400);
    assert.equal(wrong.body, { active_dataset: [invalidPk(foreign.id)] });
    const unknown = await member.client.patch(`/api/agents/${agent.id}/`, { active_dataset: missingId });
    assert.equal(unknown.body, { active_dataset: [invalidPk(missingId)] });
    const set = await member.client.patch(`/api/agents/${agent.id}/`, { active_dataset: own.id });
    assert.is(set.body.active_dataset, own.id);
    const cleared = await member.client.patch(`/api/agents/${agent.id}/`, { active_dataset: null });
    assert.is(cleared.body.active_dataset, null);
  }));

test('an agent moves to another visible project with its datasets; an invisible project is an invalid pk', () =>
  withService(async ({ client }) => {
    const { member, project } = await memberWithProject(client);
    const target = await createProject(member.client);
    const colleague = await registerUser(client);
    const added = await member.client.post(`/api/projects/${target.id}/memberships/`, { user_id: colleague.id });
    assert.is(added.status, 201);
    const agent = await createAgent(member.client, project.id, { slug: 'mover' });
    const dataset = await createDataset(member.client, agent.id);
    assert.is((await colleague.client.get(`/api/datasets/${dataset.id}/`)).status, 404);
    const stranger = await memberWithProject(client);
    const hidden = await member.client.patch(`/api/agents/${agent.id}/`, { project: stranger.project.id });
    assert.equal(hidden.body, { project: [invalidPk(stranger.project.id)] });
    const moved = await member.client.patch(`/api/agents/${agent.id}/`, { project: target.id });
    assert.is(moved.status, 200);
    assert.is(moved.body.project, target.id);
    assert.is((await colleague.client.get(`/api/agents/${agent.id}/`)).status, 200);
    assert.is((await colleague.client.get(`/api/datasets/${dataset.id}/`)).status, 200);
    assert.is((await colleague.client.get('/api/datasets/', { agent: agent.id })).body.count, 1);
    assert.is((await member.client.post('/api/agents/', { name: 'n', slug: 'mover', project: project.id })).status, 201);
    const clash = await member.client.post('/api/agents/', { name: 'n', slug: 'mover', project: target.id });
    assert.is(clash.status, 400);
  }));

test('DELETE soft-deletes: the agent is gone from list and retrieve, its datasets stay', () =>
  withService(async ({ client }) => {
    const { member, project } = await memberWithProject(client);
    const agent = await createAgent(member.client, project.id);
    const dataset = await createDataset(member.client, agent.id);
    const deleted = await member.client.delete(`/api/agents/${agent.id}/`);
    assert.is(deleted.status, 204);
    assert.is(deleted.text, '');
    for (const path of [`/api/agents/${agent.id}/`, `/api/agents/${agent.id}/eval_spec/`]) {
      assert.is((await member.client.get(path)).status, 404, path);
    }
    assert.is((await member.client.patch(`/api/agents/${agent.id}/`, { name: 'back' })).status, 404);
    assert.is((await member.client.delete(`/api/agents/${agent.id}/`)).status, 404);
    assert.is((await member.client.get('/api/agents/')).body.count, 0);
    const kept = await member.client.get(`/api/datasets/${dataset.id}/`);
    assert.is(kept.status, 200);
    assert.is(kept.body.agent, agent.id);
    assert.is((await member.client.get('/api/datasets/', { agent: agent.id })).body.count, 1);
  }));

test('is_deleted is writable: true deletes the agent as DELETE does, null reads false', () =>
  withService(async ({ client }) => {
    const { member, project } = await memberWithProject(client);
    const agent = await createAgent(member.client, project.id, { slug: 'patched' });
    const reply = await member.client.patch(`/api/agents/${agent.id}/`, { is_deleted: true });
    assert.is(reply.status, 200);
    assert.is(reply.body.is_deleted, true);
    assert.is((await member.client.get(`/api/agents/${agent.id}/`)).status, 404);
    const bornDeleted = await member.client.post('/api/agents/', { name: 'n', slug: 'patched', project: project.id, is_deleted: true });
    assert.is(bornDeleted.status, 201);
    assert.is(bornDeleted.body.is_deleted, true);
    assert.is((await member.client.get(`/api/agents/${bornDeleted.body.id}/`)).status, 404);
    const live = await createAgent(member.client, project.id, { slug: 'patched', is_deleted: null });
    assert.is(live.is_deleted, false);
    assert.is((await member.client.patch(`/api/agents/${live.id}/`, { is_deleted: null })).body.is_deleted, false);
  }));

test('eval_spec answers the evaluation settings with defaults for what is unset', () =>
  withService(async ({ client }) => {
    const { member, project } = await memberWithProject(client);
    const bare = await createAgent(member.client, project.id);
    const defaults = await member.client.get(`/api/agents/${bare.id}/eval_spec/`);
    assert.is(defaults.status, 200);
    assert.equal(defaults.body, {
      agent_description: '', agent_path: '', input_schema: {}, output_fields: {}, structure_weight: 20, total_points: 100,
      tool_config: {}, tool_usage_weight: 10, consistency_rules: [], optimizable_elements: [], fixed_elements: [],
    });
    const nulled = await createAgent(member.client, project.id, { slug: 'nulled', description: null, agent_path: null });
    assert.is(nulled.description, null);
    const nulledSpec = await member.client.get(`/api/agents/${nulled.id}/eval_spec/`);
    assert.is(nulledSpec.body.agent_description, '');
    assert.is(nulledSpec.body.agent_path, '');
    const configured = await createAgent(member.client, project.id, {
      description: 'Routes tickets', agent_description: 'ignored here', agent_path: 'a.py', input_schema: { type: 'object' },
      output_fields: ['answer'], structure_weight: 0, total_points: 10, tool_config: { tools: [] }, tool_usage_weight: 0,
      consistency_rules: ['r1'], optimizable_elements: ['prompt'], fixed_elements: ['tools'],
    });
    const spec = await member.client.get(`/api/agents/${configured.id}/eval_spec`);
    assert.equal(spec.body, {
      agent_description: 'Routes tickets', agent_path: 'a.py', input_schema: { type: 'object' }, output_fields: ['answer'],
      structure_weight: 0, total_points: 10, tool_config: { tools: [] }, tool_usage_weight: 0, consistency_rules: ['r1'],
      optimizable_elements: ['prompt'], fixed_elements: ['tools'],
    });
  }));

test('the list answers the list fields only, newest first, paginated', () =>
  withService(async ({ client }) => {
    const { member, project } = await memberWithProject(client);
    const created = [];
    for (let i = 0; i < 5; i++) created.push(await createAgent(member.client, project.id, { name: `agent ${i}` }));
    const page = await member.client.get('/api/agents/', { page_size: 2 });
    assert.is(page.status, 200);
    assert.is(page.body.count, 5);
    assert.equal(Object.keys(page.body.results[0]), listFields);
    const newest = idsByCreation(created, 'newest first');
    assert.equal(page.body.results.map((agent: any) => agent.id), newest.slice(0, 2));
    assert.match(page.body.next, /\/api\/agents\/\?page=2&page_size=2$/);
    assert.is(page.body.previous, null);
    const last = await member.client.get('/api/agents/', { page_size: 2, page: 3 });
    assert.equal(last.body.results.map((agent: any) => agent.id), newest.slice(4));
    assert.is(last.body.next, null);
    assert.is((await member.client.get('/api/agents/', { page: 4, page_size: 2 })).status, 404);
  }));

test('the list filters by model, name, project, slug and status (exact)', () =>
  withService(async ({ client }) => {
    const { member, project } = await memberWithProject(client);
    const other = await createProject(member.client);
    const a = await createAgent(member.client, project.id, { name: 'Alpha', slug: 'alpha', model: 'm1', status: 'active' });
    const b = await createAgent(member.client, project.id, { name: 'Beta', slug: 'beta', model: 'm2', status: 'draft' });
    const c = await createAgent(member.client, other.id, { name: 'Alpha', slug: 'gamma', model: 'm1', status: 'draft' });
    const ids = async (query: Record<string, string>) =>
      (await member.client.get('/api/agents/', query)).body.results.map((agent: any) => agent.id).sort();
    assert.equal(await ids({ model: 'm1' }), [a.id, c.id].sort());
    assert.equal(await ids({ name: 'Alpha' }), [a.id, c.id].sort());
    assert.equal(await ids({ name: 'alpha' }), []);
    assert.equal(await ids({ project: project.id }), [a.id, b.id].sort());
    assert.equal(await ids({ slug: 'beta' }), [b.id]);
    assert.equal(await ids({ status: 'draft' }), [b.id, c.id].sort());
    assert.equal(await ids({ status: 'draft', project: other.id }), [c.id]);
    assert.equal(await ids({ status: '' }), [a.id, b.id, c.id].sort());
    const bad = await member.client.get('/api/agents/', { project: 'nope' });
    assert.is(bad.status, 400);
    assert.equal(bad.body, { project: ['Enter a valid UUID.'] });
  }));

test('search matches name, slug, display_name and description; every term must match', () =>
  withService(async ({ client }) => {
    const { member, project } = await memberWithProject(client);
    const byName = await createAgent(member.client, project.id, { name: 'Ticket Router', slug: 's1' });
    const bySlug = await createAgent(member.client, project.id, { name: 'x', slug: 'ticket-triage' });
    const byDisplay = await createAgent(member.client, project.id, { name: 'y', slug: 's3', display_name: 'TICKETS desk' });
    const byDescription = await createAgent(member.client, project.id, { name: 'z', slug: 's4', description: 'reads every ticket' });
    await createAgent(member.client, project.id, { name: 'unrelated', slug: 's5' });
    const ids = async (search: string) =>
      (await member.client.get('/api/agents/', { search })).body.results.map((agent: any) => agent.id).sort();
    assert.equal(await ids('ticket'), [byName.id, bySlug.id, byDisplay.id, byDescription.id].sort());
    assert.equal(await ids('ticket router'), [byName.id]);
    assert.equal(await ids('ticket,desk'), [byDisplay.id]);
    assert.equal(await ids('"every ticket"'), [byDescription.id]);
  }));

test('ordering follows the whitelist, descending with "-", unknown fields ignored', () =>
  withService(async ({ client }) => {
    const { member, project } = await memberWithProject(client);
    const b = await createAgent(member.client, project.id, { name: 'b', slug: 'z' });
    const a = await createAgent(member.client, project.id, { name: 'a', slug: 'y' });
    const c = await createAgent(member.client, project.id, { name: 'c', slug: 'x' });
    const ids = async (ordering: string) =>
      (await member.client.get('/api/agents/', { ordering })).body.results.map((agent: any) => agent.id);
    assert.equal(await ids('name'), [a.id, b.id, c.id]);
    assert.equal(await ids('-name'), [c.id, b.id, a.id]);
    assert.equal(await ids('slug'), [c.id, a.id, b.id]);
    assert.equal(await ids('created_at'), idsByCreation([b, a, c], 'oldest first'));
    assert.equal(await ids('password,-created_at'), idsByCreation([b, a, c], 'newest first'));
  }));

test("other projects' agents are 404 and invisible; an API key sees only its own project", () =>
  withService(async ({ client }) => {
    const owner = await memberWithProject(client);
    const secondProject = await createProject(owner.member.client);
    const agent = await createAgent(owner.member.client, owner.project.id);
    const elsewhere = await createAgent(owner.member.client, secondProject.id);
    const stranger = await registerUser(client);
    for (const [method, path] of [
      ['GET', `/api/agents/${agent.id}/`], ['PATCH', `/api/agents/${agent.id}/`], ['PUT', `/api/agents/${agent.id}/`],
      ['DELETE', `/api/agents/${agent.id}/`], ['GET', `/api/agents/${agent.id}/eval_spec/`],
    ]) {
      const body = method === 'PUT' || method === 'PATCH' ? { name: 'n', slug: 's', project: owner.project.id } : undefined;
      assert.is((await stranger.client.request(method!, path!, body)).status, 404, `${method} ${path}`);
    }
    assert.is((await stranger.client.get('/api/agents/')).body.count, 0);
    const key = await createApiKey(owner.member.client, owner.project.id);
    const keyClient = client.as({ apiKey: key.key });
    assert.equal((await keyClient.get('/api/agents/')).body.results.map((item: any) => item.id), [agent.id]);
    assert.is((await keyClient.get(`/api/agents/${elsewhere.id}/`)).status, 404);
    const intoOther = await keyClient.post('/api/agents/', { name: 'n', slug: 'k', project: secondProject.id });
    assert.equal(intoOther.body, { project: [invalidPk(secondProject.id)] });
    assert.is((await keyClient.post('/api/agents/', { name: 'n', slug: 'k', project: owner.project.id })).status, 201);
    assert.is((await client.get('/api/agents/')).status, 401);
    assert.is((await client.get(`/api/agents/${missingId}/`)).status, 401);
  }));

test('a malformed or unknown agent id is 404', () =>
  withService(async ({ client }) => {
    const { member } = await memberWithProject(client);
    assert.is((await member.client.get('/api/agents/not-a-uuid/')).status, 404);
    const unknown = await member.client.get(`/api/agents/${missingId}/`);
    assert.is(unknown.status, 404);
    assert.equal(unknown.body, { detail: 'Not found.', code: 'not_found' });
  }));

test.run();
