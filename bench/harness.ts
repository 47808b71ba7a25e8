// Shared benchmark machinery. The service and the bare yardstick run as child processes (so the
// load generator never competes with them inside one event loop), are loaded alternately with
// autocannon, and every throughput figure is printed as a ratio to the bare server measured in
// the same run, because machines here are shared and noisy.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import autocannon from 'autocannon';
import { freePort, npmStartArgs, root, stopChild, waitForHealth } from '../scripts/service-process.ts';

/** `--quick`: a smaller, shorter smoke run. */
export const quick = process.argv.includes('--quick');
/** tsx by URL, so the children run from any working directory. */
const tsx = import.meta.resolve('tsx');
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
}

export interface LoadOptions {
  url: string;
  method?: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  headers?: Record<string, string>;
  body?: string | Buffer;
  connections?: number;
  durationSeconds?: number;
  /** Bodies to cycle through (one per request), instead of one fixed body. */
  bodies?: (string | Buffer)[];
}

/** Seconds per load run; `--quick` shortens every run for a smoke check. */
export const durationSeconds = quick ? 3 : 10;

export async function load(options: LoadOptions): Promise<LoadResult> {
  const bodies = options.bodies;
  let next = 0;
  const result = await autocannon({
    url: options.url,
    method: options.method ?? 'GET',
    headers: options.headers,
    body: bodies ? undefined : options.body,
    connections: options.connections ?? 50,
    duration: options.durationSeconds ?? durationSeconds,
    requests: bodies
      ? [{ setupRequest: (request: Record<string, unknown>) => ({ ...request, body: bodies[next++ % bodies.length] }) }]
      : undefined,
  } as autocannon.Options);
  return {
    requestsPerSecond: result.requests.average,
    latencyP50Ms: result.latency.p50,
    latencyP99Ms: result.latency.p99,
    errors: result.errors,
    non2xx: result.non2xx,
  };
}

export interface ChildServer {
  url: string;
  pid: number;
  /** Resident set size of the child, in MiB. */
  rssMb(): number;
  stop(): Promise<void>;
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


export async function startBare(): Promise<ChildServer> {
  const child = spawn(process.execPath, ['--import', tsx, join(root, 'bench/bare-server.ts')], { stdio: ['ignore', 'pipe', 'inherit'] });
  const line = await firstLine(child);
  const { port } = JSON.parse(line) as { port: number };
  return { url: `http://127.0.0.1:${port}`, pid: child.pid!, rssMb: () => rssOf(child.pid!), stop: () => stopChild(child) };
}

export interface ServiceProcess extends ChildServer {
  dataDir: string;
  /** Milliseconds from spawn to a healthy answer (includes recovery). */
  startupMs: number;
}

/**
 * Starts `npm start`'s entry point on a free port with LMDB under `dataDir` (a fresh temporary
 * directory unless given). LOG_LEVEL is warn unless BENCH_LOG_LEVEL says otherwise: per-request
 * info logs are an operator's choice and would be measured otherwise.
 */
export async function startService(options: { dataDir?: string; env?: Record<string, string> } = {}): Promise<ServiceProcess> {
  const dataDir = options.dataDir ?? mkdtempSync(join(tmpdir(), 'overmind-bench-'));
  const port = await freePort();
  const started = performance.now();
  const child = spawn(process.execPath, npmStartArgs(), {
    env: { ...process.env, PORT: String(port), HOST: '127.0.0.1', DATA_DIR: dataDir, LOG_LEVEL: process.env.BENCH_LOG_LEVEL ?? 'warn', ...options.env },
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
export async function startBareAndService(options: { dataDir?: string } = {}): Promise<{ bare: ChildServer; service: ServiceProcess }> {
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
  jobIds: string[];
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

export function removeDir(dir: string): void {
  rmSync(dir, { recursive: true, force: true });
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

/**
 * Loads the bare server and the service alternately (bare, service, bare, service, ...) and
 * judges the service by the median of each round's ratio to the bare run just before it: noise on
 * a shared machine comes and goes, and a neighbouring pair sees the same conditions.
 */
export async function compareWithBare(bare: ChildServer, service: LoadOptions, rounds = 3) {
  const ratios: number[] = [];
  const bareRuns: LoadResult[] = [];
  const serviceRuns: LoadResult[] = [];
  for (let round = 0; round < rounds; round++) {
    const bareRun = await load({ url: bare.url, connections: service.connections, durationSeconds: service.durationSeconds });
    const serviceRun = await load(service);
    bareRuns.push(bareRun);
    serviceRuns.push(serviceRun);
    ratios.push(serviceRun.requestsPerSecond / bareRun.requestsPerSecond);
  }
  const middle = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
  return {
    bareRps: middle(bareRuns.map((run) => run.requestsPerSecond)),
    serviceRps: middle(serviceRuns.map((run) => run.requestsPerSecond)),
    ratio: middle(ratios),
    ratios,
    serviceP50Ms: middle(serviceRuns.map((run) => run.latencyP50Ms)),
    failures: serviceRuns.reduce((sum, run) => sum + run.errors + run.non2xx, 0),
  };
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
