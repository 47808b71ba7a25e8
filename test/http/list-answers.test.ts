// A list's answer is kept while what it was made from is unchanged (src/http/pages.ts): each test
// asks for a page (twice, so that it is kept), changes what it shows in one way, and asks for the
// very same URL again.
import { request as httpRequest } from 'node:http';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { createAgent, createDataset } from '../helpers/agent-fixtures.ts';
import type { Client } from '../helpers/client.ts';
import { idsByCreation } from '../helpers/creation-order.ts';
import { createApiKey, createProject, memberWithProject, registerUser } from '../helpers/fixtures.ts';
import { createIteration, createJob } from '../helpers/job-fixtures.ts';
import { withService, type Running } from '../helpers/service.ts';

/** A page asked for twice: the second answer (kept from then on) must be the first's. */
const listed = async (client: Client, path: string) => {
  const reply = await client.get(path);
  assert.is(reply.status, 200, reply.text);
  assert.is((await client.get(path)).text, reply.text);
  return reply.body;
};
const ids = (page: { results: { id: string }[] }) => page.results.map((item) => item.id);
const byId = (results: any[], id: string) => results.find((item) => item.id === id);

/** The `next` link of a page asked for with a Host header of its own (fetch sends its own). */
function nextAt(url: string, path: string, token: string, host: string): Promise<string | null> {
  return new Promise((resolve, reject) => {
    const request = httpRequest(`${url}${path}`, { headers: { host, authorization: `Bearer ${token}` } }, (response) => {
      let text = '';
      response.on('data', (chunk) => (text += chunk));
      response.on('end', () => resolve(JSON.parse(text).next));
    });
    request.on('error', reject);
    request.end();
  });
}

test('a page asked for again is the same answer, byte for byte', () =>
  withService(async ({ client }) => {
    const { member } = await memberWithProject(client);
    for (let i = 0; i < 3; i++) await createJob(member.client, { status: 'running' });
    const first = await member.client.get('/api/jobs/?status=running&page_size=2');
    for (const time of ['again, kept', 'from what was kept']) {
      const again = await member.client.get('/api/jobs/?status=running&page_size=2');
      assert.is(again.text, first.text, time);
      assert.is(again.headers.get('content-type'), first.headers.get('content-type'), time);
      assert.is(again.headers.get('content-length'), first.headers.get('content-length'), time);
    }
  }));

test('a kept jobs page follows jobs created, updated, moved and deleted', () =>
  withService(async ({ client }) => {
    const { member, project } = await memberWithProject(client);
    const other = await createProject(member.client);
    const path = `/api/jobs/?project=${project.id}&status=running`;
    const job = await createJob(member.client, { project: project.id, status: 'running' });
    assert.equal(ids(await listed(member.client, path)), [job.id]);
    const second = await createJob(member.client, { project: project.id, status: 'running' });
    assert.equal(ids(await listed(member.client, path)), idsByCreation([job, second], 'newest first'));
    await member.client.patch(`/api/jobs/${job.id}/`, { best_score: 0.5 });
    assert.is(byId((await listed(member.client, path)).results, job.id).best_score, 0.5);
    await member.client.patch(`/api/jobs/${second.id}/`, { status: 'completed' });
    assert.equal(ids(await listed(member.client, path)), [job.id]);
    await member.client.patch(`/api/jobs/${job.id}/`, { project: other.id });
    assert.equal(ids(await listed(member.client, path)), []);
    assert.equal(ids(await listed(member.client, `/api/jobs/?project=${other.id}&status=running`)), [job.id]);
    await member.client.delete(`/api/jobs/${job.id}/`);
    assert.equal(ids(await listed(member.client, `/api/jobs/?project=${other.id}&status=running`)), []);
  }));

test("a kept jobs page follows its agents' labels, also of agents moved away and gone with their project", () =>
  withService(async ({ client }) => {
    const { member, project } = await memberWithProject(client);
    const agent = await createAgent(member.client, project.id, { display_name: 'First' });
    await createJob(member.client, { agent: agent.id });
    const label = async () => (await listed(member.client, '/api/jobs/')).results[0].agent_display_name;
    assert.is(await label(), 'First');
    await member.client.patch(`/api/agents/${agent.id}/`, { display_name: 'Second' });
    assert.is(await label(), 'Second');
    const elsewhere = await createProject(member.client);
    assert.is((await member.client.patch(`/api/agents/${agent.id}/`, { project: elsewhere.id })).status, 200);
    assert.is((await member.client.delete(`/api/agents/${agent.id}/`)).status, 204);
    assert.is(await label(), 'Second', 'a soft-deleted agent keeps its label');
    // Only the label map changes here: no live agent, job or project of the listed project does.
    assert.is((await member.client.delete(`/api/projects/${elsewhere.id}/`)).status, 204);
    assert.is(await label(), null);
  }));

test('a kept page follows who may see what: memberships, deleted projects, API keys', () =>
  withService(async ({ client }) => {
    const { member, project } = await memberWithProject(client);
    const friend = await registerUser(client);
    const job = await createJob(member.client, { project: project.id });
    assert.equal(ids(await listed(friend.client, '/api/jobs/')), []);
    const added = await member.client.post(`/api/projects/${project.id}/memberships/`, { user_id: friend.id });
    assert.equal(ids(await listed(friend.client, '/api/jobs/')), [job.id]);
    await member.client.delete(`/api/projects/${project.id}/memberships/${added.body.id}/`);
    assert.equal(ids(await listed(friend.client, '/api/jobs/')), []);

    const other = await createProject(member.client);
    const key = await createApiKey(member.client, other.id);
    const keyClient = client.as({ apiKey: key.key });
    assert.equal(ids(await listed(member.client, '/api/auth/api-keys/')), [key.id]);
    const second = await createApiKey(member.client, project.id);
    assert.equal(ids(await listed(member.client, '/api/auth/api-keys/')), idsByCreation([key, second], 'newest first'));
    // (Not twice: using the key records its last use, which changes the page.)
    assert.equal(ids((await keyClient.get('/api/auth/api-keys/')).body), [key.id], "a key lists only its own project's keys");
    await member.client.delete(`/api/auth/api-keys/${second.id}/`);
    assert.is(byId((await listed(member.client, '/api/auth/api-keys/')).results, second.id).is_active, false);

    assert.equal(ids(await listed(member.client, '/api/jobs/')), [job.id]);
    await member.client.delete(`/api/projects/${project.id}/`);
    assert.equal(ids(await listed(member.client, '/api/jobs/')), []);
  }));

test('a kept page of every other list follows its records', () =>
  withService(async ({ client }) => {
    const { member, project } = await memberWithProject(client);
    assert.is((await listed(member.client, '/api/projects/')).results[0].name, project.name);
    await member.client.patch(`/api/projects/${project.id}/`, { name: 'Renamed project' });
    assert.is((await listed(member.client, '/api/projects/')).results[0].name, 'Renamed project');

    const agent = await createAgent(member.client, project.id);
    assert.equal(ids(await listed(member.client, '/api/agents/')), [agent.id]);
    await member.client.patch(`/api/agents/${agent.id}/`, { model: 'other' });
    assert.is((await listed(member.client, '/api/agents/')).results[0].model, 'other');

    const dataset = await createDataset(member.client, agent.id);
    assert.equal(ids(await listed(member.client, '/api/datasets/')), [dataset.id]);
    const newer = await createDataset(member.client, agent.id);
    assert.equal(ids(await listed(member.client, '/api/datasets/')), idsByCreation([dataset, newer], 'newest first'));
    const points = `/api/datasets/${dataset.id}/datapoints/?page_size=2`;
    assert.equal(ids(await listed(member.client, points)), dataset.datapoints.slice(0, 2).map((point: { id: string }) => point.id));
    await member.client.delete(`/api/datasets/${dataset.id}/`);
    assert.is((await member.client.get(points)).status, 404);

    const job = await createJob(member.client);
    const iteration = await createIteration(member.client, job.id, { avg_score: 0.1 });
    const iterations = `/api/job-iterations/?job=${job.id}`;
    assert.equal(ids(await listed(member.client, iterations)), [iteration.id]);
    await member.client.patch(`/api/job-iterations/${iteration.id}/`, { avg_score: 0.9 });
    assert.is((await listed(member.client, iterations)).results[0].avg_score, 0.9);

    const friend = await registerUser(client);
    const memberships = `/api/projects/${project.id}/memberships/`;
    assert.is((await listed(member.client, memberships)).count, 1);
    await member.client.post(memberships, { user_id: friend.id });
    assert.is((await listed(member.client, memberships)).count, 2);
  }));

test("a kept page's links are those of the address it was asked at", () =>
  withService(async ({ client, url }) => {
    const { member } = await memberWithProject(client);
    for (let i = 0; i < 3; i++) await createJob(member.client);
    const next = (host: string) => nextAt(url, '/api/jobs/?page_size=2', member.access, host);
    for (let time = 0; time < 2; time++) assert.is(await next('one.example'), 'http://one.example/api/jobs/?page=2&page_size=2');
    assert.is(await next('two.example'), 'http://two.example/api/jobs/?page=2&page_size=2');
    assert.is((await listed(member.client, '/api/jobs?page_size=2')).next, `${url}/api/jobs/?page=2&page_size=2`);
  }));

/** How many times the jobs list was made: each page made reads its jobs' agent labels. */
async function pagesMade(running: Running, asked: number): Promise<number> {
  const { member } = await memberWithProject(running.client);
  await createJob(member.client);
  const { readModel } = running.service.deps;
  const agentLabel = readModel.agentLabel.bind(readModel);
  let made = 0;
  readModel.agentLabel = (agent) => (made++, agentLabel(agent));
  for (let i = 0; i < asked; i++) assert.is((await member.client.get('/api/jobs/')).body.count, 1);
  return made;
}

test('listAnswerCacheBytesMax: a page is kept from its second asking while it fits; one larger than the bound is made every time', async () => {
  assert.is(await withService((running) => pagesMade(running, 5)), 2);
  assert.is(await withService((running) => pagesMade(running, 5), { limits: { listAnswerCacheBytesMax: 100 } }), 5);
});

test.run();
