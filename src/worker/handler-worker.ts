// The in-process worker: the worker loop (worker-loop.ts) with a JavaScript function for the
// command, for test suites and programs that embed the service. It speaks to the service over
// HTTP like any worker, at `url`, or, given an in-process `service` (createService), at a
// loopback server on a free port that it starts on the service's request listener and closes
// when it ends. A server of its own rather than service.listen(): the service may listen already
// (or later) on its own port, and closing the worker must not close that. HTTP rather than calling
// the listener with made-up requests: the worker then goes through exactly what every other
// worker goes through (credentials, body limits, validation), and Koa needs a real socket.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Json } from '../domain/records.ts';
import type { Service } from '../service.ts';
import { freshTraceContext, type TraceContext } from './trace-context.ts';
import { checkWorkerBounds, fitError } from './worker-decisions.ts';
import { messageOf, WorkerLoop, type TaskControl, type WorkerCounts, type WorkerEnd } from './worker-loop.ts';
import { WorkerProtocol } from './worker-protocol.ts';
import { taskInputOf, type ResultFields, type TaskInput, type TaskOutcome } from './worker-task.ts';

/** A task as a handler receives it: what a command reads on its standard input, and the iteration's code. */
export interface HandlerTask extends TaskInput {
  agent_code: string | null;
}

export interface HandlerContext {
  /** Aborted when the worker stops the task (the service took it back, or a stop's grace ran out). */
  signal: AbortSignal;
  /** A fresh W3C trace context for the task; the result names its trace and span unless it names its own. */
  traceparent: string;
}

/**
 * What a handler answers: a result row's fields (`output`, and any of `score`, `passed`,
 * `dimension_scores`, `cost`, `status` 'error' with `error`, `trace_id`, `span_id`,
 * `latency_ms`), or `{ status: 'rate_limited' }`. Anything that is not an object is the output.
 * A handler that throws gives an error result with the error's message.
 */
export type HandlerResult = ResultFields | { status: 'rate_limited' } | Json | undefined;

export type Handler = (task: HandlerTask, context: HandlerContext) => Promise<HandlerResult> | HandlerResult;

export interface WorkerOptions {
  /** The service's address; or `service`, an in-process one. */
  url?: string;
  service?: Pick<Service, 'handler'>;
  apiKey: string;
  /** Only this run's tasks; the worker ends once the run has. Else every live run of the key's project, until stop(). */
  run?: string | null;
  handler: Handler;
  /** Tasks run at once (default 4). */
  concurrency?: number;
  /** Tasks asked for in one lease (default: the concurrency). */
  batch?: number;
  /** Milliseconds running tasks get to finish at a stop that names none (default 10,000). */
  graceMs?: number;
  /** Milliseconds a lease waits for a task when none is ready (default 10,000; 2,000 at most with `run`). */
  leaseWaitMs?: number;
  /** The worker's name as registered (default `in-process <pid>`). */
  name?: string;
  /** Where notes go (an unreachable service, a refused result); default: nowhere. */
  log?: (line: string) => void;
}

export interface WorkerSummary {
  /** 'run ended' when its run has; 'stopped' after stop(). */
  end: WorkerEnd;
  counts: WorkerCounts;
}

export interface WorkerHandle {
  /** What it has done so far. */
  readonly counts: Readonly<WorkerCounts>;
  /** Resolves once it has ended and said goodbye (rejects with what stopped it, if the service refused it). */
  readonly done: Promise<WorkerSummary>;
  /** Leases no more; running tasks get `graceMs` (default: the worker's) to finish. Resolves as `done`. */
  stop(graceMs?: number): Promise<WorkerSummary>;
}

const zero: WorkerCounts = { leased: 0, running: 0, done: 0, errors: 0, rateLimited: 0, stale: 0, cancelled: 0, refused: 0, stopped: 0 };

export function runWorker(options: WorkerOptions): WorkerHandle {
  if (!options.url === !options.service) throw new TypeError('runWorker needs a url or a service (one of them)');
  const concurrency = options.concurrency ?? 4;
  const batch = options.batch ?? concurrency;
  checkWorkerBounds(concurrency, batch);
  const graceMs = options.graceMs ?? 10_000;
  let loop: WorkerLoop | undefined;
  let stopAsked: number | undefined;
  const done = (async (): Promise<WorkerSummary> => {
    const server = options.service ? await loopbackServer(options.service) : undefined;
    try {
      loop = new WorkerLoop({
        protocol: new WorkerProtocol({ url: server?.url ?? options.url!, apiKey: options.apiKey, log: options.log }),
        execute: (task, control) => runHandler(options.handler, { ...taskInputOf(task), agent_code: task.iteration.agent_code }, control),
        concurrency,
        batch,
        run: options.run ?? null,
        graceMs,
        leaseWaitMs: options.leaseWaitMs,
        identity: { name: options.name ?? `in-process ${process.pid}`, host: 'in-process', metadata: { kind: 'handler', concurrency, batch } },
        log: options.log,
      });
      if (stopAsked !== undefined) loop.stop(stopAsked);
      const end = await loop.run();
      return { end, counts: { ...loop.counts } };
    } finally {
      await server?.close();
    }
  })();
  return {
    get counts() {
      return loop ? loop.counts : zero;
    },
    done,
    stop(grace = graceMs) {
      if (loop) loop.stop(grace);
      else stopAsked ??= grace;
      return done;
    },
  };
}

/** Runs the handler for one task; its answer (or its failure) made a result. */
async function runHandler(handler: Handler, task: HandlerTask, control: TaskControl): Promise<TaskOutcome> {
  const trace = freshTraceContext();
  const started = performance.now();
  try {
    // The signal is made only if the handler asks for it.
    const context: HandlerContext = {
      get signal() {
        return control.signal;
      },
      traceparent: trace.traceparent,
    };
    const answer = await handler(task, context);
    return handlerOutcome(answer, performance.now() - started, trace);
  } catch (error) {
    return handlerOutcome({ status: 'error', error: fitError(messageOf(error)) }, performance.now() - started, trace);
  }
}

/** The fields of a result a handler may give. */
const resultFields = ['output', 'score', 'passed', 'dimension_scores', 'cost', 'status', 'error', 'trace_id', 'span_id', 'latency_ms'] as const;

/** A handler's answer as the result sent: its own fields, the time it took and the task's trace unless it names them. */
export function handlerOutcome(answer: HandlerResult, latencyMs: number, trace: TraceContext): TaskOutcome {
  const given: Record<string, unknown> = answer !== null && typeof answer === 'object' && !Array.isArray(answer) ? (answer as unknown as Record<string, unknown>) : { output: answer ?? null };
  if (given.status === 'rate_limited') return { kind: 'rate_limited' };
  const fields: Record<string, unknown> = { latency_ms: Math.max(0, latencyMs), trace_id: trace.traceId, span_id: trace.spanId };
  for (const field of resultFields) if (given[field] !== undefined) fields[field] = given[field];
  return { kind: 'result', fields: fields as ResultFields };
}

/** An HTTP server on a free loopback port for the service's listener, closed by its close(). */
async function loopbackServer(service: Pick<Service, 'handler'>): Promise<{ url: string; close(): Promise<void> }> {
  const server = createServer(service.handler);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', resolve);
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
