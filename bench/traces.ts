// Traces: OTLP/HTTP protobuf ingest on a store that already holds a million spans, in 512-span
// batches serialized by the OpenTelemetry SDK's stock protobuf serializer, 8 connections, each
// export acknowledged only once durable; then the services listing on that store, unfiltered and
// filtered by job, agent, trace_id and service_name, one filter that must scan
// (min_duration_ms), and the service's RSS growth for those spans. The store is filled through
// the service itself (both cores, not measured), the service is restarted on it pinned to one
// core, and the load generator (bench/otlp-load.ts) runs in its own process on another core, its
// rounds alternating with the bare server's as every throughput figure's do. `--quick` fills
// 100,000 spans instead.
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { LoadPlan, Round } from './otlp-load.ts';
import { alternateWithBare, type Alternation, load, median, procStatus, quick, removeDir, roundSeconds, rounds, type Row, sendJson, signUp, type ServiceProcess, startBare, startLineChild, startService } from './harness.ts';

const batchSpans = 512;
const spansPerTrace = 8;
const senders = 8;
const warmUpBatches = 32;
const services = 8;
const jobs = 40;
const storedSpans = quick ? 100_000 : 1_000_000;
/** Spans encoded for the measured rounds: enough for 100,000 spans/s. */
const measuredSpansMax = rounds * roundSeconds * 100_000;
const ingestSpansPerSecondMin = 50_000;
const servicesP50MsMax = 20;
const rssGrowthMbMax = 300;
const startMs = Date.parse('2026-01-01T00:00:00Z');


export async function run(): Promise<Row[]> {
  // Filling uses both cores; the measured service is pinned as the harness pins every server.
  const filling = await startService({ pinned: false });
  let service: ServiceProcess = filling;
  try {
    const setup = await setUp(filling.url);
    const before = memoryOf(filling);
    const filler = await startOtlpLoader(filling, setup, { warmUpSpans: 0, roundSpans: storedSpans, bodySpans: storedSpans, startMs }, false);
    const filled = await filler.round();
    await filler.stop();
    const after = memoryOf(filling);
    const growth = { anonMb: after.anonMb - before.anonMb, fileMb: after.fileMb - before.fileMb };
    if (filled.failures > 0) throw new Error(`${filled.failures} exports failed while filling the store`);
    await filling.stop();
    service = await startService({ dataDir: filling.dataDir });
    const stored = `${(storedSpans / 1e6).toLocaleString('en-US')}M spans`;
    const rows: Row[] = [];
    const sample = await firstSpan(service.url, setup.access);
    const auth = { authorization: `Bearer ${setup.access}` };
    const listing = (query: string) => load({ url: `${service.url}/api/traces/services/${query}`, serverPid: service.pid, headers: auth, connections: 1, durationSeconds: quick ? 2 : 5 });
    const queries: [string, string][] = [
      ['unfiltered', ''],
      ['job', `?job=${setup.jobIds[3]}`],
      ['agent', `?agent=${sample.agent}`],
      ['trace_id', `?trace_id=${sample.trace_id}`],
      ['service_name', '?service_name=svc-3'],
    ];
    for (const [label, query] of queries) {
      const result = await listing(query);
      rows.push({
        name: `GET /api/traces/services/ ${label} (${stored})`,
        value: result.latencyP50Ms,
        unit: 'ms p50',
        target: `<= ${servicesP50MsMax} ms`,
        pass: result.latencyP50Ms <= servicesP50MsMax && result.non2xx + result.errors === 0,
        note: `p99 ${result.latencyP99Ms} ms`,
      });
    }
    const scan = await listing('?min_duration_ms=999');
    rows.push({
      name: `GET /api/traces/services/ min_duration_ms (scans, ${stored})`,
      value: scan.latencyP50Ms,
      unit: 'ms p50',
      target: 'reported',
      pass: scan.non2xx + scan.errors === 0,
      note: `p99 ${scan.latencyP99Ms} ms`,
    });
    // LMDB reads its pages through a shared file mapping: every page it touched stays resident
    // and counts in VmRSS (RssFile) although it is the kernel's page cache, reclaimable at any
    // time. The service's own memory is the anonymous part (heap, buffers), judged here.
    rows.push({
      name: `RSS growth, anonymous (heap and buffers), for ${stored}`,
      value: growth.anonMb,
      unit: 'MB',
      target: `<= ${Math.round(rssGrowthMbMax * (storedSpans / 1_000_000))} MB`,
      pass: growth.anonMb <= rssGrowthMbMax * (storedSpans / 1_000_000),
      note: `VmRSS grew ${Math.round(growth.anonMb + growth.fileMb)} MB in all, ${Math.round(growth.fileMb)} MB of it mapped store pages; store on disk ${Math.round(diskMb(service.dataDir))} MB`,
    });
    const loader = await startOtlpLoader(
      service,
      setup,
      { roundSeconds, warmUpSpans: warmUpBatches * batchSpans, bodySpans: measuredSpansMax, startMs: startMs + (Math.ceil(storedSpans / batchSpans) + 1) * 1000 },
      true,
    );
    const bare = await startBare();
    try {
      rows.unshift(ingestRow(await alternateWithBare(bare, undefined, () => loader.round(), spansPerSecond), stored));
    } finally {
      await bare.stop();
      await loader.stop();
    }
    return rows;
  } finally {
    await service.stop();
    removeDir(service.dataDir);
  }
}

const spansPerSecond = (round: Round) => round.spans / round.seconds;

/**
 * The median round's throughput (the target is in spans per second), with the service's CPU time
 * per span and the bare server measured between the rounds: this figure is not a ratio, so it
 * moves with the machine's speed, and the bare server's rate and the ingest's ratio to it tell a
 * slow machine from a slow build.
 */
function ingestRow(measured: Alternation<Round>, stored: string): Row {
  const { runs, bareRuns, ratios } = measured;
  const throughput = median(runs.map(spansPerSecond));
  const cpuMicros = median(runs.map((round) => (round.serviceCpuSeconds * 1e6) / round.spans));
  const failures = runs.reduce((total, round) => total + round.failures, 0);
  const bareRps = median(bareRuns.map((run) => run.requestsPerSecond));
  const otherCores = Math.max(...bareRuns.map((run) => run.otherCores));
  return {
    name: `POST /v1/traces (protobuf from the SDK serializer, ${batchSpans}-span batches, ${senders} connections, ${stored} stored)`,
    value: throughput,
    unit: 'spans/s',
    target: `>= ${ingestSpansPerSecondMin.toLocaleString('en-US')} spans/s`,
    pass: throughput >= ingestSpansPerSecondMin && failures === 0,
    note:
      `${cpuMicros.toFixed(1)} us CPU per span; median of ${runs.length} rounds alternating with the bare server ` +
      `(${Math.round(bareRps).toLocaleString('en-US')} req/s; spans per bare request ${ratios.map((ratio) => ratio.toFixed(2)).join('/')}, ` +
      `median ${median(ratios).toFixed(2)}); other work during the bare runs <= ${otherCores.toFixed(2)} cores; durable when acknowledged${failures ? `, ${failures} failures` : ''}`,
  };
}

/** The load generator (bench/otlp-load.ts) in its own process, warmed up, sending a round when asked. */
interface OtlpLoader {
  round(): Promise<Round>;
  stop(): Promise<void>;
}

/** Starts it beside the harness's load generator (anywhere when `pinned` is false). */
async function startOtlpLoader(
  service: ServiceProcess,
  setup: SetUp,
  phase: Pick<LoadPlan, 'warmUpSpans' | 'bodySpans' | 'startMs'> & Partial<Pick<LoadPlan, 'roundSeconds' | 'roundSpans'>>,
  pinned: boolean,
): Promise<OtlpLoader> {
  const plan: LoadPlan = {
    url: service.url,
    apiKey: setup.apiKey,
    jobIds: setup.jobIds,
    servicePid: service.pid,
    connections: senders,
    batchSpans,
    spansPerTrace,
    services,
    ...phase,
  };
  const loader = await startLineChild(['bench/otlp-load.ts'], { pinned, input: JSON.stringify(plan) });
  return {
    async round() {
      loader.send('round');
      return JSON.parse(await loader.next()) as Round;
    },
    async stop() {
      await loader.end();
    },
  };
}

interface SetUp {
  access: string;
  apiKey: string;
  jobIds: string[];
}

/** A user, a project, an API key and the project's jobs, made over HTTP as a client would. */
async function setUp(url: string): Promise<SetUp> {
  const { access, projectId } = await signUp(url, 'traces');
  const key = await sendJson(url, 'POST', '/api/auth/api-keys/', { project: projectId, name: 'bench' }, access);
  const jobIds: string[] = [];
  for (let i = 0; i < jobs; i++) jobIds.push((await sendJson(url, 'POST', '/api/jobs/', { project: projectId, job_type: 'inference' }, access)).id as string);
  return { access, apiKey: key.key as string, jobIds };
}

async function firstSpan(url: string, access: string): Promise<{ trace_id: string; agent: string }> {
  const response = await fetch(`${url}/api/traces/?page_size=1`, { headers: { authorization: `Bearer ${access}` } });
  const body = (await response.json()) as { results: { trace_id: string; agent: string }[] };
  return body.results[0]!;
}

/** Resident memory of the service: mapped store pages (RssFile) and everything else (RssAnon). */
function memoryOf(service: ServiceProcess): { fileMb: number; anonMb: number } {
  const status = procStatus(service.pid);
  return { fileMb: status.RssFile! / 1024, anonMb: status.RssAnon! / 1024 };
}


/** Disk space the store's files take (allocated blocks, not their sparse size). */
function diskMb(dir: string): number {
  return readdirSync(dir).reduce((total, file) => total + statSync(join(dir, file)).blocks * 512, 0) / (1024 * 1024);
}
