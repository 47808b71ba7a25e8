// The traces benchmark's load generator, in a process of its own (bench/traces.ts pins it to its
// own core). Spans are made by the OpenTelemetry SDK and serialized into 512-span export bodies by
// the SDK's stock protobuf serializer, all of them before the first is sent, then posted back to
// back over `connections` connections. It is driven by lines on stdin: the plan as one JSON line,
// then one line per round to run. It answers a line `{"ready":true}` once the bodies are encoded
// and the warm-up is sent, then one JSON line per round, and exits when stdin ends; between rounds
// it sends nothing, so that the harness can measure the bare server meanwhile. The service's CPU
// time per round is read from /proc, so a round reports the CPU the service spent per span as
// well as its throughput.
//   node --import tsx bench/otlp-load.ts
import { readFileSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { context, trace, SpanKind, SpanStatusCode } from '@opentelemetry/api';
import { ProtobufTraceSerializer } from '@opentelemetry/otlp-transformer';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BasicTracerProvider, type ReadableSpan, type SpanProcessor } from '@opentelemetry/sdk-trace-base';

export interface LoadPlan {
  url: string;
  apiKey: string;
  /** Jobs the spans link to (overmind.job.id), a trace's spans to one job. */
  jobIds: string[];
  /** The service's process, whose CPU time each round reports. */
  servicePid: number;
  connections: number;
  batchSpans: number;
  spansPerTrace: number;
  /** Services (resources) sending, each its own agent (overmind.agent.name). */
  services: number;
  /** Start time of the first span, in milliseconds since the epoch; each batch starts a second later. */
  startMs: number;
  /** Spans sent first, not measured (JIT, caches, the agents' creation). */
  warmUpSpans: number;
  /** Each round sends for `roundSeconds`, or `roundSpans` spans when given. */
  roundSeconds?: number;
  roundSpans?: number;
  /** Spans to encode for the measured rounds (a round ends early when they run out). */
  bodySpans: number;
}

export interface Round {
  spans: number;
  seconds: number;
  failures: number;
  /** CPU seconds the service used during the round (every thread, user and system). */
  serviceCpuSeconds: number;
}

const lines = createInterface({ input: process.stdin })[Symbol.asyncIterator]();
const plan = JSON.parse((await lines.next()).value as string) as LoadPlan;
const bodies = encodeBodies(plan, plan.warmUpSpans + plan.bodySpans);
await send(plan, bodies, { spans: plan.warmUpSpans });
process.stdout.write(`${JSON.stringify({ ready: true })}\n`);
while (!(await lines.next()).done) {
  const cpuBefore = cpuSeconds(plan.servicePid);
  const sent = await send(plan, bodies, plan.roundSpans === undefined ? { seconds: plan.roundSeconds ?? 3 } : { spans: plan.roundSpans });
  const round: Round = { ...sent, serviceCpuSeconds: cpuSeconds(plan.servicePid) - cpuBefore };
  process.stdout.write(`${JSON.stringify(round)}\n`);
}

/** Every body of the run, in sending order; each is one resource's batch, as an SDK exporter sends it. */
function encodeBodies(plan: LoadPlan, spans: number): Uint8Array[] {
  const collected: ReadableSpan[] = [];
  const collector: SpanProcessor = {
    onStart: () => {},
    onEnd: (span) => void collected.push(span),
    forceFlush: async () => {},
    shutdown: async () => {},
  };
  const tracers = Array.from({ length: plan.services }, (_, index) =>
    new BasicTracerProvider({
      resource: resourceFromAttributes({ 'service.name': `svc-${index}`, 'overmind.agent.name': `Bench agent ${index}` }),
      spanProcessors: [collector],
    }).getTracer('bench', '1.0'),
  );
  const bodies: Uint8Array[] = [];
  for (let batch = 0; batch * plan.batchSpans < spans; batch++) {
    const tracer = tracers[batch % plan.services]!;
    const batchStartMs = plan.startMs + batch * 1000;
    for (let first = 0; first < plan.batchSpans; first += plan.spansPerTrace) {
      const job = plan.jobIds[(batch * plan.batchSpans + first) / plan.spansPerTrace % plan.jobIds.length]!;
      const root = tracer.startSpan('agent.run', { kind: SpanKind.SERVER, startTime: batchStartMs + first, attributes: spanAttributes(job, 'invoke_agent', first) });
      const parent = trace.setSpan(context.active(), root);
      for (let index = first + 1; index < first + plan.spansPerTrace; index++) {
        const attributes = spanAttributes(job, 'chat', index);
        const child = tracer.startSpan(`llm.call.${index % 4}`, { kind: SpanKind.CLIENT, startTime: batchStartMs + index, attributes }, parent);
        endSpan(child, batch * plan.batchSpans + index, batchStartMs + index);
      }
      endSpan(root, batch * plan.batchSpans + first, batchStartMs + first);
    }
    bodies.push(ProtobufTraceSerializer.serializeRequest(collected.splice(0))!);
  }
  return bodies;
}

function spanAttributes(job: string, operation: string, index: number) {
  return {
    'overmind.job.id': job,
    'gen_ai.operation.name': operation,
    'gen_ai.request.model': 'claude-sonnet',
    'gen_ai.usage.input_tokens': 1200 + index,
  };
}

/** Ends a span after a varied duration, every 50th as an error. */
function endSpan(span: ReturnType<ReturnType<BasicTracerProvider['getTracer']>['startSpan']>, serial: number, startMs: number): void {
  span.setStatus({ code: serial % 50 === 0 ? SpanStatusCode.ERROR : SpanStatusCode.OK });
  span.end(startMs + ((serial * 7919) % 1000));
}

/** Senders posting the next bodies back to back, for a time or until a number of spans is acknowledged. */
async function send(plan: LoadPlan, bodies: Uint8Array[], until: { seconds?: number; spans?: number }): Promise<Omit<Round, 'serviceCpuSeconds'>> {
  const started = performance.now();
  const deadline = until.seconds === undefined ? Infinity : started + until.seconds * 1000;
  const target = until.spans ?? Infinity;
  let taken = 0;
  let spans = 0;
  let failures = 0;
  const sender = async () => {
    while (performance.now() < deadline && taken < target && bodies.length > 0) {
      const body = bodies.shift()!;
      taken += plan.batchSpans;
      const response = await fetch(`${plan.url}/v1/traces`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-protobuf', 'x-api-key': plan.apiKey },
        body: body as BodyInit,
      });
      const answer = await response.arrayBuffer();
      if (response.ok) {
        spans += plan.batchSpans;
      } else {
        // The first refusal says why; the rest are only counted.
        if (failures++ === 0) console.error(`an export answered ${response.status}: ${Buffer.from(answer).toString()}`);
      }
    }
  };
  await Promise.all(Array.from({ length: plan.connections }, sender));
  return { spans, seconds: (performance.now() - started) / 1000, failures };
}

/** CPU seconds a process has used so far: utime + stime of /proc/<pid>/stat, in clock ticks of 1/100 s. */
function cpuSeconds(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100;
}
