// Shared benchmark machinery. The service, the bare yardstick and the load generator (autocannon)
// each run as a child process. Where the machine has two cores or more and util-linux's taskset
// is there, the servers are pinned to core 0 and the load generator to core 1, so that neither
// takes CPU from the other. Every throughput figure is the median, over short alternating rounds
// (bare, service, bare, ..., bare), of each service run's ratio to the bare runs on either side
// of it: machines here are shared and noisy, noise comes and goes, and neighbouring runs see the
// same conditions.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { freePort, npmStartArgs, root, stopChild, waitForHealth } from '../scripts/service-process.ts';

/** `--quick`: a smaller, shorter smoke run. */
export const quick = process.argv.includes('--quick');
/** tsx by URL, so the children run from any working directory. */
const tsx = import.meta.resolve('tsx');

/** Alternating rounds per comparison, and seconds per round (after one uncounted warm-up round). */
export const rounds = quick ? 3 : 5;
export const roundSeconds = quick ? 1 : 3;

/** Servers on one core, the load generator on another, when the machine allows it. */
const pinning = availableParallelism() >= 2 && spawnSync('taskset', ['-V']).status === 0;
const serverCore = 0;
const loadCore = 1;

/** How the processes were placed, for the report. */
export const placement = pinning
  ? `servers pinned to core ${serverCore}, load generator to core ${loadCore} (taskset)`
  : 'not pinned (fewer than two cores, or no taskset)';

/** The command running `node <args>` on `core` (unpinned when pinning is off or core is undefined). */
function nodeOn(core: number | undefined, args: string[]): [string, string[]] {
  if (!pinning || core === undefined) return [process.execPath, args];
  return ['taskset', ['-c', String(core), process.execPath, ...args]];
}

/** A process that talks in lines (startLineChild). */
export interface LineChild {
  /** Sends one line to its stdin. */
  send(line: string): void;
  /** The next line it prints. */
  next(): Promise<string>;
  /** Ends its stdin; resolves with the lines it printed after, once its stdout has closed. */
  end(): Promise<string[]>;
}

/**
 * A bench/ script in a process of its own, beside the load generator (on the servers' core with
 * `onServerCore`, anywhere when `pinned` is false), that talks in lines: it reads `input` (if
 * any) as its first line, prints `{"ready":true}` once it is ready, answers lines sent to it with
 * lines of its own, and ends when its stdin does. Resolves once it is ready.
 */
export async function startLineChild(scriptAndArgs: string[], options: { pinned?: boolean; onServerCore?: boolean; input?: string } = {}): Promise<LineChild> {
  const [script = '', ...args] = scriptAndArgs;
  const nodeArgs = ['--import', tsx, join(root, script), ...args];
  const [command, commandArgs] = nodeOn(options.pinned === false ? undefined : options.onServerCore ? serverCore : loadCore, nodeArgs);
  const child = spawn(command, commandArgs, { cwd: root, stdio: ['pipe', 'pipe', 'inherit'] });
  const lines = createInterface({ input: child.stdout! })[Symbol.asyncIterator]();
  const next = async () => {
    const { value, done } = await lines.next();
    if (done) throw new Error(`${script} ended early (exit ${child.exitCode})`);
    return value;
  };
  if (options.input !== undefined) child.stdin!.write(`${options.input}\n`);
  if (!(JSON.parse(await next()) as { ready?: boolean }).ready) throw new Error(`${script} did not start`);
  return {
    send: (line) => void child.stdin!.write(`${line}\n`),
    next,
    async end() {
      child.stdin!.end();
      const rest: string[] = [];
      for (let line = await lines.next(); !line.done; line = await lines.next()) rest.push(line.value);
      return rest;
    },
  };
}

/** Recovering a million records takes seconds; a service not healthy by then has failed. */
const healthTimeoutMs = 120_000;

export interface Row {
  name: string;
  value: number;
  unit: string;
  /** The figure as a ratio to the bare server, for throughput rows. */
  ratio?: number;
  /** Human-readable target, e.g. ">= 0.5x bare" or "<= 150 ms". */
  target: string;
  pass: boolean;
  note?: string;
}

export interface LoadResult {
  requestsPerSecond: number;
  latencyP50Ms: number;
  latencyP99Ms: number;
  errors: number;
  non2xx: number;
  /**
   * The server's CPU (every thread, user and system) per request answered, in microseconds: what
   * a request costs it, which moves with the machine less than its rate does when the server
   * waits (on syncs) rather than computes.
   */
  serverCpuMicros: number;
  /**
   * Cores' worth of CPU that other processes (neither the server nor the load generator) used
   * during the run: other work on a shared machine, which skews the figures.
   */
  otherCores: number;
}

export interface LoadOptions {
  url: string;
  /** The server under load, whose CPU is not counted as other work. */
  serverPid: number;
  method?: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  headers?: Record<string, string>;
  /** Bodies are text: the options reach the load generator as JSON. */
  body?: string;
  /** 50 unless given. */
  connections?: number;
  durationSeconds?: number;
  /** Bodies to cycle through (one per request), instead of one fixed body. */
  bodies?: string[];
  /** With `bodies`: the path each body is sent to (the same index), instead of the URL's. */
  paths?: string[];
}

/** Seconds of a single load run (latency figures); `--quick` shortens every run for a smoke check. */
export const durationSeconds = quick ? 3 : 10;

/** One autocannon run, in the load generator's own process (bench/load-generator.ts). */
export async function load(options: LoadOptions): Promise<LoadResult> {
  const [command, args] = nodeOn(loadCore, ['--import', tsx, join(root, 'bench/load-generator.ts')]);
  const child = spawn(command, args, { stdio: ['pipe', 'pipe', 'inherit'] });
  child.stdin!.end(JSON.stringify({ ...options, durationSeconds: options.durationSeconds ?? durationSeconds }));
  return JSON.parse(await outputOf(child)) as LoadResult;
}

export interface ChildServer {
  url: string;
  pid: number;
  /** Resident set size of the child, in MiB. */
  rssMb(): number;
  stop(): Promise<void>;
}

/** CPU seconds (user + system) one process has used so far (/proc/<pid>/stat, in clock ticks of 1/100 s). */
export function processSeconds(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

/** The kB figures of /proc/<pid>/status (VmRSS, RssAnon, RssFile, ...). */
export function procStatus(pid: number): Record<string, number> {
  const fields: Record<string, number> = {};
  for (const line of readFileSync(`/proc/${pid}/status`, 'utf8').split('\n')) {
    const match = /^(\w+):\s+(\d+) kB/.exec(line);
    if (match) fields[match[1]!] = Number(match[2]);
  }
  return fields;
}

function rssOf(pid: number): number {
  return (procStatus(pid).VmRSS ?? 0) / 1024;
}


export function startBare(): Promise<ChildServer> {
  return startChildServer('bench/bare-server.ts');
}

/** A server script of bench/ on the server core, which prints `{"port"}` once it listens. */
export async function startChildServer(script: string): Promise<ChildServer> {
  const [command, args] = nodeOn(serverCore, ['--import', tsx, join(root, script)]);
  const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'inherit'] });
  const line = await firstLine(child);
  const { port } = JSON.parse(line) as { port: number };
  return { url: `http://127.0.0.1:${port}`, pid: child.pid!, rssMb: () => rssOf(child.pid!), stop: () => stopChild(child) };
}

export interface ServiceProcess extends ChildServer {
  dataDir: string;
  /** Milliseconds from spawn to a healthy answer (includes recovery). */
  startupMs: number;
}

export interface ServiceOptions {
  /** LMDB directory; a fresh temporary one unless given. */
  dataDir?: string;
  /** More environment for the service (limits). */
  env?: Record<string, string>;
  /** False to let the service use every core (startup is measured as `npm start` runs). */
  pinned?: boolean;
}

/**
 * Extra node flags for the service, e.g. BENCH_SERVICE_NODE_FLAGS="--cpu-prof --cpu-prof-dir=/tmp/p"
 * to profile it under the benchmark's own load (node refuses --cpu-prof in NODE_OPTIONS).
 */
const serviceNodeFlags = (process.env.BENCH_SERVICE_NODE_FLAGS ?? '').split(/\s+/).filter(Boolean);

/**
 * Starts `npm start`'s entry point on a free port with LMDB under `dataDir`. LOG_LEVEL is warn
 * unless BENCH_LOG_LEVEL says otherwise: per-request info logs are an operator's choice and would
 * be measured otherwise.
 */
export async function startService(options: ServiceOptions = {}): Promise<ServiceProcess> {
  const dataDir = options.dataDir ?? mkdtempSync(join(tmpdir(), 'overmind-bench-'));
  const port = await freePort();
  const started = performance.now();
  const [command, args] = nodeOn(options.pinned === false ? undefined : serverCore, [...serviceNodeFlags, ...npmStartArgs()]);
  const child = spawn(command, args, {
    env: {
      ...process.env,
      PORT: String(port),
      HOST: '127.0.0.1',
      DATA_DIR: dataDir,
      LOG_LEVEL: process.env.BENCH_LOG_LEVEL ?? 'warn',
      ...options.env,
    },
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  const url = `http://127.0.0.1:${port}`;
  await waitForHealth(url, child, healthTimeoutMs);
  const startupMs = performance.now() - started;
  return {
    url,
    pid: child.pid!,
    dataDir,
    startupMs,
    rssMb: () => rssOf(child.pid!),
    stop: () => stopChild(child),
  };
}

/** The bare yardstick and the service, both or neither (a service that fails to start stops the bare one). */
export async function startBareAndService(options: ServiceOptions = {}): Promise<{ bare: ChildServer; service: ServiceProcess }> {
  const bare = await startBare();
  try {
    return { bare, service: await startService(options) };
  } catch (error) {
    await bare.stop();
    throw error;
  }
}

export interface SeedCounts {
  jobs: number;
  iterationsPerJob: number;
  agents?: number;
  datapointsPerAgent?: number;
}

export interface Seeded {
  email: string;
  password: string;
  projectId: string;
}

/** Fills `dataDir` through bench/seed.ts, in its own process; resolves with how to log in. */
export function seedStore(dataDir: string, counts: SeedCounts): Promise<Seeded> {
  const args = [dataDir, counts.jobs, counts.iterationsPerJob, counts.agents ?? 0, counts.datapointsPerAgent ?? 0].map(String);
  const child = spawn(process.execPath, ['--import', tsx, join(root, 'bench/seed.ts'), ...args], { stdio: ['ignore', 'pipe', 'inherit'] });
  let output = '';
  child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  return new Promise((resolve, reject) => {
    child.once('exit', (code) => {
      if (code !== 0) return reject(new Error(`seeding exited with code ${code}`));
      resolve(JSON.parse(output.trim().split('\n').at(-1)!) as Seeded);
    });
  });
}

/** A JSON request as a client makes it, with an access token when given: its JSON answer, or a thrown error. */
export async function sendJson(url: string, method: string, path: string, body: unknown, access?: string): Promise<Record<string, unknown>> {
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (access) headers.authorization = `Bearer ${access}`;
  const response = await fetch(url + path, { method, headers, body: JSON.stringify(body) });
  if (!response.ok) throw new Error(`${method} ${path} answered ${response.status}: ${await response.text()}`);
  return (await response.json()) as Record<string, unknown>;
}

/** A new user with a project of its own, made over HTTP as a client would (`label` names both). */
export async function signUp(url: string, label: string): Promise<{ access: string; projectId: string }> {
  const password = 'bench password';
  const name = `${label}-${process.pid}`;
  const registered = await sendJson(url, 'POST', '/api/auth/register/', { email: `${name}@example.com`, password, password_confirm: password });
  const access = registered.access as string;
  const project = await sendJson(url, 'POST', '/api/projects/', { name: label, slug: name }, access);
  return { access, projectId: project.id as string };
}

export function removeDir(dir: string): void {
  rmSync(dir, { recursive: true, force: true });
}

/** Everything the child prints on stdout, once it has exited with status 0. */
function outputOf(child: ChildProcess): Promise<string> {
  let output = '';
  child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  return new Promise((resolve, reject) => {
    child.once('exit', (code) => (code === 0 ? resolve(output) : reject(new Error(`the load generator exited with ${code}`))));
  });
}

function firstLine(child: ChildProcess): Promise<string> {
  return new Promise((resolve, reject) => {
    const lines = createInterface({ input: child.stdout! });
    lines.once('line', (line) => {
      lines.close();
      resolve(line);
    });
    child.once('exit', (code) => reject(new Error(`child exited with ${code}`)));
  });
}

export interface Comparison {
  /** Medians over the rounds. */
  bareRps: number;
  serviceRps: number;
  ratio: number;
  /** Each round's ratio, in order. */
  ratios: number[];
  serviceP50Ms: number;
  serviceP99Ms: number;
  /** CPU per request, in microseconds, of the service and of the bare server. */
  serviceCpuMicros: number;
  bareCpuMicros: number;
  /** The most CPU other processes used during any run of the comparison, in cores. */
  otherCoresMax: number;
  /** Errors and non-2xx answers of the service over every round. */
  failures: number;
}

/** Alternating runs of the bare server and of what is compared with it. */
export interface Alternation<Run> {
  bareRuns: LoadResult[];
  runs: Run[];
  /** Each run's rate over the mean rate of the bare runs on either side of it, in order. */
  ratios: number[];
}

/**
 * bare, run, bare, run, ..., bare: `rounds` runs of `roundSeconds` each (after one uncounted bare
 * warm-up run; `run` warms itself up), each judged against the mean of the bare runs just before
 * and just after it, which cancels noise that drifts during a round. `rateOf` is a run's rate per
 * second (requests, spans). The bare server gets `connections` connections.
 */
export async function alternateWithBare<Run>(
  bare: ChildServer,
  connections: number | undefined,
  run: (seconds: number) => Promise<Run>,
  rateOf: (run: Run) => number,
): Promise<Alternation<Run>> {
  const bareRun = (seconds: number) => load({ url: bare.url, serverPid: bare.pid, connections, durationSeconds: seconds });
  await bareRun(1);
  const bareRuns = [await bareRun(roundSeconds)];
  const runs: Run[] = [];
  for (let round = 0; round < rounds; round++) {
    runs.push(await run(roundSeconds));
    bareRuns.push(await bareRun(roundSeconds));
  }
  const ratios = runs.map((measured, round) => rateOf(measured) / ((bareRuns[round]!.requestsPerSecond + bareRuns[round + 1]!.requestsPerSecond) / 2));
  return { bareRuns, runs, ratios };
}

/**
 * Loads the bare server and the service alternately (alternateWithBare), after one uncounted
 * service warm-up run, and the figure is the median of the rounds' ratios. `service` may be a
 * function, called before each of its runs, when every round needs fresh records (jobs that do
 * not fill up across rounds). The bare server gets the same connections.
 */
export async function compareWithBare(bare: ChildServer, service: LoadOptions | (() => Promise<LoadOptions>)): Promise<Comparison> {
  const serviceLoad = typeof service === 'function' ? service : async () => service;
  const warmUp = await serviceLoad();
  await load({ ...warmUp, durationSeconds: 1 });
  const serviceRun = async (seconds: number) => load({ ...(await serviceLoad()), durationSeconds: seconds });
  const { bareRuns, runs, ratios } = await alternateWithBare(bare, warmUp.connections, serviceRun, (run) => run.requestsPerSecond);
  return {
    bareRps: median(bareRuns.map((run) => run.requestsPerSecond)),
    serviceRps: median(runs.map((run) => run.requestsPerSecond)),
    ratio: median(ratios),
    ratios,
    serviceP50Ms: median(runs.map((run) => run.latencyP50Ms)),
    serviceP99Ms: median(runs.map((run) => run.latencyP99Ms)),
    serviceCpuMicros: median(runs.map((run) => run.serverCpuMicros)),
    bareCpuMicros: median(bareRuns.map((run) => run.serverCpuMicros)),
    otherCoresMax: Math.max(...[...bareRuns, ...runs].map((run) => run.otherCores)),
    failures: runs.reduce((sum, run) => sum + run.errors + run.non2xx, 0),
  };
}

/** The value at `fraction` of the way through the sorted values (the nearest rank below); NaN for none. */
export function percentile(values: readonly number[], fraction: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(fraction * sorted.length))]!;
}

/** The middle value (the upper middle of an even count). */
export function median(values: number[]): number {
  return [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
}

/**
 * "rounds 0.61/0.63/0.60/0.62/0.61, p50 3 ms, p99 9 ms, 52 us CPU per request, bare 40,123 req/s
 * at 24 us, other work <= 0.02 cores": a comparison's details. CPU per request tells a figure
 * held by its work (the ratio of the two costs is near the figure) from one held by waiting.
 * Other processes' CPU tells whether the machine was quiet: runs made while it was not disagree,
 * most where the load generator's core was taken.
 */
export function comparisonNote(comparison: Comparison): string {
  const failures = comparison.failures ? `, ${comparison.failures} failures` : '';
  const cpu = (micros: number) => `${Math.round(micros)} us`;
  return `rounds ${comparison.ratios.map((ratio) => ratio.toFixed(2)).join('/')}, p50 ${comparison.serviceP50Ms} ms, p99 ${comparison.serviceP99Ms} ms, ${cpu(comparison.serviceCpuMicros)} CPU per request, bare ${Math.round(comparison.bareRps).toLocaleString('en-US')} req/s at ${cpu(comparison.bareCpuMicros)}, other work <= ${comparison.otherCoresMax.toFixed(2)} cores${failures}`;
}

export function printRows(rows: readonly Row[]): void {
  const lines = rows.map((row) => [
    row.pass ? 'PASS' : 'SHORT',
    row.name,
    `${formatNumber(row.value)} ${row.unit}`,
    row.ratio === undefined ? '' : `${row.ratio.toFixed(2)}x bare`,
    row.target,
    row.note ?? '',
  ]);
  const widths = [0, 1, 2, 3, 4].map((column) => Math.max(...lines.map((line) => line[column]!.length)));
  for (const line of lines) {
    console.log(line.map((cell, column) => (column < 5 ? cell.padEnd(widths[column]!) : cell)).join('  ').trimEnd());
  }
}

function formatNumber(value: number): string {
  return value >= 100 ? Math.round(value).toLocaleString('en-US') : value.toFixed(2);
}
