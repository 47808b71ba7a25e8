// Results per datapoint at scale (issue 27), all posted over HTTP to the service started as
// `npm start` starts it, on LMDB, every batch answered after its commit is synced:
// - writes: 1,000-row batches posted by the load generator (pinned to the other core) to twenty
//   iterations, rounds alternating with the bare server; the figure is rows per second (the
//   median round), beside the bare server's requests per second (a batch is a thousand rows: as a
//   ratio of requests it would print as 0.00x);
// - a summary of a 100,000-result iteration, the first request after its last write (nothing
//   cached; the median over eleven such iterations) and warm;
// - the RSS a million stored results add, in the running service and after a restart on them,
//   and the time of that restart (spawn to healthy, unpinned as `npm start` runs).
// `--quick` uses a tenth of the sizes.
import { alternateWithBare, load, median, procStatus, quick, removeDir, sendJson, signUp, startBareAndService, startService, type Row } from './harness.ts';

const scale = quick ? 10 : 1;
const rowsPerBatch = 1000;
const writeIterations = 20;
const writeDatapoints = 10_000;
const connections = 8;
const writeRowsPerSecondMin = 100_000;
const summaryDatapoints = 100_000 / scale;
const summaryMsMax = 50;
const storedResults = 1_000_000 / scale;
const storedIterations = 10;
const rssGrowthMbMax = 600;
const startupSecondsMax = 10;

export async function run(): Promise<Row[]> {
  const { bare, service } = await startBareAndService({ env: { LIMIT_RESULTS_PER_ITERATION_MAX: String(storedResults) } });
  let restarted: Awaited<ReturnType<typeof startService>> | undefined;
  try {
    const api = await client(service.url);
    const rssBeforeMb = service.rssMb();
    const anonBeforeMb = anonMb(service.pid);

    // Writes.
    const writes = await api.evaluation(writeDatapoints, writeIterations);
    const batches = writes.iterations.flatMap((iteration) =>
      Array.from({ length: writeDatapoints / rowsPerBatch }, (_, slice) => ({ path: resultsPath(iteration), body: batchBody(writes.dataset, slice, rowsPerBatch) })),
    );
    const headers = { authorization: `Bearer ${api.access}`, 'content-type': 'application/json' };
    const post = (seconds: number) =>
      load({
        url: service.url + batches[0]!.path,
        serverPid: service.pid,
        method: 'POST',
        headers,
        connections,
        durationSeconds: seconds,
        bodies: batches.map((batch) => batch.body),
        paths: batches.map((batch) => batch.path),
      });
    await post(1);
    const { bareRuns, runs } = await alternateWithBare(bare, connections, post, (measured) => measured.requestsPerSecond);
    const rowsPerSecond = median(runs.map((measured) => measured.requestsPerSecond)) * rowsPerBatch;
    const failures = runs.reduce((sum, measured) => sum + measured.errors + measured.non2xx, 0);

    // A summary of a 100,000-result iteration.
    const large = await api.evaluation(summaryDatapoints, 1);
    await api.fill(large, 0);
    const summaryPath = `${resultsPath(large.iterations[0]!)}summary/`;
    const coldSamples = [await api.timed(summaryPath)];
    const warmSamples: number[] = [];
    for (let i = 0; i < 20; i++) warmSamples.push(await api.timed(summaryPath));

    // A million stored results (each iteration's summary asked for right after its last write:
    // more cold samples), then a restart on them.
    const stored = await api.evaluation(storedResults / storedIterations, storedIterations);
    let fillMs = 0;
    for (let i = 0; i < storedIterations; i++) {
      const fillStarted = performance.now();
      await api.fill(stored, i);
      fillMs += performance.now() - fillStarted;
      coldSamples.push(await api.timed(`${resultsPath(stored.iterations[i]!)}summary/`));
    }
    const fillSeconds = fillMs / 1000;
    const summaryCold = median(coldSamples);
    const rssAfterMb = service.rssMb();
    const anonGrowthMb = anonMb(service.pid) - anonBeforeMb;
    await service.stop();
    restarted = await startService({ dataDir: service.dataDir, pinned: false, env: { LIMIT_RESULTS_PER_ITERATION_MAX: String(storedResults) } });
    const restartedRssMb = restarted.rssMb();
    const again = await client(restarted.url, api);
    const check = await again.summary(stored.iterations[0]!);
    const total = (await Promise.all(writes.iterations.map((iteration) => again.summary(iteration)))).reduce((sum, one) => sum + one.results, 0);

    const size = (count: number) => count.toLocaleString('en-US');
    const ms = (value: number, max: number, name: string, note?: string): Row =>
      ({ name, value, unit: 'ms', target: `<= ${max} ms`, pass: value <= max, ...(note ? { note } : {}) });
    const bareRps = median(bareRuns.map((measured) => measured.requestsPerSecond));
    return [
      {
        name: `results written in ${size(rowsPerBatch)}-row batches (durable, ${writeIterations} iterations, ${connections} connections)`,
        value: rowsPerSecond,
        unit: 'rows/s',
        target: `>= ${size(writeRowsPerSecondMin)} rows/s`,
        pass: rowsPerSecond >= writeRowsPerSecondMin && failures === 0,
        note: `rounds ${runs.map((measured) => size(Math.round(measured.requestsPerSecond * rowsPerBatch))).join('/')} rows/s, p50 ${median(runs.map((measured) => measured.latencyP50Ms))} ms, p99 ${median(runs.map((measured) => measured.latencyP99Ms))} ms per batch, ${Math.round(median(runs.map((measured) => measured.serverCpuMicros)))} us CPU per batch, bare ${size(Math.round(bareRps))} req/s${failures ? `, ${failures} failures` : ''}; ${size(total)} rows held after`,
      },
      ms(
        summaryCold,
        summaryMsMax,
        `summary of a ${size(summaryDatapoints)}-result iteration, first request after its last write`,
        `median of ${coldSamples.length} iterations (${coldSamples.map((sample) => sample.toFixed(0)).join('/')} ms)`,
      ),
      ms(median(warmSamples), summaryMsMax, `summary of a ${size(summaryDatapoints)}-result iteration, warm (kept while unchanged)`, `median of ${warmSamples.length}`),
      {
        name: `RSS growth for ${size(storedResults + summaryDatapoints + total)} stored results, after a restart on them`,
        value: restartedRssMb - rssBeforeMb,
        unit: 'MB',
        target: `<= ${rssGrowthMbMax} MB`,
        pass: restartedRssMb - rssBeforeMb <= rssGrowthMbMax,
        note: `${Math.round(rssBeforeMb)} MB before any result, ${Math.round(restartedRssMb)} MB after the restart; while writing: ${Math.round(rssAfterMb)} MB, anonymous memory +${Math.round(anonGrowthMb)} MB (the rest is LMDB's mapped pages); ${size(storedResults)} rows posted in ${fillSeconds.toFixed(1)} s`,
      },
      {
        name: `startup with ${size(storedResults + summaryDatapoints + total)} stored results (spawn to healthy)`,
        value: restarted.startupMs / 1000,
        unit: 's',
        target: `<= ${startupSecondsMax} s`,
        pass: restarted.startupMs / 1000 <= startupSecondsMax && check.results === storedResults / storedIterations,
        note: `the restarted service answers the same summary (${size(check.results)} rows of one iteration)`,
      },
    ];
  } finally {
    await restarted?.stop();
    await service.stop();
    await bare.stop();
    removeDir(service.dataDir);
  }
}

function anonMb(pid: number): number {
  return (procStatus(pid).RssAnon ?? 0) / 1024;
}

const resultsPath = (iteration: string) => `/api/job-iterations/${iteration}/results/`;

/** One batch: rows for datapoints slice*size .. (slice+1)*size - 1, as an evaluation harness posts them. */
function batchBody(dataset: string, slice: number, size: number): string {
  const results = Array.from({ length: size }, (_, i) => {
    const order = slice * size + i;
    const score = ((order * 7919) % 1000) / 1000;
    return {
      datapoint_order: order,
      score,
      passed: score >= 0.5,
      dimension_scores: { accuracy: score, tone: 1 - score },
      latency_ms: 100 + (order % 900),
      trace_id: order.toString(16).padStart(32, '0'),
    };
  });
  return JSON.stringify({ dataset, results });
}

interface Evaluation {
  dataset: string;
  datapoints: number;
  iterations: string[];
}

/** A user (new, or `as` logged in again), and the calls the suite makes as that user. */
async function client(url: string, as?: { access: string; project: string }) {
  const { access, projectId: project } = as ? { access: as.access, projectId: as.project } : await signUp(url, 'bench-results');
  const headers = { authorization: `Bearer ${access}` };
  const post = (path: string, body: unknown) => sendJson(url, 'POST', path, body, access);
  return {
    access,
    project,
    /** An agent with a dataset of `datapoints`, and a job of it with `iterations` iterations pinned to it. */
    async evaluation(datapoints: number, iterations: number): Promise<Evaluation> {
      const slug = `agent-${datapoints}-${iterations}-${Date.now()}`;
      const agent = await post('/api/agents/', { name: slug, slug, project });
      const points = Array.from({ length: datapoints }, (_, i) => ({ input: { question: `case ${i}` }, expected_output: `answer ${i}` }));
      const dataset = (await post('/api/datasets/', { agent: agent.id, datapoints: points })).id as string;
      const job = await post('/api/jobs/', { agent: agent.id, status: 'running' });
      const ids: string[] = [];
      for (let i = 0; i < iterations; i++) {
        const iteration = (await post('/api/job-iterations/', { job: job.id, iteration_name: `candidate-${i}` })).id as string;
        await post(resultsPath(iteration), { dataset, results: [{ datapoint_order: 0, score: 0 }] });
        ids.push(iteration);
      }
      return { dataset, datapoints, iterations: ids };
    },
    /** Every datapoint of the evaluation's `which`th iteration, in batches, 8 in flight. */
    async fill(evaluation: Evaluation, which: number): Promise<void> {
      const slices = evaluation.datapoints / rowsPerBatch;
      let next = 0;
      const poster = async () => {
        for (let slice = next++; slice < slices; slice = next++) {
          const response = await fetch(url + resultsPath(evaluation.iterations[which]!), {
            method: 'POST',
            headers: { ...headers, 'content-type': 'application/json' },
            body: batchBody(evaluation.dataset, slice, rowsPerBatch),
          });
          if (response.status !== 200) throw new Error(`results batch answered ${response.status}: ${await response.text()}`);
          await response.arrayBuffer();
        }
      };
      await Promise.all(Array.from({ length: connections }, poster));
    },
    async summary(iteration: string): Promise<{ results: number }> {
      const response = await fetch(`${url}${resultsPath(iteration)}summary/`, { headers });
      return (await response.json()) as { results: number };
    },
    /** Milliseconds until the whole answer (200) has arrived. */
    async timed(path: string): Promise<number> {
      const started = performance.now();
      const response = await fetch(url + path, { headers });
      await response.arrayBuffer();
      if (response.status !== 200) throw new Error(`GET ${path} answered ${response.status}`);
      return performance.now() - started;
    },
  };
}

