// The worker's side of /api/workers/ over HTTP: register, lease, heartbeat, complete, goodbye, and
// a run's state. A call the service cannot answer now (unreachable, restarting, busy: see
// isRetryableStatus) is tried again with backoff until it is answered or the caller's signal
// aborts it, so a result handed to `complete` is kept (by the caller awaiting it) until the service
// accepts or refuses it. Any other answer outside 2xx is a WorkerRefused. Node's own HTTP client,
// with a keep-alive agent this object owns and destroys on close(), so nothing outlives it.
import http from 'node:http';
import https from 'node:https';
import { backoffMs, defaultBackoff, isRetryableStatus, mayHaveActed, retryDelayMs, type BackoffPolicy } from './backoff.ts';
import { clockOffsetMs } from './worker-decisions.ts';
import type { CompletionOutcome, LeasedTask } from './worker-task.ts';

export interface ProtocolOptions {
  /** The service's address, e.g. http://127.0.0.1:8000. */
  url: string;
  apiKey: string;
  backoff?: BackoffPolicy;
  /** Where notes on an unreachable service go (one when it is lost, then every `unreachableLogMs`, one when it is back). */
  log?: (line: string) => void;
  /** In [0, 1): the backoff's jitter (tests give a fixed one). */
  random?: () => number;
}

/** The service answered, and not with what was asked: a final answer, not worth repeating. */
export class WorkerRefused extends Error {
  constructor(
    readonly status: number,
    readonly body: unknown,
    what: string,
  ) {
    super(`${what}: the service answered ${status}${body === undefined || body === '' ? '' : ` ${typeof body === 'string' ? body : JSON.stringify(body)}`}`);
    this.name = 'WorkerRefused';
  }
}

export interface Leased {
  tasks: LeasedTask[];
  /** When the answer arrived (this machine's clock). */
  receivedAtMs: number;
  /** The service's clock minus this machine's, as far as the answer's Date header tells. */
  offsetMs: number;
  /** An earlier try of this lease may have leased tasks whose answer was lost on the way. */
  mayHaveLost: boolean;
}

/** A lease's body: tasks at most, how long to wait for one, and only this run's (null: any live run of the project). */
export interface LeaseBody {
  max: number;
  wait_ms: number;
  run: string | null;
}

export interface CompletionAnswer {
  results: { task: string; outcome: CompletionOutcome; errors?: unknown }[];
  /** The tasks its `next` leased, when it asked for them. */
  leased?: Leased;
}

/** A run as GET /api/runs/{id}/ answers it (the fields a worker reads). */
export interface RunState {
  id: string;
  status: string;
  counts: { total: number; queued: number; leased: number; done: number; dead: number; skipped: number; cancelled: number };
}

interface Answer {
  status: number;
  headers: http.IncomingHttpHeaders;
  text: string;
  receivedAtMs: number;
}

/** A completion's body from its items' JSON texts (made once by the caller), with the lease it carries if any. */
function completionBody(items: readonly string[], next?: LeaseBody): string {
  const results = `"results":[${items.join(',')}]`;
  return next ? `{${results},"next":${JSON.stringify(next)}}` : `{${results}}`;
}

/** Bytes of one answer read at most (a lease of a full batch of tasks with large agent code). */
const answerBytesMax = 256 * 1024 * 1024;
/** Beyond a lease's own wait, how long an answer may take before the request is given up and tried again. */
const answerTimeoutMs = 60_000;
/** While the service stays unreachable, a note this often. */
const unreachableLogMs = 10_000;

export class WorkerProtocol {
  private readonly base: URL;
  private readonly agent: http.Agent;
  private readonly transport: typeof http | typeof https;
  private readonly backoff: BackoffPolicy;
  private readonly random: () => number;
  private readonly log: (line: string) => void;
  private readonly headers: Record<string, string>;
  /** Since when calls have failed to reach the service (undefined: the last one reached it). */
  private unreachableSince: number | undefined;
  private unreachableLoggedAt = 0;

  constructor(options: ProtocolOptions) {
    this.base = new URL(options.url.endsWith('/') ? options.url : `${options.url}/`);
    if (this.base.protocol !== 'http:' && this.base.protocol !== 'https:') throw new TypeError(`the service's URL must be http or https, not ${options.url}`);
    this.transport = this.base.protocol === 'https:' ? https : http;
    // Enough sockets for a lease waiting, a heartbeat and a completion at once, and a spare.
    this.agent = new this.transport.Agent({ keepAlive: true, maxSockets: 8 });
    this.backoff = options.backoff ?? defaultBackoff;
    this.random = options.random ?? Math.random;
    this.log = options.log ?? (() => {});
    this.headers = { 'x-api-key': options.apiKey, 'content-type': 'application/json', accept: 'application/json' };
  }

  async register(body: { name: string; host: string; metadata: unknown }, signal?: AbortSignal): Promise<{ id: string }> {
    return this.json('POST', 'api/workers/', JSON.stringify(body), 201, 'registering the worker', signal);
  }

  /** Up to `max` tasks, waiting up to `waitMs` for one. */
  async lease(worker: string, body: LeaseBody, signal?: AbortSignal): Promise<Leased> {
    const { answer, mayHaveLost } = await this.leasing(`api/workers/${worker}/lease/`, JSON.stringify(body), signal, body.wait_ms);
    const { tasks } = this.parsed<{ tasks: LeasedTask[] }>(answer, 200, 'leasing tasks');
    return this.leased(tasks, answer, mayHaveLost);
  }

  /** Extends every lease the worker holds; answers which of `tasks` it must stop, and how many leases it holds. */
  async heartbeat(worker: string, tasks: readonly string[], signal?: AbortSignal): Promise<{ stop: string[]; leases: number }> {
    return this.json('POST', `api/workers/${worker}/heartbeat/`, JSON.stringify({ tasks }), 200, 'heartbeat', signal);
  }

  /**
   * Completes tasks: `items` are each item's JSON text (the caller made them once, and keeps them
   * until answered). Sent again after its answer was lost, an item the first try wrote is answered
   * `stale` (its task is done): its result stands.
   */
  async complete(worker: string, items: readonly string[], signal?: AbortSignal): Promise<CompletionAnswer> {
    return this.json('POST', `api/workers/${worker}/complete/`, completionBody(items), 200, 'completing tasks', signal);
  }

  /** Completes tasks (as complete) and, in the same call, leases the next ones (the completion's `next`). */
  async completeAndLease(worker: string, items: readonly string[], next: LeaseBody, signal?: AbortSignal): Promise<CompletionAnswer & { leased: Leased }> {
    const { answer, mayHaveLost } = await this.leasing(`api/workers/${worker}/complete/`, completionBody(items, next), signal, next.wait_ms);
    const { results, tasks } = this.parsed<{ results: CompletionAnswer['results']; tasks: LeasedTask[] }>(answer, 200, 'completing tasks');
    return { results, leased: this.leased(tasks, answer, mayHaveLost) };
  }

  /** A call that leases: answered, and whether an earlier try may have leased tasks whose answer was lost. */
  private async leasing(path: string, body: string, signal: AbortSignal | undefined, waitMs: number): Promise<{ answer: Answer; mayHaveLost: boolean }> {
    let mayHaveLost = false;
    const answer = await this.call('POST', path, body, signal, waitMs + answerTimeoutMs, (failure) => {
      // A request refused at connect never reached the service; any other failure may have come
      // after it leased, and so may a 500, or a 502 or 504 of a proxy that had forwarded it.
      if ('status' in failure ? mayHaveActed(failure.status) : (failure.error as NodeJS.ErrnoException).code !== 'ECONNREFUSED') mayHaveLost = true;
    });
    return { answer, mayHaveLost };
  }

  private leased(tasks: LeasedTask[], answer: Answer, mayHaveLost: boolean): Leased {
    return { tasks, receivedAtMs: answer.receivedAtMs, offsetMs: clockOffsetMs(answer.headers.date, answer.receivedAtMs), mayHaveLost };
  }

  /** The worker leaves: its leases go back to the queue. A worker already gone is gone. */
  async goodbye(worker: string, signal?: AbortSignal): Promise<void> {
    const answer = await this.call('DELETE', `api/workers/${worker}/`, undefined, signal, answerTimeoutMs);
    if (answer.status !== 204 && answer.status !== 404) throw new WorkerRefused(answer.status, parse(answer.text), 'saying goodbye');
  }

  /** A span token for the key's project: what the agents the worker runs export their spans with. */
  async spanToken(signal?: AbortSignal): Promise<{ token: string; expires_at: string }> {
    return this.json('POST', 'api/auth/span-tokens/', '{}', 201, 'asking for a span token', signal);
  }

  /** Where spans are exported: the service's OTLP/HTTP traces path. */
  get tracesUrl(): string {
    return new URL('v1/traces', this.base).href;
  }

  async run(id: string, signal?: AbortSignal): Promise<RunState> {
    return this.json('GET', `api/runs/${id}/`, undefined, 200, 'reading the run', signal);
  }

  /** Closes the kept-alive connections. */
  close(): void {
    this.agent.destroy();
  }

  private async json<T>(method: string, path: string, body: string | undefined, expected: number, what: string, signal?: AbortSignal): Promise<T> {
    return this.parsed<T>(await this.call(method, path, body, signal, answerTimeoutMs), expected, what);
  }

  private parsed<T>(answer: Answer, expected: number, what: string): T {
    const body = parse(answer.text);
    if (answer.status !== expected) throw new WorkerRefused(answer.status, body, what);
    return body as T;
  }

  /** Sends until answered with a final status (or `signal` aborts); `failed` hears of each failed try (an error, or a status tried again). */
  private async call(method: string, path: string, body: string | undefined, signal: AbortSignal | undefined, timeoutMs: number, failed?: (failure: { error: unknown } | { status: number }) => void): Promise<Answer> {
    for (let attempt = 0; ; attempt++) {
      signal?.throwIfAborted();
      let answer: Answer | undefined;
      let failure: string;
      try {
        answer = await this.send(method, path, body, signal, timeoutMs);
        if (!isRetryableStatus(answer.status)) {
          this.reached();
          return answer;
        }
        failed?.({ status: answer.status });
        failure = `answered ${answer.status}`;
      } catch (error) {
        if (signal?.aborted) throw signal.reason;
        failed?.({ error });
        failure = describe(error);
      }
      const retryAfter = answer?.headers['retry-after'];
      const delay = answer ? retryDelayMs(attempt, retryAfter, Date.now(), this.backoff, this.random()) : backoffMs(attempt, this.backoff, this.random());
      this.unreachable(`${method} /${path}: ${failure}`, delay);
      await sleep(delay, signal);
    }
  }

  private reached(): void {
    if (this.unreachableSince === undefined) return;
    this.log(`the service answers again (after ${((Date.now() - this.unreachableSince) / 1000).toFixed(1)} s)`);
    this.unreachableSince = undefined;
  }

  private unreachable(failure: string, delayMs: number): void {
    const now = Date.now();
    this.unreachableSince ??= now;
    if (now - this.unreachableLoggedAt < unreachableLogMs) return;
    this.unreachableLoggedAt = now;
    this.log(`the service cannot answer now (${failure}); trying again in ${(delayMs / 1000).toFixed(1)} s, keeping every result until it is taken`);
  }

  private send(method: string, path: string, body: string | undefined, signal: AbortSignal | undefined, timeoutMs: number): Promise<Answer> {
    return new Promise((resolve, reject) => {
      const headers = body === undefined ? this.headers : { ...this.headers, 'content-length': String(Buffer.byteLength(body)) };
      const request = this.transport.request(new URL(path, this.base), { method, agent: this.agent, headers, ...(signal ? { signal } : {}) }, (response) => {
        const chunks: Buffer[] = [];
        let bytes = 0;
        response.on('data', (chunk: Buffer) => {
          bytes += chunk.length;
          if (bytes > answerBytesMax) request.destroy(new Error(`an answer over ${answerBytesMax} bytes`));
          else chunks.push(chunk);
        });
        response.on('end', () => resolve({ status: response.statusCode ?? 0, headers: response.headers, text: Buffer.concat(chunks).toString('utf8'), receivedAtMs: Date.now() }));
        response.on('error', reject);
      });
      request.setTimeout(timeoutMs, () => request.destroy(new Error(`no answer within ${timeoutMs / 1000} s`)));
      request.on('error', reject);
      request.end(body);
    });
  }
}

function parse(text: string): unknown {
  try {
    return text === '' ? undefined : JSON.parse(text);
  } catch {
    return text;
  }
}

function describe(error: unknown): string {
  const { code, message } = error as NodeJS.ErrnoException;
  return code ?? message ?? String(error);
}

/** Resolves after `ms`, or rejects with the signal's reason once it aborts. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', abort);
      resolve();
    }, ms);
    const abort = () => {
      clearTimeout(timer);
      reject(signal!.reason);
    };
    signal?.addEventListener('abort', abort, { once: true });
  });
}
