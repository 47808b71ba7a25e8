// The typed client example (examples/): the walkthrough runs against a real service, both
// imported and as the command docs/API.md shows, and the committed api-types.ts is exactly what
// `npm run types` generates from the current OpenAPI document.
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { generateTypes, typesFile } from '../../examples/generate-types.ts';
import { walkthrough } from '../../examples/walkthrough.ts';
import { withService } from '../helpers/service.ts';

const root = fileURLToPath(new URL('../..', import.meta.url));
const uuid = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** Runs `node --import tsx <args>` from the repository root; resolves with the exit code and output. */
function runNode(args: string[]): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', ...args], { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (chunk) => (output += chunk));
    child.stderr.on('data', (chunk) => (output += chunk));
    child.once('error', reject);
    child.once('close', (code) => resolve({ code, output }));
  });
}

test('the walkthrough creates everything and reads it back, imported and as a command', () =>
  withService(async ({ url }) => {
    const summary = await walkthrough(url);
    for (const id of [summary.project.id, summary.agent.id, summary.dataset.id, summary.job.id]) assert.match(id, uuid);
    assert.ok(Number.isInteger(summary.user.id));
    assert.is(summary.agent.activeDataset, summary.dataset.id);

    assert.is(summary.dataset.version, 1);
    assert.is(summary.dataset.datapoints, 3);
    assert.is(summary.dataset.datapointIds.length, 3);
    for (const id of summary.dataset.datapointIds) assert.match(id, uuid);

    const { job } = summary;
    assert.is(job.status, 'completed');
    assert.equal(
      job.iterations.map(({ name, avgScore, status }) => [name, avgScore, status]),
      [
        ['baseline-rewrite', 0.64, 'discard'],
        ['add-examples', 0.78, 'keep'],
        ['strict-format', 0.71, 'discard'],
      ],
    );
    for (const iteration of job.iterations) assert.match(iteration.id, uuid);
    assert.is(job.baselineScore, 0.61);
    assert.is(job.bestScore, 0.78);
    assert.ok(Math.abs(job.improvement! - 0.17) < 1e-9);
    assert.equal(summary.iterationsByScore, ['add-examples', 'strict-format', 'baseline-rewrite']);

    const run = await runNode(['examples/walkthrough.ts', url]);
    assert.is(run.code, 0, run.output);
    assert.match(run.output, /job\s+\S+ completed/);
  }));

test('the walkthrough exits non-zero on an unexpected answer', () =>
  withService(async ({ url }) => {
    // No such prefix: the first request (register) answers 404.
    const run = await runNode(['examples/walkthrough.ts', `${url}/nowhere`]);
    assert.is(run.code, 1, run.output);
    assert.match(run.output, /unexpected answer: POST \S+\/nowhere\/api\/auth\/register\/ answered 404/);
  }));

test('examples/api-types.ts is what the current OpenAPI document generates', async () => {
  const committed = readFileSync(typesFile, 'utf8');
  const generated = await generateTypes();
  if (committed !== generated) {
    const [committedLines, generatedLines] = [committed.split('\n'), generated.split('\n')];
    const line = committedLines.findIndex((text, index) => text !== generatedLines[index]);
    const at = line === -1 ? generatedLines.length : line;
    assert.unreachable(
      `examples/api-types.ts is out of date with the OpenAPI document: run npm run types ` +
        `(first difference at line ${at + 1}: committed ${JSON.stringify(committedLines[at])}, generated ${JSON.stringify(generatedLines[at])})`,
    );
  }
});

test.run();
