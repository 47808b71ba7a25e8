// The README's two-minute evaluation, end to end: its setup against a running service, then the
// worker command it prints (the built CLI, the example agent as the command) until the run ends,
// then the comparison it points to: the candidate with more keywords beats the baseline on the
// 40 tickets, as scored by the service from the agent's eval spec.
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { setupTwoMinute } from '../../examples/two-minute/setup.ts';
import { withService } from '../helpers/service.ts';

const root = fileURLToPath(new URL('../..', import.meta.url));

/** Runs a shell line from the repository root; resolves with its exit code and output. */
function shell(line: string, timeoutMs: number): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn('/bin/sh', ['-c', line], { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (chunk) => (output += chunk));
    child.stderr.on('data', (chunk) => (output += chunk));
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.once('error', reject);
    child.once('close', (code) => {
      clearTimeout(timer);
      resolve({ code, output });
    });
  });
}

test('setup, the worker command it prints, and the comparison it points to: the candidate wins, scored from the eval spec', () =>
  withService(async ({ url }) => {
    const made = await setupTwoMinute(url);
    assert.match(made.workerCommand, /^npm run worker -- --url /);
    // The same command as the README's, less npm's wrapper (npm test has built dist/ already).
    const worker = await shell(made.workerCommand.replace(/^npm run worker --/, `${JSON.stringify(process.execPath)} dist/src/cli/start.js worker`), 120_000);
    assert.is(worker.code, 0, worker.output);
    assert.match(worker.output, /the run has ended/);
    const headers = { 'x-api-key': made.apiKey };
    const run = await (await fetch(`${url}/api/runs/${made.run}/`, { headers })).json();
    assert.equal([run.status, run.reason, run.counts.done, run.counts.total], ['completed', 'all_done', 80, 80]);
    assert.ok(made.comparePage.startsWith(`${url}/console/job-iterations/${made.baseline}/compare/${made.candidate}`));
    const comparison = await (await fetch(`${url}/api/job-iterations/${made.baseline}/compare/${made.candidate}/`, { headers })).json();
    const { results } = comparison;
    assert.is(results.n_paired, 40);
    assert.is(results.score.mean_from, 64.5, 'the baseline: 18 of 40 categories right');
    assert.is(results.score.mean_to, 95.5, 'the candidate: 37 of 40');
    assert.ok(results.score.p_value < 0.001, `p = ${results.score.p_value}`);
    const page = await fetch(made.comparePage);
    assert.is(page.status, 200, 'the console serves the page it points to');
  }));

test.run();
