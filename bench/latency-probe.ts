// A latency probe, in a process of its own beside the load generator: GETs one path over one
// keep-alive connection, one request after another, for as long as it runs, and reports each
// request's time to its last byte. It prints `{"ready": true}` once its first request has
// answered, and `{"count", "p50Ms", "p99Ms", "maxMs"}` when its stdin closes.
//
//   node --import tsx bench/latency-probe.ts <url> <access token>
import { Agent, request } from 'node:http';
import { percentile } from './harness.ts';

const [url, token] = process.argv.slice(2) as [string, string];
const agent = new Agent({ keepAlive: true, maxSockets: 1 });
const latencies: number[] = [];
let running = true;

function get(): Promise<number> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const outgoing = request(url, { agent, headers: { authorization: `Bearer ${token}` } }, (response) => {
      response.resume();
      response.on('end', () => (response.statusCode === 200 ? resolve(performance.now() - started) : reject(new Error(`GET answered ${response.statusCode}`))));
    });
    outgoing.on('error', reject);
    outgoing.end();
  });
}

await get();
process.stdout.write(`${JSON.stringify({ ready: true })}\n`);
process.stdin.resume();
process.stdin.on('end', () => (running = false));
while (running) latencies.push(await get());
process.stdout.write(`${JSON.stringify({ count: latencies.length, p50Ms: percentile(latencies, 0.5), p99Ms: percentile(latencies, 0.99), maxMs: percentile(latencies, 1) })}\n`, () => process.exit(0));
