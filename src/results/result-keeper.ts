// Results as the service keeps them: the store, its one writer, and the removal of results whose
// iteration (or its version's agent) is gone. Removal runs in bounded batches through the same
// writer as writes, in the background: results of a gone iteration are never answered again from
// the moment it goes (`sweep`), and are removed from the store right after, or at the next start
// if the service stops first.
import assert from 'node:assert/strict';
import type { Logger } from 'pino';
import type { Limits } from '../config.ts';
import type { Roster } from '../domain/result-batch.ts';
import type { Kv } from '../store/kv.ts';
import { ResultStore } from './result-store.ts';
import { ResultWriter, type ResultsWrite, type Written } from './result-writer.ts';

export interface ResultKeeperOptions {
  kv: Kv;
  limits: Readonly<Limits>;
  logger: Logger;
  /** Whether an iteration's results are still wanted: its iteration and its version's agent live. */
  isLive(iteration: string, roster: Roster): boolean;
  /** The run that writes an iteration's results now, if one does (its writer refuses rows from anyone else). */
  writingRun(iteration: string): string | undefined;
  /** Every commit's outcome (store health). */
  outcome(ok: boolean, error?: unknown): void;
  /** Read every row back as it is stored and assert it is the same (tests, debugging). */
  checkCodec?: boolean;
}

export class ResultKeeper {
  readonly store: ResultStore;
  private readonly writer: ResultWriter;
  /** Iterations whose rows are being removed. */
  private readonly purging = new Set<string>();
  /** Iterations found to be gone when the store was read, removed once the service starts. */
  private orphans: string[] = [];
  private sweepScheduled = false;

  constructor(private readonly options: ResultKeeperOptions) {
    const { limits } = options;
    this.store = new ResultStore(options.kv, { attemptsPerDatapointMax: limits.attemptsPerDatapointMax, checkCodec: options.checkCodec });
    this.writer = new ResultWriter(this.store, {
      queueRowsMax: limits.resultQueueRowsMax,
      commitRowsMax: limits.resultCommitRowsMax,
      limits,
      isLive: options.isLive,
      writingRun: options.writingRun,
      orphaned: (iteration) => this.purgeInBackground(iteration),
      outcome: options.outcome,
    });
  }

  /** Reads the stored results, once the read model is recovered. */
  load(): void {
    this.orphans = this.store.load(this.options.isLive);
  }

  /** Starts removing, in the background, the results found to be no longer wanted. */
  start(): void {
    for (const iteration of this.orphans) this.purgeInBackground(iteration);
    this.orphans = [];
  }

  /** Writes a batch; resolves once it is durable and readable. */
  write(request: ResultsWrite): Promise<Written> {
    return this.writer.write(request);
  }

  /**
   * Pins an iteration to a version (a run's), durably, writing no row: refused (invalid) when its
   * results are of another version.
   */
  async pin(iteration: string, roster: Roster, nowMs: number): Promise<void> {
    await this.writer.write({ iteration, roster, rows: [], nowMs });
  }

  /**
   * Takes back pins a run made for iterations it did not get (its job refused it): they hold no
   * row (nothing writes an iteration while a run is being placed on it), so removing what each
   * holds removes its pin, and its version's roster when no other pin names it. Durable on return.
   */
  async unpin(iterations: readonly string[]): Promise<void> {
    for (const iteration of iterations) {
      assert.equal(this.store.table(iteration)?.rows ?? 0, 0, 'an iteration unpinned holds no row');
      await this.purgeAll(iteration);
      this.store.forget(iteration); // its empty table, made by the pin, named the version
    }
  }

  /** Whether an iteration's results are still wanted: its iteration and its version's agent live. */
  isLive(iteration: string, roster: Roster): boolean {
    return this.options.isLive(iteration, roster);
  }

  /** Rows another writer stored for an iteration that went meanwhile (a run's): removed in the background. */
  orphaned(iteration: string): void {
    this.purgeInBackground(iteration);
  }

  /**
   * After a deletion (an iteration, a job, an agent, a project): results no longer wanted stop
   * being answered now and are removed in the background.
   */
  sweep(): void {
    for (const [iteration, roster] of [...this.store.pinnedIterations()]) {
      if (this.options.isLive(iteration, roster)) continue;
      this.store.forget(iteration);
      this.purgeInBackground(iteration);
    }
  }

  /**
   * A sweep once the current turn's commits are all applied: a joint commit (moving an iteration)
   * applies one stream's removal before the other's addition.
   */
  sweepSoon(): void {
    if (this.sweepScheduled) return;
    this.sweepScheduled = true;
    queueMicrotask(() => {
      this.sweepScheduled = false;
      this.sweep();
    });
  }

  /** Resolves once every waiting write is durable; removals left unfinished resume at next start. */
  close(): Promise<void> {
    return this.writer.stop();
  }

  private purgeInBackground(iteration: string): void {
    this.store.forget(iteration);
    if (this.purging.has(iteration)) return;
    this.purging.add(iteration);
    void this.purgeAll(iteration)
      .catch((error: unknown) =>
        this.options.logger.warn({ err: error, iteration }, 'removing the results of a deleted iteration stopped; it resumes at next start'),
      )
      .finally(() => this.purging.delete(iteration));
  }

  private async purgeAll(iteration: string): Promise<void> {
    while (!(await this.writer.purge(iteration, this.options.limits.resultPurgeRowsMax)));
  }
}
