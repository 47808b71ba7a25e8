// GET /api/runs/{id}/tasks/: a run's tasks in task order (iteration, datapoint, attempt), filtered
// by state, iteration and datapoint; each says its tries, its last error, the worker holding it and
// until when, and its result; pages as every list does (page_size, next and previous links,
// "Invalid page.").
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { memberWithProject } from '../helpers/fixtures.ts';
import { complete, completeAll, createRun, lease, registerWorker, runSetup, tasksOf } from '../helpers/run-fixtures.ts';
import { withService } from '../helpers/service.ts';

const fast = { limits: { runRetryDelayMs: 1, runRetryDelayMsMax: 2 } };

test('the list is every task in order, iteration then datapoint then attempt, each with the id its lease handed out', () =>
  withService(async ({ client }) => {
    const { member, project } = await memberWithProject(client);
    const setup = await runSetup(member.client, project.id, 3, 2);
    const run = await createRun(member.client, setup, { attempts: 2, order: 'shuffled', seed: 7 });
    const listed = await tasksOf(member.client, run);
    const expected = setup.iterations.flatMap((iteration) =>
      setup.dataset.datapoints.flatMap((datapoint: any) => [0, 1].map((attempt) => [iteration.id, datapoint.id, datapoint.order, attempt])),
    );
    assert.equal(listed.map((task: any) => [task.iteration, task.datapoint, task.datapoint_order, task.attempt]), expected, 'task order, whatever the lease order');
    assert.equal(listed[0], {
      id: listed[0].id, run: run.id, iteration: setup.iterations[0].id, datapoint: setup.dataset.datapoints[0].id, datapoint_order: 0, attempt: 0,
      state: 'queued', tries: 0, last_error: null, worker: null, lease_expires_at: null, result: null,
    });
    assert.is(new Set(listed.map((task: any) => task.id)).size, 12);
    const worker = await registerWorker(member.client);
    const leased = await lease(member.client, worker, { max: 12 });
    assert.equal(leased.map((task: any) => task.id).sort(), listed.map((task: any) => task.id).sort(), 'the ids a lease hands out');
  }));

test('each task says its tries, its last error, the worker holding it and until when (moved on by a heartbeat), and its result once done or dead', () =>
  withService(async ({ client }) => {
    const { member, project } = await memberWithProject(client);
    const setup = await runSetup(member.client, project.id, 3, 1);
    const run = await createRun(member.client, setup, { max_tries: 2 });
    const worker = await registerWorker(member.client, { name: 'holder' });
    const [first, second, third] = await lease(member.client, worker, { max: 3 });
    await completeAll(member.client, worker, [first], () => ({ score: 1 }));
    await completeAll(member.client, worker, [second], () => ({ status: 'error', error: 'first failure' }));
    let byId = new Map((await tasksOf(member.client, run)).map((task: any) => [task.id, task]));
    const rows = (await member.client.get(`/api/job-iterations/${setup.iterations[0].id}/results/`)).body.results;
    assert.equal([byId.get(first.id).state, byId.get(first.id).result, byId.get(first.id).worker], ['done', rows[0].id, null]);
    const failed = byId.get(second.id);
    assert.equal([failed.state, failed.tries, failed.last_error, failed.worker, failed.lease_expires_at, failed.result], ['queued', 1, 'first failure', null, null, null]);
    const held = byId.get(third.id);
    assert.equal([held.state, held.worker, held.lease_expires_at, held.tries], ['leased', worker.id, third.lease_expires_at, 0]);
    await new Promise((resolve) => setTimeout(resolve, 20));
    await member.client.post(`/api/workers/${worker.id}/heartbeat/`, { tasks: [third.id] });
    byId = new Map((await tasksOf(member.client, run)).map((task: any) => [task.id, task]));
    assert.ok(Date.parse(byId.get(third.id).lease_expires_at) > Date.parse(third.lease_expires_at), 'a heartbeat moves it on');
    const [again] = await lease(member.client, worker, { max: 1, wait_ms: 2000 });
    assert.equal([again.id, again.try], [second.id, 2]);
    await completeAll(member.client, worker, [again], () => ({ status: 'error', error: 'second failure' }));
    const dead = (await tasksOf(member.client, run)).find((task: any) => task.id === second.id);
    const row = (await member.client.get(`/api/job-iterations/${setup.iterations[0].id}/results/${dead.result}/`)).body;
    assert.equal([dead.state, dead.tries, dead.last_error, row.status, row.error], ['dead', 2, 'second failure', 'error', 'second failure']);
  }, fast));

test('filters by state, iteration and datapoint, alone or together; an iteration or datapoint not of the run matches nothing', () =>
  withService(async ({ client }) => {
    const { member, project } = await memberWithProject(client);
    const setup = await runSetup(member.client, project.id, 3, 2);
    const other = await runSetup(member.client, project.id, 3, 1);
    const run = await createRun(member.client, setup, { attempts: 2 });
    const worker = await registerWorker(member.client);
    // A block of datapoints (all three here) at a time, iteration after iteration: the first five
    // tasks handed out are the first iteration's, datapoint by datapoint, both attempts of each.
    const leased = await lease(member.client, worker, { max: 5 });
    await completeAll(member.client, worker, leased.slice(0, 2));
    const keys = async (query: Record<string, string>) =>
      (await tasksOf(member.client, run, query)).map((task: any) => `${setup.iterations.findIndex((it) => it.id === task.iteration)}/${task.datapoint_order}/${task.attempt}:${task.state}`);
    const [first, second] = setup.iterations.map((iteration) => iteration.id);
    const [zero, one] = setup.dataset.datapoints.map((datapoint: any) => datapoint.id);
    assert.equal(await keys({ state: 'done' }), ['0/0/0:done', '0/0/1:done']);
    assert.equal(await keys({ state: 'leased' }), ['0/1/0:leased', '0/1/1:leased', '0/2/0:leased']);
    assert.is((await keys({ state: 'queued' })).length, 7);
    assert.equal(await keys({ state: 'dead' }), []);
    assert.equal(await keys({ iteration: second, state: 'queued' }), ['1/0/0:queued', '1/0/1:queued', '1/1/0:queued', '1/1/1:queued', '1/2/0:queued', '1/2/1:queued']);
    assert.equal(await keys({ datapoint: one }), ['0/1/0:leased', '0/1/1:leased', '1/1/0:queued', '1/1/1:queued']);
    assert.equal(await keys({ iteration: first, datapoint: zero }), ['0/0/0:done', '0/0/1:done']);
    assert.equal(await keys({ iteration: first, datapoint: zero.toUpperCase(), state: 'leased' }), []);
    assert.equal(await keys({ iteration: other.iterations[0].id }), [], 'an iteration of another job');
    assert.equal(await keys({ datapoint: other.dataset.datapoints[0].id }), [], 'a datapoint of another version');
    const page = await member.client.get(`/api/runs/${run.id}/tasks/`, { state: 'leased', page_size: 2 });
    assert.equal([page.body.count, page.body.results.length], [3, 2]);
  }));

test('pages as every list does: page_size, next and previous, the largest page size, and "Invalid page."', () =>
  withService(async ({ client, url }) => {
    const { member, project } = await memberWithProject(client);
    const setup = await runSetup(member.client, project.id, 7, 1);
    const run = await createRun(member.client, setup);
    const path = `/api/runs/${run.id}/tasks/`;
    const all = await tasksOf(member.client, run);
    const first = (await member.client.get(path, { page_size: 3 })).body;
    assert.equal([first.count, first.previous, first.next], [7, null, `${url}${path}?page=2&page_size=3`]);
    assert.equal(first.results, all.slice(0, 3));
    const last = (await member.client.get(path, { page_size: 3, page: 3 })).body;
    assert.equal([last.results, last.next, last.previous], [all.slice(6), null, `${url}${path}?page=2&page_size=3`]);
    const defaultPage = (await member.client.get(path)).body;
    assert.equal(defaultPage.results, all.slice(0, 5), 'pageSizeDefault');
    assert.is((await member.client.get(path, { page_size: 1000 })).body.results.length, 6, 'page_size past pageSizeMax is pageSizeMax');
    const past = await member.client.get(path, { page_size: 3, page: 4 });
    assert.equal([past.status, past.body], [404, { detail: 'Invalid page.', code: 'not_found' }]);
    const filteredPast = await member.client.get(path, { state: 'done', page: 2 });
    assert.is(filteredPast.status, 404);
  }, { limits: { pageSizeDefault: 5, pageSizeMax: 6 } }));

test('a task list of a run that does not exist is 404; a rate-limited answer leaves the task queued with no try and no error', () =>
  withService(async ({ client }) => {
    const { member, project } = await memberWithProject(client);
    const missing = await member.client.get('/api/runs/00000000-0000-4000-8000-000000000000/tasks/');
    assert.is(missing.status, 404);
    const setup = await runSetup(member.client, project.id, 1, 1);
    const run = await createRun(member.client, setup);
    const worker = await registerWorker(member.client);
    const [task] = await lease(member.client, worker);
    const reply = await complete(member.client, worker, [{ task: task.id, lease: task.lease, status: 'rate_limited' }]);
    assert.equal(reply.body.results, [{ task: task.id, outcome: 'accepted' }]);
    const [listed] = await tasksOf(member.client, run);
    assert.equal([listed.state, listed.tries, listed.last_error, listed.worker], ['queued', 0, null, null]);
  }, fast));

test('lists without search fields (runs, tasks, workers) ignore `search`, as DRF\'s SearchFilter does', () =>
  withService(async ({ client }) => {
    const { member, project } = await memberWithProject(client);
    const setup = await runSetup(member.client, project.id, 2, 1);
    const run = await createRun(member.client, setup);
    await registerWorker(member.client, { name: 'searched' });
    for (const path of [`/api/jobs/${setup.job.id}/runs/`, `/api/runs/${run.id}/tasks/`, '/api/workers/']) {
      const plain = await member.client.get(path);
      const searched = await member.client.get(`${path}?search=nothing-matches-this`);
      assert.is(plain.body.count, 1 + (path.endsWith('tasks/') ? 1 : 0), path);
      assert.equal(searched.body, plain.body, path);
    }
  }));

test.run();
