// The span store as the service runs it: the one writer, retention pruning on a background timer
// (TRACE_RETENTION_DAYS), and removal of a deleted project's spans. Removals run in bounded
// batches through the same writer as ingests, so they never hold the store for long.
import type { Logger } from 'pino';
import type { Config } from '../config.ts';
import type { Clock } from '../clock.ts';
import { millisToNanos, nanosToHex } from './nanos.ts';
import type { SpanRecord } from './span-record.ts';
import { SpanStore, type Ingested } from './span-store.ts';
import { SpanWriter } from './span-writer.ts';
import type { Kv } from '../store/kv.ts';

/** How often retention pruning runs (it also runs once at start). */
const pruneIntervalMs = 60 * 60_000;
const dayMs = 24 * 60 * 60_000;

export interface TracesOptions {
  kv: Kv;
  config: Config;
  clock: Clock;
  logger: Logger;
  /** Every commit's outcome (store health). */
  outcome(ok: boolean, error?: unknown): void;
}

export class Traces {
  readonly store: SpanStore;
  private readonly writer: SpanWriter;
  private timer: NodeJS.Timeout | undefined;
  /** Spans stored since the service started, duplicates not counted (GET /metrics). */
  spansStored = 0;

  constructor(private readonly options: TracesOptions) {
    const { limits } = options.config;
    this.store = new SpanStore(options.kv, limits.spansPerTraceMax);
    this.writer = new SpanWriter(this.store, {
      queueSpansMax: limits.traceQueueSpansMax,
      commitSpansMax: limits.traceCommitSpansMax,
      outcome: options.outcome,
    });
  }

  /**
   * Stores the spans not stored yet, unless their trace is full; resolves with how many were
   * stored and refused, once they are durable.
   */
  ingest(spans: readonly SpanRecord[]): Promise<Ingested> {
    // Not async: its frame would hold the spans until the commit is durable (see SpanWriter).
    return this.writer.ingest(spans).then((ingested) => {
      this.spansStored += ingested.stored;
      return ingested;
    });
  }

  /**
   * Starts background work: removes the spans of projects deleted while the service was down (or
   * before their removal finished), and prunes expired spans now and periodically.
   */
  start(projectExists: (id: string) => boolean): void {
    for (const project of [...this.store.projects()]) if (!projectExists(project)) this.forgetProject(project);
    if (this.options.config.traceRetentionDays === undefined) return;
    const prune = () => void this.pruneExpired().catch((error: unknown) => this.options.logger.warn({ err: error }, 'span pruning stopped'));
    prune();
    this.timer = setInterval(prune, pruneIntervalMs);
    this.timer.unref();
  }

  /** Removes a deleted project's spans in the background (they are invisible already). */
  forgetProject(project: string): void {
    void this.removeAll(project, null).catch((error: unknown) =>
      this.options.logger.warn({ err: error, project }, 'removing the spans of a deleted project stopped; it resumes at next start'),
    );
  }

  /** Removes every span that started more than TRACE_RETENTION_DAYS ago; resolves with how many. */
  async pruneExpired(): Promise<number> {
    const days = this.options.config.traceRetentionDays;
    if (days === undefined) return 0;
    const cutoff = nanosToHex(millisToNanos(this.options.clock.nowMs() - days * dayMs));
    let removed = 0;
    for (const project of [...this.store.projects()]) removed += await this.removeAll(project, cutoff);
    if (removed > 0) this.options.logger.info({ removed, retention_days: days }, 'pruned expired spans');
    return removed;
  }

  async close(): Promise<void> {
    clearInterval(this.timer);
    await this.writer.stop();
  }

  /** Removes a project's spans starting before `before` (all when null), batch after batch. */
  private async removeAll(project: string, before: string | null): Promise<number> {
    const batchMax = this.options.config.limits.tracePruneSpansMax;
    let total = 0;
    for (;;) {
      const removed = await this.writer.remove(project, before, batchMax);
      total += removed;
      if (removed < batchMax) return total;
    }
  }
}
