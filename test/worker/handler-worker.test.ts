// The in-process worker (runWorker, exported by the package): a test file creates an in-memory
// service, a run and a worker with a JavaScript handler, and reads the comparison, all in one
// process; the same leasing, heartbeats, stop and refusals as the worker command.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { createService, runWorker } from '../../src/index.ts';
import { Client } from '../helpers/client.ts';
import { createApiKey, memberWithProject } from '../helpers/fixtures.ts';
import { createRun, postsAnswered, runOf, runSetup, tasksOf } from '../helpers/run-fixtures.ts';
import { start, type Running } from '../helpers/service.ts';
import { until } from '../helpers/wait.ts';

let running: Running;

test.before.each(async () => {
  // Tasks tried again (an error, rate limited) are ready again at once.
  running = await start({ limits: { runRetryDelayMs: 1, runRetryDelayMsMax: 2 } });
});

test.after.each(async () => {
  await running.stop();
});

/** A user's project with an API key, and a job of two iterations on `size` datapoints. */
async function project(size = 6, iterations = 2) {
  const { member, project } = await memberWithProject(running.client);
  const key = await createApiKey(member.client, project.id);
  const setup = await runSetup(member.client, project.id, size, iterations);
  return { client: member.client, apiKey: key.key as string, setup };
}

test('an in-memory service, a run and a handler worker in one process: the run completes and the comparison reads the handler\'s scores', async () => {
  const service = await createService({ storage: 'memory', logLevel: 'silent', passwordHashCost: 1024 });
  const { port } = await service.listen(0, '127.0.0.1');
  const client = new Client(`http://127.0.0.1:${port}`);
  try {
    const { member, project } = await memberWithProject(client);
    const key = await createApiKey(member.client, project.id);
    const setup = await runSetup(member.client, project.id, 12, 2);
    const run = await createRun(member.client, setup);
    const [first, second] = setup.iterations;
    const seen: any[] = [];
    const worker = runWorker({
      service,
      apiKey: key.key,
      run: run.id,
      concurrency: 3,
      handler: (task) => {
        seen.push(task);
        const better = task.iteration_id === second.id;
        return { output: { answer: `answer ${task.order}` }, score: better ? 0.9 : 0.4 + task.order * 0.01, passed: better };
      },
    });
    const summary = await worker.done;
    assert.is(summary.end, 'run ended');
    assert.equal([summary.counts.done, summary.counts.errors, summary.counts.running], [24, 0, 0]);
    assert.is((await runOf(member.client, run)).status, 'completed');
    const task = seen.find((one) => one.order === 3 && one.iteration_id === first.id);
    assert.equal(Object.keys(task).sort(), ['agent_code', 'attempt', 'datapoint_id', 'input', 'iteration_id', 'iteration_name', 'order', 'persona', 'run_id', 'tags', 'task_id', 'try']);
    assert.equal([task.input, task.agent_code, task.run_id, task.attempt, task.try], [{ question: 'question 3' }, 'code 0', run.id, 0, 1]);
    assert.not.ok('expected_output' in task, 'a worker never sees the expected output');
    const comparison = await member.client.get(`/api/job-iterations/${first.id}/compare/${second.id}/`);
    assert.is(comparison.status, 200, comparison.text);
    assert.is(comparison.body.results.n_paired, 12);
    assert.ok(Math.abs(comparison.body.results.score.mean_to - 0.9) < 1e-9, JSON.stringify(comparison.body.results.score));
    assert.is(comparison.body.results.verdict, 'improved');
    const rows = await member.client.listAll(`/api/job-iterations/${first.id}/results/`);
    assert.ok(rows.every((row: any) => /^[0-9a-f]{32}$/.test(row.trace_id) && row.latency_ms >= 0), 'each result names its task\'s trace and its latency');
  } finally {
    await service.close();
  }
});

test('one task at a time: each result goes with the lease of the next task, one call a task (the service\'s request counts say so)', async () => {
  const { client, apiKey, setup } = await project(10, 2);
  const run = await createRun(client, setup);
  // Whatever the worker leases once it has results to send (the next task, and one ahead once tasks show they are short) rides with them.
  const worker = runWorker({ url: running.url, apiKey, run: run.id, concurrency: 1, handler: async () => {
    await new Promise((resolve) => setTimeout(resolve, 5));
    return { output: 'ok', score: 1 };
  } });
  const summary = await worker.done;
  assert.is(summary.counts.done, 20);
  const [leases, completions] = [await postsAnswered(running.client, '/api/workers/:id/lease'), await postsAnswered(running.client, '/api/workers/:id/complete')];
  assert.ok(completions >= 20 && completions <= 22, `${completions} completions`);
  assert.ok(leases <= 4, `${leases} leases of their own for 20 tasks: the rest rode with the results`);
  assert.is((await runOf(client, run)).counts.done, 20);
});

test('a handler that throws gives an error result with its message; tried again up to max_tries, then dead', async () => {
  const { client, apiKey, setup } = await project(2, 1);
  const run = await createRun(client, setup, { max_tries: 2 });
  const worker = runWorker({ url: running.url, apiKey, run: run.id, handler: () => { throw new Error('the model is down'); } });
  const summary = await worker.done;
  assert.is(summary.counts.errors, 4, 'two tasks, two tries each');
  const state = await runOf(client, run);
  assert.equal([state.status, state.counts.dead], ['failed', 2]);
  const rows = await client.listAll(`/api/job-iterations/${setup.iterations[0].id}/results/`);
  assert.ok(rows.every((row: any) => row.status === 'error' && row.error === 'the model is down'), JSON.stringify(rows));
});

test('rate_limited: the task is leased again without using a try', async () => {
  const { client, apiKey, setup } = await project(1, 1);
  const run = await createRun(client, setup, { max_tries: 1 });
  let calls = 0;
  const worker = runWorker({ url: running.url, apiKey, run: run.id, handler: () => (++calls === 1 ? { status: 'rate_limited' as const } : { output: 'ok', score: 1 }) });
  const summary = await worker.done;
  assert.equal([summary.counts.rateLimited, summary.counts.done, calls], [1, 1, 2]);
  assert.is((await runOf(client, run)).counts.done, 1);
});

test('stop(): no more leases; a running handler gets the grace period, then its signal aborts and its lease goes back with the goodbye', async () => {
  const { client, apiKey, setup } = await project(4, 1);
  const run = await createRun(client, setup);
  const aborted: string[] = [];
  const worker = runWorker({
    url: running.url,
    apiKey,
    run: run.id,
    concurrency: 2,
    handler: (task, { signal }) =>
      new Promise((resolve) => {
        signal.addEventListener('abort', () => {
          aborted.push(task.task_id);
          resolve({ output: 'too late' });
        });
      }),
  });
  await until(() => worker.counts.running === 2, 'two tasks running');
  const summary = await worker.stop(50);
  assert.is(summary.end, 'stopped');
  assert.equal([aborted.length, summary.counts.stopped, summary.counts.done], [2, 2, 0]);
  const state = await runOf(client, run);
  assert.equal([state.counts.leased, state.counts.queued], [0, 4], 'the goodbye gave the leases back');
  assert.equal((await client.get('/api/workers/')).body.count, 0, 'the worker is gone');
});

test('a heartbeat keeps leases alive past lease_seconds while a handler runs; a cancelled run stops it', async () => {
  const { client, apiKey, setup } = await project(1, 1);
  const run = await createRun(client, setup, { lease_seconds: 1 });
  let release: () => void = () => {};
  const worker = runWorker({ url: running.url, apiKey, run: run.id, handler: () => new Promise((resolve) => (release = () => resolve({ output: 'slow', score: 1 }))) });
  await until(() => worker.counts.running === 1, 'the task running');
  await new Promise((resolve) => setTimeout(resolve, 2500));
  release();
  const summary = await worker.done;
  assert.equal([summary.counts.done, summary.counts.stale], [1, 0], 'its lease was still the worker\'s after 2.5 s of a 1 s lease');

  const cancelled = await createRun(client, setup, { lease_seconds: 1 });
  let signalled = false;
  const second = runWorker({
    url: running.url,
    apiKey,
    run: cancelled.id,
    handler: (_task, { signal }) => new Promise((resolve) => signal.addEventListener('abort', () => ((signalled = true), resolve(undefined)))),
  });
  await until(() => second.counts.running === 1, 'the task running');
  assert.is((await client.post(`/api/runs/${cancelled.id}/cancel/`, {})).status, 200);
  const ended = await second.done;
  assert.equal([ended.end, signalled, ended.counts.stopped], ['run ended', true, 1]);
});

test('a worker without a run works for every live run of the project until stopped', async () => {
  const { client, apiKey, setup } = await project(3, 1);
  const other = await runSetup(client, setup.agent.project, 3, 1);
  const runs = [await createRun(client, setup), await createRun(client, other)];
  const worker = runWorker({ url: running.url, apiKey, handler: (task) => ({ output: task.run_id, score: 1 }) });
  await until(async () => (await Promise.all(runs.map((run) => runOf(client, run)))).every((state) => state.status === 'completed'), 'both runs completed', 5000);
  const summary = await worker.stop();
  assert.equal([summary.end, summary.counts.done], ['stopped', 6]);
  for (const run of runs) assert.ok((await tasksOf(client, run)).every((task: any) => task.state === 'done'));
});

test('settings out of bounds are refused before anything starts', () => {
  assert.throws(() => runWorker({ apiKey: 'k', handler: () => null }), /url or a service/);
  assert.throws(() => runWorker({ url: 'http://127.0.0.1:1', apiKey: 'k', concurrency: 0, handler: () => null }), /concurrency/);
  assert.throws(() => runWorker({ url: 'http://127.0.0.1:1', apiKey: 'k', batch: 1001, handler: () => null }), /batch/);
});

test.run();
