// The package as another project's tests use it (docs/TESTING.md), from the compiled code it
// ships (dist/, which `npm run bench` builds first), each figure in a fresh `node` of its own (no
// tsx): a fresh in-memory service in-process, created and listening on port 0, after the first
// import (the median of many; the first import and the first service reported beside it); and
// the start command, `overmind-eval-service --memory --port 0`, from spawning it to /health/
// answering at the address it prints as its first line (the median of several starts).
import { spawn, spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { pathToFileURL } from 'node:url';
import { median, percentile, quick, type Row } from './harness.ts';
import { root } from '../scripts/service-process.ts';

const services = quick ? 20 : 100;
const starts = quick ? 3 : 7;
const inProcessMsMax = 10;
const commandMsMax = 1000;

/** Run in a child node: import the package's entry, then create, listen and close services. */
const inProcessScript = `
const entry = ${JSON.stringify(pathToFileURL(join(root, 'dist/src/index.js')).href)};
const importStarted = performance.now();
const { createService } = await import(entry);
const importMs = performance.now() - importStarted;
const times = [];
for (let i = 0; i <= ${services}; i++) {
  const started = performance.now();
  const service = await createService({ storage: 'memory', logLevel: 'silent' });
  await service.listen(0, '127.0.0.1');
  times.push(performance.now() - started);
  await service.close();
}
console.log(JSON.stringify({ importMs, times }));
`;

function inProcess(): { importMs: number; times: number[] } {
  const child = spawnSync(process.execPath, ['--input-type=module', '-e', inProcessScript], { cwd: root, encoding: 'utf8' });
  if (child.status !== 0) throw new Error(`the in-process benchmark failed:\n${child.stderr}`);
  return JSON.parse(child.stdout.trim().split('\n').at(-1)!) as { importMs: number; times: number[] };
}

/** Milliseconds from spawning the command to its first line, and to /health/ answering 200 there. */
async function commandStart(): Promise<{ lineMs: number; healthMs: number }> {
  const started = performance.now();
  const child = spawn(process.execPath, [join(root, 'dist/src/cli/start.js'), '--memory', '--port', '0'], {
    env: { ...process.env, LOG_LEVEL: 'warn' },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const exited = new Promise<void>((resolve) => child.once('close', () => resolve()));
  try {
    const url = await new Promise<string>((resolve, reject) => {
      createInterface({ input: child.stdout! }).once('line', resolve);
      child.once('exit', (code) => reject(new Error(`the command ended (${code}) before printing its address`)));
    });
    const lineMs = performance.now() - started;
    for (;;) {
      if ((await fetch(`${url}/health/`)).ok) break;
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    return { lineMs, healthMs: performance.now() - started };
  } finally {
    child.kill('SIGTERM');
    await exited;
  }
}

export async function run(): Promise<Row[]> {
  const { importMs, times } = inProcess();
  const [first = 0, ...rest] = times;
  const serviceMs = median(rest);
  const commands: { lineMs: number; healthMs: number }[] = [];
  for (let i = 0; i < starts; i++) commands.push(await commandStart());
  const healthMs = median(commands.map((command) => command.healthMs));
  const lineMs = median(commands.map((command) => command.lineMs));
  return [
    {
      name: 'a fresh in-memory service in-process (createService + listen on port 0)',
      value: serviceMs,
      unit: 'ms',
      target: `<= ${inProcessMsMax} ms`,
      pass: serviceMs <= inProcessMsMax,
      note: `median of ${rest.length} after the first; p90 ${percentile(rest, 0.9).toFixed(1)} ms; the first import ${Math.round(importMs)} ms, the first service ${first.toFixed(1)} ms`,
    },
    {
      name: 'the start command (--memory --port 0): spawn to /health/ answering',
      value: healthMs,
      unit: 'ms',
      target: `<= ${commandMsMax} ms`,
      pass: healthMs <= commandMsMax,
      note: `median of ${starts} starts (${commands.map((command) => Math.round(command.healthMs)).join('/')} ms); its address printed after ${Math.round(lineMs)} ms`,
    },
  ];
}

