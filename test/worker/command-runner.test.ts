// The command runner on its own (src/worker/command-task.ts), without a service: a task stopped
// before its command started is killed at once, and output is kept by characters, not bytes.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { CommandRunner } from '../../src/worker/command-task.ts';
import type { LeasedTask } from '../../src/worker/worker-task.ts';

const task: LeasedTask = {
  id: '00000000-0000-8000-8000-000000000000',
  lease: 'a'.repeat(22),
  lease_expires_at: new Date(Date.now() + 60_000).toISOString(),
  run: '00000000-0000-4000-8000-000000000000',
  iteration: { id: '00000000-0000-4000-8000-000000000001', iteration_name: 'candidate', agent_code: 'print("hi")' },
  datapoint: { id: '00000000-0000-4000-8000-000000000002', order: 0, input: { question: 'q' }, persona: null, tags: [] },
  attempt: 0,
  try: 1,
  scored_by_service: false,
};

test('a task stopped before its command started (its code file being written) is killed at once, not left to run out', async () => {
  const runner = new CommandRunner({ command: 'sleep 5', timeoutS: 30 });
  try {
    const started = performance.now();
    await runner.execute(task, { signal: AbortSignal.abort() });
    assert.ok(performance.now() - started < 2000, `ended after ${(performance.now() - started).toFixed(0)} ms`);
  } finally {
    runner.close();
  }
});

test('an output within the character limit is kept whole however many bytes its characters take: its score is read', async () => {
  const text = '日'.repeat(5000);
  const runner = new CommandRunner({ command: `printf '%s' '${JSON.stringify({ output: text, score: 1 })}'`, timeoutS: 30, outputCharsMax: 5002 });
  try {
    const outcome = await runner.execute(task, { signal: new AbortController().signal });
    assert.is(outcome.kind, 'result');
    const { fields } = outcome as { fields: { output: unknown; score: unknown } };
    assert.equal([fields.output, fields.score], [text, 1]);
  } finally {
    runner.close();
  }
});

test('a JSON answer whose output is within the limit but printed with escapes (\\u00e9: six bytes a character) is kept whole: its score is read', async () => {
  const printed = `{"output": "${'\\u00e9'.repeat(5000)}", "score": 1}`;
  const runner = new CommandRunner({ command: `printf '%s' '${printed}'`, timeoutS: 30, outputCharsMax: 5002 });
  try {
    const outcome = await runner.execute(task, { signal: new AbortController().signal });
    assert.is(outcome.kind, 'result');
    const { fields } = outcome as { fields: { output: unknown; score: unknown } };
    assert.equal([fields.output, fields.score], ['é'.repeat(5000), 1]);
  } finally {
    runner.close();
  }
});

test('outputAfterExitMs: once the shell has exited, output held open by a process outside its group is waited for a second at most; what came is read', async () => {
  // setsid puts the sleep in a session of its own, out of reach of the group's kill, holding standard
  // output open; the shell lingers 0.2 s so that the sleep has left the group before the shell ends.
  const runner = new CommandRunner({ command: `echo '{"output": "ok", "score": 1}'; setsid sleep 3 & sleep 0.2`, timeoutS: 30 });
  try {
    const started = performance.now();
    const outcome = await runner.execute(task, { signal: new AbortController().signal });
    const took = performance.now() - started;
    assert.ok(took >= 1100 && took < 2600, `ended after ${took.toFixed(0)} ms: a second after the shell, not when the sleep let go`);
    assert.is(outcome.kind, 'result');
    assert.equal([(outcome as { fields: { output: unknown } }).fields.output, (outcome as { fields: { score: unknown } }).fields.score], ['ok', 1]);
  } finally {
    runner.close();
  }
});

test('a command killed by the signal the worker stops on (sent to its group as it was spawned) is interrupted, no result; by another signal, or before a stop, it failed', async () => {
  const runner = new CommandRunner({ command: 'kill -TERM $$', timeoutS: 30 });
  try {
    const before = await runner.execute(task, { signal: new AbortController().signal });
    assert.equal(before.kind === 'result' && before.fields.error, 'killed by SIGTERM', 'not stopping: an error result');
    runner.stoppingOn('SIGTERM');
    assert.equal(await runner.execute(task, { signal: new AbortController().signal }), { kind: 'interrupted' });
    runner.stoppingOn('SIGINT');
    const other = await runner.execute(task, { signal: new AbortController().signal });
    assert.equal(other.kind === 'result' && other.fields.error, 'killed by SIGTERM', 'stopping on another signal: the task failed');
  } finally {
    runner.close();
  }
});

test.run();
