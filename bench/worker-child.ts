// The workers' side of `npm run bench -- workers`, in a process of its own on the load
// generator's core (startLineChild). Its first stdin line is its settings (JSON: url, apiKey);
// it prints `{"ready":true}`, then answers each line:
// - `bare <n> <command>`: runs the command through /bin/sh n times one after another, as the
//   worker does (the task as JSON on stdin), without a worker: `{"p50Ms"}` from spawn to close;
// - `command <run> <command>`: the worker command's loop (src/worker/: the same code as
//   `overmind-eval-service worker`) runs the run's tasks one at a time: `{"wallP50Ms",
//   "latencyP50Ms", "tasks"}`, a task's wall time being from its start to the next task's start;
// - `handler <run> <concurrency> <batch>`: the in-process handler worker (runWorker) completes
//   the run with a handler that answers at once: `{"tasks", "seconds"}`.
//
//   node --import tsx bench/worker-child.ts
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { runWorker } from '../src/worker/handler-worker.ts';
import { CommandRunner } from '../src/worker/command-task.ts';
import { WorkerLoop, type Executor } from '../src/worker/worker-loop.ts';
import { WorkerProtocol } from '../src/worker/worker-protocol.ts';

const lines = createInterface({ input: process.stdin })[Symbol.asyncIterator]();
const { url, apiKey } = JSON.parse((await lines.next()).value as string) as { url: string; apiKey: string };
const input = `${JSON.stringify({ task_id: 'bench', input: { question: 'a trivial task' }, order: 0 })}\n`;

function p50(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? NaN;
}

function bareOnce(command: string): Promise<number> {
  return new Promise((resolve) => {
    const started = performance.now();
    const child = spawn('/bin/sh', ['-c', command], { detached: true, stdio: ['pipe', 'pipe', 'pipe'] });
    child.stdout.resume();
    child.stderr.resume();
    child.stdin.on('error', () => {});
    child.stdin.end(input);
    child.once('close', () => resolve(performance.now() - started));
  });
}

async function bare(count: number, command: string) {
  const times: number[] = [];
  for (let i = 0; i < count; i++) times.push(await bareOnce(command));
  return { p50Ms: p50(times) };
}

async function commandWorker(run: string, command: string) {
  const runner = new CommandRunner({ command, timeoutS: 60 });
  const starts: number[] = [];
  const latencies: number[] = [];
  const execute: Executor = async (task, control) => {
    starts.push(performance.now());
    const outcome = await runner.execute(task, control);
    if (outcome.kind === 'result') latencies.push(outcome.fields.latency_ms ?? NaN);
    return outcome;
  };
  const loop = new WorkerLoop({
    protocol: new WorkerProtocol({ url, apiKey }),
    execute,
    concurrency: 1,
    batch: 1,
    run,
    graceMs: 1000,
    identity: { name: 'bench command', host: 'bench', metadata: null },
  });
  await loop.run();
  runner.close();
  const walls = starts.slice(1).map((at, i) => at - starts[i]!);
  return { wallP50Ms: p50(walls), latencyP50Ms: p50(latencies), tasks: starts.length };
}

async function handlerWorker(run: string, concurrency: number, batch: number) {
  const started = performance.now();
  const { counts } = await runWorker({ url, apiKey, run, concurrency, batch, handler: () => ({ output: 'ok', score: 1 }) }).done;
  return { tasks: counts.done, seconds: (performance.now() - started) / 1000 };
}

console.log(JSON.stringify({ ready: true }));
for (let line = await lines.next(); !line.done; line = await lines.next()) {
  const [verb, first = '', second = '', ...rest] = line.value.split(' ');
  if (verb === 'bare') console.log(JSON.stringify(await bare(Number(first), [second, ...rest].join(' '))));
  else if (verb === 'command') console.log(JSON.stringify(await commandWorker(first, [second, ...rest].join(' '))));
  else if (verb === 'handler') console.log(JSON.stringify(await handlerWorker(first, Number(second), Number(rest[0]))));
}
