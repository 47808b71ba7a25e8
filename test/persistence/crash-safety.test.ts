// Crash safety: the service, started as `npm start` starts it, takes concurrent writes of every
// kind (agents, datasets, activations, jobs, iterations, moves, deletes, results, OTLP spans as
// JSON and protobuf) and is killed with SIGKILL at a random moment, again and again, then stopped with
// SIGTERM under the same load. After every restart each acknowledged write is there and intact,
// nothing half-applied or never sent is visible, and the invariants between resources hold.
import { rmSync } from 'node:fs';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { Random, testSeed } from '../fuzz/random.ts';
import { Client, connectionLost, type Reply } from '../helpers/client.ts';
import { createProject, registerUser } from '../helpers/fixtures.ts';
import { spawnService, type ServiceProcess } from '../helpers/process.ts';
import { tempDataDir } from '../helpers/service.ts';
import { protobufOf } from '../traces/helpers.ts';

const killRounds = 10;
const writers = 6;
/** Small, so that snapshots (and dataset parts) are written often under load and crash midway too. */
const snapshotEvery = '8';

// ---------------------------------------------------------------------------------------------
// What each value may read back as.

/** Logical time: every send and every answer takes the next tick. */
let clock = 0;
const tick = () => ++clock;

interface Write<T> {
  value: T;
  sentAt: number;
  /** When its answer arrived; null while in flight (and forever, when the process died first). */
  answeredAt: number | null;
}

/**
 * One value the service holds, and the writes to it since it was last read back. An answered
 * write is durable; one in flight when the process died may or may not have landed. A write is
 * ruled out once a write sent after its answer was answered too: that one was applied later.
 */
class Register<T> {
  private writes: Write<T>[];

  constructor(initial: T) {
    this.writes = [{ value: initial, sentAt: tick(), answeredAt: tick() }];
  }

  send(value: T): Write<T> {
    const write: Write<T> = { value, sentAt: tick(), answeredAt: null };
    this.writes.push(write);
    return write;
  }

  answered(write: Write<T>): void {
    write.answeredAt = tick();
  }

  /** The service refused the write: it changed nothing. */
  refused(write: Write<T>): void {
    this.writes = this.writes.filter((candidate) => candidate !== write);
  }

  possible(): T[] {
    const superseded = (write: Write<T>) =>
      write.answeredAt !== null && this.writes.some((later) => later.answeredAt !== null && later.sentAt > write.answeredAt!);
    return this.writes.filter((write) => !superseded(write)).map((write) => write.value);
  }

  /** What was read back becomes the one known value. */
  settle(observed: T): void {
    this.writes = [{ value: observed, sentAt: tick(), answeredAt: tick() }];
  }
}

function assertPossible<T>(register: Register<T>, observed: T, what: string): void {
  const possible = register.possible();
  const text = JSON.stringify(observed);
  assert.ok(
    possible.some((value) => JSON.stringify(value) === text),
    `${what} reads ${text}; possible after the crash: ${JSON.stringify(possible)}`,
  );
}

// ---------------------------------------------------------------------------------------------
// The records the test wrote, keyed by a unique name it chose (ids of writes whose answer was
// lost are learned from the listings).

interface SentDatapoint {
  input: unknown;
  expected_output: unknown;
  order: number;
  persona: string;
  tags: unknown;
}

interface AgentModel {
  slug: string;
  id: string | null;
  exists: Register<boolean>;
  description: Register<string>;
  /** The name of the active dataset. */
  active: Register<string | null>;
}

interface DatasetModel {
  name: string;
  agent: AgentModel;
  datapoints: SentDatapoint[];
  id: string | null;
  version: number | null;
  exists: Register<boolean>;
}

interface JobModel {
  slug: string;
  agent: AgentModel;
  id: string | null;
  exists: Register<boolean>;
  bestScore: Register<number>;
}

interface IterationModel {
  name: string;
  id: string | null;
  deleting: boolean;
  exists: Register<boolean>;
  /** The prompt_slug of its job. */
  job: Register<string>;
  avgScore: Register<number>;
  /** The name of the dataset version its results are pinned to. */
  pinned: Register<string | null>;
  /** Each result row sent, by "order/attempt": its score, or null while absent. */
  results: Map<string, Register<number | null>>;
}

interface SpanBatch {
  traceId: string;
  spans: { spanId: string; name: string }[];
  exists: Register<boolean>;
}

class World {
  readonly agents = new Map<string, AgentModel>();
  readonly datasets = new Map<string, DatasetModel>();
  readonly jobs = new Map<string, JobModel>();
  readonly iterations = new Map<string, IterationModel>();
  readonly spanBatches: SpanBatch[] = [];
  /** Answers no write should get while the service runs. */
  readonly unexpected: string[] = [];
  private counter = 0;

  constructor(readonly project: string) {}

  key(label: string): string {
    return `${label}-${++this.counter}`;
  }

  usable<T extends { id: string | null; exists: Register<boolean> }>(records: Iterable<T>): T[] {
    return [...records].filter((record) => record.id !== null && record.exists.possible().every(Boolean));
  }
}

/**
 * Sends a request that changes `registers`: answered (2xx) writes are durable, refused ones changed
 * nothing, and a network error (the process died) leaves them in flight.
 */
async function tracked(
  world: World,
  changes: [Register<any>, unknown][],
  request: () => Promise<Reply>,
  alsoExpected: number[] = [],
): Promise<Reply> {
  const writes = changes.map(([register, value]) => [register, register.send(value)] as const);
  const reply = await request();
  const ok = reply.status >= 200 && reply.status < 300;
  for (const [register, write] of writes) {
    if (ok) register.answered(write);
    else register.refused(write);
  }
  if (!ok && !alsoExpected.includes(reply.status)) world.unexpected.push(`${reply.status} ${reply.text.slice(0, 200)}`);
  return reply;
}

// ---------------------------------------------------------------------------------------------
// The load: each writer picks one write after another until the process dies under it.

type Operation = (world: World, client: Client, random: Random) => Promise<unknown>;

const createAgent: Operation = async (world, client) => {
  const slug = world.key('agent');
  const agent: AgentModel = {
    slug,
    id: null,
    exists: new Register(false),
    description: new Register('created'),
    active: new Register(null),
  };
  world.agents.set(slug, agent);
  const reply = await tracked(world, [[agent.exists, true]], () =>
    client.post('/api/agents/', { name: slug, slug, project: world.project, description: 'created' }),
  );
  if (reply.status === 201) agent.id = reply.body.id;
};

const updateAgent: Operation = async (world, client, random) => {
  const agent = random.pick(world.usable(world.agents.values()));
  const description = world.key('description');
  await tracked(world, [[agent.description, description]], () => client.patch(`/api/agents/${agent.id}/`, { description }));
};

function datapointsFor(random: Random, count: number): SentDatapoint[] {
  return Array.from({ length: count }, (_, order) => ({
    input: { question: random.text(random.int(1, 40)), n: random.int(0, 1000) },
    expected_output: random.chance(0.5) ? random.text(8) : { answer: [random.int(0, 9), null, true] },
    order,
    persona: `persona-${random.int(0, 3)}`,
    tags: [random.text(3)],
  }));
}

const createDataset: Operation = async (world, client, random) => {
  const agent = random.pick(world.usable(world.agents.values()));
  const name = world.key('dataset');
  const makeActive = random.chance(0.4);
  const dataset: DatasetModel = {
    name,
    agent,
    datapoints: datapointsFor(random, random.int(1, 30)),
    id: null,
    version: null,
    exists: new Register(false),
  };
  world.datasets.set(name, dataset);
  const changes: [Register<any>, unknown][] = [[dataset.exists, true]];
  if (makeActive) changes.push([agent.active, name]);
  const reply = await tracked(world, changes, () =>
    client.post('/api/datasets/', { agent: agent.id, name, datapoints: dataset.datapoints, make_active: makeActive }),
  );
  if (reply.status === 201) {
    dataset.id = reply.body.id;
    dataset.version = reply.body.version;
  }
};

const activateDataset: Operation = async (world, client, random) => {
  const datasets = world.usable(world.datasets.values());
  if (datasets.length === 0) return;
  const dataset = random.pick(datasets);
  await tracked(world, [[dataset.agent.active, dataset.name]], () => client.post(`/api/datasets/${dataset.id}/activate/`));
};

const createJob: Operation = async (world, client, random) => {
  const agent = random.pick(world.usable(world.agents.values()));
  const slug = world.key('job');
  const bestScore = random.int(0, 1000) / 1000;
  const job: JobModel = { slug, agent, id: null, exists: new Register(false), bestScore: new Register(bestScore) };
  world.jobs.set(slug, job);
  const reply = await tracked(world, [[job.exists, true]], () =>
    client.post('/api/jobs/', { agent: agent.id, project: world.project, prompt_slug: slug, best_score: bestScore, job_type: 'prompt_tuning' }),
  );
  if (reply.status === 201) job.id = reply.body.id;
};

const updateJob: Operation = async (world, client, random) => {
  const job = random.pick(world.usable(world.jobs.values()));
  const bestScore = random.int(0, 1000) / 1000;
  await tracked(world, [[job.bestScore, bestScore]], () => client.patch(`/api/jobs/${job.id}/`, { best_score: bestScore }));
};

const liveIterations = (world: World) => world.usable(world.iterations.values()).filter((iteration) => !iteration.deleting);

const createIteration: Operation = async (world, client, random) => {
  const job = random.pick(world.usable(world.jobs.values()));
  const name = world.key('iteration');
  const avgScore = random.int(0, 100) / 100;
  const iteration: IterationModel = {
    name,
    id: null,
    deleting: false,
    exists: new Register(false),
    job: new Register(job.slug),
    avgScore: new Register(avgScore),
    pinned: new Register(null),
    results: new Map(),
  };
  world.iterations.set(name, iteration);
  const reply = await tracked(world, [[iteration.exists, true]], () =>
    client.post('/api/job-iterations/', { job: job.id, iteration_name: name, avg_score: avgScore, order: random.int(0, 5) }),
  );
  if (reply.status === 201) iteration.id = reply.body.id;
};

/** Another writer may delete the iteration meanwhile: 404 is a refusal like any other. */
const updateIteration: Operation = async (world, client, random) => {
  const iterations = liveIterations(world);
  if (iterations.length === 0) return;
  const iteration = random.pick(iterations);
  const avgScore = random.int(0, 100) / 100;
  await tracked(world, [[iteration.avgScore, avgScore]], () => client.patch(`/api/job-iterations/${iteration.id}/`, { avg_score: avgScore }), [404]);
};

/** A move changes two job streams in one commit. */
const moveIteration: Operation = async (world, client, random) => {
  const iterations = liveIterations(world);
  if (iterations.length === 0) return;
  const iteration = random.pick(iterations);
  const target = random.pick(world.usable(world.jobs.values()));
  const avgScore = random.int(0, 100) / 100;
  await tracked(
    world,
    [
      [iteration.job, target.slug],
      [iteration.avgScore, avgScore],
    ],
    () => client.patch(`/api/job-iterations/${iteration.id}/`, { job: target.id, avg_score: avgScore }),
    [404],
  );
};

const deleteIteration: Operation = async (world, client, random) => {
  const iterations = liveIterations(world);
  if (iterations.length === 0) return;
  const iteration = random.pick(iterations);
  iteration.deleting = true;
  await tracked(world, [[iteration.exists, false]], () => client.delete(`/api/job-iterations/${iteration.id}/`), [404]);
};

/**
 * A batch of results for an iteration whose job is known: the first pins it to a dataset version
 * of its job's agent. Another writer may delete the iteration (404) or pin it first, or move it to
 * a job of another agent before its first batch (400): those are refusals.
 */
const writeResults: Operation = async (world, client, random) => {
  const iterations = liveIterations(world);
  if (iterations.length === 0) return;
  const iteration = random.pick(iterations);
  const jobs = iteration.job.possible();
  const pins = [...new Set(iteration.pinned.possible())];
  const job = jobs.length === 1 ? world.jobs.get(jobs[0]!) : undefined;
  if (!job || pins.length !== 1) return;
  const pinnedName = pins[0]!;
  const candidates = world.usable(world.datasets.values()).filter((dataset) => dataset.agent === job.agent);
  const dataset = pinnedName === null ? (candidates.length > 0 ? random.pick(candidates) : undefined) : world.datasets.get(pinnedName);
  if (!dataset) return;
  const rows = new Map<string, { datapoint_order: number; attempt: number; score: number }>();
  for (let i = random.int(1, 6); i > 0; i--) {
    const row = { datapoint_order: random.int(0, dataset.datapoints.length - 1), attempt: random.int(0, 2), score: random.int(0, 100) / 100 };
    rows.set(`${row.datapoint_order}/${row.attempt}`, row);
  }
  const changes: [Register<any>, unknown][] = [...rows].map(([key, row]) => {
    let register = iteration.results.get(key);
    if (!register) iteration.results.set(key, (register = new Register<number | null>(null)));
    return [register, row.score];
  });
  if (pinnedName === null) changes.push([iteration.pinned, dataset.name]);
  const named = pinnedName === null || random.chance(0.5) ? { dataset: dataset.id } : {};
  await tracked(world, changes, () => client.post(`/api/job-iterations/${iteration.id}/results/`, { ...named, results: [...rows.values()] }), [400, 404]);
};

const ingestSpans: Operation = async (world, client, random) => {
  const agent = random.pick(world.usable(world.agents.values()));
  const batch: SpanBatch = {
    traceId: random.hex(16),
    spans: Array.from({ length: random.int(1, 4) }, () => ({ spanId: random.hex(8), name: world.key('span') })),
    exists: new Register(false),
  };
  world.spanBatches.push(batch);
  const startNs = BigInt(Date.now()) * 1_000_000n;
  const body = {
    resourceSpans: [
      {
        resource: {
          attributes: [
            { key: 'service.name', value: { stringValue: 'crash-test' } },
            { key: 'overmind.project.id', value: { stringValue: world.project } },
          ],
        },
        scopeSpans: [
          {
            scope: { name: 'crash-safety', version: '1' },
            spans: batch.spans.map((span, index) => ({
              traceId: batch.traceId,
              spanId: span.spanId,
              parentSpanId: index === 0 ? '' : batch.spans[0]!.spanId,
              name: span.name,
              kind: 1,
              startTimeUnixNano: (startNs + BigInt(index)).toString(),
              endTimeUnixNano: (startNs + 1_000_000n).toString(),
              attributes: [{ key: 'overmind.agent.id', value: { stringValue: agent.id } }],
            })),
          },
        ],
      },
    ],
  };
  const protobuf = random.chance(0.5);
  await tracked(world, [[batch.exists, true]], () =>
    protobuf
      ? client.request('POST', '/v1/traces', protobufOf(body), { 'content-type': 'application/x-protobuf' })
      : client.request('POST', '/v1/traces', JSON.stringify(body), { 'content-type': 'application/json' }),
  );
};

const operations: [Operation, number][] = [
  [createAgent, 1],
  [updateAgent, 2],
  [createDataset, 3],
  [activateDataset, 2],
  [createJob, 1],
  [updateJob, 2],
  [createIteration, 4],
  [updateIteration, 2],
  [moveIteration, 2],
  [deleteIteration, 1],
  [writeResults, 4],
  [ingestSpans, 3],
];

function pickOperation(random: Random): Operation {
  const total = operations.reduce((sum, [, weight]) => sum + weight, 0);
  let draw = random.next() * total;
  for (const [operation, weight] of operations) {
    draw -= weight;
    if (draw < 0) return operation;
  }
  return operations[0]![0];
}

/** Writers that run until their request fails because the process is gone. */
function startLoad(world: World, client: Client, random: Random): Promise<void> {
  return Promise.all(
    Array.from({ length: writers }, async () => {
      for (;;) {
        try {
          await pickOperation(random)(world, client, random);
        } catch (error) {
          // The connection died with the process. Any other error is a bug.
          if (connectionLost(error)) return;
          throw error;
        }
      }
    }),
  ).then(() => undefined);
}

// ---------------------------------------------------------------------------------------------
// Reading everything back and checking it against what may have landed.

/** Runs `work` on every item, a few at a time. */
async function eachLimited<T>(items: readonly T[], work: (item: T) => Promise<void>, concurrency = 8): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < items.length) await work(items[next++]!);
    }),
  );
}

function byKey<T>(items: readonly T[], key: (item: T) => string): Map<string, T> {
  return new Map(items.map((item) => [key(item), item]));
}

function assertOnlyTracked(listed: Iterable<string>, tracked: Map<string, unknown>, what: string): void {
  for (const key of listed) assert.ok(tracked.has(key), `a ${what} nobody sent is listed: ${key}`);
}

/**
 * Reads everything back, checks it against what may have landed, and makes what was read the one
 * known state: records that are not there are forgotten.
 */
async function verify(world: World, client: Client): Promise<void> {
  const agents = byKey(await client.listAll('/api/agents/'), (agent) => agent.slug);
  const datasets = byKey(await client.listAll('/api/datasets/'), (dataset) => dataset.name);
  const jobs = byKey(await client.listAll('/api/jobs/'), (job) => job.prompt_slug);
  const iterations = byKey(await client.listAll('/api/job-iterations/'), (iteration) => iteration.iteration_name);
  assertOnlyTracked(agents.keys(), world.agents, 'agent');
  assertOnlyTracked(datasets.keys(), world.datasets, 'dataset');
  assertOnlyTracked(jobs.keys(), world.jobs, 'job');
  assertOnlyTracked(iterations.keys(), world.iterations, 'iteration');
  const datasetNames = new Map([...datasets.values()].map((dataset) => [dataset.id as string, dataset.name as string]));
  const jobSlugs = new Map([...jobs.values()].map((job) => [job.id as string, job.prompt_slug as string]));

  await eachLimited([...world.agents.values()], async (agent) => {
    const listed = agents.get(agent.slug);
    assertPossible(agent.exists, listed !== undefined, `agent ${agent.slug} exists`);
    if (!listed) return void world.agents.delete(agent.slug);
    if (agent.id !== null) assert.is(listed.id, agent.id, `agent ${agent.slug} id`);
    const full = (await client.get(`/api/agents/${listed.id}/`)).body;
    assert.equal([full.name, full.project], [agent.slug, world.project], `agent ${agent.slug} fields`);
    assertPossible(agent.description, full.description, `agent ${agent.slug} description`);
    const active = full.active_dataset === null ? null : datasetNames.get(full.active_dataset);
    assert.ok(active !== undefined, `agent ${agent.slug}'s active_dataset ${full.active_dataset} is not a listed dataset`);
    if (active !== null) assert.is(datasets.get(active).agent, listed.id, `agent ${agent.slug}'s active dataset is another agent's`);
    assertPossible(agent.active, active, `agent ${agent.slug} active dataset`);
    agent.id = listed.id;
    agent.exists.settle(true);
    agent.description.settle(full.description);
    agent.active.settle(active);
  });

  const versions = new Map<string, number[]>();
  await eachLimited([...world.datasets.values()], async (dataset) => {
    const listed = datasets.get(dataset.name);
    assertPossible(dataset.exists, listed !== undefined, `dataset ${dataset.name} exists`);
    if (!listed) return void world.datasets.delete(dataset.name);
    if (dataset.id !== null) assert.equal([listed.id, listed.version], [dataset.id, dataset.version], `dataset ${dataset.name} id and version`);
    assert.is(listed.agent, dataset.agent.id, `dataset ${dataset.name} belongs to its agent`);
    const full = (await client.get(`/api/datasets/${listed.id}/`)).body;
    const points = full.datapoints.map(({ id: _id, ...point }: any) => point);
    assert.equal(points, dataset.datapoints, `dataset ${dataset.name} datapoints`);
    assert.is(full.num_datapoints, dataset.datapoints.length, `dataset ${dataset.name} num_datapoints`);
    const paged = await client.get(`/api/datasets/${listed.id}/datapoints/`, { page_size: 1 });
    assert.is(paged.body.count, full.num_datapoints, `dataset ${dataset.name}: datapoints listed against num_datapoints`);
    versions.set(listed.agent, [...(versions.get(listed.agent) ?? []), listed.version]);
    dataset.id = listed.id;
    dataset.version = listed.version;
    dataset.exists.settle(true);
  });
  for (const [agent, present] of versions) {
    const sorted = present.sort((a, b) => a - b);
    assert.equal(sorted, sorted.map((_, index) => index + 1), `agent ${agent}'s dataset versions are 1..n`);
  }

  await eachLimited([...world.jobs.values()], async (job) => {
    const listed = jobs.get(job.slug);
    assertPossible(job.exists, listed !== undefined, `job ${job.slug} exists`);
    if (!listed) return void world.jobs.delete(job.slug);
    if (job.id !== null) assert.is(listed.id, job.id, `job ${job.slug} id`);
    const full = (await client.get(`/api/jobs/${listed.id}/`)).body;
    assertPossible(job.bestScore, full.best_score, `job ${job.slug} best_score`);
    const ofJob = await client.listAll('/api/job-iterations/', { job: listed.id });
    const byId = (a: any, b: any) => (a.id < b.id ? -1 : 1);
    assert.equal([...full.iterations].sort(byId), ofJob.sort(byId), `job ${job.slug}: embedded iterations against the listing`);
    job.id = listed.id;
    job.exists.settle(true);
    job.bestScore.settle(full.best_score);
  });

  for (const iteration of world.iterations.values()) {
    const listed = iterations.get(iteration.name);
    assertPossible(iteration.exists, listed !== undefined, `iteration ${iteration.name} exists`);
    if (!listed) {
      world.iterations.delete(iteration.name);
      continue;
    }
    if (iteration.id !== null) assert.is(listed.id, iteration.id, `iteration ${iteration.name} id`);
    assertPossible(iteration.job, jobSlugs.get(listed.job), `iteration ${iteration.name} job`);
    assertPossible(iteration.avgScore, listed.avg_score, `iteration ${iteration.name} avg_score`);
    iteration.id = listed.id;
    iteration.deleting = false;
    iteration.exists.settle(true);
    iteration.job.settle(jobSlugs.get(listed.job)!);
    iteration.avgScore.settle(listed.avg_score);
  }

  await eachLimited([...world.iterations.values()], async (iteration) => {
    const rows = await client.listAll(`/api/job-iterations/${iteration.id}/results/`);
    const summary = (await client.get(`/api/job-iterations/${iteration.id}/results/summary/`)).body;
    const pinned = summary.dataset === null ? null : datasetNames.get(summary.dataset.id) ?? null;
    assertPossible(iteration.pinned, pinned, `iteration ${iteration.name} pinned version`);
    assert.ok(rows.length === 0 || pinned !== null, `iteration ${iteration.name} has results but no version`);
    assert.is(summary.results, rows.length, `iteration ${iteration.name}: rows listed against its summary`);
    const listed = new Map(rows.map((row: any) => [`${row.datapoint_order}/${row.attempt}`, row.score as number]));
    assertOnlyTracked(listed.keys(), iteration.results, `result of iteration ${iteration.name}`);
    for (const [key, register] of iteration.results) {
      const score = listed.get(key) ?? null;
      assertPossible(register, score, `result ${key} of iteration ${iteration.name}`);
      register.settle(score);
    }
    iteration.pinned.settle(pinned);
  });

  let spansPresent = 0;
  await eachLimited([...world.spanBatches], async (batch) => {
    const reply = await client.get(`/api/traces/${batch.traceId}/`);
    const found = reply.status === 404 ? [] : reply.body.spans;
    const sent = new Map(batch.spans.map((span) => [span.spanId, span.name]));
    for (const span of found) assert.is(span.name, sent.get(span.span_id), `span ${span.span_id} of trace ${batch.traceId}`);
    assert.ok(found.length === 0 || found.length === sent.size, `trace ${batch.traceId} is half there: ${found.length} of ${sent.size} spans`);
    assertPossible(batch.exists, found.length > 0, `trace ${batch.traceId} exists`);
    if (found.length === 0) world.spanBatches.splice(world.spanBatches.indexOf(batch), 1);
    else batch.exists.settle(true);
    spansPresent += found.length;
  });
  const allSpans = await client.get('/api/traces/', { all_spans: 'true', page_size: 1 });
  assert.is(allSpans.body.count, spansPresent, 'spans listed against spans found by their traces');
}

test('killed with SIGKILL at random moments under writes of every kind, then stopped with SIGTERM, it keeps every acknowledged write and nothing else', async () => {
  const seed = testSeed();
  const random = new Random(seed);
  const dataDir = tempDataDir();
  // Two covered entries removed per commit: kills land while a snapshot's entries are still going.
  const env = { DATA_DIR: dataDir, LIMIT_SNAPSHOT_EVERY: snapshotEvery, LIMIT_JOURNAL_REMOVALS_PER_COMMIT_MAX: '2' };
  let service: ServiceProcess = await spawnService(env);
  let round = 0;
  try {
    const member = await registerUser(new Client(service.url));
    const project = await createProject(member.client);
    const world = new World(project.id);
    const clientOf = (running: ServiceProcess) => new Client(running.url, { token: member.access });
    let client = clientOf(service);
    await createAgent(world, client, random);
    await createJob(world, client, random);

    for (round = 1; round <= killRounds + 1; round++) {
      const graceful = round > killRounds;
      const load = startLoad(world, client, random);
      await new Promise((resolve) => setTimeout(resolve, random.int(150, 600)));
      service.child.kill(graceful ? 'SIGTERM' : 'SIGKILL');
      const exit = await service.exited;
      await load;
      assert.is(exit, graceful ? 0 : 'SIGKILL', `exit of round ${round}\n${service.output()}`);
      assert.equal(world.unexpected.filter((answer) => !(graceful && answer.startsWith('503'))), [], `round ${round}: answers while running`);
      world.unexpected.length = 0;
      service = await spawnService(env);
      client = clientOf(service);
      await verify(world, client);
    }
  } catch (error) {
    console.error(`crash-safety failed in round ${round}: rerun with FUZZ_SEED=${seed}`);
    throw error;
  } finally {
    service.child.kill('SIGKILL');
    await service.exited;
    rmSync(dataDir, { recursive: true, force: true });
  }
});

test.run();
