// Prometheus metrics. Each service instance has its own prom-client registry (never the global
// one), so several services in one process (tests, embedders) never mix their figures. What
// belongs to the process (CPU, memory, event loop, GC) is collected once per process into a
// registry of its own and shown by every instance: collecting it per instance would start an
// event-loop monitor and a GC observer per service that nothing could stop.
//
// Only aggregates are exposed: route patterns (never raw paths or ids), statuses, mailbox depths
// per actor kind, store size and span counts. Nothing names a tenant or a record.
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { RequestObserver } from './observability.ts';

/** Where the figures read at scrape time come from. */
export interface MetricSources {
  /** Actors with messages waiting, and how many. */
  busyActors(): Iterable<{ kind: string; depth: number }>;
  storeBytes(): number;
  storeHealthy(): boolean;
  /** Spans stored since start. */
  spansStored(): number;
}

const actorKinds = ['identity', 'project', 'agent', 'job'] as const;
const knownMethods = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']);
/** From 0.5 ms: most answers come from memory, well under prom-client's smallest default bucket. */
const durationBuckets = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

let processRegistry: Registry | undefined;

/** Process figures (prom-client's defaults), collected once per process. */
function processMetrics(): Registry {
  if (!processRegistry) {
    processRegistry = new Registry();
    collectDefaultMetrics({ register: processRegistry });
  }
  return processRegistry;
}

type RequestLabel = 'method' | 'route' | 'status';

export class ServiceMetrics implements RequestObserver {
  private readonly registry = new Registry();
  private readonly durations: Histogram<RequestLabel>;
  /** One labelled child per method, route and status: labelling on every request costs more. */
  private readonly durationChildren = new Map<string, Histogram.Internal<RequestLabel>>();

  constructor(sources: MetricSources) {
    // Now rather than at the first scrape: process CPU time counts from when it is first collected.
    processMetrics();
    const registers = [this.registry];
    this.durations = new Histogram({
      name: 'http_request_duration_seconds',
      help: 'Time to answer a request, by method, route pattern and status; its _count is the number of requests.',
      labelNames: ['method', 'route', 'status'],
      buckets: durationBuckets,
      registers,
    });
    new Gauge({
      name: 'overmind_mailbox_messages',
      help: 'Messages waiting in actor mailboxes, by actor kind.',
      labelNames: ['kind'],
      registers,
      collect() {
        const depths = mailboxDepths(sources.busyActors());
        for (const kind of actorKinds) this.set({ kind }, depths.get(kind)?.total ?? 0);
      },
    });
    new Gauge({
      name: 'overmind_mailbox_deepest_messages',
      help: 'Messages waiting in the fullest mailbox of each actor kind (writes get 503 at LIMIT_MAILBOX_DEPTH_MAX).',
      labelNames: ['kind'],
      registers,
      collect() {
        const depths = mailboxDepths(sources.busyActors());
        for (const kind of actorKinds) this.set({ kind }, depths.get(kind)?.deepest ?? 0);
      },
    });
    new Gauge({
      name: 'overmind_store_size_bytes',
      help: 'Bytes the store occupies on disk (0 with STORAGE=memory).',
      registers,
      collect() {
        this.set(sources.storeBytes());
      },
    });
    new Gauge({
      name: 'overmind_store_healthy',
      help: '1 while the store takes writes, 0 after a write failed (until one succeeds again).',
      registers,
      collect() {
        this.set(sources.storeHealthy() ? 1 : 0);
      },
    });
    new Counter({
      name: 'overmind_spans_ingested_total',
      help: 'Spans stored from OTLP exports since start (a span sent again is not counted again).',
      registers,
      collect() {
        this.reset();
        this.inc(sources.spansStored());
      },
    });
  }

  observe(method: string, route: string, status: number, seconds: number): void {
    const methodLabel = knownMethods.has(method) ? method : 'OTHER';
    const key = `${methodLabel} ${route} ${status}`;
    let child = this.durationChildren.get(key);
    if (!child) {
      child = this.durations.labels(methodLabel, route, String(status));
      this.durationChildren.set(key, child);
    }
    child.observe(seconds);
  }

  /** The media type of `text()` (Prometheus text format 0.0.4). */
  get contentType(): string {
    return this.registry.contentType;
  }

  /** Every metric, this service's and the process's, in Prometheus text format. */
  async text(): Promise<string> {
    const [own, processWide] = await Promise.all([this.registry.metrics(), processMetrics().metrics()]);
    return `${own}\n${processWide}`;
  }
}

function mailboxDepths(busy: Iterable<{ kind: string; depth: number }>): Map<string, { total: number; deepest: number }> {
  const depths = new Map<string, { total: number; deepest: number }>();
  for (const { kind, depth } of busy) {
    const known = depths.get(kind);
    if (known) {
      known.total += depth;
      known.deepest = Math.max(known.deepest, depth);
    } else {
      depths.set(kind, { total: depth, deepest: depth });
    }
  }
  return depths;
}
