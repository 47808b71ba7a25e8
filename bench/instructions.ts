// Instructions per request, counted by valgrind's callgrind: a measure that does not move with the
// machine, where time here swings by 2x. It compares builds and finds what a change saved, a few
// thousand instructions that alternating rounds cannot tell from noise. Not part of `npm run
// bench`: it needs valgrind (Debian's package) and runs ~50x slower than the service.
//
//   node --import tsx bench/instructions.ts [get|post] [requests]
//
// It runs itself again under callgrind. Inside, it starts the service in this process on a
// temporary LMDB store, warms it up with 6,000 requests over 20 raw sockets, zeroes the counters,
// sends the measured requests, and dumps them: the count covers the service and the client, both
// in this process, so compare counts of the same mode only. `get` reads an agent with a JWT;
// `post` posts iterations to one running job. A run whose window catches a compilation or a
// collection counts a few percent more (two runs of one build: 235,700 and 245,700 a GET): take
// the lowest of three runs of each build.
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { pino } from 'pino';
import { sendJson, signUp } from './harness.ts';

type Mode = 'get' | 'post';
const warmUpRequests = 6000;
const connections = 20;

const [first = 'get', second] = process.argv.slice(2);
if (first === '--inside') await inside(second as Mode, Number(process.argv[4]));
else outside(first as Mode, Number(second ?? 2000));

/** Runs this script under callgrind and prints its count per measured request. */
function outside(mode: Mode, requests: number): void {
  if (mode !== 'get' && mode !== 'post') throw new Error('mode is get or post');
  if (spawnSync('valgrind', ['--version']).status !== 0) throw new Error('valgrind is not installed (apt-get install valgrind)');
  const dir = mkdtempSync(join(tmpdir(), 'instructions-'));
  try {
    const script = fileURLToPath(import.meta.url);
    const run = spawnSync(
      'valgrind',
      ['--tool=callgrind', '--smc-check=all-non-file', `--callgrind-out-file=${join(dir, 'out.%p')}`,
        process.execPath, '--single-threaded', '--max-semi-space-size=64', '--import', 'tsx', script, '--inside', mode, String(requests)],
      { stdio: ['ignore', 'inherit', 'pipe'] },
    );
    if (run.status !== 0) throw new Error(`the run under callgrind failed:\n${run.stderr.toString().slice(-2000)}`);
    // callgrind_control -d writes the measured part as the first numbered dump.
    const dump = readdirSync(dir).find((name) => name.endsWith('.1'));
    const totals = dump && /^totals: (\d+)/m.exec(readFileSync(join(dir, dump), 'utf8'));
    if (!totals) throw new Error('callgrind wrote no dump of the measured requests');
    console.log(`${mode}: ${Math.round(Number(totals[1]) / requests).toLocaleString('en-US')} instructions per request (${requests} requests)`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

async function inside(mode: Mode, requests: number): Promise<void> {
  const { createService } = await import('../src/service.ts');
  const dataDir = mkdtempSync(join(tmpdir(), 'instructions-store-'));
  const service = await createService({ storage: 'lmdb', dataDir, logger: pino({ level: 'silent' }), limits: { iterationsPerJobMax: 1_000_000 } });
  const { port } = await service.listen(0, '127.0.0.1');
  try {
    const request = await requestsFor(mode, `http://127.0.0.1:${port}`);
    await send(port, request, 0, warmUpRequests);
    execFileSync('callgrind_control', ['-z', String(process.pid)], { stdio: 'ignore' });
    await send(port, request, warmUpRequests, requests);
    execFileSync('callgrind_control', ['-d', String(process.pid)], { stdio: 'ignore' });
  } finally {
    await service.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

/** A user, project, agent and running job, and the raw HTTP request of the mode's n-th call. */
async function requestsFor(mode: Mode, url: string): Promise<(n: number) => Buffer> {
  const { access, projectId } = await signUp(url, 'counted');
  const agent = await sendJson(url, 'POST', '/api/agents/', { project: projectId, name: 'A', slug: 'a', model: 'm' }, access);
  const job = await sendJson(url, 'POST', '/api/jobs/', { project: projectId, job_type: 'prompt_tuning', status: 'running' }, access);
  if (mode === 'get') {
    const get = Buffer.from(`GET /api/agents/${agent.id}/ HTTP/1.1\r\nhost: x\r\nauthorization: Bearer ${access}\r\n\r\n`);
    return () => get;
  }
  return (n) => {
    const body = JSON.stringify({
      job: job.id, iteration_name: `counted-${n}`, agent_code: `def run(question):\n    return model.answer(question, seed=${n})`,
      avg_score: (n % 100) / 100, description: 'posted by bench/instructions.ts', dimension_scores: { accuracy: 0.5, tone: 0.25 }, order: 100 + n,
    });
    return Buffer.from(
      `POST /api/job-iterations/ HTTP/1.1\r\nhost: x\r\nauthorization: Bearer ${access}\r\ncontent-type: application/json\r\n` +
        `content-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
    );
  };
}

/** Sends requests `from` .. `from + count - 1`, one at a time per socket, each after its answer. */
async function send(port: number, request: (n: number) => Buffer, from: number, count: number): Promise<void> {
  let next = from;
  const end = from + count;
  await Promise.all(
    Array.from({ length: connections }, () =>
      new Promise<void>((resolve, reject) => {
        const socket = connect(port, '127.0.0.1');
        let received = '';
        const sendNext = () => {
          if (next >= end) {
            socket.end(resolve);
            return;
          }
          socket.write(request(next++));
        };
        socket.on('connect', sendNext);
        socket.on('error', reject);
        socket.on('data', (chunk) => {
          received += chunk.toString('latin1');
          for (let headEnd; (headEnd = received.indexOf('\r\n\r\n')) >= 0; ) {
            const length = Number(/content-length: (\d+)/i.exec(received.slice(0, headEnd))?.[1] ?? 0);
            if (received.length < headEnd + 4 + length) return;
            if (!received.startsWith('HTTP/1.1 20')) {
              reject(new Error(`an answer was not a success: ${received.slice(0, 300)}`));
              return;
            }
            received = received.slice(headEnd + 4 + length);
            sendNext();
          }
        });
      }),
    ),
  );
}
