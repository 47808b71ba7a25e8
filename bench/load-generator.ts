// The load generator as a process of its own, so that the harness can pin it to a core other than
// the server's (bench/harness.ts): autocannon and the server it measures then never take CPU from
// each other. Reads one LoadOptions as JSON on stdin and prints its LoadResult as one JSON line.
import { readFileSync } from 'node:fs';
import { text } from 'node:stream/consumers';
import autocannon from 'autocannon';
import { processSeconds, type LoadOptions, type LoadResult } from './harness.ts';

/** CPU seconds (user + system) used so far by the whole machine (every core). */
const ticksPerSecond = 100;
function machineSeconds(): number {
  const fields = readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/).slice(1).map(Number);
  const idle = fields[3]! + fields[4]!; // idle, iowait
  return (fields.reduce((sum, value) => sum + value, 0) - idle) / ticksPerSecond;
}

const options = JSON.parse(await text(process.stdin)) as LoadOptions;
const bodies = options.bodies;
const paths = options.paths;
let next = 0;
const before = { machine: machineSeconds(), server: processSeconds(options.serverPid), own: process.cpuUsage() };
const started = performance.now();
const result = await autocannon({
  url: options.url,
  method: options.method ?? 'GET',
  headers: options.headers,
  body: bodies ? undefined : options.body,
  connections: options.connections ?? 50,
  duration: options.durationSeconds,
  // One body after another from the list (to its path, when paths are given), whichever connection sends next.
  requests: bodies
    ? [{
        setupRequest: (request: Record<string, unknown>) => {
          const at = next++ % bodies.length;
          return { ...request, body: bodies[at], ...(paths ? { path: paths[at] } : {}) };
        },
      }]
    : undefined,
} as autocannon.Options);
const seconds = (performance.now() - started) / 1000;
const own = process.cpuUsage(before.own);
const server = processSeconds(options.serverPid) - before.server;
const others = machineSeconds() - before.machine - server - (own.user + own.system) / 1e6;
const answer: LoadResult = {
  requestsPerSecond: result.requests.average,
  latencyP50Ms: result.latency.p50,
  latencyP99Ms: result.latency.p99,
  errors: result.errors,
  non2xx: result.non2xx,
  serverCpuMicros: result.requests.total > 0 ? (server * 1e6) / result.requests.total : 0,
  otherCores: Math.max(0, others / seconds),
};
process.stdout.write(`${JSON.stringify(answer)}\n`);
