// Runs and workers keep to their projects: a worker registered in one project leases, heartbeats
// and completes only that project's tasks; another project's runs, tasks and workers answer 404
// (a reference to one in a body, "does not exist"), to a user of another project and to an API
// key of another project alike; a run whose job moves to another project goes with it.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { createApiKey, createProject, memberWithProject } from '../helpers/fixtures.ts';
import { complete, createRun, lease, registerWorker, runOf, runSetup, tasksOf } from '../helpers/run-fixtures.ts';
import { withService } from '../helpers/service.ts';

test("another project's runs, tasks and job runs answer 404, and no write reaches them", () =>
  withService(async ({ client }) => {
    const mine = await memberWithProject(client);
    const theirs = await memberWithProject(client);
    const setup = await runSetup(theirs.member.client, theirs.project.id, 2, 1);
    const run = await createRun(theirs.member.client, setup);
    const me = mine.member.client;
    const reads = [`/api/runs/${run.id}/`, `/api/runs/${run.id}/tasks/`, `/api/jobs/${setup.job.id}/runs/`];
    for (const path of reads) {
      const reply = await me.get(path);
      assert.equal([reply.status, reply.body], [404, { detail: 'Not found.', code: 'not_found' }], path);
    }
    const writes = [
      me.post(`/api/runs/${run.id}/cancel/`, {}),
      me.post(`/api/runs/${run.id}/retry/`, {}),
      me.post(`/api/jobs/${setup.job.id}/runs/`, { dataset: setup.dataset.id, iterations: [setup.iterations[0].id] }),
    ];
    for (const reply of await Promise.all(writes)) assert.is(reply.status, 404);
    const after = await runOf(theirs.member.client, run);
    assert.equal([after.status, after.counts.queued], ['queued', 2]);
    assert.is((await theirs.member.client.get(`/api/jobs/${setup.job.id}/runs/`)).body.count, 1);
  }));

test("a worker of one project never leases another project's tasks: naming its run is a 400, and its turn skips it", () =>
  withService(async ({ client }) => {
    const mine = await memberWithProject(client);
    const theirs = await memberWithProject(client);
    const their = await runSetup(theirs.member.client, theirs.project.id, 2, 1);
    const theirRun = await createRun(theirs.member.client, their);
    const worker = await registerWorker(mine.member.client);
    assert.is(worker.project, mine.project.id);
    const named = await mine.member.client.post(`/api/workers/${worker.id}/lease/`, { max: 5, run: theirRun.id });
    assert.is(named.status, 400);
    assert.equal(named.body, { run: [`Invalid pk "${theirRun.id}" - object does not exist.`] });
    assert.equal(await lease(mine.member.client, worker, { max: 5 }), []);
    const own = await runSetup(mine.member.client, mine.project.id, 1, 1);
    const ownRun = await createRun(mine.member.client, own);
    const tasks = await lease(mine.member.client, worker, { max: 5 });
    assert.equal(tasks.map((task: any) => task.run), [ownRun.id]);
    assert.is((await runOf(theirs.member.client, theirRun)).counts.leased, 0);
  }));

test("another project's task, even with its valid token, is an invalid item of a completion and a task to stop in a heartbeat", () =>
  withService(async ({ client }) => {
    const mine = await memberWithProject(client);
    const theirs = await memberWithProject(client);
    const their = await runSetup(theirs.member.client, theirs.project.id, 1, 1);
    const theirRun = await createRun(theirs.member.client, their);
    const theirWorker = await registerWorker(theirs.member.client);
    const [task] = await lease(theirs.member.client, theirWorker);
    const worker = await registerWorker(mine.member.client);
    const reply = await complete(mine.member.client, worker, [{ task: task.id, lease: task.lease, score: 1 }]);
    assert.is(reply.status, 200, reply.text);
    assert.equal(reply.body.results, [{ task: task.id, outcome: 'invalid', errors: { task: [`Invalid pk "${task.id}" - object does not exist.`] } }]);
    const beat = await mine.member.client.post(`/api/workers/${worker.id}/heartbeat/`, { tasks: [task.id] });
    assert.equal(beat.body, { stop: [task.id], leases: 0 });
    const listed = await tasksOf(theirs.member.client, theirRun);
    assert.equal([listed[0].state, listed[0].worker], ['leased', theirWorker.id]);
    assert.is((await theirs.member.client.get(`/api/job-iterations/${their.iterations[0].id}/results/`)).body.count, 0);
  }));

test("another project's worker answers 404 to every call, and is not listed", () =>
  withService(async ({ client }) => {
    const mine = await memberWithProject(client);
    const theirs = await memberWithProject(client);
    const theirWorker = await registerWorker(theirs.member.client);
    const me = mine.member.client;
    const base = `/api/workers/${theirWorker.id}`;
    const replies = [
      await me.get(`${base}/`),
      await me.post(`${base}/lease/`, { max: 1 }),
      await me.post(`${base}/heartbeat/`, {}),
      await me.post(`${base}/complete/`, { results: [{ task: '00000000-0000-4000-8000-000000000000', lease: 'A'.repeat(22), score: 1 }] }),
      await me.delete(`${base}/`),
    ];
    assert.equal(replies.map((reply) => reply.status), [404, 404, 404, 404, 404]);
    assert.is((await me.get('/api/workers/')).body.count, 0);
    assert.is((await theirs.member.client.get(`${base}/`)).status, 200, 'the goodbye of a stranger removed nothing');
    const named = await me.post('/api/workers/', { name: 'intruder', project: theirs.project.id });
    assert.equal([named.status, named.body], [400, { project: [`Invalid pk "${theirs.project.id}" - object does not exist.`] }]);
    assert.is((await theirs.member.client.get('/api/workers/')).body.count, 1);
  }));

test("an API key of one project answers 404 for another project's run and worker, even to a member of both; its workers are its project's", () =>
  withService(async ({ client }) => {
    const { member, project } = await memberWithProject(client);
    const second = await createProject(member.client);
    const setup = await runSetup(member.client, second.id, 1, 1);
    const run = await createRun(member.client, setup);
    const secondWorker = await registerWorker(member.client, { project: second.id });
    const key = await createApiKey(member.client, project.id);
    const asKey = client.as({ apiKey: key.key });
    assert.is((await asKey.get(`/api/runs/${run.id}/`)).status, 404);
    assert.is((await asKey.get(`/api/runs/${run.id}/tasks/`)).status, 404);
    assert.is((await asKey.get(`/api/workers/${secondWorker.id}/`)).status, 404);
    assert.is((await asKey.post(`/api/workers/${secondWorker.id}/lease/`, { max: 1 })).status, 404);
    const keyWorker = await registerWorker(asKey);
    assert.is(keyWorker.project, project.id, "the key's project, without naming it");
    const refused = await asKey.post(`/api/workers/${keyWorker.id}/lease/`, { max: 1, run: run.id });
    assert.equal(refused.body, { run: [`Invalid pk "${run.id}" - object does not exist.`] });
    assert.equal((await asKey.get('/api/workers/')).body.results.map((worker: any) => worker.id), [keyWorker.id]);
    // With both projects, a user must say which one a worker is for.
    const unnamed = await member.client.post('/api/workers/', { name: 'which' });
    assert.equal([unnamed.status, unnamed.body], [400, { project: ['This field is required.'] }]);
  }));

test("a run whose job moves to another project goes with it: the old project's workers no longer lease its tasks, the new one's do", () =>
  withService(async ({ client }) => {
    const { member, project } = await memberWithProject(client);
    const second = await createProject(member.client);
    const setup = await runSetup(member.client, project.id, 3, 1);
    const run = await createRun(member.client, setup);
    const before = await registerWorker(member.client, { project: project.id });
    assert.is((await lease(member.client, before, { max: 1 })).length, 1);
    assert.is((await member.client.patch(`/api/agents/${setup.agent.id}/`, { project: second.id })).status, 200);
    const moved = await member.client.patch(`/api/jobs/${setup.job.id}/`, { project: second.id });
    assert.is(moved.status, 200, moved.text);
    const oldKey = client.as({ apiKey: (await createApiKey(member.client, project.id)).key });
    assert.is((await oldKey.get(`/api/runs/${run.id}/`)).status, 404);
    assert.equal(await lease(member.client, before, { max: 5 }), [], "the old project's worker gets none of its tasks");
    const named = await member.client.post(`/api/workers/${before.id}/lease/`, { max: 5, run: run.id });
    assert.is(named.status, 400);
    const after = await registerWorker(member.client, { project: second.id });
    const tasks = await lease(member.client, after, { max: 5 });
    assert.equal(tasks.map((task: any) => task.run), [run.id, run.id]);
  }));

test.run();
