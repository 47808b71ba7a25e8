// The worker's protocol client against a scripted HTTP server (retries while the service cannot
// answer, a refusal is final, an abort ends a retrying call, a lease whose answer may have been
// lost is said so), and the worker loop against a scripted protocol, for what a real service
// rarely shows: leases lost on the way, a lease that ran out before its task started, results
// that pile up while the service does not take them.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { WorkerLoop, type Executor } from '../../src/worker/worker-loop.ts';
import { WorkerProtocol, WorkerRefused, type Leased } from '../../src/worker/worker-protocol.ts';
import type { LeasedTask } from '../../src/worker/worker-task.ts';
import { freePort } from '../../scripts/service-process.ts';
import { until } from '../helpers/wait.ts';

type Answer = (request: IncomingMessage, response: ServerResponse, body: string) => void;

/** A server answering its requests in turn with `answers` (the last one again and again). */
async function scripted(answers: Answer[], port = 0): Promise<{ url: string; seen: string[]; server: Server }> {
  const seen: string[] = [];
  const server = createServer((request, response) => {
    let body = '';
    request.on('data', (chunk) => (body += chunk));
    request.on('end', () => {
      seen.push(`${request.method} ${request.url} ${request.headers['x-api-key']}`);
      answers[Math.min(seen.length - 1, answers.length - 1)]!(request, response, body);
    });
  });
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, seen, server };
}

const json = (status: number, body: unknown, headers: Record<string, string> = {}): Answer => (_request, response) => {
  response.writeHead(status, { 'content-type': 'application/json', ...headers });
  response.end(JSON.stringify(body));
};

const close = (server: Server) => new Promise<void>((resolve) => {
  server.close(() => resolve());
  server.closeAllConnections();
});

const fast = { baseMs: 5, maxMs: 20 };

test('a call the service cannot answer now (503 with Retry-After, then a reset connection) is tried again until it is answered; the log says so once and when it is back', async () => {
  const reset: Answer = (request) => request.socket.destroy();
  const { url, seen, server } = await scripted([json(503, { detail: 'busy' }, { 'retry-after': '0' }), reset, json(201, { id: 'w1' })]);
  const notes: string[] = [];
  const protocol = new WorkerProtocol({ url, apiKey: 'key', backoff: fast, log: (line) => notes.push(line), random: () => 0 });
  try {
    assert.equal(await protocol.register({ name: 'w', host: 'h', metadata: null }), { id: 'w1' });
    assert.equal(seen, ['POST /api/workers/ key', 'POST /api/workers/ key', 'POST /api/workers/ key']);
    assert.is(notes.length, 2, notes.join('\n'));
    assert.match(notes[0]!, /the service cannot answer now \(POST \/api\/workers\/: answered 503\); trying again in 0\.0 s/);
    assert.match(notes[1]!, /the service answers again/);
  } finally {
    protocol.close();
    await close(server);
  }
});

test('a service not listening yet is waited for', async () => {
  const port = await freePort();
  const protocol = new WorkerProtocol({ url: `http://127.0.0.1:${port}`, apiKey: 'key', backoff: fast });
  let server: Server | undefined;
  const later = setTimeout(async () => (server = (await scripted([json(200, { stop: [], leases: 0 })], port)).server), 150);
  try {
    assert.equal(await protocol.heartbeat('w', []), { stop: [], leases: 0 });
  } finally {
    clearTimeout(later);
    protocol.close();
    if (server) await close(server);
  }
});

test('a refusal is final: WorkerRefused with its status and body; an abort ends a call that keeps being retried', async () => {
  const { url, server } = await scripted([json(400, { run: ['Invalid pk'] }), json(503, {})]);
  const protocol = new WorkerProtocol({ url, apiKey: 'key', backoff: fast });
  try {
    const refused = await protocol.lease('w', { max: 1, wait_ms: 0, run: 'r' }).catch((error: unknown) => error);
    assert.instance(refused, WorkerRefused);
    assert.equal([(refused as WorkerRefused).status, (refused as WorkerRefused).body], [400, { run: ['Invalid pk'] }]);
    assert.match((refused as Error).message, /leasing tasks: the service answered 400 \{"run":\["Invalid pk"\]\}/);
    const stop = new AbortController();
    setTimeout(() => stop.abort(new Error('enough')), 60);
    const aborted = await protocol.heartbeat('w', [], stop.signal).catch((error: unknown) => error);
    assert.is((aborted as Error).message, 'enough');
  } finally {
    protocol.close();
    await close(server);
  }
});

test('a lease whose first try failed after it was sent may have leased tasks: the answer says so; one refused at connect did not', async () => {
  const { url, server } = await scripted([(request) => request.socket.destroy(), json(200, { tasks: [] })]);
  const protocol = new WorkerProtocol({ url, apiKey: 'key', backoff: fast });
  try {
    const leased = await protocol.lease('w', { max: 1, wait_ms: 0, run: null });
    assert.equal([leased.tasks, leased.mayHaveLost], [[], true]);
    assert.is((await protocol.lease('w', { max: 1, wait_ms: 0, run: null })).mayHaveLost, false);
  } finally {
    protocol.close();
    await close(server);
  }
  const port = await freePort();
  const refusedAtConnect = new WorkerProtocol({ url: `http://127.0.0.1:${port}`, apiKey: 'key', backoff: fast });
  let later: Server | undefined;
  const timer = setTimeout(async () => (later = (await scripted([json(200, { tasks: [] })], port)).server), 100);
  try {
    assert.is((await refusedAtConnect.lease('w', { max: 1, wait_ms: 0, run: null })).mayHaveLost, false);
  } finally {
    clearTimeout(timer);
    refusedAtConnect.close();
    if (later) await close(later);
  }
});

test('a lease answered 500, 502 or 504 and tried again may have leased tasks (the service, or a proxy that forwarded it, may have acted); one answered 503 did not', async () => {
  for (const [status, mayHaveLost] of [[500, true], [502, true], [504, true], [503, false]] as const) {
    const { url, server } = await scripted([json(status, { detail: 'upstream' }), json(200, { tasks: [] })]);
    const protocol = new WorkerProtocol({ url, apiKey: 'key', backoff: fast });
    try {
      const leased = await protocol.lease('w', { max: 1, wait_ms: 0, run: null });
      assert.is(leased.mayHaveLost, mayHaveLost, `after ${status}`);
    } finally {
      protocol.close();
      await close(server);
    }
  }
});

test('a completion carrying the next lease sends both in one body; a first try that failed after it was sent may have leased tasks, and the answer says so', async () => {
  const bodies: string[] = [];
  const answer = json(200, { results: [{ task: 't1', outcome: 'accepted' }], tasks: [] });
  const { url, server } = await scripted([
    (request, _response, body) => {
      bodies.push(body);
      request.socket.destroy();
    },
    (request, response, body) => {
      bodies.push(body);
      answer(request, response, body);
    },
  ]);
  const protocol = new WorkerProtocol({ url, apiKey: 'key', backoff: fast });
  try {
    const next = { max: 2, wait_ms: 0, run: null };
    const completed = await protocol.completeAndLease('w', [JSON.stringify({ task: 't1', lease: 'l1', score: 1 })], next);
    assert.equal(completed.results, [{ task: 't1', outcome: 'accepted' }]);
    assert.equal([completed.leased.tasks, completed.leased.mayHaveLost], [[], true]);
    assert.equal(JSON.parse(bodies[1]!), { results: [{ task: 't1', lease: 'l1', score: 1 }], next });
  } finally {
    protocol.close();
    await close(server);
  }
});

/** A task leased for `leaseMs` from now (a negative one has run out already). */
function leasedTask(id: string, leaseMs = 60_000, lease = `lease-${id}`): LeasedTask {
  return {
    id,
    lease,
    lease_expires_at: new Date(Date.now() + leaseMs).toISOString(),
    run: 'run',
    iteration: { id: 'iteration', iteration_name: 'candidate', agent_code: null },
    datapoint: { id: 'datapoint', order: 0, input: null, persona: null, tags: null },
    attempt: 0,
    try: 1,
    scored_by_service: false,
  };
}

type HeartbeatAnswer = { stop: string[]; leases: number };

/** A promise the test resolves when it wants to. */
function gate(): { open: () => void; opened: Promise<void> } {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  return { open, opened };
}

/** A protocol whose answers a test scripts; it records what it was asked. */
class FakeProtocol {
  calls: string[] = [];
  registered = 0;
  leases: (() => Promise<Leased> | Leased)[] = [];
  heartbeats: ((tasks: readonly string[], signal?: AbortSignal) => HeartbeatAnswer | Promise<HeartbeatAnswer>)[] = [];
  completions: string[][] = [];
  completeAnswer: (items: string[], signal?: AbortSignal) => Promise<{ results: { task: string; outcome: 'accepted' }[] }> = async (items) => ({
    results: items.map((item) => ({ task: JSON.parse(item).task, outcome: 'accepted' as const })),
  });

  async register() {
    this.calls.push('register');
    return { id: `worker-${++this.registered}` };
  }
  async lease(worker: string, _body: unknown, signal?: AbortSignal): Promise<Leased> {
    this.calls.push(`lease ${worker}`);
    const next = this.leases.shift();
    if (next) return next();
    return new Promise((_, reject) => signal?.addEventListener('abort', () => reject(signal.reason)));
  }
  async heartbeat(worker: string, tasks: readonly string[], signal?: AbortSignal) {
    this.calls.push(`heartbeat ${worker} ${tasks.join(',')}`);
    return (this.heartbeats.shift() ?? (() => ({ stop: [], leases: tasks.length })))(tasks, signal);
  }
  async complete(worker: string, items: string[], signal?: AbortSignal) {
    this.calls.push(`complete ${worker}`);
    this.completions.push(items);
    return this.completeAnswer(items, signal);
  }
  /** A completion carrying the next lease: answered as a completion, with the next scripted lease if there is one (it does not wait). */
  async completeAndLease(worker: string, items: string[], _next: unknown, signal?: AbortSignal) {
    this.calls.push(`complete+lease ${worker}`);
    this.completions.push(items);
    const answer = await this.completeAnswer(items, signal);
    const next = this.leases.shift();
    return { ...answer, leased: next ? await next() : leased([]) };
  }
  async goodbye(worker: string) {
    this.calls.push(`goodbye ${worker}`);
  }
  async run() {
    return { id: 'run', status: 'running', counts: { total: 1, queued: 0, leased: 0, done: 0, dead: 0, skipped: 0, cancelled: 0 } };
  }
  close() {
    this.calls.push('close');
  }
}

const leased = (tasks: LeasedTask[], mayHaveLost = false): Leased => ({ tasks, receivedAtMs: Date.now(), offsetMs: 0, mayHaveLost });
const ok: Executor = async () => ({ kind: 'result', fields: { output: 'ok', score: 1 } });

function loopOf(protocol: FakeProtocol, execute: Executor = ok, settings: { concurrency?: number; batch?: number; finishMs?: number; graceMs?: number } = {}) {
  return new WorkerLoop({
    protocol: protocol as never,
    execute,
    concurrency: settings.concurrency ?? 2,
    batch: settings.batch ?? 2,
    run: null,
    graceMs: settings.graceMs ?? 1000,
    finishMs: settings.finishMs ?? 1000,
    identity: { name: 'test', host: 'here', metadata: null },
  });
}

test('leases lost on the way (the service holds more than the worker knows): it finishes what it holds, says goodbye and registers again', async () => {
  const protocol = new FakeProtocol();
  protocol.leases.push(() => leased([leasedTask('a')], true));
  // The count heartbeat: the service holds 'a' and two leases whose answer was lost.
  protocol.heartbeats.push((tasks) => ({ stop: [], leases: tasks.length + 2 }));
  const loop = loopOf(protocol);
  const running = loop.run();
  await until(() => protocol.registered === 2, 'registered again');
  await until(() => protocol.calls.includes('lease worker-2'), 'leasing as the new worker');
  loop.stop();
  assert.is(await running, 'stopped');
  const order = protocol.calls.filter((call) => !call.startsWith('heartbeat') || call.includes('worker-1 a'));
  assert.equal(order.slice(0, 7), ['register', 'lease worker-1', 'heartbeat worker-1 a', 'complete worker-1', 'goodbye worker-1', 'register', 'lease worker-2']);
  assert.is(loop.counts.done, 1, 'the task it held was finished and sent before the goodbye');
});

test('no leases lost (the counts agree): it carries on as it is', async () => {
  const protocol = new FakeProtocol();
  protocol.leases.push(() => leased([], true));
  const loop = loopOf(protocol);
  const running = loop.run();
  await until(() => protocol.calls.filter((call) => call.startsWith('lease')).length === 2, 'leasing again');
  loop.stop();
  await running;
  assert.is(protocol.registered, 1);
  assert.ok(protocol.calls.includes('heartbeat worker-1 '), 'it counted');
});

test('a task whose lease ran out before it started waits for a heartbeat: started if still the worker\'s, dropped if the service took it back', async () => {
  const protocol = new FakeProtocol();
  protocol.leases.push(() => leased([leasedTask('late', -10), leasedTask('gone', -10)]));
  protocol.heartbeats.push(() => ({ stop: ['gone'], leases: 1 }));
  const started: string[] = [];
  const loop = loopOf(protocol, async (task) => {
    started.push(task.id);
    return { kind: 'result', fields: { output: 'ok', score: 1 } };
  });
  const running = loop.run();
  await until(() => loop.counts.done === 1, 'the late task done');
  loop.stop();
  await running;
  assert.equal(started, ['late']);
  assert.is(loop.counts.stopped, 1);
  assert.is(protocol.calls.find((call) => call.startsWith('heartbeat')), 'heartbeat worker-1 late,gone');
});

test('short tasks: once a few have shown it, a task is leased ahead and waits for the slot, which starts it the moment it frees', async () => {
  const protocol = new FakeProtocol();
  let task = 0;
  for (let i = 0; i < 12; i++) protocol.leases.push(() => leased([leasedTask(`t${++task}`)]));
  let most = 0;
  const loop = loopOf(
    protocol,
    async () => {
      await new Promise((resolve) => setTimeout(resolve, 5));
      most = Math.max(most, loop.load().held);
      return { kind: 'result', fields: { output: 'ok', score: 1 } };
    },
    { concurrency: 1, batch: 1 },
  );
  const running = loop.run();
  await until(() => loop.counts.done === 12, 'twelve tasks done');
  loop.stop();
  await running;
  assert.is(most, 2, 'one running, one leased ahead');
  assert.is(loop.counts.running, 0);
});

test('while the service does not take results, the worker leases no more: the completion carries the next lease, and at a stop the results are given up after the time to finish', async () => {
  const protocol = new FakeProtocol();
  let task = 0;
  for (let i = 0; i < 10; i++) protocol.leases.push(() => leased([leasedTask(`t${++task}`)]));
  protocol.completeAnswer = (_items, signal) => new Promise((_, reject) => signal?.addEventListener('abort', () => reject(signal.reason)));
  const loop = loopOf(protocol, ok, { concurrency: 1, batch: 1, finishMs: 50 });
  const running = loop.run();
  await until(() => loop.load().unsent === 1, 'a result on its way');
  await new Promise((resolve) => setTimeout(resolve, 100));
  assert.equal(protocol.calls.filter((call) => call.startsWith('lease') || call.startsWith('complete')), ['lease worker-1', 'complete+lease worker-1'], 'its next lease rides with the result, and waits with it');
  loop.stop();
  assert.is(await running, 'stopped');
  assert.ok(protocol.calls.includes('goodbye worker-1'));
  assert.is(protocol.calls.at(-1), 'close');
});

test('tasks that come with a completion answered after a stop are not run: they go back with the goodbye', async () => {
  const protocol = new FakeProtocol();
  protocol.leases.push(() => leased([leasedTask('first')]));
  let answer: () => void = () => {};
  protocol.completeAnswer = (items) => new Promise((resolve) => (answer = () => resolve({ results: items.map((item) => ({ task: JSON.parse(item).task, outcome: 'accepted' as const })) })));
  // The next lease rides with the first task's result, and brings a task.
  protocol.leases.push(() => leased([leasedTask('late')]));
  const started: string[] = [];
  const loop = loopOf(protocol, async (task) => {
    started.push(task.id);
    return { kind: 'result', fields: { output: 'ok', score: 1 } };
  }, { concurrency: 1, batch: 1 });
  const running = loop.run();
  await until(() => protocol.calls.includes('complete+lease worker-1'), 'the result on its way with the next lease');
  loop.stop();
  answer();
  assert.is(await running, 'stopped');
  assert.equal(started, ['first']);
  assert.equal([loop.counts.done, loop.counts.leased], [1, 1]);
  assert.ok(protocol.calls.includes('goodbye worker-1'));
});

test('with a lease of its own waiting, results go out alone, and it stops leasing once concurrency + batch of them wait', async () => {
  const protocol = new FakeProtocol();
  let task = 0;
  // Each lease answers a moment after it is asked: results finishing meanwhile go out alone.
  for (let i = 0; i < 10; i++) protocol.leases.push(async () => {
    await new Promise((resolve) => setTimeout(resolve, 20));
    return leased([leasedTask(`t${++task}`)]);
  });
  protocol.completeAnswer = (_items, signal) => new Promise((_, reject) => signal?.addEventListener('abort', () => reject(signal.reason)));
  const tenMs: Executor = async () => {
    await new Promise((resolve) => setTimeout(resolve, 10));
    return { kind: 'result', fields: { output: 'ok', score: 1 } };
  };
  const loop = loopOf(protocol, tenMs, { concurrency: 2, batch: 1, finishMs: 50 });
  const running = loop.run();
  await until(() => loop.load().unsent >= 3, 'three results waiting');
  const leases = () => protocol.calls.filter((call) => call.startsWith('lease')).length;
  const leasedThen = leases();
  await new Promise((resolve) => setTimeout(resolve, 150));
  assert.equal([leases(), loop.load().held], [leasedThen, 0], 'no lease once concurrency + batch results wait: what it held finished, nothing more came');
  assert.ok(protocol.calls.includes('complete worker-1'), 'a result sent alone while a lease was waiting');
  loop.stop();
  assert.is(await running, 'stopped');
});

test('one task at a time: each result carries the next lease, one call a task', async () => {
  const protocol = new FakeProtocol();
  let task = 0;
  for (let i = 0; i < 6; i++) protocol.leases.push(() => leased([leasedTask(`t${++task}`)]));
  const loop = loopOf(protocol, ok, { concurrency: 1, batch: 1 });
  const running = loop.run();
  await until(() => loop.counts.done === 6, 'six tasks done');
  loop.stop();
  await running;
  const calls = protocol.calls.filter((call) => call.startsWith('lease') || call.startsWith('complete'));
  assert.equal(calls.slice(0, 6), ['lease worker-1', ...Array(5).fill('complete+lease worker-1')]);
});

test('a completion\'s answers settle each result: accepted by status, stale, cancelled, and a refused one sent again as the decisions say', async () => {
  const protocol = new FakeProtocol();
  protocol.leases.push(() => leased([leasedTask('a'), leasedTask('b'), leasedTask('c'), leasedTask('d')]));
  let first = true;
  protocol.completeAnswer = async (items) => {
    if (!first) return { results: items.map((item) => ({ task: JSON.parse(item).task, outcome: 'accepted' as const })) };
    first = false;
    const outcomes = ['accepted', 'stale', 'cancelled', 'invalid'];
    return { results: items.map((item, i) => ({ task: JSON.parse(item).task, outcome: outcomes[i], ...(outcomes[i] === 'invalid' ? { errors: { score: ['A valid number is required.'] } } : {}) })) } as never;
  };
  const loop = loopOf(protocol, ok, { concurrency: 4, batch: 4 });
  const running = loop.run();
  await until(() => protocol.completions.length === 2, 'the refused result sent again');
  loop.stop();
  await running;
  assert.equal([loop.counts.done, loop.counts.errors, loop.counts.stale, loop.counts.cancelled, loop.counts.refused], [1, 1, 1, 1, 0], 'the refused one accepted as an error result');
  assert.equal(protocol.completions[1]!.map((item) => JSON.parse(item)), [{ task: 'd', lease: 'lease-d', status: 'error', error: 'the service refused this result: {"score":["A valid number is required."]}', output: 'ok' }], 'an error result saying why, the output kept');
});

test('a task of a run the service scores: its result is sent without the scores the executor gives, from the start; a task of another run keeps them', async () => {
  const protocol = new FakeProtocol();
  protocol.leases.push(() => leased([{ ...leasedTask('scored'), scored_by_service: true }, leasedTask('own')]));
  const loop = loopOf(protocol, ok, { concurrency: 2, batch: 2 });
  const running = loop.run();
  await until(() => loop.counts.done === 2, 'both accepted');
  loop.stop();
  await running;
  const sent = protocol.completions.flat().map((item) => JSON.parse(item) as Record<string, unknown>);
  assert.equal(sent.find((item) => item.task === 'scored'), { task: 'scored', lease: 'lease-scored', output: 'ok' });
  assert.equal(sent.find((item) => item.task === 'own'), { task: 'own', lease: 'lease-own', output: 'ok', score: 1 });
});

/** An executor that runs each copy (by lease token) until its gate opens or its signal aborts; it records which copies were aborted. */
function gated(gates: Record<string, Promise<void>>) {
  const started: string[] = [];
  const aborted: string[] = [];
  const execute: Executor = async (task, control) => {
    started.push(task.lease);
    await new Promise<void>((resolve) => {
      void gates[task.lease]?.then(resolve);
      control.signal.addEventListener('abort', () => {
        aborted.push(task.lease);
        resolve();
      });
    });
    return { kind: 'result', fields: { output: task.lease, score: 1 } };
  };
  return { started, aborted, execute };
}

const sentLeases = (protocol: FakeProtocol) => protocol.completions.flat().map((item) => JSON.parse(item).lease as string);

test('a task leased again to the same worker (its first lease ran out) while its first copy runs: the copies are held apart; the first ending leaves the second held, and a stop aborts it', async () => {
  const protocol = new FakeProtocol();
  const first = gate();
  protocol.leases.push(() => leased([leasedTask('X', 60_000, 'L1')]));
  protocol.leases.push(() => leased([leasedTask('X', 60_000, 'L2')]));
  const copies = gated({ L1: first.opened });
  const loop = loopOf(protocol, copies.execute, { concurrency: 2, batch: 1, graceMs: 50 });
  const running = loop.run();
  await until(() => copies.started.length === 2, 'both copies running');
  assert.is(loop.load().held, 2);
  first.open();
  await until(() => sentLeases(protocol).includes('L1'), 'the first copy\'s result sent');
  assert.equal([loop.load().held, loop.counts.running], [1, 1], 'the second copy is still held');
  loop.stop();
  assert.is(await running, 'stopped');
  assert.equal(copies.aborted, ['L2'], 'the second copy was aborted at the grace\'s end, before the worker ended');
  assert.is(loop.counts.stopped, 1);
});

test('a heartbeat\'s stop means the copies it named: a copy of the same task leased again after it was sent runs on', async () => {
  const protocol = new FakeProtocol();
  const second = gate();
  const secondDone = gate();
  const beatAnswer = gate();
  // L1 lasts a second: heartbeats a third of that apart.
  protocol.leases.push(() => leased([leasedTask('X', 1000, 'L1')]));
  protocol.leases.push(async () => {
    await second.opened;
    return leased([leasedTask('X', 60_000, 'L2')]);
  });
  // Sent while only L1 is held; answered (L1 ran out: stop X) once L2 has come.
  protocol.heartbeats.push(async () => {
    await beatAnswer.opened;
    return { stop: ['X'], leases: 1 };
  });
  const copies = gated({ L2: secondDone.opened });
  const loop = loopOf(protocol, copies.execute, { concurrency: 2, batch: 1 });
  const running = loop.run();
  await until(() => protocol.calls.includes('heartbeat worker-1 X'), 'a heartbeat naming X');
  second.open();
  await until(() => copies.started.includes('L2'), 'the second copy running');
  beatAnswer.open();
  await until(() => copies.aborted.length > 0, 'a copy stopped');
  secondDone.open();
  await until(() => sentLeases(protocol).includes('L2'), 'the second copy\'s result sent');
  loop.stop();
  await running;
  assert.equal(copies.aborted, ['L1'], 'the stop meant the copy whose lease ran out');
  assert.equal(sentLeases(protocol), ['L2']);
});

test('the lost-lease count waits for no completion: one about to go out when the count starts stays back until it is answered, and the lost lease is found', async () => {
  const protocol = new FakeProtocol();
  // The leases the service holds for this worker, as it decides each call.
  const serviceHolds = new Set(['a', 'b']);
  const bDone = gate();
  const firstAnswer = gate();
  protocol.leases.push(() => leased([leasedTask('a'), leasedTask('b')]));
  // a's completion carries the next lease: the service leases 'lost', and its answer comes after a reset, empty.
  protocol.leases.push(() => {
    serviceHolds.add('lost');
    return leased([], true);
  });
  let counting = false;
  let completionDuringCount = false;
  protocol.completeAnswer = async (items) => {
    if (counting) completionDuringCount = true;
    for (const item of items) serviceHolds.delete(JSON.parse(item).task);
    if (protocol.completions.length === 1) await firstAnswer.opened;
    return { results: items.map((item) => ({ task: JSON.parse(item).task, outcome: 'accepted' as const })) };
  };
  // The count: decided a moment after it is sent (a completion sent beside it would land first).
  protocol.heartbeats.push(async () => {
    counting = true;
    await new Promise((resolve) => setTimeout(resolve, 20));
    counting = false;
    return { stop: [], leases: serviceHolds.size };
  });
  const loop = loopOf(protocol, async (task) => {
    if (task.id === 'b') await bDone.opened;
    return { kind: 'result', fields: { output: 'ok', score: 1 } };
  });
  const running = loop.run();
  await until(() => protocol.calls.includes('complete+lease worker-1'), 'a\'s result on its way with the next lease');
  bDone.open();
  await until(() => loop.load().unsent === 2, 'b\'s result waiting behind it');
  firstAnswer.open();
  await until(() => protocol.registered === 2, 'registered again: the lost lease found');
  loop.stop();
  await running;
  assert.not.ok(completionDuringCount, 'no completion went out while the count was on its way');
  assert.is(loop.counts.done, 2);
});

test('a stop while the lost-lease count cannot reach the service ends the count: the worker stops and says goodbye', async () => {
  const protocol = new FakeProtocol();
  protocol.leases.push(() => leased([], true));
  // The count's heartbeat is tried again and again until its signal aborts.
  protocol.heartbeats.push((_tasks, signal) => new Promise((_, reject) => signal?.addEventListener('abort', () => reject(signal.reason))));
  const loop = loopOf(protocol, ok, { finishMs: 100, graceMs: 50 });
  const running = loop.run();
  await until(() => protocol.calls.includes('heartbeat worker-1 '), 'the count on its way');
  loop.stop();
  let timer: NodeJS.Timeout | undefined;
  const ended = await Promise.race([running, new Promise((resolve) => (timer = setTimeout(() => resolve('still running after 2 s'), 2000)))]);
  clearTimeout(timer);
  assert.is(ended, 'stopped');
  assert.is(protocol.calls.at(-2), 'goodbye worker-1');
  assert.is(protocol.registered, 1);
});

test('a task cut short by the worker\'s own stop (interrupted) sends nothing: its lease goes back with the goodbye, no try used', async () => {
  const protocol = new FakeProtocol();
  protocol.leases.push(() => leased([leasedTask('cut short'), leasedTask('finished')]));
  const stopping = gate();
  const executor: Executor = async (task) => {
    await stopping.opened;
    return task.id === 'cut short' ? { kind: 'interrupted' } : { kind: 'result', fields: { output: 'ok', score: 1 } };
  };
  const loop = loopOf(protocol, executor, { graceMs: 1000, finishMs: 100, concurrency: 2 });
  const running = loop.run();
  await until(() => loop.counts.running === 2, 'both tasks running');
  loop.stop();
  stopping.open();
  assert.is(await running, 'stopped');
  assert.equal([loop.counts.stopped, loop.counts.done, loop.counts.errors], [1, 1, 0]);
  assert.equal(protocol.completions.flat().map((item) => JSON.parse(item).task), ['finished'], 'only the finished task is sent');
  assert.ok(protocol.calls.includes('goodbye worker-1'));
});

test('a stop with a grace: a task that ignores its aborted signal is not waited for past the grace; its late outcome is dropped', async () => {
  const protocol = new FakeProtocol();
  protocol.leases.push(() => leased([leasedTask('stubborn')]));
  const late = gate();
  const ignoring: Executor = async () => {
    await late.opened;
    return { kind: 'result', fields: { output: 'late', score: 1 } };
  };
  const loop = loopOf(protocol, ignoring, { graceMs: 50, finishMs: 100 });
  const running = loop.run();
  await until(() => loop.counts.running === 1, 'the task running');
  loop.stop();
  let timer: NodeJS.Timeout | undefined;
  const ended = await Promise.race([running, new Promise((resolve) => (timer = setTimeout(() => resolve('still waiting after 1 s'), 1000)))]);
  clearTimeout(timer);
  late.open();
  await new Promise((resolve) => setImmediate(resolve));
  assert.is(ended, 'stopped');
  assert.equal([loop.counts.running, loop.counts.stopped, loop.counts.done], [0, 1, 0]);
  assert.equal([loop.load(), protocol.completions], [{ held: 0, unsent: 0 }, []], 'its late outcome was dropped, not sent');
  assert.ok(protocol.calls.includes('goodbye worker-1'));
});

test('draining after lost leases: a heartbeat still being tried again when the drain says goodbye is given up, not left to be refused as the old worker\'s and stop the worker', async () => {
  const protocol = new FakeProtocol();
  const gone = new Set<string>();
  const goodbye = protocol.goodbye.bind(protocol);
  protocol.goodbye = async (worker: string) => {
    gone.add(worker);
    return goodbye(worker);
  };
  // A second's lease: heartbeats a third of a second apart, while the task runs 450 ms.
  protocol.leases.push(() => leased([leasedTask('a', 1000)], true));
  // The count: the service holds a lease more than the worker knows.
  protocol.heartbeats.push((tasks) => ({ stop: [], leases: tasks.length + 1 }));
  // The next, periodic: the service busy (tried again) for 300 ms, unless given up; by then a worker said goodbye to is unknown.
  let periodicEnded = false;
  protocol.heartbeats.push(async (tasks, signal) => {
    try {
      await new Promise<void>((resolve, reject) => {
        const timer = setTimeout(resolve, 300);
        signal?.addEventListener('abort', () => {
          clearTimeout(timer);
          reject(signal.reason);
        });
      });
      if (gone.has('worker-1')) throw new WorkerRefused(404, { detail: 'Not found.' }, 'heartbeat');
      return { stop: [], leases: tasks.length };
    } finally {
      periodicEnded = true;
    }
  });
  const loop = loopOf(protocol, async () => {
    await new Promise((resolve) => setTimeout(resolve, 450));
    return { kind: 'result', fields: { output: 'ok', score: 1 } };
  });
  let failure: unknown;
  const running = loop.run().catch((error: unknown) => (failure = error));
  await until(() => protocol.calls.includes('heartbeat worker-1 a') && protocol.calls.filter((call) => call.startsWith('heartbeat worker-1')).length === 2, 'the periodic heartbeat on its way');
  await until(() => protocol.registered === 2 && periodicEnded, 'registered again, the heartbeat ended');
  await new Promise((resolve) => setTimeout(resolve, 20));
  loop.stop();
  assert.is(await running, 'stopped');
  assert.is(failure, undefined);
  const order = protocol.calls.filter((call) => call.startsWith('goodbye') || call.startsWith('register'));
  assert.equal(order, ['register', 'goodbye worker-1', 'register', 'goodbye worker-2']);
});

test.run();
