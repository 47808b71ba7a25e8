// The Python worker (examples/python/worker.py, standard library only) against a started
// service, with the example function: it must complete the run with the function's results;
// a function that raises, a refused key, and the SIGTERM path.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { root } from '../../scripts/service-process.ts';
import { createApiKey, memberWithProject } from '../helpers/fixtures.ts';
import { createRun, postsAnswered, runOf, runSetup, tasksOf } from '../helpers/run-fixtures.ts';
import { start, type Running } from '../helpers/service.ts';
import { until } from '../helpers/wait.ts';

let running: Running;
/** No __pycache__ left beside the example's files. */
const pythonEnv = { ...process.env, PYTHONDONTWRITEBYTECODE: '1' };

test.before.each(async () => {
  running = await start({ limits: { runRetryDelayMs: 1, runRetryDelayMsMax: 2 } });
});

test.after.each(async () => {
  await running.stop();
});

/** Runs the Python worker to its end; resolves with its exit code and what it wrote on stderr. */
function python(args: string[], timeoutMs = 60_000): Promise<{ code: number | null; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn('python3', [join(root, 'examples/python/worker.py'), ...args], { stdio: ['ignore', 'ignore', 'pipe'], env: pythonEnv });
    let stderr = '';
    child.stderr.on('data', (chunk) => (stderr += chunk));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`worker.py did not end within ${timeoutMs} ms:\n${stderr}`));
    }, timeoutMs);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stderr });
    });
  });
}

/** A user's run of `size` datapoints on `iterations` iterations, worked to its end by worker.py with the example function at `concurrency`. */
async function exampleRun(size: number, iterations: number, concurrency: number) {
  const { member, project } = await memberWithProject(running.client);
  const key = await createApiKey(member.client, project.id);
  const setup = await runSetup(member.client, project.id, size, iterations);
  const run = await createRun(member.client, setup);
  const { code, stderr } = await python(['--url', running.url, '--api-key', key.key, '--run', run.id, '--concurrency', String(concurrency), join(root, 'examples/python/example_agent.py:run')]);
  assert.is(code, 0, stderr);
  return { member, setup, run, stderr };
}

test('worker.py with the example function completes a run: every task done with what the function answered', async () => {
  const { member, setup, run, stderr } = await exampleRun(5, 2, 3);
  assert.match(stderr, /the run has ended: said goodbye/);
  const state = await runOf(member.client, run);
  assert.equal([state.status, state.counts.done, state.counts.total], ['completed', 10, 10]);
  assert.ok((await tasksOf(member.client, run)).every((task: any) => task.state === 'done' && task.tries === 0));
  for (const iteration of setup.iterations) {
    const rows = await member.client.listAll(`/api/job-iterations/${iteration.id}/results/`);
    assert.is(rows.length, 5);
    for (const row of rows) {
      const detail = (await member.client.get(`/api/job-iterations/${iteration.id}/results/${row.id}/`)).body;
      assert.equal(detail.output, { answer: `${row.datapoint_order} question`, iteration: iteration.iteration_name });
      assert.equal([detail.score, detail.passed, detail.dimension_scores, detail.status], [0.2, true, { words: 2 }, 'ok']);
      assert.match(detail.trace_id, /^[0-9a-f]{32}$/);
      assert.ok(detail.latency_ms >= 0);
    }
  }
  assert.equal((await member.client.get('/api/workers/')).body.count, 0, 'it said goodbye');
});

test('worker.py one task at a time: each result goes with the lease of the next task, one call a task', async () => {
  const { member, run } = await exampleRun(6, 2, 1);
  assert.is((await runOf(member.client, run)).counts.done, 12);
  const [leases, completions] = [await postsAnswered(running.client, '/api/workers/:id/lease'), await postsAnswered(running.client, '/api/workers/:id/complete')];
  assert.ok(completions >= 12 && completions <= 13, `${completions} completions`);
  assert.ok(leases <= 3, `${leases} leases of their own for 12 tasks: the rest rode with the results`);
});

test('worker.py: a function that raises gives error results with its traceback\'s end; a key the service refuses ends it with 1', async () => {
  const { member, project } = await memberWithProject(running.client);
  const key = await createApiKey(member.client, project.id);
  const setup = await runSetup(member.client, project.id, 1, 1);
  const run = await createRun(member.client, setup, { max_tries: 1 });
  const failing = await python(['--url', running.url, '--api-key', key.key, '--run', run.id, 'json:loads']);
  assert.is(failing.code, 0, failing.stderr);
  const [row] = await member.client.listAll(`/api/job-iterations/${setup.iterations[0].id}/results/`);
  const detail = (await member.client.get(`/api/job-iterations/${setup.iterations[0].id}/results/${row.id}/`)).body;
  assert.is(detail.status, 'error');
  assert.match(detail.error, /TypeError: the JSON object must be str, bytes or bytearray, not dict$/);
  assert.match(failing.stderr, /\(datapoint 0, try 1\): TypeError: the JSON object must be str, bytes or bytearray, not dict\n/, 'the log says the error\'s last line');
  const refused = await python(['--url', running.url, '--api-key', 'not-a-key', 'json:loads']);
  assert.is(refused.code, 1);
  assert.match(refused.stderr, /registering the worker: the service answered 401/);
});

test('worker.py: a score that is not a number fails its own task only (an error result saying why); on a run the service scores, the function\'s scores are not sent', async () => {
  const { member, project } = await memberWithProject(running.client);
  const key = await createApiKey(member.client, project.id);
  const dir = mkdtempSync(join(tmpdir(), 'overmind-python-'));
  try {
    writeFileSync(join(dir, 'scores.py'), 'def run(task):\n    return {"output": "ok", "score": "high" if task["order"] == 0 else 0.5}\n');
    const setup = await runSetup(member.client, project.id, 4, 1);
    const run = await createRun(member.client, setup, { max_tries: 1 });
    const own = await python(['--url', running.url, '--api-key', key.key, '--run', run.id, '--concurrency', '1', `${join(dir, 'scores.py')}:run`]);
    assert.is(own.code, 0, own.stderr);
    const rows = await member.client.listAll(`/api/job-iterations/${setup.iterations[0].id}/results/`);
    const byOrder = rows.sort((a: any, b: any) => a.datapoint_order - b.datapoint_order);
    assert.equal(byOrder.map((row: any) => [row.status, row.score]), [['error', null], ['ok', 0.5], ['ok', 0.5], ['ok', 0.5]]);
    assert.equal((await runOf(member.client, run)).counts.dead, 1);

    const scoredSetup = await runSetup(member.client, project.id, 2, 1);
    const scored = await createRun(member.client, scoredSetup, { scoring: { method: 'scorers', scorers: [{ type: 'contains', name: 'says_ok', value: 'ok' }] } });
    const byService = await python(['--url', running.url, '--api-key', key.key, '--run', scored.id, `${join(dir, 'scores.py')}:run`]);
    assert.is(byService.code, 0, byService.stderr);
    const scoredRows = await member.client.listAll(`/api/job-iterations/${scoredSetup.iterations[0].id}/results/`);
    assert.equal(scoredRows.map((row: any) => [row.status, row.score]), [['ok', 1], ['ok', 1]]);
    assert.not.match(byService.stderr, /refused its result/, byService.stderr);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('worker.py on SIGTERM: no more leases, what finishes within the grace period is sent, the rest given back; goodbye, exit 0', async () => {
  const { member, project } = await memberWithProject(running.client);
  const key = await createApiKey(member.client, project.id);
  const setup = await runSetup(member.client, project.id, 3, 1);
  const run = await createRun(member.client, setup);
  const dir = mkdtempSync(join(tmpdir(), 'overmind-python-'));
  try {
    writeFileSync(join(dir, 'slow.py'), 'import time\n\ndef run(task):\n    time.sleep(0.5 if task["order"] == 0 else 60)\n    return {"output": "slow", "score": 1}\n');
    const child = spawn('python3', [join(root, 'examples/python/worker.py'), '--url', running.url, '--api-key', key.key, '--run', run.id, '--concurrency', '2', '--grace', '1.5', join(dir, 'slow.py')], { stdio: ['ignore', 'ignore', 'pipe'], env: pythonEnv });
    let stderr = '';
    child.stderr.on('data', (chunk) => (stderr += chunk));
    const exited = new Promise<number | null>((resolve) => child.on('close', resolve));
    await until(async () => (await runOf(member.client, run)).counts.leased === 2, 'two tasks running', 10_000);
    child.kill('SIGTERM');
    let timer: NodeJS.Timeout | undefined;
    const code = await Promise.race([exited, new Promise((resolve) => (timer = setTimeout(() => resolve('late'), 15_000)))]);
    clearTimeout(timer);
    if (code === 'late') child.kill('SIGKILL');
    assert.is(code, 0, stderr);
    assert.match(stderr, /SIGTERM: leasing no more/);
    assert.match(stderr, /said goodbye/);
    const state = await runOf(member.client, run);
    assert.equal([state.counts.done, state.counts.leased, state.counts.queued], [1, 0, 2]);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test.run();
