// Runs as leased work, over HTTP on the real store: a run's tasks leased, completed (their rows the
// iteration's results), fenced by their lease tokens, retried, dead, rate-limited, budgeted,
// cancelled and retried again; the job following its runs; and bad input refused whole.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { memberWithProject } from '../helpers/fixtures.ts';
import { commitCounter, createRun, complete, completeAll, lease, registerWorker, runOf, runSetup, tasksOf } from '../helpers/run-fixtures.ts';
import { withService } from '../helpers/service.ts';

const fast = { limits: { runRetryDelayMs: 1, runRetryDelayMsMax: 2 } };

test('a run of two iterations on four datapoints, two attempts each: sixteen tasks, its iterations pinned, the job naming it', () =>
  withService(async ({ client }) => {
    const { member, project } = await memberWithProject(client);
    const setup = await runSetup(member.client, project.id, 4, 2);
    const run = await createRun(member.client, setup, { attempts: 2 });
    assert.equal([run.status, run.reason, run.counts], ['queued', null, { total: 16, queued: 16, leased: 0, done: 0, dead: 0, skipped: 0, cancelled: 0 }]);
    assert.equal([run.attempts, run.order, run.max_tries, run.lease_seconds, run.max_in_flight, run.budget], [2, 'dataset', 3, 60, null, { max_cost: null, max_tasks: null }]);
    assert.equal([run.started_at, run.finished_at, run.job, run.dataset, run.iterations], [null, null, setup.job.id, setup.dataset.id, setup.iterations.map((it) => it.id)]);
    const job = (await member.client.get(`/api/jobs/${setup.job.id}/`)).body;
    assert.equal([job.status, job.worker_task_id], ['pending', run.id]);
    assert.is(job.updated_at, run.created_at, 'the run moved it then');
    const summary = (await member.client.get(`/api/job-iterations/${setup.iterations[0].id}/results/summary/`)).body;
    assert.equal([summary.dataset.id, summary.datapoints, summary.results], [setup.dataset.id, 4, 0], 'pinned to the version, with no row yet');
    const listed = (await member.client.get(`/api/jobs/${setup.job.id}/runs/`)).body;
    assert.equal(listed.results.map((one: any) => one.id), [run.id]);
    assert.equal(listed.results[0], run);
  }));

test('a lease hands out tasks a block of datapoints at a time, iteration after iteration, each with its iteration, its datapoint without the expected output, and a token; the run and the job start', () =>
  withService(async ({ client }) => {
    const { member, project } = await memberWithProject(client);
    const setup = await runSetup(member.client, project.id, 3, 2);
    const run = await createRun(member.client, setup);
    const worker = await registerWorker(member.client);
    const tasks = await lease(member.client, worker, { max: 3 });
    assert.is(tasks.length, 3);
    const [first] = tasks;
    assert.equal(Object.keys(first).sort(), ['attempt', 'datapoint', 'id', 'iteration', 'lease', 'lease_expires_at', 'run', 'scored_by_service', 'try']);
    assert.match(first.lease, /^[A-Za-z0-9_-]{22}$/);
    // Three datapoints are less than a block (16): the first iteration's three, then the second's.
    assert.equal(tasks.map((task: any) => [task.datapoint.order, task.iteration.iteration_name]), [
      [0, setup.iterations[0].iteration_name], [1, setup.iterations[0].iteration_name], [2, setup.iterations[0].iteration_name],
    ]);
    assert.equal((await lease(member.client, worker, { max: 3 })).map((task: any) => [task.datapoint.order, task.iteration.iteration_name]), [
      [0, setup.iterations[1].iteration_name], [1, setup.iterations[1].iteration_name], [2, setup.iterations[1].iteration_name],
    ]);
    assert.equal(first.datapoint, { id: setup.dataset.datapoints[0].id, order: 0, input: { question: 'question 0' }, persona: 'persona-0', tags: ['tag-0'] });
    assert.equal([first.iteration.agent_code, first.attempt, first.try, first.run, first.scored_by_service], ['code 0', 0, 1, run.id, false]);
    assert.ok(Date.parse(first.lease_expires_at) > Date.now() + 50_000);
    assert.equal(new Set(tasks.map((task: any) => task.lease)).size, 3, 'a token per task');
    const started = await runOf(member.client, run);
    assert.equal([started.status, started.counts.leased, started.counts.queued], ['running', 6, 0]);
    assert.ok(started.started_at);
    const job = (await member.client.get(`/api/jobs/${setup.job.id}/`)).body;
    assert.equal([job.status, job.updated_at], ['running', started.started_at], 'its status moved at the first lease, and updated_at with it');
  }));

test('completed tasks are their iterations\' results, in the commit that marks them done; the run ends completed and the job with it', () =>
  withService(async ({ client }) => {
    const { member, project } = await memberWithProject(client);
    const setup = await runSetup(member.client, project.id, 3, 2);
    const run = await createRun(member.client, setup);
    const worker = await registerWorker(member.client);
    const tasks = await lease(member.client, worker, { max: 10 });
    assert.is(tasks.length, 6);
    await completeAll(member.client, worker, tasks, (task) => ({
      score: task.datapoint.order / 10,
      passed: task.datapoint.order > 0,
      dimension_scores: { accuracy: 1 },
      output: { answer: `answer ${task.datapoint.order}` },
      trace_id: 'ABCDEF0123456789ABCDEF0123456789',
      latency_ms: 12,
      cost: 0.5,
    }));
    const ended = await runOf(member.client, run);
    assert.equal([ended.status, ended.reason, ended.counts.done, ended.spent], ['completed', 'all_done', 6, { cost: 3, tasks: 6 }]);
    assert.ok(ended.finished_at);
    assert.is((await member.client.get(`/api/jobs/${setup.job.id}/`)).body.status, 'completed');
    const rows = (await member.client.get(`/api/job-iterations/${setup.iterations[1].id}/results/`)).body.results;
    assert.equal(rows.map((row: any) => [row.datapoint_order, row.score, row.passed, row.status, row.trace_id, row.cost]), [
      [0, 0, false, 'ok', 'abcdef0123456789abcdef0123456789', 0.5], [1, 0.1, true, 'ok', 'abcdef0123456789abcdef0123456789', 0.5], [2, 0.2, true, 'ok', 'abcdef0123456789abcdef0123456789', 0.5],
    ]);
    const detail = (await member.client.get(`/api/job-iterations/${setup.iterations[1].id}/results/${rows[2].id}/`)).body;
    assert.equal(detail.output, { answer: 'answer 2' });
    const listed = await tasksOf(member.client, run);
    assert.equal(listed.map((task: any) => task.state), Array(6).fill('done'));
    assert.equal(listed[0].result, (await member.client.get(`/api/job-iterations/${setup.iterations[0].id}/results/`)).body.results[0].id);
  }));

test('fencing: a wrong token, or a lease that expired and moved to another worker, is stale and writes nothing; a task never has two results', () =>
  withService(async ({ client }) => {
    const { member, project } = await memberWithProject(client);
    const setup = await runSetup(member.client, project.id, 1, 1);
    const run = await createRun(member.client, setup, { lease_seconds: 1 });
    const slow = await registerWorker(member.client, { name: 'slow' });
    const fast = await registerWorker(member.client, { name: 'fast' });
    const [task] = await lease(member.client, slow);
    const wrong = await complete(member.client, slow, [{ task: task.id, lease: 'A'.repeat(22), score: 1 }]);
    assert.equal(wrong.body.results, [{ task: task.id, outcome: 'stale' }]);
    const other = await complete(member.client, fast, [{ task: task.id, lease: task.lease, score: 1 }]);
    assert.equal(other.body.results, [{ task: task.id, outcome: 'stale' }], 'another worker cannot answer it with its token');
    assert.equal(await lease(member.client, fast), [], 'leased: nothing else to hand out');
    // The slow worker goes silent past its lease: the task is leased again, to the fast one.
    const [again] = await lease(member.client, fast, { wait_ms: 3000 });
    assert.is(again.id, task.id);
    assert.ok(again.lease !== task.lease, 'a new token with the new lease');
    const late = await complete(member.client, slow, [{ task: task.id, lease: task.lease, score: 0 }]);
    assert.equal(late.body.results, [{ task: task.id, outcome: 'stale' }]);
    await completeAll(member.client, fast, [again], () => ({ score: 1 }));
    const rows = (await member.client.get(`/api/job-iterations/${setup.iterations[0].id}/results/`)).body;
    assert.equal([rows.count, rows.results[0].score], [1, 1]);
    const twice = await complete(member.client, fast, [{ task: task.id, lease: again.lease, score: 0.25 }]);
    assert.equal(twice.body.results, [{ task: task.id, outcome: 'cancelled' }], 'the run has ended');
    assert.is((await runOf(member.client, run)).counts.done, 1);
  }, fast));

test('an error result is retried after a backoff until max_tries, then the task is dead with its last error as its result; a retry queues only the failed again', () =>
  withService(async ({ client }) => {
    const { member, project } = await memberWithProject(client);
    const setup = await runSetup(member.client, project.id, 2, 1);
    const run = await createRun(member.client, setup, { max_tries: 2 });
    const worker = await registerWorker(member.client);
    let tasks = await lease(member.client, worker);
    await completeAll(member.client, worker, tasks, (task) => (task.datapoint.order === 0 ? { score: 1 } : { status: 'error', error: 'boom 1' }));
    const [retried] = await lease(member.client, worker, { wait_ms: 2000 });
    assert.equal([retried.datapoint.order, retried.try], [1, 2]);
    let listed = await tasksOf(member.client, run, { state: 'leased' });
    assert.equal([listed[0].tries, listed[0].last_error], [1, 'boom 1']);
    await completeAll(member.client, worker, [retried], () => ({ status: 'error', error: 'boom 2' }));
    let state = await runOf(member.client, run);
    assert.equal([state.status, state.reason, state.counts.done, state.counts.dead], ['completed', 'all_done', 1, 1], 'a dead task does not fail the run');
    const rows = (await member.client.get(`/api/job-iterations/${setup.iterations[0].id}/results/`)).body.results;
    assert.equal(rows.map((row: any) => [row.datapoint_order, row.status, row.error]), [[0, 'ok', ''], [1, 'error', 'boom 2']]);
    // Rerun only the failed: the dead task, its tries starting over; the job reopens.
    const retry = await member.client.post(`/api/runs/${run.id}/retry/`, {});
    assert.is(retry.status, 200, retry.text);
    assert.equal([retry.body.status, retry.body.counts.queued, retry.body.counts.done], ['queued', 1, 1]);
    assert.is((await member.client.get(`/api/jobs/${setup.job.id}/`)).body.status, 'pending');
    tasks = await lease(member.client, worker);
    assert.equal(tasks.map((task: any) => [task.datapoint.order, task.try]), [[1, 1]]);
    assert.is((await member.client.get(`/api/jobs/${setup.job.id}/`)).body.status, 'running');
    await completeAll(member.client, worker, tasks, () => ({ score: 0.75 }));
    state = await runOf(member.client, run);
    assert.equal([state.status, state.counts.done, state.counts.dead], ['completed', 2, 0]);
    listed = await tasksOf(member.client, run);
    assert.equal(listed.map((task: any) => [task.state, task.last_error]), [['done', null], ['done', null]]);
    assert.is((await member.client.post(`/api/runs/${run.id}/retry/`, {})).status, 409, 'nothing failed: nothing to retry');
  }, fast));

test('every task dead fails the run, and the job', () =>
  withService(async ({ client }) => {
    const { member, project } = await memberWithProject(client);
    const setup = await runSetup(member.client, project.id, 2, 1);
    const run = await createRun(member.client, setup, { max_tries: 1 });
    const worker = await registerWorker(member.client);
    await completeAll(member.client, worker, await lease(member.client, worker), () => ({ status: 'error', error: 'no' }));
    assert.equal([(await runOf(member.client, run)).status, (await runOf(member.client, run)).reason], ['failed', 'failed']);
    assert.is((await member.client.get(`/api/jobs/${setup.job.id}/`)).body.status, 'failed');
  }));

test('rate_limited: retried without using a try, and the run lets half as many tasks be in flight, one more after each success', () =>
  withService(async ({ client }) => {
    const { member, project } = await memberWithProject(client);
    const setup = await runSetup(member.client, project.id, 10, 1);
    const run = await createRun(member.client, setup, { max_in_flight: 8 });
    const worker = await registerWorker(member.client);
    const tasks = await lease(member.client, worker);
    assert.is(tasks.length, 8, 'max_in_flight');
    const reply = await complete(member.client, worker, tasks.slice(0, 2).map((task: any) => ({ task: task.id, lease: task.lease, status: 'rate_limited' })));
    assert.equal(reply.body.results.map((item: any) => item.outcome), ['accepted', 'accepted']);
    let state = await runOf(member.client, run);
    assert.equal([state.in_flight_allowed, state.counts.leased, state.counts.queued], [2, 6, 4], 'halved twice, from 8 with 8 in flight');
    assert.equal(await lease(member.client, worker), [], '6 in flight, 2 allowed');
    await completeAll(member.client, worker, tasks.slice(2, 5));
    state = await runOf(member.client, run);
    assert.is(state.in_flight_allowed, 5, 'one more after each success');
    const again = await lease(member.client, worker, { wait_ms: 2000 });
    assert.is(again.length, 2, '3 in flight, 5 allowed');
    const listed = await tasksOf(member.client, run);
    const limited = listed.find((task: any) => task.id === tasks[0].id);
    assert.equal([limited.tries, limited.last_error], [0, null], 'no try used');
  }, fast));

test('a budget reached ends the run with its results so far: max_tasks, then max_cost; the rest skipped, later answers cancelled', () =>
  withService(async ({ client }) => {
    const { member, project } = await memberWithProject(client);
    const setup = await runSetup(member.client, project.id, 5, 1);
    const byTasks = await createRun(member.client, setup, { budget: { max_tasks: 2 } });
    const worker = await registerWorker(member.client);
    const tasks = await lease(member.client, worker, { max: 4 });
    // The completion that spends the budget carries a wrong token before its second item: that
    // item is stale (the run was live when it was decided). Its items are taken in order, as
    // separate calls would be: the one after the budget is spent is cancelled, and writes nothing.
    const spending = await complete(member.client, worker, [
      { task: tasks[0].id, lease: tasks[0].lease, score: 0.5 },
      { task: tasks[3].id, lease: 'A'.repeat(22), score: 1 },
      ...tasks.slice(1, 3).map((task) => ({ task: task.id, lease: task.lease, score: 0.5 })),
    ]);
    assert.equal(spending.body.results.map((item: any) => item.outcome), ['accepted', 'stale', 'accepted', 'cancelled']);
    let state = await runOf(member.client, byTasks);
    assert.equal([state.status, state.reason, state.counts], ['completed', 'budget', { total: 5, queued: 0, leased: 0, done: 2, dead: 0, skipped: 3, cancelled: 0 }]);
    assert.is(state.spent.tasks, 2, 'no more tasks executed than the budget');
    assert.is((await member.client.get(`/api/job-iterations/${setup.iterations[0].id}/results/`)).body.count, 2, 'the cancelled item wrote no row');
    const late = await complete(member.client, worker, [{ task: tasks[2].id, lease: tasks[2].lease, score: 1 }]);
    assert.equal(late.body.results[0].outcome, 'cancelled');
    assert.is((await member.client.get(`/api/job-iterations/${setup.iterations[0].id}/results/`)).body.count, 2);
    assert.is((await member.client.get(`/api/jobs/${setup.job.id}/`)).body.status, 'completed');

    const other = await runSetup(member.client, project.id, 5, 1);
    const byCost = await createRun(member.client, other, { budget: { max_cost: 1 } });
    const more = await lease(member.client, worker, { run: byCost.id, max: 5 });
    await completeAll(member.client, worker, more.slice(0, 1), () => ({ score: 1, cost: 0.75 }));
    assert.is((await runOf(member.client, byCost)).status, 'running');
    await completeAll(member.client, worker, more.slice(1, 2), () => ({ score: 1, cost: 0.5 }));
    state = await runOf(member.client, byCost);
    assert.equal([state.status, state.reason, state.spent, state.counts.skipped], ['completed', 'budget', { cost: 1.25, tasks: 2 }, 3]);
  }));

test('a cancel ends the run: its queued and leased tasks cancelled, the worker told to stop; a cancelled job takes no new run and no retry', () =>
  withService(async ({ client }) => {
    const { member, project } = await memberWithProject(client);
    const setup = await runSetup(member.client, project.id, 3, 1);
    const run = await createRun(member.client, setup);
    const worker = await registerWorker(member.client);
    const tasks = await lease(member.client, worker, { max: 2 });
    await completeAll(member.client, worker, tasks.slice(0, 1));
    const cancelled = await member.client.post(`/api/runs/${run.id}/cancel/`, {});
    assert.is(cancelled.status, 200, cancelled.text);
    assert.equal([cancelled.body.status, cancelled.body.reason, cancelled.body.counts.cancelled, cancelled.body.counts.done], ['cancelled', 'cancelled', 2, 1]);
    const beat = await member.client.post(`/api/workers/${worker.id}/heartbeat/`, { tasks: [tasks[1].id] });
    assert.equal(beat.body, { stop: [tasks[1].id], leases: 0 });
    const late = await complete(member.client, worker, [{ task: tasks[1].id, lease: tasks[1].lease, score: 1 }]);
    assert.equal(late.body.results[0].outcome, 'cancelled');
    assert.is((await member.client.get(`/api/jobs/${setup.job.id}/`)).body.status, 'cancelled');
    assert.is((await member.client.post(`/api/runs/${run.id}/cancel/`, {})).status, 200, 'cancelling again changes nothing');
    assert.is((await member.client.post(`/api/runs/${run.id}/retry/`, {})).status, 409);
    const again = await member.client.post(`/api/jobs/${setup.job.id}/runs/`, { dataset: setup.dataset.id, iterations: [setup.iterations[0].id] });
    assert.equal([again.status, again.body.code], [409, 'conflict']);
  }));

test('an iteration is evaluated by one live run at a time: a second run of it is 400, and an ended run sharing it takes no retry while the other lives', () =>
  withService(async ({ client }) => {
    const { member, project } = await memberWithProject(client);
    const setup = await runSetup(member.client, project.id, 2, 2);
    const first = await createRun(member.client, { ...setup, iterations: [setup.iterations[0]] }, { max_tries: 1 });
    const second = await member.client.post(`/api/jobs/${setup.job.id}/runs/`, { dataset: setup.dataset.id, iterations: setup.iterations.map((it) => it.id) });
    assert.is(second.status, 400, second.text);
    assert.equal(second.body, { iterations: [`Iteration ${setup.iterations[0].id} is being evaluated by run ${first.id}, which has not ended.`] });
    assert.is((await member.client.get(`/api/jobs/${setup.job.id}/runs/`)).body.count, 1, 'nothing written');
    const worker = await registerWorker(member.client);
    const tasks = await lease(member.client, worker, { max: 10 });
    await completeAll(member.client, worker, tasks, () => ({ status: 'error', error: 'boom' }));
    assert.is((await runOf(member.client, first)).status, 'failed');
    const other = await createRun(member.client, setup);
    const retry = await member.client.post(`/api/runs/${first.id}/retry/`, {});
    assert.equal([retry.status, retry.body.detail], [409, `Iteration ${setup.iterations[0].id} is being evaluated by run ${other.id}, which has not ended.`]);
    await member.client.post(`/api/runs/${other.id}/cancel/`, {});
    assert.is((await member.client.post(`/api/runs/${first.id}/retry/`, {})).status, 200, 'once the other has ended');
  }));

test('a heartbeat keeps a worker\'s leases alive past lease_seconds; a goodbye gives them back at once', () =>
  withService(async ({ client }) => {
    const { member, project } = await memberWithProject(client);
    const setup = await runSetup(member.client, project.id, 2, 1);
    await createRun(member.client, setup, { lease_seconds: 1 });
    const worker = await registerWorker(member.client);
    const other = await registerWorker(member.client, { name: 'other' });
    const tasks = await lease(member.client, worker, { max: 1 });
    for (let i = 0; i < 4; i++) {
      await new Promise((resolve) => setTimeout(resolve, 400));
      const beat = await member.client.post(`/api/workers/${worker.id}/heartbeat/`, { tasks: [tasks[0].id] });
      assert.equal(beat.body, { stop: [], leases: 1 });
    }
    const second = await lease(member.client, other, { max: 5 });
    assert.equal(second.map((task: any) => task.datapoint.order), [1], 'the first is still held after 1.6 s of a 1 s lease');
    assert.is((await member.client.delete(`/api/workers/${worker.id}/`)).status, 204);
    const released = await lease(member.client, other, { max: 5 });
    assert.equal(released.map((task: any) => task.id), [tasks[0].id], 'given back at once');
    assert.is((await member.client.get(`/api/workers/${worker.id}/`)).status, 404);
  }));

test('a waiting lease is answered as soon as a task is ready: a run created while it waits', () =>
  withService(async ({ client }) => {
    const { member, project } = await memberWithProject(client);
    const setup = await runSetup(member.client, project.id, 1, 1);
    const worker = await registerWorker(member.client);
    const started = performance.now();
    const waiting = lease(member.client, worker, { wait_ms: 10_000 });
    await new Promise((resolve) => setTimeout(resolve, 200));
    await createRun(member.client, setup);
    const tasks = await waiting;
    const waited = performance.now() - started;
    assert.is(tasks.length, 1);
    assert.ok(waited < 2000, `answered after ${waited} ms, not at the end of its wait`);
    const nothing = performance.now();
    assert.equal(await lease(member.client, worker, { wait_ms: 300 }), []);
    assert.ok(performance.now() - nothing >= 290, 'an empty lease waits its wait_ms out');
  }));

test('a waiting lease gets a new run\'s task in the commit that creates the run; a waiter it leaves nothing for waits on', () =>
  withService(async ({ client, service }) => {
    const { member, project } = await memberWithProject(client);
    const setup = await runSetup(member.client, project.id, 1, 1);
    const [first, second] = [await registerWorker(member.client), await registerWorker(member.client)];
    const waiting = lease(member.client, first, { wait_ms: 10_000 });
    await new Promise((resolve) => setTimeout(resolve, 100));
    const secondStarted = performance.now();
    const alsoWaiting = lease(member.client, second, { wait_ms: 800 });
    await new Promise((resolve) => setTimeout(resolve, 100));
    const commits = commitCounter(service.deps.kv);
    const run = await createRun(member.client, setup);
    const [task] = await waiting;
    assert.is(task.run, run.id);
    assert.is(commits(), 2, 'its iterations pinned to the version, then the run with the lease of its task (a lease of its own would be a third)');
    assert.equal(await alsoWaiting, [], 'the one task went to the first waiter: the second waited its wait out');
    assert.ok(performance.now() - secondStarted >= 790);
    const [listed] = await tasksOf(member.client, run);
    assert.is(listed.state, 'leased');
    assert.is(listed.worker, first.id);
  }, { lmdb: true }));

test('a lease waiting on one run is answered with nothing as soon as that run ends, not at the end of its wait', () =>
  withService(async ({ client }) => {
    const { member, project } = await memberWithProject(client);
    const setup = await runSetup(member.client, project.id, 1, 1);
    const run = await createRun(member.client, setup);
    const worker = await registerWorker(member.client);
    await lease(member.client, worker, { max: 1 });
    const started = performance.now();
    const waiting = lease(member.client, worker, { run: run.id, wait_ms: 10_000 });
    await new Promise((resolve) => setTimeout(resolve, 100));
    assert.is((await member.client.post(`/api/runs/${run.id}/cancel/`, {})).status, 200);
    assert.equal(await waiting, []);
    assert.ok(performance.now() - started < 2000, 'answered when the run ended');
  }));

test('several runs of a project share the workers in turn: a large run does not starve a small one', () =>
  withService(async ({ client }) => {
    const { member, project } = await memberWithProject(client);
    const large = await runSetup(member.client, project.id, 50, 1);
    const small = await runSetup(member.client, project.id, 2, 1);
    const big = await createRun(member.client, large);
    const little = await createRun(member.client, small);
    const worker = await registerWorker(member.client);
    const leased: string[] = [];
    for (let i = 0; i < 4; i++) for (const task of await lease(member.client, worker, { max: 1 })) leased.push(task.run);
    assert.equal(leased, [big.id, little.id, big.id, little.id]);
    // A lease of many takes them from the run whose turn it is; the next lease starts with the next run.
    const larger = await createRun(member.client, await runSetup(member.client, project.id, 50, 1));
    const runsOfLeases: string[][] = [];
    for (let i = 0; i < 3; i++) runsOfLeases.push([...new Set((await lease(member.client, worker, { max: 10 })).map((task) => task.run))]);
    // Turns go big, little, larger: after four leases it is larger's; little has none ready (both leased).
    assert.equal(runsOfLeases, [[larger.id], [big.id], [larger.id]]);
  }));

test('bad input is refused whole, and nothing is written', () =>
  withService(async ({ client }) => {
    const { member, project } = await memberWithProject(client);
    const setup = await runSetup(member.client, project.id, 3, 2);
    const other = await runSetup(member.client, project.id, 3, 1);
    const path = `/api/jobs/${setup.job.id}/runs/`;
    const post = (body: Record<string, unknown>) => member.client.post(path, { dataset: setup.dataset.id, iterations: [setup.iterations[0].id], ...body });
    assert.equal((await post({ dataset: other.dataset.id })).body, { dataset: ["Must be a dataset version of the job's agent."] });
    assert.equal((await post({ iterations: [other.iterations[0].id] })).body, { iterations: [`Iteration ${other.iterations[0].id} is of another job.`] });
    const missing = '00000000-0000-4000-8000-000000000000';
    assert.equal((await post({ iterations: [missing] })).body, { iterations: [`Invalid pk "${missing}" - object does not exist.`] });
    assert.equal((await post({ iterations: [] })).status, 400);
    assert.equal((await post({ order: 'random' })).body, { order: ['"random" is not a valid choice.'] });
    assert.equal((await post({ attempts: 0 })).status, 400);
    // An iteration whose results are of another version.
    const second = await member.client.post('/api/datasets/', { agent: setup.agent.id, datapoints: [{ input: 'x' }] });
    await member.client.post(`/api/job-iterations/${setup.iterations[1].id}/results/`, { dataset: second.body.id, results: [{ datapoint_order: 0, score: 1 }] });
    const pinned = await post({ iterations: [setup.iterations[0].id, setup.iterations[1].id] });
    assert.is(pinned.status, 400);
    assert.match(JSON.stringify(pinned.body.dataset), /results are of dataset version 2/);
    assert.is((await member.client.get(path)).body.count, 0, 'no run was made');
    // A malformed token refuses the whole completion.
    const worker = await registerWorker(member.client);
    const malformed = await complete(member.client, worker, [{ task: missing, lease: 'short', score: 1 }]);
    assert.equal(malformed.status, 400);
    assert.equal(malformed.body, { results: [{ lease: ['Enter a valid value.'] }] });
  }));

test('results of an iteration a live run evaluates are written by the run alone: a posted batch is 409 until it ends', () =>
  withService(async ({ client }) => {
    const { member, project } = await memberWithProject(client);
    const setup = await runSetup(member.client, project.id, 2, 1);
    const run = await createRun(member.client, setup);
    const body = { results: [{ datapoint_order: 0, score: 1 }] };
    const refused = await member.client.post(`/api/job-iterations/${setup.iterations[0].id}/results/`, body);
    assert.equal([refused.status, refused.body.code], [409, 'conflict']);
    await member.client.post(`/api/runs/${run.id}/cancel/`, {});
    assert.is((await member.client.post(`/api/job-iterations/${setup.iterations[0].id}/results/`, body)).status, 200);
  }));

test('an item of a completion is answered on its own: invalid fields, an output too large, a task of no run', () =>
  withService(async ({ client }) => {
    const { member, project } = await memberWithProject(client);
    const setup = await runSetup(member.client, project.id, 3, 1);
    await createRun(member.client, setup);
    const worker = await registerWorker(member.client);
    const tasks = await lease(member.client, worker);
    const unknown = `${tasks[0].id.slice(0, 13)}-8000-8000-0000000fffff`;
    const reply = await complete(member.client, worker, [
      { task: tasks[0].id, lease: tasks[0].lease, score: 'high' },
      { task: tasks[1].id, lease: tasks[1].lease, score: 1, output: 'x'.repeat(70_000) },
      { task: unknown, lease: tasks[2].lease, score: 1 },
      { task: tasks[2].id, lease: tasks[2].lease, score: 1 },
    ]);
    assert.is(reply.status, 200, reply.text);
    assert.equal(reply.body.results.map((item: any) => item.outcome), ['invalid', 'invalid', 'invalid', 'accepted']);
    assert.equal(reply.body.results[0].errors, { score: ['A valid number is required.'] });
    assert.match(reply.body.results[1].errors.output[0], /at most 65536 characters/);
    assert.equal(reply.body.results[2].errors, { task: [`Invalid pk "${unknown}" - object does not exist.`] });
    // The invalid items' leases stand: they can be answered again.
    await completeAll(member.client, worker, tasks.slice(0, 2));
  }));

test.run();
