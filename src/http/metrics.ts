// Prometheus metrics. Each service instance has its own prom-client registry (never the global
// one), so several services in one process (tests, embedders) never mix their figures. What
// belongs to the process (CPU, memory, event loop, GC) is collected once per process into a
// registry of its own and shown by every instance: collecting it per instance would start an
// event-loop monitor and a GC observer per service that nothing could stop.
//
// Only aggregates are exposed: route patterns (never raw paths or ids), statuses, mailbox depths
// per actor kind, store size and span counts. Nothing names a tenant or a record.
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import { identityKind, streamKinds } from '../actors/kinds.ts';
import type { RequestObserver } from './observability.ts';

/** Where the figures read at scrape time come from. */
export interface MetricSources {
  /** Actors with messages waiting, and how many. */
  busyActors(): Iterable<{ kind: string; depth: number }>;
  /** Commits each actor kind began since start, and the messages they carried. */
  actorCommits(): ReadonlyMap<string, { commits: number; messages: number }>;
  storeBytes(): number;
  storeHealthy(): boolean;
  /** Spans stored since start. */
  spansStored(): number;
  /** Results reported by spans since start: applied, and not applied. */
  spanResults(): { applied: number; notApplied: number };
}

/** Every actor kind, from the kinds table: each has its mailbox figures, zero while none waits. */
const actorKinds = [identityKind.name, ...Object.keys(streamKinds)];
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

/** One method, route and status: how many of its requests fell in each bucket, and their total time. */
interface DurationSeries {
  labels: Record<RequestLabel, string>;
  /** Requests per bucket, not cumulative (those over every bound are in `count` only). */
  counts: Float64Array;
  sum: number;
  count: number;
}

/**
 * http_request_duration_seconds, a histogram kept for prom-client's registry to expose. prom-client's
 * own Histogram validates and hashes its label values on every observation, about 8,000
 * instructions a request (callgrind, a GET of an agent): 3% of the request, more than all of the
 * service's own work on it but its authentication. Here a request finds its series by its route,
 * method and status in three Maps of values already interned, and counts in a slot; the
 * cumulative buckets, the sum and the count are laid out only when the registry is scraped, in the
 * shape prom-client's Histogram gives them (its `get()`), so the text is prom-client's.
 */
export class RequestDurations {
  readonly name = 'http_request_duration_seconds';
  readonly help = 'Time to answer a request, by method, route pattern and status; its _count is the number of requests.';
  readonly type = 'histogram';
  readonly aggregator = 'sum';
  private readonly byRoute = new Map<string, Map<string, Map<number, DurationSeries>>>();

  constructor(private readonly bounds: readonly number[]) {}

  observe(method: string, route: string, status: number, seconds: number): void {
    const methodLabel = knownMethods.has(method) ? method : 'OTHER';
    let byMethod = this.byRoute.get(route);
    if (!byMethod) this.byRoute.set(route, (byMethod = new Map()));
    let byStatus = byMethod.get(methodLabel);
    if (!byStatus) byMethod.set(methodLabel, (byStatus = new Map()));
    let series = byStatus.get(status);
    if (!series) {
      series = { labels: { method: methodLabel, route, status: String(status) }, counts: new Float64Array(this.bounds.length), sum: 0, count: 0 };
      byStatus.set(status, series);
    }
    let slot = 0;
    while (slot < this.bounds.length && seconds > this.bounds[slot]!) slot++;
    if (slot < this.bounds.length) series.counts[slot]!++;
    series.sum += seconds;
    series.count++;
  }

  /** prom-client's metric contract: what its registry formats (and merges, and resets). */
  async get() {
    const values: { labels: Record<string, string | number>; value: number; metricName: string }[] = [];
    for (const series of this.allSeries()) {
      let cumulative = 0;
      this.bounds.forEach((bound, slot) => {
        cumulative += series.counts[slot]!;
        values.push({ labels: { le: bound, ...series.labels }, value: cumulative, metricName: `${this.name}_bucket` });
      });
      values.push({ labels: { le: '+Inf', ...series.labels }, value: series.count, metricName: `${this.name}_bucket` });
      values.push({ labels: series.labels, value: series.sum, metricName: `${this.name}_sum` });
      values.push({ labels: series.labels, value: series.count, metricName: `${this.name}_count` });
    }
    return { name: this.name, help: this.help, type: this.type, aggregator: this.aggregator, values };
  }

  reset(): void {
    this.byRoute.clear();
  }

  private *allSeries(): Generator<DurationSeries> {
    for (const byMethod of this.byRoute.values()) {
      for (const byStatus of byMethod.values()) yield* byStatus.values();
    }
  }
}

export class ServiceMetrics implements RequestObserver {
  private readonly registry = new Registry();
  private readonly durations = new RequestDurations(durationBuckets);

  constructor(sources: MetricSources) {
    // Now rather than at the first scrape: process CPU time counts from when it is first collected.
    processMetrics();
    const registers = [this.registry];
    // prom-client's registry takes any metric that keeps its contract; its types name only its own four.
    this.registry.registerMetric(this.durations as unknown as Histogram);
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
    // Their ratio is how many messages a commit carries: each commit costs a synced write, so it
    // tells how well the actors batch under the load of the moment (a job's, with workers).
    const commitCounts = [
      ['overmind_actor_commits_total', 'Commits the actors of each kind began since start (each one synced write).', 'commits'],
      ['overmind_actor_commit_messages_total', 'Messages those commits carried, by actor kind (over overmind_actor_commits_total: messages a commit).', 'messages'],
    ] as const;
    for (const [name, help, field] of commitCounts) {
      new Counter({
        name,
        help,
        labelNames: ['kind'],
        registers,
        collect() {
          const commits = sources.actorCommits();
          this.reset();
          for (const kind of actorKinds) this.inc({ kind }, commits.get(kind)?.[field] ?? 0);
        },
      });
    }
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
    new Counter({
      name: 'overmind_span_results_total',
      help: 'Results reported by spans (overmind.eval.score) since start: applied, or not applied (no such iteration, datapoint or version; a malformed value).',
      labelNames: ['outcome'],
      registers,
      collect() {
        const counts = sources.spanResults();
        this.reset();
        this.inc({ outcome: 'applied' }, counts.applied);
        this.inc({ outcome: 'not_applied' }, counts.notApplied);
      },
    });
  }

  observe(method: string, route: string, status: number, seconds: number): void {
    this.durations.observe(method, route, status, seconds);
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
