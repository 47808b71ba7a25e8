// Runs at their edges, over HTTP: a completion's item with a bad status or a score out of bounds
// refused alone, costs that would overflow, task ids in upper case, two runs created at once over
// one iteration, a job that stays running while a run of it waits, and the events of a run's end in
// their order, with a rate that never goes negative when a retry queues ended tasks again.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { EventStreamReader } from '../helpers/event-stream.ts';
import { createApiKey, createProject, memberWithProject } from '../helpers/fixtures.ts';
import { createIteration } from '../helpers/job-fixtures.ts';
import { complete, completeAll, createRun, lease, registerWorker, runOf, runSetup } from '../helpers/run-fixtures.ts';
import { withService } from '../helpers/service.ts';

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

test('a completion item with a status that is not one of ok, error, rate_limited is invalid on its own; the items beside it are decided', () =>
  withService(async ({ client }) => {
    const { member, project } = await memberWithProject(client);
    const setup = await runSetup(member.client, project.id, 3, 1);
    const run = await createRun(member.client, setup);
    const worker = await registerWorker(member.client);
    const [first, second, third] = await lease(member.client, worker, { max: 3 });
    const answer = await complete(member.client, worker, [
      { task: first.id, lease: first.lease, score: 1 },
      { task: second.id, lease: second.lease, status: 'weird' },
      { task: third.id, lease: third.lease, status: 5 },
    ]);
    assert.is(answer.status, 200, answer.text);
    assert.equal(answer.body.results.map((item: any) => item.outcome), ['accepted', 'invalid', 'invalid']);
    assert.equal(answer.body.results[1].errors, { status: ['"weird" is not a valid choice.'] });
    assert.ok(answer.body.results[2].errors.status, JSON.stringify(answer.body.results[2]));
    assert.equal((await runOf(member.client, run)).counts.done, 1);
  }, { lmdb: true }));

test('a completion item whose score is beyond ±1e100 is invalid on its own, saying so, and writes nothing; the task stays leased', () =>
  withService(async ({ client }) => {
    const { member, project } = await memberWithProject(client);
    const setup = await runSetup(member.client, project.id, 2, 1);
    const run = await createRun(member.client, setup);
    const worker = await registerWorker(member.client);
    const [first, second] = await lease(member.client, worker, { max: 2 });
    const answer = await complete(member.client, worker, [
      { task: first.id, lease: first.lease, score: 1e100 },
      { task: second.id, lease: second.lease, score: 1, dimension_scores: { a: -1.7e308 } },
    ]);
    assert.equal(answer.body.results, [
      { task: first.id, outcome: 'accepted' },
      { task: second.id, outcome: 'invalid', errors: { dimension_scores: { a: ['Ensure this value is greater than or equal to -1e+100.'] } } },
    ]);
    assert.equal([(await runOf(member.client, run)).counts.done, (await runOf(member.client, run)).counts.leased], [1, 1]);
  }));

test('costs whose sum would overflow: what the run spent stops at the largest finite number, and its budget is spent', () =>
  withService(async ({ client }) => {
    const { member, project } = await memberWithProject(client);
    const setup = await runSetup(member.client, project.id, 3, 1);
    const run = await createRun(member.client, setup, { budget: { max_cost: 1e308 } });
    const worker = await registerWorker(member.client);
    const tasks = await lease(member.client, worker, { max: 3 });
    const answer = await complete(member.client, worker, tasks.slice(0, 2).map((task: any) => ({ task: task.id, lease: task.lease, score: 1, cost: 1.7e308 })));
    assert.equal(answer.body.results.map((item: any) => item.outcome), ['accepted', 'cancelled'], 'the first item spent the budget');
    const state = await runOf(member.client, run);
    assert.equal([state.status, state.reason, state.spent.cost], ['completed', 'budget', 1.7e308]);
  }, { lmdb: true }));

test('a run without a budget sums costs past the largest double to the largest double, not to null', () =>
  withService(async ({ client }) => {
    const { member, project } = await memberWithProject(client);
    const setup = await runSetup(member.client, project.id, 3, 1);
    const run = await createRun(member.client, setup);
    const worker = await registerWorker(member.client);
    const tasks = await lease(member.client, worker, { max: 3 });
    await completeAll(member.client, worker, tasks.slice(0, 2), () => ({ score: 1, cost: 1.7e308 }));
    assert.is((await runOf(member.client, run)).spent.cost, Number.MAX_VALUE);
  }, { lmdb: true }));

test('task ids are read in any case, as every other id: a completion and a heartbeat naming one in upper case', () =>
  withService(async ({ client }) => {
    const { member, project } = await memberWithProject(client);
    const setup = await runSetup(member.client, project.id, 2, 1);
    const run = await createRun(member.client, setup);
    const worker = await registerWorker(member.client);
    const [first, second] = await lease(member.client, worker, { max: 2 });
    const beat = await member.client.post(`/api/workers/${worker.id}/heartbeat/`, { tasks: [first.id.toUpperCase()] });
    assert.equal(beat.body, { stop: [], leases: 2 });
    const answer = await complete(member.client, worker, [first, second].map((task) => ({ task: task.id.toUpperCase(), lease: task.lease, score: 1 })));
    assert.equal(answer.body.results, [first, second].map((task) => ({ task: task.id.toUpperCase(), outcome: 'accepted' })));
    assert.is((await runOf(member.client, run)).status, 'completed');
  }, { lmdb: true }));

test('two runs created at once naming one iteration: one is made, the other refused before it pins anything', () =>
  withService(async ({ client }) => {
    const { member, project } = await memberWithProject(client);
    const setup = await runSetup(member.client, project.id, 2, 3);
    const [shared, onlyFirst, onlySecond] = setup.iterations;
    const post = (iterations: any[]) => member.client.post(`/api/jobs/${setup.job.id}/runs/`, { dataset: setup.dataset.id, iterations: iterations.map((it) => it.id) });
    const [first, second] = await Promise.all([post([shared, onlyFirst]), post([shared, onlySecond])]);
    assert.equal([first.status, second.status].sort(), [201, 400], `${first.text} ${second.text}`);
    const refused = first.status === 400 ? first : second;
    assert.match(refused.body.iterations[0], new RegExp(`Iteration ${shared.id} is being (placed in|evaluated by) run`));
    const lone = first.status === 400 ? onlyFirst : onlySecond;
    const summary = await member.client.get(`/api/job-iterations/${lone.id}/results/summary/`);
    assert.is(summary.body.dataset, null, 'the refused run pinned nothing');
    assert.is((await member.client.get(`/api/jobs/${setup.job.id}/runs/`)).body.count, 1);
  }, { lmdb: true }));

test('a running job stays running while a run of it waits for its first lease, after its other run ends', () =>
  withService(async ({ client }) => {
    const { member, project } = await memberWithProject(client);
    const setup = await runSetup(member.client, project.id, 1, 2);
    const [a, b] = setup.iterations;
    const first = await createRun(member.client, { ...setup, iterations: [a] });
    const worker = await registerWorker(member.client);
    const tasks = await lease(member.client, worker, { max: 1, run: first.id });
    const jobStatus = async () => (await member.client.get(`/api/jobs/${setup.job.id}/`)).body.status;
    assert.is(await jobStatus(), 'running');
    const second = await createRun(member.client, { ...setup, iterations: [b] });
    assert.is(await jobStatus(), 'running', 'a queued run does not send it back to pending');
    await completeAll(member.client, worker, tasks);
    assert.equal([(await runOf(member.client, first)).status, (await runOf(member.client, second)).status, await jobStatus()], ['completed', 'queued', 'running']);
    await completeAll(member.client, worker, await lease(member.client, worker, { max: 1 }));
    assert.is(await jobStatus(), 'completed');
  }, { lmdb: true }));

test('a run\'s last results.written and run.progress come before its run.finished; a retry that queues ended tasks keeps the rate at or above 0', () =>
  withService(async (running) => {
    const { member, project } = await memberWithProject(running.client);
    const setup = await runSetup(member.client, project.id, 6, 1);
    const stream = await EventStreamReader.open(`${running.url}/api/events/?types=run.progress,run.finished,results.written&job=${setup.job.id}`, { authorization: `Bearer ${member.access}` });
    try {
      const run = await createRun(member.client, setup, { max_tries: 1 });
      const worker = await registerWorker(member.client);
      const tasks = await lease(member.client, worker, { max: 6 });
      // Three die (one try each) while three are still leased; a pause between lets a rate be measured.
      await completeAll(member.client, worker, tasks.slice(0, 3), () => ({ status: 'error', error: 'boom' }));
      await pause(400);
      const retried = await member.client.post(`/api/runs/${run.id}/retry/`, {});
      assert.is(retried.status, 200, retried.text);
      await pause(400);
      await completeAll(member.client, worker, tasks.slice(3));
      await completeAll(member.client, worker, await lease(member.client, worker, { max: 3 }));
      await stream.waitFor(() => stream.ofType('run.finished').length === 1, 'run.finished', 10_000);
      await pause(400);
      const names = stream.events.map((event) => event.event);
      const finishedAt = names.indexOf('run.finished');
      assert.is(finishedAt, names.length - 1, `nothing of the run after its end: ${names.join(', ')}`);
      assert.ok(names.lastIndexOf('results.written') < finishedAt && names.lastIndexOf('run.progress') < finishedAt);
      const progress = stream.ofType('run.progress').map((event) => event.data);
      assert.equal(progress.at(-1)!.finished, 6);
      assert.equal([progress.at(-1)!.status, progress.at(-1)!.reason], ['completed', 'all_done']);
      for (const data of progress) assert.ok(data.rate === null || data.rate >= 0, `rate ${data.rate} at ${data.finished} ended`);
      assert.ok(progress.some((data, i) => i > 0 && data.finished < progress[i - 1]!.finished), 'the retry queued ended tasks again');
    } finally {
      stream.close();
    }
  }));

test('a job its client cancels cancels its live runs with it: their tasks end cancelled, late answers are cancelled, a heartbeat says stop', () =>
  withService(async ({ client }) => {
    const { member, project } = await memberWithProject(client);
    const setup = await runSetup(member.client, project.id, 3, 1);
    const run = await createRun(member.client, setup);
    const worker = await registerWorker(member.client);
    const [task] = await lease(member.client, worker, { max: 1 });
    const patched = await member.client.patch(`/api/jobs/${setup.job.id}/`, { status: 'cancelled' });
    assert.is(patched.status, 200, patched.text);
    const state = await runOf(member.client, run);
    assert.equal([state.status, state.reason, state.counts.cancelled, state.counts.queued, state.counts.leased], ['cancelled', 'cancelled', 3, 0, 0]);
    const beat = await member.client.post(`/api/workers/${worker.id}/heartbeat/`, { tasks: [task.id] });
    assert.equal(beat.body.stop, [task.id]);
    assert.equal((await complete(member.client, worker, [{ task: task.id, lease: task.lease, score: 1 }])).body.results[0].outcome, 'cancelled');
    assert.is((await member.client.get(`/api/jobs/${setup.job.id}/`)).body.status, 'cancelled');
  }, { lmdb: true }));

test('a budget must allow something: max_cost 0 is refused; a run ended by its budget takes no retry unless the retry brings a larger budget, its own from then on', () =>
  withService(async ({ client }) => {
    const { member, project } = await memberWithProject(client);
    const setup = await runSetup(member.client, project.id, 3, 1);
    const free = await member.client.post(`/api/jobs/${setup.job.id}/runs/`, { dataset: setup.dataset.id, iterations: setup.iterations.map((it: any) => it.id), budget: { max_cost: 0 } });
    assert.is(free.status, 400, free.text);
    assert.equal(free.body, { budget: { max_cost: ['Ensure this value is greater than 0.'] } });
    assert.is((await member.client.get(`/api/jobs/${setup.job.id}/runs/`)).body.count, 0, 'nothing written');

    const run = await createRun(member.client, setup, { budget: { max_tasks: 1 }, max_tries: 1 });
    const worker = await registerWorker(member.client);
    const [first] = await lease(member.client, worker, { max: 1, run: run.id });
    await complete(member.client, worker, [{ task: first.id, lease: first.lease, status: 'error', error: 'boom' }]);
    assert.equal([(await runOf(member.client, run)).reason, (await runOf(member.client, run)).counts.dead], ['budget', 1]);
    const refused = await member.client.post(`/api/runs/${run.id}/retry/`, {});
    assert.is(refused.status, 409, refused.text);
    assert.match(refused.body.detail, /budget is spent \(1 tasks executed of max_tasks 1\): a retry would run nothing/);
    const bad = await member.client.post(`/api/runs/${run.id}/retry/`, { budget: { max_tasks: 0 } });
    assert.equal([bad.status, bad.body], [400, { budget: { max_tasks: ['Ensure this value is greater than or equal to 1.'] } }]);
    assert.equal([(await runOf(member.client, run)).status, (await runOf(member.client, run)).budget], ['completed', { max_cost: null, max_tasks: 1 }], 'neither changed it');

    const retried = await member.client.post(`/api/runs/${run.id}/retry/`, { budget: { max_tasks: 2 } });
    assert.is(retried.status, 200, retried.text);
    assert.equal([retried.body.status, retried.body.budget], ['queued', { max_cost: null, max_tasks: 2 }]);
    const [again] = await lease(member.client, worker, { max: 1, run: run.id });
    assert.equal((await complete(member.client, worker, [{ task: again.id, lease: again.lease, score: 1 }])).body.results[0].outcome, 'accepted');
    const state = await runOf(member.client, run);
    // Its other tasks were skipped when the budget ended it (a retry queues the failed only): every
    // task has ended now, not all of them run, so the budget ended it again.
    assert.equal([state.status, state.reason, state.counts.leased, state.counts.skipped, state.spent.tasks], ['completed', 'budget', 0, 2, 2]);
  }, { lmdb: true }));

test('a run its budget ended, retried with a budget it does not reach, ends by its budget: the tasks the budget skipped never ran', () =>
  withService(async ({ client }) => {
    const { member, project } = await memberWithProject(client);
    const run = await createRun(member.client, await runSetup(member.client, project.id, 4, 1), { budget: { max_tasks: 2 }, max_tries: 1 });
    const worker = await registerWorker(member.client);
    const [first, second] = await lease(member.client, worker, { max: 2, run: run.id });
    await complete(member.client, worker, [{ task: first.id, lease: first.lease, status: 'error', error: 'boom' }, { task: second.id, lease: second.lease, score: 1 }]);
    assert.equal([(await runOf(member.client, run)).reason, (await runOf(member.client, run)).counts.skipped], ['budget', 2]);
    assert.is((await member.client.post(`/api/runs/${run.id}/retry/`, { budget: { max_tasks: 10 } })).status, 200);
    const [again] = await lease(member.client, worker, { max: 1, run: run.id });
    await complete(member.client, worker, [{ task: again.id, lease: again.lease, score: 1 }]);
    const state = await runOf(member.client, run);
    assert.equal([state.status, state.reason, state.counts.done, state.counts.skipped, state.spent.tasks], ['completed', 'budget', 2, 2, 3]);
  }));

test('an item after the one that spent the budget is cancelled, whatever else ends the run in the same completion', () =>
  withService(async ({ client }) => {
    const { member, project } = await memberWithProject(client);
    const setup = await runSetup(member.client, project.id, 2, 1);
    const run = await createRun(member.client, setup, { budget: { max_tasks: 2 } });
    const worker = await registerWorker(member.client);
    const [a, b] = await lease(member.client, worker, { max: 2 });
    await completeAll(member.client, worker, [a]);
    const answer = await complete(member.client, worker, [{ task: b.id, lease: b.lease, score: 1 }, { task: a.id, lease: 'A'.repeat(22), score: 1 }]);
    assert.equal(answer.body.results.map((item: any) => item.outcome), ['accepted', 'cancelled']);
    assert.equal([(await runOf(member.client, run)).status, (await runOf(member.client, run)).reason], ['completed', 'all_done']);
  }, { lmdb: true }));

test('a job moved to another project and cancelled in one request: its cancelled runs move with it', () =>
  withService(async ({ client }) => {
    const { member, project } = await memberWithProject(client);
    const second = await createProject(member.client);
    const setup = await runSetup(member.client, project.id, 3, 1);
    const run = await createRun(member.client, setup);
    assert.is((await member.client.patch(`/api/agents/${setup.agent.id}/`, { project: second.id })).status, 200);
    const moved = await member.client.patch(`/api/jobs/${setup.job.id}/`, { project: second.id, status: 'cancelled' });
    assert.is(moved.status, 200, moved.text);
    assert.is((await runOf(member.client, run)).status, 'cancelled');
    assert.is((await member.client.get(`/api/jobs/${setup.job.id}/runs/`)).body.count, 1);
    const oldKey = client.as({ apiKey: (await createApiKey(member.client, project.id)).key });
    assert.is((await oldKey.get(`/api/runs/${run.id}/`)).status, 404);
  }, { lmdb: true }));

test('a batch of results posted while a run of its iteration is created: one of them is refused, and the iteration stays within its bound', () =>
  withService(async ({ client }) => {
    const { member, project } = await memberWithProject(client);
    const setup = await runSetup(member.client, project.id, 3, 0);
    const worker = await registerWorker(member.client);
    const outcomes = new Set<string>();
    for (let i = 0; i < 12; i++) {
      const iteration = await createIteration(member.client, setup.job.id, { order: i, agent_code: `c${i}` });
      const rows = setup.dataset.datapoints.map((point: any) => ({ datapoint: point.id, attempt: 1, score: 0.5 }));
      const [batch, run] = await Promise.all([
        member.client.post(`/api/job-iterations/${iteration.id}/results/`, { dataset: setup.dataset.id, results: rows }),
        member.client.post(`/api/jobs/${setup.job.id}/runs/`, { dataset: setup.dataset.id, iterations: [iteration.id] }),
      ]);
      outcomes.add(`${batch.status}/${run.status}`);
      assert.ok(!(batch.status === 200 && run.status === 201), `both written: ${batch.text} ${run.text}`);
      if (run.status === 201) await completeAll(member.client, worker, await lease(member.client, worker, { max: 10, run: run.body.id }));
      const held = (await member.client.get(`/api/job-iterations/${iteration.id}/results/`)).body.count;
      assert.ok(held <= 4, `${held} results, bound 4`);
      const pinned = (await member.client.get(`/api/job-iterations/${iteration.id}/results/summary/`)).body.dataset;
      assert.is(pinned === null, held === 0, 'pinned exactly when it holds results');
    }
    assert.ok(outcomes.size > 0);
  }, { lmdb: true, limits: { resultsPerIterationMax: 4 } }));

test('a run created while its job is cancelled: refused, and its iteration left unpinned', () =>
  withService(async ({ client }) => {
    const { member, project } = await memberWithProject(client);
    for (let i = 0; i < 8; i++) {
      const setup = await runSetup(member.client, project.id, 2, 1);
      const [iteration] = setup.iterations;
      const [created] = await Promise.all([
        member.client.post(`/api/jobs/${setup.job.id}/runs/`, { dataset: setup.dataset.id, iterations: [iteration.id] }),
        member.client.patch(`/api/jobs/${setup.job.id}/`, { status: 'cancelled' }),
      ]);
      const pinned = (await member.client.get(`/api/job-iterations/${iteration.id}/results/summary/`)).body.dataset?.id ?? null;
      if (created.status === 201) assert.is((await runOf(member.client, created.body)).status, 'cancelled', 'made, then cancelled with its job');
      else assert.equal([created.status, pinned], [409, null], `${created.text} ${i}`);
    }
  }, { lmdb: true }));

test('a job whose runs ended one cancelled, one completed, is completed and takes a new run; a job whose every run was cancelled is cancelled', () =>
  withService(async ({ client }) => {
    const { member, project } = await memberWithProject(client);
    const setup = await runSetup(member.client, project.id, 2, 2);
    const [one, two] = setup.iterations.map((iteration: { id: string }) => iteration.id);
    const cancelled = await createRun(member.client, setup, { iterations: [one] });
    const finished = await createRun(member.client, setup, { iterations: [two] });
    assert.is((await member.client.post(`/api/runs/${cancelled.id}/cancel/`, {})).status, 200);
    const worker = await registerWorker(member.client);
    const tasks = await lease(member.client, worker, { max: 2, run: finished.id });
    await complete(member.client, worker, tasks.map((task: any) => ({ task: task.id, lease: task.lease, score: 1 })));
    assert.is((await member.client.get(`/api/jobs/${setup.job.id}/`)).body.status, 'completed');
    const third = await createRun(member.client, setup, { iterations: [one] });
    assert.is((await member.client.get(`/api/jobs/${setup.job.id}/`)).body.status, 'pending', 'reopened');
    assert.is((await member.client.post(`/api/runs/${third.id}/cancel/`, {})).status, 200);
    assert.is((await member.client.get(`/api/jobs/${setup.job.id}/`)).body.status, 'completed', 'still one run completed');

    const alone = await runSetup(member.client, project.id, 1, 1);
    const only = await createRun(member.client, alone);
    await member.client.post(`/api/runs/${only.id}/cancel/`, {});
    assert.is((await member.client.get(`/api/jobs/${alone.job.id}/`)).body.status, 'cancelled');
  }));

test.run();
