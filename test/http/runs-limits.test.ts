// Every limit on runs and workers (src/config.ts), over HTTP on LMDB: each one met at its edge and
// passed by one, refused with DRF's shape (or answered as the limit says), and nothing written by
// a refusal (no run, no pin, no lease, no result row, task states unchanged). Then bad input: a
// dataset of another agent or project, an iteration of another job, a datapoint outside the
// version, a malformed token.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { datapoints } from '../helpers/agent-fixtures.ts';
import type { Client } from '../helpers/client.ts';
import { memberWithProject } from '../helpers/fixtures.ts';
import { complete, completeAll, createRun, lease, registerWorker, runOf, runSetup, tasksOf, type RunSetup } from '../helpers/run-fixtures.ts';
import { withService, type StartOptions } from '../helpers/service.ts';
import { until } from '../helpers/wait.ts';
import { readFileSync } from 'node:fs';
import { ConfigError, defaultLimits, limitEnvName, loadConfig, runDefaults } from '../../src/config.ts';

/** The real store: LMDB in a temporary directory, with the given limits. */
const onDisk = (limits: StartOptions['limits'] = {}): StartOptions => ({ lmdb: true, limits });

/** The dataset version an iteration's results are pinned to (null: none yet). */
async function pinOf(client: Client, iteration: { id: string }): Promise<string | null> {
  const summary = await client.get(`/api/job-iterations/${iteration.id}/results/summary/`);
  assert.is(summary.status, 200, summary.text);
  return summary.body.dataset?.id ?? null;
}

/** What a refused request must leave as it was: the job's runs, its status and run, each run's tasks, the iterations' pins. */
async function written(client: Client, setup: RunSetup): Promise<unknown> {
  const runs = (await client.get(`/api/jobs/${setup.job.id}/runs/`)).body.results;
  const job = (await client.get(`/api/jobs/${setup.job.id}/`)).body;
  const tasks = [];
  for (const run of runs) tasks.push(await tasksOf(client, run));
  const pins = [];
  for (const iteration of setup.iterations) pins.push(await pinOf(client, iteration));
  return { runs, job: [job.status, job.worker_task_id], tasks, pins };
}

test('tasksPerRunMax: a run of exactly the limit is made; one task more is a 400 naming both numbers, and pins nothing; it bounds max_in_flight too', () =>
  withService(async ({ client }) => {
    const { member, project } = await memberWithProject(client);
    const setup = await runSetup(member.client, project.id, 5, 2);
    const larger = await member.client.post('/api/datasets/', { agent: setup.agent.id, datapoints: datapoints(6) });
    assert.is(larger.status, 201, larger.text);
    const before = await written(member.client, setup);
    const over = await member.client.post(`/api/jobs/${setup.job.id}/runs/`, { dataset: larger.body.id, iterations: [setup.iterations[1].id] });
    assert.is(over.status, 400);
    assert.equal(over.body, { non_field_errors: ['A run holds at most 5 tasks; this one would have 6.'] });
    // Iterations x datapoints x attempts: 1 x 3 x 2 is over too.
    const small = await member.client.post('/api/datasets/', { agent: setup.agent.id, datapoints: datapoints(3) });
    const attempts = await member.client.post(`/api/jobs/${setup.job.id}/runs/`, { dataset: small.body.id, iterations: [setup.iterations[1].id], attempts: 2 });
    assert.equal([attempts.status, attempts.body], [400, { non_field_errors: ['A run holds at most 5 tasks; this one would have 6.'] }]);
    // No run has more in flight than a run may hold; a task budget is a number JSON holds exactly.
    const runOf = (fields: object) => member.client.post(`/api/jobs/${setup.job.id}/runs/`, { dataset: setup.dataset.id, iterations: [setup.iterations[0].id], ...fields });
    const inFlight = await runOf({ max_in_flight: 6 });
    assert.equal([inFlight.status, inFlight.body], [400, { max_in_flight: ['Ensure this value is less than or equal to 5.'] }]);
    const budget = await runOf({ budget: { max_tasks: 2 ** 53 } });
    assert.equal([budget.status, budget.body], [400, { budget: { max_tasks: ['Ensure this value is less than or equal to 9007199254740991.'] } }]);
    assert.equal(await written(member.client, setup), before, 'no run, no pin');
    const edge = await createRun(member.client, { ...setup, iterations: [setup.iterations[0]] }, { max_in_flight: 5, budget: { max_tasks: 2 ** 53 - 1 } });
    assert.equal([edge.counts.total, edge.max_in_flight, edge.budget.max_tasks], [5, 5, 2 ** 53 - 1]);
    assert.is(await pinOf(member.client, setup.iterations[0]), setup.dataset.id);
    assert.is(await pinOf(member.client, setup.iterations[1]), null);
  }, onDisk({ tasksPerRunMax: 5 })));

test('runsPerJobMax: a job holds that many runs, ended ones included; the next is a 400 that pins nothing and leaves the job as it was', () =>
  withService(async ({ client }) => {
    const { member, project } = await memberWithProject(client);
    const fresh = await runSetup(member.client, project.id, 2, 3);
    const neighbour = await runSetup(member.client, project.id, 2, 1);
    const one = await createRun(member.client, { ...fresh, iterations: [fresh.iterations[0]] });
    const two = await createRun(member.client, { ...fresh, iterations: [fresh.iterations[1]] });
    assert.is((await member.client.post(`/api/runs/${one.id}/cancel/`, {})).status, 200);
    const before = await written(member.client, fresh);
    const third = await member.client.post(`/api/jobs/${fresh.job.id}/runs/`, { dataset: fresh.dataset.id, iterations: [fresh.iterations[2].id] });
    assert.is(third.status, 400);
    assert.equal(third.body, { non_field_errors: ['A job may have at most 2 runs.'] });
    assert.equal(await written(member.client, fresh), before, 'no run, no pin, the job still names its last run');
    assert.is((before as any).job[1], two.id);
    // Another job has runs of its own.
    await createRun(member.client, neighbour);
  }, onDisk({ runsPerJobMax: 2 })));

test('tasksPerLeaseMax: a lease of exactly the limit hands out that many; max one more is a 400 that leases nothing', () =>
  withService(async ({ client }) => {
    const { member, project } = await memberWithProject(client);
    const setup = await runSetup(member.client, project.id, 6, 1);
    const run = await createRun(member.client, setup);
    const worker = await registerWorker(member.client);
    const over = await member.client.post(`/api/workers/${worker.id}/lease/`, { max: 5 });
    assert.is(over.status, 400);
    assert.equal(over.body, { max: ['Ensure this value is less than or equal to 4.'] });
    assert.equal((await runOf(member.client, run)).counts, { total: 6, queued: 6, leased: 0, done: 0, dead: 0, skipped: 0, cancelled: 0 });
    assert.equal([(await runOf(member.client, run)).status, (await member.client.get(`/api/workers/${worker.id}/`)).body.leased], ['queued', 0]);
    const edge = await lease(member.client, worker, { max: 4 });
    assert.is(edge.length, 4);
    // The limit is also the in-flight cap of a run without max_in_flight.
    assert.equal(await lease(member.client, worker, { max: 4 }), []);
    assert.is((await runOf(member.client, run)).in_flight_allowed, 4);
    assert.is((await member.client.post(`/api/workers/${worker.id}/lease/`, { max: 0 })).status, 400);
  }, onDisk({ tasksPerLeaseMax: 4 })));

test('leaseWaitMsMax: a wait of exactly the limit is served; one millisecond more is a 400 at once, both bounds named together', () =>
  withService(async ({ client }) => {
    const { member, project } = await memberWithProject(client);
    const setup = await runSetup(member.client, project.id, 2, 1);
    const run = await createRun(member.client, setup);
    const worker = await registerWorker(member.client);
    const over = await member.client.post(`/api/workers/${worker.id}/lease/`, { max: 1, wait_ms: 301 });
    assert.is(over.status, 400);
    assert.equal(over.body, { wait_ms: ['Ensure this value is less than or equal to 300.'] });
    const started = performance.now();
    const both = await member.client.post(`/api/workers/${worker.id}/lease/`, { max: 1001, wait_ms: 10_000 });
    assert.equal(both.body, { max: ['Ensure this value is less than or equal to 1000.'], wait_ms: ['Ensure this value is less than or equal to 300.'] });
    assert.ok(performance.now() - started < 5000, 'refused without waiting');
    assert.is((await runOf(member.client, run)).counts.leased, 0);
    assert.is((await lease(member.client, worker, { max: 1, wait_ms: 300 })).length, 1);
    const waited = performance.now();
    assert.is((await lease(member.client, worker, { max: 5, run: run.id, wait_ms: 300 })).length, 1);
    assert.equal(await lease(member.client, worker, { max: 5, wait_ms: 300 }), []);
    assert.ok(performance.now() - waited >= 290, 'the empty lease waited its 300 ms');
  }, onDisk({ leaseWaitMsMax: 300 })));

test('leaseSecondsMax, taskTriesMax and attemptsPerDatapointMax bound a run\'s body: each at its limit is made, one more refused, all named at once', () =>
  withService(async ({ client }) => {
    const { member, project } = await memberWithProject(client);
    const setup = await runSetup(member.client, project.id, 1, 2);
    const before = await written(member.client, setup);
    const path = `/api/jobs/${setup.job.id}/runs/`;
    const body = { dataset: setup.dataset.id, iterations: [setup.iterations[0].id] };
    const over = await member.client.post(path, { ...body, lease_seconds: 121, max_tries: 5, attempts: 4 });
    assert.is(over.status, 400);
    assert.equal(over.body, {
      attempts: ['Ensure this value is less than or equal to 3.'],
      max_tries: ['Ensure this value is less than or equal to 4.'],
      lease_seconds: ['Ensure this value is less than or equal to 120.'],
    });
    for (const field of [{ lease_seconds: 0 }, { max_tries: 0 }, { attempts: 0 }, { max_in_flight: 0 }, { budget: { max_tasks: 0 } }, { budget: { max_cost: -1 } }]) {
      const refused = await member.client.post(path, { ...body, ...field });
      assert.is(refused.status, 400, JSON.stringify(field));
    }
    assert.equal(await written(member.client, setup), before);
    const edge = await createRun(member.client, { ...setup, iterations: [setup.iterations[0]] }, { lease_seconds: 120, max_tries: 4, attempts: 3 });
    assert.equal([edge.lease_seconds, edge.max_tries, edge.attempts, edge.counts.total], [120, 4, 3, 3]);
    const worker = await registerWorker(member.client);
    const [task] = await lease(member.client, worker, { max: 1 });
    const expires = Date.parse(task.lease_expires_at) - Date.now();
    assert.ok(expires > 110_000 && expires <= 120_000, `a lease of 120 s (${expires} ms left)`);
  }, onDisk({ leaseSecondsMax: 120, taskTriesMax: 4, attemptsPerDatapointMax: 3 })));

test('a task\'s tries are counted in a byte: LIMIT_TASK_TRIES_MAX above 255 is a configuration error', () => {
  assert.is(loadConfig({ LIMIT_TASK_TRIES_MAX: '255' }).limits.taskTriesMax, 255);
  assert.throws(() => loadConfig({ LIMIT_TASK_TRIES_MAX: '256' }), (error: unknown) => error instanceof ConfigError && /LIMIT_TASK_TRIES_MAX/.test(error.message));
});

test('a run of a version without datapoints would have no task (and never end): a 400 on dataset that writes nothing', () =>
  withService(async ({ client }) => {
    const { member, project } = await memberWithProject(client);
    const setup = await runSetup(member.client, project.id, 0, 1);
    const reply = await member.client.post(`/api/jobs/${setup.job.id}/runs/`, { dataset: setup.dataset.id, iterations: [setup.iterations[0].id] });
    assert.equal([reply.status, reply.body], [400, { dataset: ['This dataset version has no datapoints: a run of it would have no task.'] }]);
    assert.is((await member.client.get(`/api/jobs/${setup.job.id}/runs/`)).body.count, 0);
    assert.is((await member.client.get(`/api/jobs/${setup.job.id}/`)).body.status, 'pending', 'the job as it was');
  }));

test('workersPerProjectMax: a project registers that many workers; the next is a 400 until one says goodbye; another project counts its own', () =>
  withService(async ({ client }) => {
    const { member, project } = await memberWithProject(client);
    const first = await registerWorker(member.client, { name: 'one' });
    await registerWorker(member.client, { name: 'two' });
    const over = await member.client.post('/api/workers/', { name: 'three' });
    assert.is(over.status, 400);
    assert.equal(over.body, { non_field_errors: ['A project may have at most 2 workers registered; remove one (DELETE /api/workers/{id}/) first.'] });
    const listed = (await member.client.get('/api/workers/')).body;
    assert.equal(listed.results.map((worker: any) => worker.name).sort(), ['one', 'two']);
    const other = await memberWithProject(client);
    await registerWorker(other.member.client, { name: 'elsewhere' });
    assert.is((await member.client.delete(`/api/workers/${first.id}/`)).status, 204);
    const third = await registerWorker(member.client, { name: 'three' });
    assert.is(third.project, project.id);
    assert.is((await member.client.get('/api/workers/')).body.count, 2);
  }, onDisk({ workersPerProjectMax: 2 })));

test('completionItemsMax: a completion of exactly the limit is answered item by item; one item more is a 400 that writes nothing', () =>
  withService(async ({ client }) => {
    const { member, project } = await memberWithProject(client);
    const setup = await runSetup(member.client, project.id, 3, 1);
    const run = await createRun(member.client, setup);
    const worker = await registerWorker(member.client);
    const tasks = await lease(member.client, worker, { max: 3 });
    const over = await complete(member.client, worker, tasks.map((task: any) => ({ task: task.id, lease: task.lease, score: 1 })));
    assert.is(over.status, 400);
    assert.equal(over.body, { results: { non_field_errors: ['Ensure this field has no more than 2 elements.'] } });
    assert.equal((await runOf(member.client, run)).counts.leased, 3);
    assert.is((await member.client.get(`/api/job-iterations/${setup.iterations[0].id}/results/`)).body.count, 0);
    assert.equal((await tasksOf(member.client, run)).map((task: any) => task.state), ['leased', 'leased', 'leased']);
    await completeAll(member.client, worker, tasks.slice(0, 2));
    assert.is((await complete(member.client, worker, [])).status, 400, 'an empty completion is refused too');
    assert.is((await runOf(member.client, run)).counts.done, 2);
  }, onDisk({ completionItemsMax: 2 })));

test('completionBodyBytesMax: a completion reads bodies up to its own limit (past the ordinary one); a larger one is 413 and writes nothing', () =>
  withService(async ({ client }) => {
    const { member, project } = await memberWithProject(client);
    const setup = await runSetup(member.client, project.id, 2, 1);
    const run = await createRun(member.client, setup);
    const worker = await registerWorker(member.client);
    const [first, second] = await lease(member.client, worker, { max: 2 });
    const item = (task: any, chars: number) => ({ task: task.id, lease: task.lease, score: 1, output: 'x'.repeat(chars) });
    const tooLarge = await complete(member.client, worker, [item(first, 9000)]);
    assert.is(tooLarge.status, 413);
    assert.is(tooLarge.body.code, 'payload_too_large');
    assert.is((await runOf(member.client, run)).counts.done, 0);
    assert.is((await member.client.get(`/api/job-iterations/${setup.iterations[0].id}/results/`)).body.count, 0);
    // Larger than bodyBytesMax, within completionBodyBytesMax.
    const fits = await complete(member.client, worker, [item(first, 6000)]);
    assert.is(fits.status, 200, fits.text);
    assert.equal(fits.body.results, [{ task: first.id, outcome: 'accepted' }]);
    // Other routes keep the ordinary limit.
    const heartbeat = await member.client.post(`/api/workers/${worker.id}/heartbeat/`, { tasks: [second.id], padding: 'x'.repeat(6000) });
    assert.is(heartbeat.status, 413);
  }, onDisk({ bodyBytesMax: 4096, completionBodyBytesMax: 8192 })));

test('leaseWaitersPerProjectMax: that many leases wait in a project; the next answers at once with nothing; another project waits on its own', () =>
  withService(async ({ client }) => {
    const { member, project } = await memberWithProject(client);
    const other = await memberWithProject(client);
    const setup = await runSetup(member.client, project.id, 3, 1);
    const otherSetup = await runSetup(other.member.client, other.project.id, 1, 1);
    const workers = [await registerWorker(member.client), await registerWorker(member.client), await registerWorker(member.client)];
    const elsewhere = await registerWorker(other.member.client);
    const waiting = workers.slice(0, 2).map((worker) => lease(member.client, worker, { max: 1, wait_ms: 5000 }));
    const otherWaiting = lease(other.member.client, elsewhere, { max: 1, wait_ms: 5000 });
    // A lease waits once its worker has been heard from (the waiter is parked in the same turn).
    const heard = async (client: Client, worker: { id: string }) => (await client.get(`/api/workers/${worker.id}/`)).body.last_seen_at !== null;
    await until(async () => (await heard(member.client, workers[0])) && (await heard(member.client, workers[1])) && (await heard(other.member.client, elsewhere)), 'three leases waiting');
    const started = performance.now();
    assert.equal(await lease(member.client, workers[2], { max: 1, wait_ms: 5000 }), []);
    assert.ok(performance.now() - started < 2500, 'the third lease was answered at once, not after its 5 s');
    const run = await createRun(member.client, setup);
    const served = await Promise.all(waiting);
    assert.equal(served.map((tasks) => tasks.length), [1, 1], 'the waiting two are served as soon as the run is made');
    assert.is((await runOf(member.client, run)).counts.leased, 2);
    await createRun(other.member.client, otherSetup);
    assert.is((await otherWaiting).length, 1);
  }, onDisk({ leaseWaitersPerProjectMax: 2 })));

test('resultOutputCharsMax: a completed output of exactly the limit is accepted; one character more makes its item invalid and writes nothing of it', () =>
  withService(async ({ client }) => {
    const { member, project } = await memberWithProject(client);
    const setup = await runSetup(member.client, project.id, 2, 1);
    const run = await createRun(member.client, setup);
    const worker = await registerWorker(member.client);
    const [first, second] = await lease(member.client, worker, { max: 2 });
    // As JSON, a string of n characters is n + 2.
    const reply = await complete(member.client, worker, [
      { task: first.id, lease: first.lease, score: 1, output: 'x'.repeat(99) },
      { task: second.id, lease: second.lease, score: 1, output: 'x'.repeat(98) },
    ]);
    assert.is(reply.status, 200, reply.text);
    assert.equal(reply.body.results[0], { task: first.id, outcome: 'invalid', errors: { output: ['Ensure this value has at most 100 characters as JSON (it has 101).'] } });
    assert.equal(reply.body.results[1], { task: second.id, outcome: 'accepted' });
    const rows = (await member.client.get(`/api/job-iterations/${setup.iterations[0].id}/results/`)).body.results;
    assert.equal(rows.map((row: any) => row.datapoint_order), [second.datapoint.order]);
    assert.equal((await tasksOf(member.client, run)).map((task: any) => task.state), first.datapoint.order === 0 ? ['leased', 'done'] : ['done', 'leased']);
  }, onDisk({ resultOutputCharsMax: 100 })));

test('a run naming a dataset of another agent or of a project the caller cannot see, or an iteration of another job: a 400 in DRF\'s shape, and nothing written', () =>
  withService(async ({ client }) => {
    const { member, project } = await memberWithProject(client);
    const setup = await runSetup(member.client, project.id, 2, 2);
    const otherAgent = await runSetup(member.client, project.id, 2, 1);
    const stranger = await memberWithProject(client);
    const hidden = await runSetup(stranger.member.client, stranger.project.id, 2, 1);
    const before = await written(member.client, setup);
    const path = `/api/jobs/${setup.job.id}/runs/`;
    const post = (body: Record<string, unknown>) => member.client.post(path, { dataset: setup.dataset.id, iterations: [setup.iterations[0].id], ...body });
    const answers = [
      await post({ dataset: otherAgent.dataset.id }),
      await post({ dataset: hidden.dataset.id }),
      await post({ iterations: [setup.iterations[0].id, otherAgent.iterations[0].id] }),
      await post({ iterations: [hidden.iterations[0].id] }),
      await post({ iterations: [setup.iterations[0].id, setup.iterations[0].id] }),
      await post({ dataset: 'not-a-uuid' }),
      await post({ budget: { max_tasks: 'many' } }),
    ];
    assert.equal(answers.map((answer) => answer.status), Array(answers.length).fill(400));
    assert.equal(answers[0]!.body, { dataset: ["Must be a dataset version of the job's agent."] });
    assert.equal(answers[1]!.body, { dataset: [`Invalid pk "${hidden.dataset.id}" - object does not exist.`] }, 'a dataset it cannot see does not exist for it');
    assert.equal(answers[2]!.body, { iterations: [`Iteration ${otherAgent.iterations[0].id} is of another job.`] });
    assert.equal(answers[3]!.body, { iterations: [`Invalid pk "${hidden.iterations[0].id}" - object does not exist.`] }, 'nor an iteration of another project');
    assert.equal(answers[4]!.body, { iterations: ['An iteration is named twice.'] });
    assert.equal(answers[5]!.body, { dataset: ['Must be a valid UUID.'] });
    assert.equal(Object.keys(answers[6]!.body), ['budget']);
    assert.equal(await written(member.client, setup), before);
    assert.is(await pinOf(stranger.member.client, hidden.iterations[0]), null, "the stranger's iteration is not pinned either");
    // A cancelled job takes no new run (409), and the refused run pins nothing either.
    const run = await createRun(member.client, { ...setup, iterations: [setup.iterations[0]] });
    assert.is((await member.client.post(`/api/runs/${run.id}/cancel/`, {})).status, 200);
    const cancelled = await post({ iterations: [setup.iterations[1].id] });
    assert.equal([cancelled.status, cancelled.body.code], [409, 'conflict']);
    assert.is(await pinOf(member.client, setup.iterations[1]), null);
  }, onDisk()));

test('a run naming an iteration another live run evaluates is a 400 that pins none of its iterations', () =>
  withService(async ({ client }) => {
    const { member, project } = await memberWithProject(client);
    const setup = await runSetup(member.client, project.id, 2, 2);
    const live = await createRun(member.client, { ...setup, iterations: [setup.iterations[0]] });
    const before = await written(member.client, setup);
    const busy = await member.client.post(`/api/jobs/${setup.job.id}/runs/`, { dataset: setup.dataset.id, iterations: [setup.iterations[1].id, setup.iterations[0].id] });
    assert.is(busy.status, 400);
    assert.equal(busy.body, { iterations: [`Iteration ${setup.iterations[0].id} is being evaluated by run ${live.id}, which has not ended.`] });
    assert.equal(await written(member.client, setup), before, 'the free iteration is not pinned');
    assert.is(await pinOf(member.client, setup.iterations[1]), null);
  }, onDisk()));

test('a datapoint outside the run\'s version names no task: the task list filtered by it is empty; malformed filters are a 400', () =>
  withService(async ({ client }) => {
    const { member, project } = await memberWithProject(client);
    const setup = await runSetup(member.client, project.id, 2, 1);
    const run = await createRun(member.client, setup);
    const newer = await member.client.post('/api/datasets/', { agent: setup.agent.id, datapoints: datapoints(2) });
    const path = `/api/runs/${run.id}/tasks/`;
    const outside = await member.client.get(path, { datapoint: newer.body.datapoints[0].id });
    assert.equal([outside.status, outside.body.count, outside.body.results], [200, 0, []]);
    const inside = await member.client.get(path, { datapoint: setup.dataset.datapoints[1].id });
    assert.equal(inside.body.results.map((task: any) => task.datapoint_order), [1]);
    const malformed = await member.client.get(path, { datapoint: 'nope', state: 'waiting' });
    assert.is(malformed.status, 400);
    assert.equal(malformed.body, { datapoint: ['Enter a valid UUID.'], state: ['Select a valid choice. waiting is not one of the available choices.'] });
  }, onDisk()));

test('a malformed lease token or task id refuses the whole completion: the good items beside it are not written either', () =>
  withService(async ({ client }) => {
    const { member, project } = await memberWithProject(client);
    const setup = await runSetup(member.client, project.id, 2, 1);
    const run = await createRun(member.client, setup);
    const worker = await registerWorker(member.client);
    const [first, second] = await lease(member.client, worker, { max: 2 });
    const good = { task: first.id, lease: first.lease, score: 1 };
    const badToken = await complete(member.client, worker, [good, { task: second.id, lease: `${second.lease.slice(0, 21)}!`, score: 1 }]);
    assert.is(badToken.status, 400);
    assert.equal(badToken.body, { results: [{}, { lease: ['Enter a valid value.'] }] });
    const badTask = await complete(member.client, worker, [good, { task: 'task-1', lease: second.lease, score: 1 }]);
    assert.is(badTask.status, 400);
    assert.equal(badTask.body, { results: [{}, { task: ['Must be a valid UUID.'] }] });
    const missing = await complete(member.client, worker, [good, { task: second.id, score: 1 }]);
    assert.equal([missing.status, missing.body], [400, { results: [{}, { lease: ['This field is required.'] }] }]);
    assert.equal((await tasksOf(member.client, run)).map((task: any) => task.state), ['leased', 'leased']);
    assert.is((await member.client.get(`/api/job-iterations/${setup.iterations[0].id}/results/`)).body.count, 0);
    await completeAll(member.client, worker, [first, second]);
    assert.is((await runOf(member.client, run)).status, 'completed');
  }, onDisk()));

/** The dimension names an iteration's results have (its summary's). */
async function dimensionNames(client: Client, iteration: { id: string }): Promise<string[]> {
  const summary = await client.get(`/api/job-iterations/${iteration.id}/results/summary/`);
  assert.is(summary.status, 200, summary.text);
  return summary.body.dimensions.map((dimension: { name: string }) => dimension.name);
}

test('resultDimensionsPerIterationMax holds for a run\'s completions: the item that would pass it is invalid, writes nothing, and the task stays leased', () =>
  withService(async ({ client }) => {
    const { member, project } = await memberWithProject(client);
    const setup = await runSetup(member.client, project.id, 4, 1);
    const run = await createRun(member.client, setup);
    const worker = await registerWorker(member.client);
    const tasks = await lease(member.client, worker, { max: 4 });
    const item = (task: any, names: string[]) => ({ task: task.id, lease: task.lease, score: 1, dimension_scores: Object.fromEntries(names.map((name) => [name, 0.5])) });
    const answer = await complete(member.client, worker, [item(tasks[0], ['a', 'b', 'c']), item(tasks[1], ['d', 'e'])]);
    assert.is(answer.status, 200, answer.text);
    assert.equal(answer.body.results.map((one: any) => one.outcome), ['accepted', 'invalid']);
    assert.equal(answer.body.results[1].errors, { dimension_scores: ["An iteration's results have at most 4 dimension names; this result would make 5."] });
    assert.equal(await dimensionNames(member.client, setup.iterations[0]), ['a', 'b', 'c']);
    assert.equal((await tasksOf(member.client, run, { state: 'leased' })).length, 3, 'the invalid item\'s task is still leased');
    // Two completions at once, each bringing a name the other does not: the one resolved second is
    // counted against the first's names in flight (or stored).
    const raced = await Promise.all([complete(member.client, worker, [item(tasks[1], ['x'])]), complete(member.client, worker, [item(tasks[2], ['y'])])]);
    assert.equal(raced.map((one) => one.body.results[0].outcome).sort(), ['accepted', 'invalid']);
    assert.is((await dimensionNames(member.client, setup.iterations[0])).length, 4);
    // Names the iteration has already are always welcome.
    const refused = raced[0]!.body.results[0].outcome === 'invalid' ? tasks[1] : tasks[2];
    const last = await complete(member.client, worker, [item(refused, ['a']), item(tasks[3], ['b', 'c'])]);
    assert.equal(last.body.results.map((one: any) => one.outcome), ['accepted', 'accepted']);
    assert.is((await runOf(member.client, run)).status, 'completed');
  }, onDisk({ resultDimensionsPerIterationMax: 4, resultDimensionsMax: 3 })));

test('resultsPerIterationMax: a run whose rows would pass it is a 400 when created, counting the rows of attempts it does not make; nothing is pinned', () =>
  withService(async ({ client }) => {
    const { member, project } = await memberWithProject(client);
    const setup = await runSetup(member.client, project.id, 3, 1);
    const [iteration] = setup.iterations;
    const over = await member.client.post(`/api/jobs/${setup.job.id}/runs/`, { dataset: setup.dataset.id, iterations: [iteration.id], attempts: 2 });
    assert.equal([over.status, over.body], [400, { non_field_errors: ['An iteration holds at most 5 results; this run would make 6.'] }]);
    assert.is(await pinOf(member.client, iteration), null, 'nothing pinned');
    // Posted rows of a third attempt count: 3 datapoints x 1 attempt + 3 rows of attempt 2 = 6.
    const rows = setup.dataset.datapoints.map((point: any) => ({ datapoint: point.id, attempt: 2, score: 0.5 }));
    assert.is((await member.client.post(`/api/job-iterations/${iteration.id}/results/`, { dataset: setup.dataset.id, results: rows })).status, 200);
    const withRows = await member.client.post(`/api/jobs/${setup.job.id}/runs/`, { dataset: setup.dataset.id, iterations: [iteration.id] });
    assert.equal([withRows.status, withRows.body], [400, { non_field_errors: ['An iteration holds at most 5 results; this run would make 6.'] }]);
    // Rows the run replaces do not: three attempts cover them.
    const covered = await member.client.post(`/api/jobs/${setup.job.id}/runs/`, { dataset: setup.dataset.id, iterations: [iteration.id], attempts: 3 });
    assert.equal([covered.status, covered.body], [400, { non_field_errors: ['An iteration holds at most 5 results; this run would make 9.'] }]);
  }, onDisk({ resultsPerIterationMax: 5 })));

test('a limit below a run\'s default lease_seconds or max_tries is a configuration error, and those defaults are the schema\'s', () => {
  assert.throws(() => loadConfig({ LIMIT_LEASE_SECONDS_MAX: String(runDefaults.leaseSeconds - 1) }), (error: unknown) => error instanceof ConfigError && /LIMIT_LEASE_SECONDS_MAX must be at least 60/.test(error.message));
  assert.throws(() => loadConfig({ LIMIT_TASK_TRIES_MAX: String(runDefaults.maxTries - 1) }), (error: unknown) => error instanceof ConfigError && /LIMIT_TASK_TRIES_MAX must be at least 3/.test(error.message));
  assert.is(loadConfig({ LIMIT_LEASE_SECONDS_MAX: '60', LIMIT_TASK_TRIES_MAX: '3' }).limits.leaseSecondsMax, 60);
  const schema = JSON.parse(readFileSync(new URL('../../schemas/runs/run.json', import.meta.url), 'utf8'));
  assert.equal([schema.properties.lease_seconds.default, schema.properties.max_tries.default], [runDefaults.leaseSeconds, runDefaults.maxTries]);
});

test('every limit is in docs/API.md\'s Limits table, by its variable', () => {
  const doc = readFileSync(new URL('../../docs/API.md', import.meta.url), 'utf8');
  const table = doc.slice(doc.indexOf('## Limits'), doc.indexOf('## Operating it'));
  const missing = Object.keys(defaultLimits).map((name) => limitEnvName(name as keyof typeof defaultLimits)).filter((variable) => !table.includes(`\`${variable}\``));
  assert.equal(missing, []);
});

test.run();
