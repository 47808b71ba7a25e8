// Workers under load, in a process of its own beside the service (on the load generator's core):
// `workers` loops over keep-alive connections, each leasing up to `batch` tasks and completing
// them with a score at once, for as long as it is told. Its first stdin line is its settings
// (JSON: url, access, worker ids, batch, waitMs); it prints `{"ready":true}`, then answers each
// line `go <seconds>` with `{"tasks", "seconds"}` (tasks completed and accepted in that time),
// and `wait` by leasing with a long wait until stdin ends, printing each task it holds as
// `{"run", "at"}` (`at` in epoch ms, performance.timeOrigin + now) before completing it.
//
//   node --import tsx bench/run-workers.ts
import { Agent, request } from 'node:http';
import { createInterface } from 'node:readline';

interface Settings {
  url: string;
  access: string;
  workers: string[];
  batch: number;
  /** Complete each batch and lease the next in one call (a completion's `next`), as the worker command does. */
  chained?: boolean;
}

const lines = createInterface({ input: process.stdin })[Symbol.asyncIterator]();
const settings = JSON.parse((await lines.next()).value as string) as Settings;
const agent = new Agent({ keepAlive: true, maxSockets: settings.workers.length * 2 });

function post(path: string, body: unknown): Promise<any> {
  const payload = JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const outgoing = request(
      settings.url + path,
      { method: 'POST', agent, headers: { authorization: `Bearer ${settings.access}`, 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) } },
      (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('end', () => {
          const text = Buffer.concat(chunks).toString();
          if (response.statusCode !== 200) reject(new Error(`POST ${path} answered ${response.statusCode}: ${text}`));
          else resolve(JSON.parse(text));
        });
      },
    );
    outgoing.on('error', reject);
    outgoing.end(payload);
  });
}

/** One worker's lease and completion; the tasks accepted. */
async function cycle(worker: string, waitMs: number, held?: (task: any) => void): Promise<number> {
  const { tasks } = await post(`/api/workers/${worker}/lease/`, { max: settings.batch, wait_ms: waitMs });
  if (tasks.length === 0) return 0;
  for (const task of tasks) held?.(task);
  const { results } = await post(`/api/workers/${worker}/complete/`, { results: tasks.map((task: any) => ({ task: task.id, lease: task.lease, score: 0.5 })) });
  return results.filter((result: any) => result.outcome === 'accepted').length;
}

/** One worker's lifecycles until `until`, each completion leasing the next batch in the same call: the tasks accepted. */
async function chainedCycles(worker: string, until: number): Promise<number> {
  let { tasks } = await post(`/api/workers/${worker}/lease/`, { max: settings.batch, wait_ms: 0 });
  let accepted = 0;
  while (tasks.length > 0) {
    const next = performance.now() < until ? { next: { max: settings.batch, wait_ms: 0 } } : {};
    const answer = await post(`/api/workers/${worker}/complete/`, { results: tasks.map((task: any) => ({ task: task.id, lease: task.lease, score: 0.5 })), ...next });
    accepted += answer.results.filter((result: any) => result.outcome === 'accepted').length;
    tasks = answer.tasks ?? [];
  }
  return accepted;
}

process.stdout.write(`${JSON.stringify({ ready: true })}\n`);
for (let line = await lines.next(); !line.done; line = await lines.next()) {
  const [command, argument] = (line.value as string).split(' ');
  if (command === 'go') {
    const until = performance.now() + Number(argument) * 1000;
    const started = performance.now();
    const done = await Promise.all(settings.workers.map(async (worker) => {
      if (settings.chained) return chainedCycles(worker, until);
      let tasks = 0;
      while (performance.now() < until) tasks += await cycle(worker, 0);
      return tasks;
    }));
    process.stdout.write(`${JSON.stringify({ tasks: done.reduce((a, b) => a + b, 0), seconds: (performance.now() - started) / 1000 })}\n`);
  } else if (command === 'wait') {
    let running = true;
    const stopping = lines.next().then(() => (running = false));
    await Promise.all(settings.workers.map(async (worker) => {
      while (running) {
        await cycle(worker, 2000, (task) => process.stdout.write(`${JSON.stringify({ run: task.run, at: performance.timeOrigin + performance.now() })}\n`));
      }
    }));
    await stopping;
    break;
  }
}
process.exit(0);
