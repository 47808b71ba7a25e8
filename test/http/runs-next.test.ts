// A completion that leases the worker's next tasks (`next`): one round trip a task. Its results
// and its lease are decided together and written in one commit; `next` is checked with the rest
// of the body, before anything is written; and it waits for a task as a lease does.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { memberWithProject } from '../helpers/fixtures.ts';
import { commitCounter, createRun, lease, registerWorker, runOf, runSetup, tasksOf } from '../helpers/run-fixtures.ts';
import { withService } from '../helpers/service.ts';

test('a completion with next writes its results and leases the next task in the same commit; the last one leases nothing and ends the run', () =>
  withService(async ({ client, service }) => {
    const { member, project } = await memberWithProject(client);
    const setup = await runSetup(member.client, project.id, 3, 1);
    const run = await createRun(member.client, setup);
    const worker = await registerWorker(member.client);
    let [task] = await lease(member.client, worker, { max: 1 });
    const commits = commitCounter(service.deps.kv);
    const orders: number[] = [task.datapoint.order];
    for (;;) {
      const before = commits();
      const reply = await member.client.post(`/api/workers/${worker.id}/complete/`, { results: [{ task: task.id, lease: task.lease, score: 0.5 }], next: { max: 1 } });
      assert.is(reply.status, 200, reply.text);
      assert.equal(reply.body.results, [{ task: task.id, outcome: 'accepted' }]);
      assert.is(commits() - before, 1, 'the completion and the lease in one commit');
      if (reply.body.tasks.length === 0) break;
      assert.is(reply.body.tasks.length, 1);
      task = reply.body.tasks[0];
      assert.equal(Object.keys(task).sort(), ['attempt', 'datapoint', 'id', 'iteration', 'lease', 'lease_expires_at', 'run', 'scored_by_service', 'try'], 'as a lease hands it out');
      assert.is((await runOf(member.client, run)).counts.leased, 1, 'leased once the answer came');
      orders.push(task.datapoint.order);
    }
    assert.equal(orders, [0, 1, 2]);
    const ended = await runOf(member.client, run);
    assert.equal([ended.status, ended.counts.done], ['completed', 3]);
    const rows = (await member.client.get(`/api/job-iterations/${setup.iterations[0].id}/results/`)).body;
    assert.is(rows.count, 3);
    const plain = await member.client.post(`/api/workers/${worker.id}/complete/`, { results: [{ task: task.id, lease: task.lease, score: 0.5 }] });
    assert.equal(Object.keys(plain.body), ['results'], 'without next, a completion answers its results only');
  }, { lmdb: true }));

test('next is checked with the rest of the body: its errors said under next, and nothing of the completion written', () =>
  withService(async ({ client }) => {
    const { member, project } = await memberWithProject(client);
    const setup = await runSetup(member.client, project.id, 2, 1);
    const run = await createRun(member.client, setup);
    const other = await memberWithProject(client);
    const otherSetup = await runSetup(other.member.client, other.project.id, 1, 1);
    const otherRun = await createRun(other.member.client, otherSetup);
    const worker = await registerWorker(member.client);
    const [task] = await lease(member.client, worker, { max: 1 });
    const results = [{ task: task.id, lease: task.lease, score: 1 }];
    const tooMany = await member.client.post(`/api/workers/${worker.id}/complete/`, { results, next: { max: 100_000, wait_ms: 10_000_000 } });
    assert.is(tooMany.status, 400, tooMany.text);
    assert.equal(Object.keys(tooMany.body), ['next']);
    assert.equal(Object.keys(tooMany.body.next).sort(), ['max', 'wait_ms']);
    const foreign = await member.client.post(`/api/workers/${worker.id}/complete/`, { results, next: { run: otherRun.id } });
    assert.equal([foreign.status, foreign.body], [400, { next: { run: [`Invalid pk "${otherRun.id}" - object does not exist.`] } }]);
    const malformed = await member.client.post(`/api/workers/${worker.id}/complete/`, { results, next: { max: 0 } });
    assert.is(malformed.status, 400);
    assert.ok(malformed.body.next?.max, malformed.text);
    const [listed] = await tasksOf(member.client, run, { state: 'leased' });
    assert.equal([listed.id, listed.worker], [task.id, worker.id], 'the task is still leased: nothing was written');
    assert.is((await member.client.get(`/api/job-iterations/${setup.iterations[0].id}/results/`)).body.count, 0);
  }));

test('next waits up to its wait_ms for a task, as a lease does: a task that becomes ready meanwhile comes with the answer', () =>
  withService(async ({ client }) => {
    const { member, project } = await memberWithProject(client);
    const setup = await runSetup(member.client, project.id, 2, 1);
    await createRun(member.client, setup, { max_tries: 3 });
    const [first, second] = [await registerWorker(member.client), await registerWorker(member.client)];
    const [mine] = await lease(member.client, first, { max: 1 });
    const [theirs] = await lease(member.client, second, { max: 1 });
    const started = performance.now();
    const waiting = member.client.post(`/api/workers/${first.id}/complete/`, { results: [{ task: mine.id, lease: mine.lease, score: 1 }], next: { max: 1, wait_ms: 10_000 } });
    await new Promise((resolve) => setTimeout(resolve, 200));
    // The other worker's task fails: it is queued again after its backoff, and the waiting completion takes it.
    const failed = await member.client.post(`/api/workers/${second.id}/complete/`, { results: [{ task: theirs.id, lease: theirs.lease, status: 'error', error: 'boom' }] });
    assert.equal(failed.body.results, [{ task: theirs.id, outcome: 'accepted' }]);
    const reply = await waiting;
    assert.is(reply.status, 200, reply.text);
    assert.equal(reply.body.results, [{ task: mine.id, outcome: 'accepted' }]);
    assert.equal(reply.body.tasks.map((task: any) => [task.id, task.try]), [[theirs.id, 2]]);
    assert.ok(performance.now() - started < 9_000, 'answered when the task was ready, not at the end of its wait');
  }, { limits: { runRetryDelayMs: 1, runRetryDelayMsMax: 2 } }));

test.run();
