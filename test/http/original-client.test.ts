// Answers the original service's Python client can read: slugs that are slugs, blank strings
// rather than null where its models require a string, make_active by default, and the job's
// agent_display_name.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { createAgent, createDataset } from '../helpers/agent-fixtures.ts';
import { createApiKey, createProject, memberWithProject } from '../helpers/fixtures.ts';
import { createJob } from '../helpers/job-fixtures.ts';
import { withService } from '../helpers/service.ts';

const slugError = ['Enter a valid \u201cslug\u201d consisting of letters, numbers, underscores or hyphens.'];

test('agent and project slugs accept only letters, numbers, underscores and hyphens', () =>
  withService(async ({ client }) => {
    const { member, project } = await memberWithProject(client);
    for (const slug of ['Support Triage!', 'a/b', 'é', 'two words', 'dot.ted']) {
      const agent = await member.client.post('/api/agents/', { name: 'n', slug, project: project.id });
      assert.is(agent.status, 400, slug);
      assert.equal(agent.body, { slug: slugError }, slug);
      const created = await member.client.post('/api/projects/', { name: 'n', slug });
      assert.equal(created.body, { slug: slugError }, slug);
    }
    assert.equal((await member.client.post('/api/agents/', { name: 'n', slug: '', project: project.id })).body, { slug: ['This field may not be blank.'] });
    const good = await createAgent(member.client, project.id, { slug: ' Support_triage-2 ' });
    assert.is(good.slug, 'Support_triage-2');
    const patched = await member.client.patch(`/api/agents/${good.id}/`, { slug: 'Support Triage!' });
    assert.equal(patched.body, { slug: slugError });
    const put = await member.client.put(`/api/projects/${project.id}/`, { name: 'n', slug: 'bad slug' });
    assert.equal(put.body, { slug: slugError });
    assert.is((await member.client.get(`/api/agents/${good.id}/`)).body.slug, 'Support_triage-2');
    assert.is((await createProject(member.client, { slug: 'UPPER_lower-09' })).slug, 'UPPER_lower-09');
  }));

test('omitted text fields read back as "" and omitted booleans and counts as the model\'s defaults in every representation, list items included; explicit null stays null', () =>
  withService(async ({ client }) => {
    const { member, project } = await memberWithProject(client);
    const agent = await createAgent(member.client, project.id);
    await createDataset(member.client, agent.id, { datapoints: [{ input: 'x' }] });
    const listedAgent = (await member.client.get('/api/agents/')).body.results[0];
    for (const field of ['agent_path', 'analyzer_model', 'description', 'display_name', 'entrypoint_fn', 'model', 'status']) {
      assert.is(listedAgent[field], '', field);
    }
    assert.is(listedAgent.dataset_size, 0);
    assert.is(listedAgent.dataset_has_expected_output, false);
    const listedDataset = (await member.client.get('/api/datasets/')).body.results[0];
    assert.equal(
      [listedDataset.name, listedDataset.generator_model, listedDataset.policy_hash, listedDataset.source, listedDataset.metadata],
      ['', '', '', 'seed', null],
    );
    const point = (await member.client.get(`/api/datasets/${listedDataset.id}/datapoints/`)).body.results[0];
    assert.is(point.persona, '');
    assert.is(point.tags, null);
    const nulled = await createDataset(member.client, agent.id, { name: null, source: null, datapoints: [{ persona: null }] });
    assert.equal([nulled.name, nulled.source, nulled.datapoints[0].persona], [null, null, null]);

    const listedProject = (await member.client.get('/api/projects/')).body.results[0];
    assert.is(listedProject.description, '');
    assert.is(listedProject.is_active, true);

    await createJob(member.client);
    const listedJob = (await member.client.get('/api/jobs/')).body.results[0];
    assert.equal([listedJob.analyzer_model, listedJob.prompt_slug, listedJob.job_type, listedJob.best_score], ['', '', null, null]);
    const iteration = await member.client.post('/api/job-iterations/', { job: listedJob.id, iteration_name: 'i', description: null });
    assert.equal([iteration.body.agent_code, iteration.body.description, iteration.body.avg_score], ['', null, null]);
  }));

test('an API key without a name reads back with name "" when created and listed; an explicit null stays null', () =>
  withService(async ({ client }) => {
    const { member, project } = await memberWithProject(client);
    const created = await member.client.post('/api/auth/api-keys/', { project: project.id });
    assert.is(created.status, 201);
    assert.is(created.body.name, '');
    const nulled = await createApiKey(member.client, project.id, { name: null });
    assert.is(nulled.name, null);
    const listed = (await member.client.get('/api/auth/api-keys/')).body.results;
    assert.equal(listed.map((key: { name: string | null }) => key.name).sort(), ['', null].sort());
  }));

test("a job shows its agent's display_name, else its name, in full and list form, following the agent", () =>
  withService(async ({ client }) => {
    const { member, project } = await memberWithProject(client);
    const agent = await createAgent(member.client, project.id, { name: 'Triage bot' });
    const job = await createJob(member.client, { agent: agent.id });
    assert.is(job.agent_display_name, 'Triage bot');
    const listedName = async () => (await member.client.get('/api/jobs/')).body.results[0].agent_display_name;
    assert.is(await listedName(), 'Triage bot');
    await member.client.patch(`/api/agents/${agent.id}/`, { display_name: 'Triage v2' });
    assert.is((await member.client.get(`/api/jobs/${job.id}/`)).body.agent_display_name, 'Triage v2');
    assert.is(await listedName(), 'Triage v2');
    await member.client.patch(`/api/agents/${agent.id}/`, { display_name: '' });
    assert.is(await listedName(), 'Triage bot');
    assert.is((await member.client.delete(`/api/agents/${agent.id}/`)).status, 204);
    assert.is((await member.client.get(`/api/jobs/${job.id}/`)).body.agent_display_name, 'Triage bot', 'a soft-deleted agent keeps its name');
    const alone = await createJob(member.client);
    assert.is(alone.agent_display_name, null);
    const patched = await member.client.patch(`/api/jobs/${alone.id}/`, { agent: (await createAgent(member.client, project.id, { display_name: 'Shown' })).id });
    assert.is(patched.body.agent_display_name, 'Shown');
  }));

test('a dataset is made active unless make_active is false or null', () =>
  withService(async ({ client }) => {
    const { member, project } = await memberWithProject(client);
    const agent = await createAgent(member.client, project.id);
    const active = async () => (await member.client.get(`/api/agents/${agent.id}/`)).body.active_dataset;
    const first = await createDataset(member.client, agent.id);
    assert.is(await active(), first.id);
    await createDataset(member.client, agent.id, { make_active: false });
    await createDataset(member.client, agent.id, { make_active: null });
    assert.is(await active(), first.id);
  }));

test.run();
