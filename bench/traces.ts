// Traces: OTLP/HTTP protobuf ingest of 512-span batches (each acknowledged only once durable),
// then, with the store filled to a million spans, the services listing unfiltered and filtered
// by job, agent, trace_id and service_name, one filter that must scan (min_duration_ms), and the
// service's RSS growth for those spans. `--quick` fills 100,000 spans instead.
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { exportRequestType, messageFromOtlpJson } from '../src/traces/otlp.ts';
import { durationSeconds, load, procStatus, quick, removeDir, type Row, type ServiceProcess, startService } from './harness.ts';

const batchSpans = 512;
const spansPerTrace = 8;
const senders = 8;
const warmUpBatches = 32;
const services = 8;
const jobs = 40;
const storedSpans = quick ? 100_000 : 1_000_000;
const ingestSpansPerSecondMin = 50_000;
const servicesP50MsMax = 20;
const rssGrowthMbMax = 300;
const baseNs = 1_767_225_600_000_000_000;

export async function run(): Promise<Row[]> {
  const service = await startService();
  try {
    const setup = await setUp(service.url);
    const before = memoryOf(service);
    const bodies = new Bodies(new Batches(setup.jobIds), Math.ceil(storedSpans / batchSpans));
    // Encoding blocked this process for longer than the service keeps an idle connection: let the
    // client see the connections closed meanwhile, or its next request would reuse one.
    await new Promise((resolve) => setTimeout(resolve, 100));
    // A short warm-up first: the first exports also create the agents they name.
    const warmUp = await ingest(service.url, setup.apiKey, bodies, { spans: warmUpBatches * batchSpans });
    const measured = await ingest(service.url, setup.apiKey, bodies, { seconds: durationSeconds });
    await ingest(service.url, setup.apiKey, bodies, { spans: storedSpans - warmUp.spans - measured.spans });
    const after = memoryOf(service);
    const growth = { anonMb: after.anonMb - before.anonMb, fileMb: after.fileMb - before.fileMb };
    const sample = await firstSpan(service.url, setup.access);
    const auth = { authorization: `Bearer ${setup.access}` };
    const listing = (query: string) => load({ url: `${service.url}/api/traces/services/${query}`, serverPid: service.pid, headers: auth, connections: 1, durationSeconds: quick ? 2 : 5 });
    const stored = `${(storedSpans / 1e6).toLocaleString('en-US')}M spans`;
    const rows: Row[] = [
      {
        name: `POST /v1/traces (protobuf, ${batchSpans}-span batches, ${senders} connections)`,
        value: measured.spans / measured.seconds,
        unit: 'spans/s',
        target: `>= ${ingestSpansPerSecondMin.toLocaleString('en-US')} spans/s`,
        pass: measured.spans / measured.seconds >= ingestSpansPerSecondMin && measured.failures === 0,
        note: `durable when acknowledged${measured.failures ? `, ${measured.failures} failures` : ''}`,
      },
    ];
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
    return rows;
  } finally {
    await service.stop();
    removeDir(service.dataDir);
  }
}

interface SetUp {
  access: string;
  apiKey: string;
  jobIds: string[];
}

/** A user, a project, an API key and the project's jobs, made over HTTP as a client would. */
async function setUp(url: string): Promise<SetUp> {
  const password = 'bench password';
  const registered = await send(url, 'POST', '/api/auth/register/', { email: `traces-${process.pid}@example.com`, password, password_confirm: password });
  const access = registered.access as string;
  const project = await send(url, 'POST', '/api/projects/', { name: 'Traces', slug: `traces-${process.pid}` }, access);
  const key = await send(url, 'POST', '/api/auth/api-keys/', { project: project.id, name: 'bench' }, access);
  const jobIds: string[] = [];
  for (let i = 0; i < jobs; i++) jobIds.push((await send(url, 'POST', '/api/jobs/', { project: project.id, job_type: 'inference' }, access)).id as string);
  return { access, apiKey: key.key as string, jobIds };
}

async function send(url: string, method: string, path: string, body: unknown, access?: string): Promise<Record<string, unknown>> {
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (access) headers.authorization = `Bearer ${access}`;
  const response = await fetch(url + path, { method, headers, body: JSON.stringify(body) });
  if (!response.ok) throw new Error(`${method} ${path} answered ${response.status}: ${await response.text()}`);
  return (await response.json()) as Record<string, unknown>;
}

async function firstSpan(url: string, access: string): Promise<{ trace_id: string; agent: string }> {
  const response = await fetch(`${url}/api/traces/?page_size=1`, { headers: { authorization: `Bearer ${access}` } });
  const body = (await response.json()) as { results: { trace_id: string; agent: string }[] };
  return body.results[0]!;
}

type MutableSpan = {
  traceId: Buffer;
  spanId: Buffer;
  parentSpanId: Buffer;
  startTimeUnixNano: number;
  endTimeUnixNano: number;
  attributes: { value: { stringValue: string } }[];
  status: { code: number };
};

/**
 * Unique 512-span export bodies: one protobuf message per service (each its own agent), whose ids,
 * times, job links and statuses are rewritten in place for each batch before encoding.
 */
class Batches {
  private next = 0;
  private readonly templates = Array.from({ length: services }, (_, index) => template(index));

  constructor(private readonly jobIds: readonly string[]) {}

  body(): Uint8Array {
    // Batches count from 1: a batch number of 0 would make the first span id all zeros (invalid).
    const batch = ++this.next;
    const message = this.templates[batch % services]!;
    const spans = (message as unknown as { resourceSpans: { scopeSpans: { spans: MutableSpan[] }[] }[] }).resourceSpans[0]!.scopeSpans[0]!.spans;
    spans.forEach((span, index) => {
      const serial = batch * batchSpans + index;
      for (const id of [span.traceId, span.spanId, span.parentSpanId]) if (id.length > 0) id.writeUInt32BE(batch, 0);
      span.startTimeUnixNano = baseNs + batch * 1e9 + index * 1e6;
      span.endTimeUnixNano = span.startTimeUnixNano + ((serial * 7919) % 1000) * 1e6;
      span.attributes[0]!.value.stringValue = this.jobIds[Math.floor(serial / spansPerTrace) % this.jobIds.length]!;
      span.status.code = serial % 50 === 0 ? 2 : 1;
    });
    return exportRequestType.encode(message).finish();
  }
}

function template(serviceIndex: number) {
  const spans = Array.from({ length: batchSpans }, (_, index) => {
    const traceIndex = Math.floor(index / spansPerTrace);
    const rootIndex = traceIndex * spansPerTrace;
    return {
      traceId: hexWith(traceIndex, 16),
      spanId: hexWith(index, 8),
      parentSpanId: index === rootIndex ? '' : hexWith(rootIndex, 8),
      name: index === rootIndex ? 'agent.run' : `llm.call.${index % 4}`,
      kind: index === rootIndex ? 2 : 3,
      startTimeUnixNano: '0',
      endTimeUnixNano: '0',
      attributes: [
        { key: 'overmind.job.id', value: { stringValue: '' } },
        { key: 'gen_ai.operation.name', value: { stringValue: index === rootIndex ? 'invoke_agent' : 'chat' } },
        { key: 'gen_ai.request.model', value: { stringValue: 'claude-sonnet' } },
        { key: 'gen_ai.usage.input_tokens', value: { intValue: 1200 + index } },
      ],
      status: { code: 1 },
    };
  });
  return messageFromOtlpJson({
    resourceSpans: [
      {
        resource: {
          attributes: [
            { key: 'service.name', value: { stringValue: `svc-${serviceIndex}` } },
            { key: 'overmind.agent.name', value: { stringValue: `Bench agent ${serviceIndex}` } },
          ],
        },
        scopeSpans: [{ scope: { name: 'bench', version: '1.0' }, spans }],
      },
    ],
  });
}

/** Hex of `bytes` bytes: 4 placeholder bytes (the batch), then `index`, then a fixed tail. */
function hexWith(index: number, bytes: 8 | 16): string {
  return ('00000000' + index.toString(16).padStart(8, '0')).padEnd(bytes * 2, 'a5');
}

interface Ingested {
  spans: number;
  seconds: number;
  failures: number;
}

/**
 * Every export body of the run, encoded before the first is sent and handed out in order. The
 * load generator shares the machine: its protobuf encoding must not count against the service,
 * nor block the client mid-run (pooled connections the service closed meanwhile would be reused).
 */
class Bodies {
  private readonly list: (Uint8Array | undefined)[];
  private next = 0;

  constructor(batches: Batches, count: number) {
    this.list = Array.from({ length: count }, () => batches.body());
  }

  take(): Uint8Array | undefined {
    const body = this.list[this.next];
    this.list[this.next++] = undefined;
    return body;
  }
}

/** Senders posting batches back to back, for a time or until a number of spans is stored. */
async function ingest(url: string, apiKey: string, bodies: Bodies, until: { seconds?: number; spans?: number }): Promise<Ingested> {
  const started = performance.now();
  const deadline = until.seconds === undefined ? Infinity : started + until.seconds * 1000;
  const target = until.spans ?? Infinity;
  let spans = 0;
  let failures = 0;
  const sender = async () => {
    while (performance.now() < deadline && spans < target) {
      const body = bodies.take();
      if (!body) break;
      const response = await fetch(`${url}/v1/traces`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-protobuf', 'x-api-key': apiKey },
        body: body as BodyInit,
      });
      await response.arrayBuffer();
      if (response.ok) spans += batchSpans;
      else failures++;
    }
  };
  await Promise.all(Array.from({ length: senders }, sender));
  return { spans, seconds: (performance.now() - started) / 1000, failures };
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
