// Leases that wait for a task (long polls) as they are served: a waiting lease is answered once,
// with what its lease took, whatever happens meanwhile (its wait ends, its worker says goodbye);
// a lease for an ended run does not wait; a completion's `next` counts the slots the completion
// frees. And what a run no longer has: a lease already expired is not revived by a heartbeat, and
// a run whose iteration or version went does not run again.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { MemoryKv } from '../../src/store/memory-kv.ts';
import type { Client } from '../helpers/client.ts';
import { FaultyKv } from '../helpers/faulty-kv.ts';
import { memberWithProject } from '../helpers/fixtures.ts';
import { createJob } from '../helpers/job-fixtures.ts';
import { commitCounter, complete, createRun, lease, registerWorker, runOf, runSetup, tasksOf } from '../helpers/run-fixtures.ts';
import { withService } from '../helpers/service.ts';
import { until } from '../helpers/wait.ts';

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

test('a worker that says goodbye with a lease waiting: the lease is answered with nothing and no task stays leased to it', () =>
  withService(async ({ client }) => {
    const { member, project } = await memberWithProject(client);
    const setup = await runSetup(member.client, project.id, 2, 1);
    const run = await createRun(member.client, setup, { max_in_flight: 1 });
    const worker = await registerWorker(member.client);
    await lease(member.client, worker, { max: 1 });
    const waiting = lease(member.client, worker, { max: 1, wait_ms: 5000 });
    await pause(50);
    assert.is((await member.client.delete(`/api/workers/${worker.id}/`)).status, 204);
    assert.equal(await waiting, []);
    await pause(50);
    assert.equal((await runOf(member.client, run)).counts.leased, 0, 'the task it gave back was not leased to its waiting lease');
    assert.equal(await tasksOf(member.client, run, { state: 'leased' }), []);
    const other = await registerWorker(member.client);
    assert.is((await lease(member.client, other, { max: 1 })).length, 1, 'another worker takes it at once');
  }, { lmdb: true }));

/**
 * A run of one task, leased by a worker that answers it with an error, and another worker's lease
 * waiting `waitMs`: the task is ready again 50-150 ms after the error, when the waiting lease is
 * served, and from then on the store holds every commit (the serving lease's too) until released.
 */
async function servedWhileTheStoreWaits(client: Client, kv: FaultyKv, waitMs: number) {
  const { member, project } = await memberWithProject(client);
  const run = await createRun(member.client, await runSetup(member.client, project.id, 1, 1));
  const failing = await registerWorker(member.client);
  const waiter = await registerWorker(member.client);
  const [task] = await lease(member.client, failing, { max: 1 });
  const waiting = member.client.post(`/api/workers/${waiter.id}/lease/`, { max: 1, wait_ms: waitMs });
  await pause(50);
  assert.equal((await complete(member.client, failing, [{ task: task.id, lease: task.lease, status: 'error', error: 'boom' }])).body.results[0].outcome, 'accepted');
  return { member, run, task, waiter, waiting, release: kv.holdWrites() };
}

const heldStore = { limits: { runRetryDelayMs: 100 } };

test('a waiting lease whose wait ends while its lease is being decided is answered with the task it took', async () => {
  const kv = new FaultyKv(new MemoryKv());
  await withService(async ({ client }) => {
    const { member, run, task, waiter, waiting, release } = await servedWhileTheStoreWaits(client, kv, 400);
    // The serving lease's commit is held past the end of the wait.
    await pause(700);
    release();
    const answer = await waiting;
    assert.is(answer.status, 200, answer.text);
    assert.equal(answer.body.tasks.map((leased: { id: string }) => leased.id), [task.id], 'the answer is what the lease took');
    assert.equal((await tasksOf(member.client, run, { state: 'leased' })).map((held) => held.worker), [waiter.id]);
  }, { kv, ...heldStore });
});

test('a worker that says goodbye while its waiting lease is being decided: the lease is answered with nothing, and what it took is released', async () => {
  const kv = new FaultyKv(new MemoryKv());
  await withService(async ({ client }) => {
    const { member, run, waiter, waiting, release } = await servedWhileTheStoreWaits(client, kv, 5000);
    await pause(400);
    const goodbye = member.client.delete(`/api/workers/${waiter.id}/`);
    await pause(100);
    release();
    assert.is((await goodbye).status, 204);
    assert.equal((await waiting).body.tasks, []);
    assert.equal(await tasksOf(member.client, run, { state: 'leased' }), [], 'nothing stays leased to it');
    assert.is((await runOf(member.client, run)).counts.queued, 1);
  }, { kv, ...heldStore });
});

test('a worker that says goodbye while a lease of its own (or a completion\'s next) is being decided: answered with nothing, and what it took is released', async () => {
  const kv = new FaultyKv(new MemoryKv());
  await withService(async ({ client }) => {
    const { member, project } = await memberWithProject(client);
    const run = await createRun(member.client, await runSetup(member.client, project.id, 3, 1));
    const worker = await registerWorker(member.client);
    const [held] = await lease(member.client, worker, { max: 1 });
    const release = kv.holdWrites();
    const leasing = member.client.post(`/api/workers/${worker.id}/lease/`, { max: 1 });
    const completing = member.client.post(`/api/workers/${worker.id}/complete/`, { results: [{ task: held.id, lease: held.lease, score: 1 }], next: { max: 1 } });
    await pause(100);
    const goodbye = member.client.delete(`/api/workers/${worker.id}/`);
    await pause(100);
    release();
    assert.is((await goodbye).status, 204);
    assert.equal((await leasing).body.tasks, []);
    const completed = await completing;
    assert.equal([completed.body.results[0].outcome, completed.body.tasks], ['accepted', []]);
    assert.equal(await tasksOf(member.client, run, { state: 'leased' }), [], 'nothing stays leased to the worker gone');
    assert.equal((await runOf(member.client, run)).counts, { ...(await runOf(member.client, run)).counts, queued: 2, leased: 0, done: 1 });
    assert.is((await member.client.post(`/api/workers/${worker.id}/lease/`, { max: 1 })).status, 404);
  }, { kv });
});

test('a worker that says goodbye while its lease, about to wait, is still being decided: it does not wait, and a task ready later is not served to it', async () => {
  const kv = new FaultyKv(new MemoryKv());
  await withService(async ({ client }) => {
    const { member, project } = await memberWithProject(client);
    const run = await createRun(member.client, await runSetup(member.client, project.id, 1, 1));
    const leaving = await registerWorker(member.client);
    const other = await registerWorker(member.client);
    const release = kv.holdWrites();
    const taken = lease(member.client, other, { max: 1 });
    await pause(50);
    // Its first decision is held with the store; it finds nothing ready (the other took the task).
    const waiting = member.client.post(`/api/workers/${leaving.id}/lease/`, { max: 1, wait_ms: 4000 });
    await pause(100);
    const goodbye = member.client.delete(`/api/workers/${leaving.id}/`);
    await pause(100);
    release();
    assert.is((await goodbye).status, 204);
    const [task] = await taken;
    // The task fails and is ready again after the retry delay: it must not go to the worker gone.
    await complete(member.client, other, [{ task: task.id, lease: task.lease, status: 'error', error: 'boom' }]);
    assert.equal((await waiting).body.tasks, []);
    await pause(200);
    assert.equal((await tasksOf(member.client, run, { state: 'leased' })).length, 0);
    assert.is((await lease(member.client, other, { max: 1 })).length, 1, 'the other worker takes it');
  }, { kv, limits: { runRetryDelayMs: 100 } });
});

test('a lease for one run that has ended answers at once, whatever its wait', () =>
  withService(async ({ client }) => {
    const { member, project } = await memberWithProject(client);
    const setup = await runSetup(member.client, project.id, 2, 1);
    const run = await createRun(member.client, setup);
    assert.is((await member.client.post(`/api/runs/${run.id}/cancel/`, {})).status, 200);
    const worker = await registerWorker(member.client);
    const started = performance.now();
    assert.equal(await lease(member.client, worker, { run: run.id, wait_ms: 3000 }), []);
    assert.ok(performance.now() - started < 1000, 'not after its wait');
  }));

test("a completion's next leases in its commit when the run's in-flight bound is full: the completion frees the slot", () =>
  withService(async ({ client, service }) => {
    const { member, project } = await memberWithProject(client);
    const setup = await runSetup(member.client, project.id, 3, 1);
    const run = await createRun(member.client, setup, { max_in_flight: 1 });
    const worker = await registerWorker(member.client);
    let [task] = await lease(member.client, worker, { max: 1 });
    const commits = commitCounter(service.deps.kv);
    for (let done = 1; done <= 2; done++) {
      const before = commits();
      const reply = await member.client.post(`/api/workers/${worker.id}/complete/`, { results: [{ task: task.id, lease: task.lease, score: 0.5 }], next: { max: 1, wait_ms: 0 } });
      assert.equal([reply.body.results[0].outcome, reply.body.tasks.length, commits() - before], ['accepted', 1, 1]);
      task = reply.body.tasks[0];
      assert.equal([(await runOf(member.client, run)).counts.done, (await runOf(member.client, run)).counts.leased], [done, 1]);
    }
  }, { lmdb: true }));

test('a task named twice in one completion: its first item is decided, the repeat refused; the outcome is the item that wrote', () =>
  withService(async ({ client }) => {
    const { member, project } = await memberWithProject(client);
    const setup = await runSetup(member.client, project.id, 2, 1);
    await createRun(member.client, setup);
    const worker = await registerWorker(member.client);
    const [first, second] = await lease(member.client, worker, { max: 2 });
    const wrongToken = `${first.lease.slice(0, -1)}${first.lease.endsWith('0') ? '1' : '0'}`;
    const reply = await complete(member.client, worker, [
      { task: first.id, lease: wrongToken, score: 0.1 },
      { task: first.id, lease: first.lease, score: 0.9 },
      { task: second.id, lease: second.lease, score: 0.5 },
      { task: second.id, lease: second.lease, score: 0.7 },
    ]);
    const repeat = { task: ['This task is named more than once in this completion: only its first item is read.'] };
    assert.equal(reply.body.results, [
      { task: first.id, outcome: 'stale' },
      { task: first.id, outcome: 'invalid', errors: repeat },
      { task: second.id, outcome: 'accepted' },
      { task: second.id, outcome: 'invalid', errors: repeat },
    ]);
    const rows = (await member.client.get(`/api/job-iterations/${setup.iterations[0].id}/results/`)).body.results;
    assert.equal(rows.map((row: { score: number }) => row.score), [0.5], 'only the accepted item wrote');
    await until(async () => (await tasksOf(member.client, { id: first.run }, { state: 'leased' })).length === 1, 'the first task is still leased');
  }));

test('a heartbeat after its leases expired, before the run gave them back, gives them back and says stop: an answer called stale stays stale', () => {
  let offsetMs = 0;
  return withService(async ({ client }) => {
    const { member, project } = await memberWithProject(client);
    const setup = await runSetup(member.client, project.id, 2, 1);
    const run = await createRun(member.client, setup, { lease_seconds: 5 });
    const worker = await registerWorker(member.client);
    const [task] = await lease(member.client, worker, { max: 1 });
    // Silent for longer than its lease, by the service's clock; the run's timer has not run yet.
    offsetMs = 6000;
    assert.is((await complete(member.client, worker, [{ task: task.id, lease: task.lease, score: 1 }])).body.results[0].outcome, 'stale');
    const beat = await member.client.post(`/api/workers/${worker.id}/heartbeat/`, { tasks: [task.id] });
    assert.equal(beat.body, { stop: [task.id], leases: 0 });
    assert.is((await complete(member.client, worker, [{ task: task.id, lease: task.lease, score: 1 }])).body.results[0].outcome, 'stale');
    assert.equal([(await runOf(member.client, run)).counts.queued, (await runOf(member.client, run)).counts.leased], [2, 0]);
  }, { clock: { nowMs: () => Date.now() + offsetMs } });
});

test("a lease after the worker's leases expired, before the run gave them back, gives them back first: the stale token stays stale, and heartbeats do not hold the task", () => {
  let offsetMs = 0;
  return withService(async ({ client }) => {
    const { member, project } = await memberWithProject(client);
    const setup = await runSetup(member.client, project.id, 3, 1);
    const run = await createRun(member.client, setup, { lease_seconds: 5 });
    const worker = await registerWorker(member.client);
    const [first] = await lease(member.client, worker, { max: 1 });
    offsetMs = 6000;
    assert.is((await complete(member.client, worker, [{ task: first.id, lease: first.lease, score: 1 }])).body.results[0].outcome, 'stale');
    const [second] = await lease(member.client, worker, { max: 1 });
    assert.is.not(second.id, first.id);
    assert.is((await complete(member.client, worker, [{ task: first.id, lease: first.lease, score: 1 }])).body.results[0].outcome, 'stale', 'the new lease did not revive the old one');
    assert.equal((await member.client.post(`/api/workers/${worker.id}/heartbeat/`, { tasks: [second.id] })).body, { stop: [], leases: 1 });
    assert.equal((await tasksOf(member.client, run, { state: 'leased' })).map((task: { id: string }) => task.id), [second.id]);
    // The same through a completion's `next`.
    offsetMs = 12_000;
    const answer = await member.client.post(`/api/workers/${worker.id}/complete/`, { results: [{ task: second.id, lease: second.lease, score: 1 }], next: { max: 1 } });
    assert.is(answer.body.results[0].outcome, 'stale');
    assert.is(answer.body.tasks.length, 1);
    assert.is((await complete(member.client, worker, [{ task: second.id, lease: second.lease, score: 1 }])).body.results[0].outcome, 'stale');
    assert.equal((await runOf(member.client, run)).counts.leased, 1);
  }, { clock: { nowMs: () => Date.now() + offsetMs } });
});

test("a run does not run again once an iteration of it went (deleted, or moved to another job) or its dataset version was deleted: retry is 409; a move fails a live run at the move's time", () =>
  withService(async ({ client }) => {
    const { member, project } = await memberWithProject(client);
    const setup = await runSetup(member.client, project.id, 2, 2);
    const [kept, moving] = setup.iterations;
    const run = await createRun(member.client, setup, { max_tries: 1 });
    const worker = await registerWorker(member.client);
    const [first] = await lease(member.client, worker, { max: 1 });
    await complete(member.client, worker, [{ task: first.id, lease: first.lease, status: 'error', error: 'boom' }]);
    const other = await createJob(member.client, { agent: setup.agent.id });
    assert.is((await member.client.patch(`/api/job-iterations/${moving.id}/`, { job: other.id })).status, 200);
    const failed = await runOf(member.client, run);
    assert.equal([failed.status, failed.reason], ['failed', 'failed']);
    assert.ok(failed.finished_at >= failed.started_at && failed.finished_at >= failed.created_at, `finished ${failed.finished_at} after it started ${failed.started_at}`);
    const retried = await member.client.post(`/api/runs/${run.id}/retry/`, {});
    assert.equal([retried.status, retried.body], [409, { detail: `Iteration ${moving.id} is no longer of this job (deleted, or moved to another): this run cannot run again. Start a new run.`, code: 'conflict' }]);
    assert.is((await runOf(member.client, run)).status, 'failed', 'nothing changed');
    // Deleted: the same.
    const alone = await createRun(member.client, setup, { iterations: [kept.id], max_tries: 1 });
    const [only] = await lease(member.client, worker, { max: 1, run: alone.id });
    await complete(member.client, worker, [{ task: only.id, lease: only.lease, status: 'error', error: 'boom' }]);
    const version = await member.client.post('/api/datasets/', { agent: setup.agent.id, datapoints: [{ input: 'x' }], make_active: false });
    assert.is(version.status, 201, version.text);
    assert.is((await member.client.delete(`/api/job-iterations/${kept.id}/`)).status, 204);
    assert.is((await member.client.post(`/api/runs/${alone.id}/retry/`, {})).status, 409);
    // A version deleted: its runs cannot go on.
    const fresh = await member.client.post('/api/job-iterations/', { job: setup.job.id, iteration_name: 'fresh', order: 9 });
    const onVersion = await createRun(member.client, { ...setup, dataset: version.body, iterations: [fresh.body] }, { max_tries: 1 });
    const [one] = await lease(member.client, worker, { max: 1, run: onVersion.id });
    await complete(member.client, worker, [{ task: one.id, lease: one.lease, status: 'error', error: 'boom' }]);
    assert.is((await member.client.delete(`/api/datasets/${version.body.id}/`)).status, 204);
    const gone = await member.client.post(`/api/runs/${onVersion.id}/retry/`, {});
    assert.equal([gone.status, gone.body.detail], [409, "This run's dataset version, or its agent, was deleted: it cannot run again."]);
  }));

test('deleting a dataset version or an agent fails its live runs before the delete answers; a run a stop left live between the two commits fails at the next start', async () => {
  const store = new MemoryKv();
  const kv = new FaultyKv(store);
  let access = '';
  let leftLive = '';
  await withService(async ({ client }) => {
    const { member, project } = await memberWithProject(client);
    access = member.access;
    for (let i = 0; i < 3; i++) {
      const setup = await runSetup(member.client, project.id, 2, 1);
      const run = await createRun(member.client, setup);
      await lease(member.client, await registerWorker(member.client), { max: 1 });
      assert.is((await member.client.delete(`/api/datasets/${setup.dataset.id}/`)).status, 204);
      assert.equal(pick(await runOf(member.client, run)), ['failed', 'failed'], 'failed once the delete has answered');
    }
    const ofAgent = await runSetup(member.client, project.id, 2, 1);
    const agentRun = await createRun(member.client, ofAgent);
    assert.is((await member.client.delete(`/api/agents/${ofAgent.agent.id}/`)).status, 204);
    assert.equal(pick(await runOf(member.client, agentRun)), ['failed', 'failed']);

    // The version's deletion is committed, the run's failure is not (the service stops between them).
    const last = await runSetup(member.client, project.id, 2, 1);
    leftLive = (await createRun(member.client, last)).id;
    kv.queueWrites();
    const deleted = member.client.delete(`/api/datasets/${last.dataset.id}/`);
    await until(() => kv.queued === 1, "the version's deletion");
    await kv.settleNext();
    await until(() => kv.queued === 1, "the run's failure");
    await kv.settleNext(new Error('the service stopped before this commit'));
    assert.is((await deleted).status, 204);
    await kv.settleAll();
    kv.discardWrites = true; // nothing more reaches the store: as a stop at once
  }, { kv });
  await withService(async ({ client }) => {
    const run = await runOf(client.as({ token: access }), { id: leftLive });
    assert.equal(pick(run), ['failed', 'failed'], 'failed at the start');
  }, { kv: store });
});

function pick(run: { status: string; reason: string }) {
  return [run.status, run.reason];
}

test.run();
