// The load generator as a process of its own, so that the harness can pin it to a core other than
// the server's (bench/harness.ts): autocannon and the server it measures then never take CPU from
// each other. Reads one LoadOptions as JSON on stdin and prints its LoadResult as one JSON line.
import { text } from 'node:stream/consumers';
import autocannon from 'autocannon';
import type { LoadOptions, LoadResult } from './harness.ts';

const options = JSON.parse(await text(process.stdin)) as LoadOptions;
const bodies = options.bodies;
let next = 0;
const result = await autocannon({
  url: options.url,
  method: options.method ?? 'GET',
  headers: options.headers,
  body: bodies ? undefined : options.body,
  connections: options.connections ?? 50,
  duration: options.durationSeconds,
  // One body after another from the list, whichever connection sends next.
  requests: bodies
    ? [{ setupRequest: (request: Record<string, unknown>) => ({ ...request, body: bodies[next++ % bodies.length] }) }]
    : undefined,
} as autocannon.Options);
const answer: LoadResult = {
  requestsPerSecond: result.requests.average,
  latencyP50Ms: result.latency.p50,
  latencyP99Ms: result.latency.p99,
  errors: result.errors,
  non2xx: result.non2xx,
};
process.stdout.write(`${JSON.stringify(answer)}\n`);
