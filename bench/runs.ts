// Runs as leased work (issue 35), on the service started as `npm start` starts it, on LMDB, every
// lease and completion answered after its commit is synced; the workers in a process of their own
// on the load generator's core (bench/run-workers.ts), over keep-alive HTTP as any worker would:
// - a run of 1,200,000 tasks (60 iterations x 20,000 datapoints) created: the time of its POST, and
//   the memory it holds (RSS growth per task);
// - task lifecycles (a lease and the completion that writes its result row) per second with 8
//   workers leasing 100 at a time, then one at a time: the median of alternating rounds, beside
//   the bare server's requests per second in the rounds around them, after a warm-up of some
//   seconds (the service's rate climbs for its first ten seconds or so under this load); each
//   both ways a worker may call: a completion that leases the next tasks (`next`: one round trip,
//   one commit; how the worker command, runWorker and the Python worker call, so the figure the
//   target is held to), and a lease and a completion as two calls (two round trips, two commits;
//   reported beside it: what a hand-written worker that leaves out `next` gets). A round that
//   could drain the run gets a fresh one of 1,200,000 tasks first (a job of its own);
// - the time from a task becoming ready (a one-task run created: its 201) to a worker that waits
//   for one (a long poll) holding it;
// - a plain GET /api/agents/{id}/ (one after another, from a process of its own) while the workers
//   run.
// `--quick` uses a tenth of the sizes and shorter rounds.
import { load, median, percentile, processSeconds, quick, removeDir, rounds, roundSeconds, sendJson, signUp, startBareAndService, startLineChild, type Row } from './harness.ts';

const scale = quick ? 10 : 1;
const datapoints = 20_000 / scale;
const iterationsInRun = 60;
const workers = 8;
const creationSecondsMax = 2;
const bytesPerTaskMax = 200;
const batchedPerSecondMin = 50_000;
const singlePerSecondMin = 4_000;
const readyP50MsMax = 1;
const readyP99MsMax = 10;
const probeP50MsMax = 1;
const readySamples = quick ? 50 : 300;
const warmUpSeconds = quick ? 2 : 8;
/** More tasks a second than any way here has reached on this machine: a round never drains its run. */
const tasksPerSecondHigh = 150_000;

export async function run(): Promise<Row[]> {
  const { bare, service } = await startBareAndService();
  try {
    const { access, projectId } = await signUp(service.url, 'bench-runs');
    const post = (path: string, body: unknown) => sendJson(service.url, 'POST', path, body, access);
    const agent = await post('/api/agents/', { name: 'runs', slug: 'runs', project: projectId });
    const points = Array.from({ length: datapoints }, (_, i) => ({ input: { question: `case ${i}` }, expected_output: `answer ${i}` }));
    const dataset = (await post('/api/datasets/', { agent: agent.id, datapoints: points })).id as string;
    const workerIds: string[] = [];
    for (let i = 0; i < workers; i++) workerIds.push((await post('/api/workers/', { name: `bench-${i}` })).id as string);
    /** A job of its own with `iterationsInRun` iterations, and its pending run's POST (timed). */
    const newRun = async () => {
      const job = await post('/api/jobs/', { agent: agent.id });
      const iterations: string[] = [];
      for (let i = 0; i < iterationsInRun; i++) iterations.push((await post('/api/job-iterations/', { job: job.id, iteration_name: `candidate-${i}`, order: i, agent_code: 'x' })).id as string);
      const created = performance.now();
      const run = await post(`/api/jobs/${job.id}/runs/`, { dataset, iterations });
      return { id: run.id as string, tasks: (run.counts as { total: number }).total, seconds: (performance.now() - created) / 1000 };
    };

    // A run of a million tasks.
    const rssBeforeMb = service.rssMb();
    const large = await newRun();
    const { tasks, seconds: creationSeconds } = large;
    await new Promise((resolve) => setTimeout(resolve, 1000));
    const bytesPerTask = ((service.rssMb() - rssBeforeMb) * 1024 * 1024) / tasks;

    // Lifecycles, batched and one at a time, each both ways, in rounds alternating with the bare
    // server; a GET probe runs beside the first batched workers. A round that could drain its run
    // gets a fresh one first (refill).
    let current = large.id;
    /** Before each round: a run with enough tasks queued for `seconds` of the fastest rate seen here, else a new one (the old cancelled). */
    const refill = async (seconds: number) => {
      const { counts, finished_at } = await sendJson(service.url, 'GET', `/api/runs/${current}/`, undefined, access) as { counts: { queued: number }; finished_at: string | null };
      if (counts.queued >= (tasksPerSecondHigh * seconds) / scale) return;
      if (finished_at === null) await post(`/api/runs/${current}/cancel/`, {});
      current = (await newRun()).id;
    };
    const probe = await startLineChild(['bench/latency-probe.ts', `${service.url}/api/agents/${agent.id}/`, access]);
    const batched = await lifecycles(service, access, workerIds, 100, bare, false, refill);
    const probed = JSON.parse((await probe.end()).at(-1)!) as { count: number; p50Ms: number; p99Ms: number };
    const batchedChained = await lifecycles(service, access, workerIds, 100, bare, true, refill);
    const single = await lifecycles(service, access, workerIds, 1, bare, false, refill);
    const singleChained = await lifecycles(service, access, workerIds, 1, bare, true, refill);

    // From ready to held: the run cancelled, workers wait; one-task runs (of another job) are made one by one.
    await post(`/api/runs/${current}/cancel/`, {});
    const latencies = await readyToHeld(service.url, access, workerIds, agent.id as string);

    const bareNote = (measured: Lifecycles) =>
      `rounds ${measured.rounds.map((rate) => Math.round(rate).toLocaleString('en-US')).join('/')} tasks/s, ${measured.cpuMicros.toFixed(1)} us CPU a task, ${measured.tasksPerCommit.toFixed(1)} tasks a commit; bare ${Math.round(measured.bare).toLocaleString('en-US')} req/s`;
    return [
      { name: `a run of ${tasks.toLocaleString('en-US')} tasks created (POST, ${iterationsInRun} iterations x ${datapoints.toLocaleString('en-US')} datapoints)`, value: creationSeconds, unit: 's', target: `<= ${creationSecondsMax} s`, pass: creationSeconds <= creationSecondsMax },
      { name: 'memory a queued task holds (RSS growth / tasks)', value: bytesPerTask, unit: 'bytes', target: `<= ${bytesPerTaskMax} bytes`, pass: bytesPerTask <= bytesPerTaskMax, note: `RSS ${rssBeforeMb.toFixed(0)} -> ${service.rssMb().toFixed(0)} MB (the run's tasks are held twice: the job's actor decides, the read model answers)` },
      { name: 'task lifecycles (lease + complete with its result row, durable), 8 workers, 100 a lease, each completion leasing the next 100 (`next`: one call, as the workers call)', value: batchedChained.perSecond, unit: 'tasks/s', target: `>= ${batchedPerSecondMin.toLocaleString('en-US')} tasks/s`, pass: batchedChained.perSecond >= batchedPerSecondMin, note: bareNote(batchedChained) },
      { name: 'the same, a lease and a completion as two calls (a worker that leaves out `next`)', value: batched.perSecond, unit: 'tasks/s', target: 'reported', pass: true, note: bareNote(batched) },
      { name: 'the same, one task a lease (`next`: one call, as the workers call)', value: singleChained.perSecond, unit: 'tasks/s', target: `>= ${singlePerSecondMin.toLocaleString('en-US')} tasks/s`, pass: singleChained.perSecond >= singlePerSecondMin, note: bareNote(singleChained) },
      { name: 'the same, one task a lease, a lease and a completion as two calls (a worker that leaves out `next`)', value: single.perSecond, unit: 'tasks/s', target: 'reported', pass: true, note: bareNote(single) },
      { name: 'a task ready (its run made) to a waiting worker holding it, p50', value: latencies.p50, unit: 'ms', target: `<= ${readyP50MsMax} ms`, pass: latencies.p50 <= readyP50MsMax, note: `${latencies.count} tasks; max ${latencies.max.toFixed(2)} ms` },
      { name: 'the same, p99', value: latencies.p99, unit: 'ms', target: `<= ${readyP99MsMax} ms`, pass: latencies.p99 <= readyP99MsMax },
      { name: 'GET /api/agents/{id}/ while 8 workers lease and complete, p50', value: probed.p50Ms, unit: 'ms', target: `<= ${probeP50MsMax} ms`, pass: probed.p50Ms <= probeP50MsMax, note: `p99 ${probed.p99Ms.toFixed(2)} ms, ${probed.count} requests` },
    ];
  } finally {
    await service.stop();
    await bare.stop();
    removeDir(service.dataDir);
  }
}

interface Lifecycles {
  perSecond: number;
  rounds: number[];
  bare: number;
  /** The service's CPU per task (every thread), median of the rounds. */
  cpuMicros: number;
  /** Tasks a commit of the run's job carried in the measured rounds (the job actors' commits, from /metrics). */
  tasksPerCommit: number;
}

/** The job actors' commits so far (the service's /metrics). */
async function jobCommits(url: string): Promise<number> {
  const text = await (await fetch(`${url}/metrics`)).text();
  const found = /^overmind_actor_commits_total\{kind="job"\} (\S+)$/m.exec(text);
  if (!found) throw new Error('the service reports no commits of job actors');
  return Number(found[1]);
}

/** Workers leasing `batch` at a time (with `chained`, each completion leasing the next): rounds alternating with the bare server's; the median round. */
async function lifecycles(
  service: { url: string; pid: number },
  access: string,
  workerIds: string[],
  batch: number,
  bare: { url: string; pid: number },
  chained: boolean,
  refill: (seconds: number) => Promise<void>,
): Promise<Lifecycles> {
  const child = await startLineChild(['bench/run-workers.ts'], { input: JSON.stringify({ url: service.url, access, workers: workerIds, batch, chained }) });
  const cpu: number[] = [];
  const counted = { tasks: 0, commits: 0 };
  const go = async (seconds: number) => {
    await refill(seconds);
    const commitsBefore = await jobCommits(service.url);
    const before = processSeconds(service.pid);
    child.send(`go ${seconds}`);
    const { tasks, seconds: took } = JSON.parse(await child.next()) as { tasks: number; seconds: number };
    cpu.push(((processSeconds(service.pid) - before) * 1e6) / Math.max(1, tasks));
    counted.tasks += tasks;
    counted.commits += (await jobCommits(service.url)) - commitsBefore;
    return tasks / took;
  };
  await go(batch > 1 ? warmUpSeconds : 1);
  cpu.length = 0;
  counted.tasks = counted.commits = 0;
  const measured: number[] = [];
  const bareRates: number[] = [];
  for (let round = 0; round < rounds; round++) {
    bareRates.push((await load({ url: `${bare.url}/`, serverPid: bare.pid, connections: 8, durationSeconds: roundSeconds })).requestsPerSecond);
    measured.push(await go(roundSeconds));
  }
  await child.end();
  return { perSecond: median(measured), rounds: measured, bare: median(bareRates), cpuMicros: median(cpu), tasksPerCommit: counted.tasks / Math.max(1, counted.commits) };
}

/** Times from a one-task run's 201 to a waiting worker's lease answer holding its task. */
async function readyToHeld(url: string, access: string, workerIds: string[], agent: string) {
  const post = (path: string, body: unknown) => sendJson(url, 'POST', path, body, access);
  const one = (await post('/api/datasets/', { agent, datapoints: [{ input: { question: 'ready?' } }], make_active: false })).id as string;
  const job = (await post('/api/jobs/', { agent })).id as string;
  const waiting = await startLineChild(['bench/run-workers.ts'], { input: JSON.stringify({ url, access, workers: workerIds, batch: 1 }) });
  waiting.send('wait');
  await new Promise((resolve) => setTimeout(resolve, 300));
  const times: number[] = [];
  for (let i = 0; i < readySamples; i++) {
    // An iteration of its own: one run at a time evaluates an iteration, and the last may still be ending.
    const iteration = (await post('/api/job-iterations/', { job, iteration_name: `ready-to-held-${i}`, order: 1000 + i })).id as string;
    const made = await post(`/api/jobs/${job}/runs/`, { dataset: one, iterations: [iteration] });
    const madeAt = performance.timeOrigin + performance.now();
    // Its one task is held (and completed, ending the run) before the next run is made.
    const { run, at } = JSON.parse(await waiting.next()) as { run: string; at: number };
    if (run !== made.id) throw new Error(`a worker held a task of run ${run}, not of ${String(made.id)}`);
    times.push(Math.max(0, at - madeAt));
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  waiting.send('stop');
  await waiting.end();
  return { count: times.length, p50: percentile(times, 0.5), p99: percentile(times, 0.99), max: percentile(times, 1) };
}
