// A run's progress as the event feed announces it: `run.progress` (done of total, the rate, the time
// left) and `results.written` for the rows its completions wrote, each coalesced to at most one
// event per run (or iteration) every `intervalMs`, however many tasks complete meanwhile.
import type { Clock } from '../clock.ts';
import type { Published } from '../events/change-feed.ts';
import type { Run } from '../domain/run.ts';
import type { ReadModel } from '../read-model.ts';
import type { RowsWritten } from './run-results.ts';

/** What one run.progress event says (its data). */
export interface RunProgressData {
  run: string;
  job: string;
  status: string;
  /** Why it ended (null while live). */
  reason: Run['reason'];
  counts: Record<string, number>;
  /** Tasks ended so far (done, dead, skipped, cancelled) of total. */
  finished: number;
  total: number;
  /** Tasks ended per second over the last window; null before two samples. */
  rate: number | null;
  /** Seconds left at that rate; null when unknown. */
  eta_seconds: number | null;
  /** Its latest rescoring (done of total), as the run answers it. */
  rescore: Run['rescore'];
  /** What it has spent (as the run answers it), and when its first lease was. */
  spent: { cost: number; tasks: number };
  started_at: string | null;
}

export interface RunProgressOptions {
  readModel: ReadModel;
  clock: Clock;
  publish(published: Published[]): void;
  /** A results.written event's data for rows a run wrote to an iteration. */
  resultsWritten(iteration: string, written: RowsWritten): Published | null;
}

/** Announcements at most this often (per run, per iteration). */
const intervalMs = 250;
/** The rate is measured over this window. */
const rateWindowMs = 10_000;

export class RunProgress {
  private readonly runs = new Set<string>();
  private readonly rows = new Map<string, RowsWritten>();
  /** Each run's recent samples of tasks ended, for its rate. */
  private readonly samples = new Map<string, { at: number; finished: number }[]>();
  private timer: NodeJS.Timeout | undefined;
  private closed = false;

  constructor(private readonly options: RunProgressOptions) {}

  /** A run's tasks moved: announce its progress soon. */
  progressed(run: string): void {
    this.runs.add(run);
    this.schedule();
  }

  /** A run's completion wrote rows to iterations: announce them soon, summed. */
  wrote(written: readonly RowsWritten[]): void {
    for (const one of written) {
      const held = this.rows.get(one.iteration);
      if (held) {
        held.created += one.created;
        held.replaced += one.replaced;
      } else this.rows.set(one.iteration, { ...one });
    }
    if (written.length > 0) this.schedule();
  }

  close(): void {
    this.closed = true;
    clearTimeout(this.timer);
    this.timer = undefined;
  }

  private schedule(): void {
    if (this.timer || this.closed) return;
    this.timer = setTimeout(() => this.flush(), intervalMs);
  }

  /**
   * Announces what is pending now (the timer's, or before a run's end is announced: its last rows
   * and progress come before its run.finished).
   */
  flush(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    const published: Published[] = [];
    for (const [iteration, written] of this.rows) {
      const event = this.options.resultsWritten(iteration, written);
      if (event) published.push(event);
    }
    this.rows.clear();
    for (const run of this.runs) {
      const event = this.progressOf(run);
      if (event) published.push(event);
    }
    this.runs.clear();
    if (published.length > 0) this.options.publish(published);
  }

  private progressOf(id: string): Published | null {
    const { readModel, clock } = this.options;
    const state = readModel.runStates.get(id);
    if (!state) {
      this.samples.delete(id);
      return null;
    }
    const { run, tasks, spending } = state;
    const { counts } = tasks;
    const finished = counts.done + counts.dead + counts.skipped + counts.cancelled;
    const now = clock.nowMs();
    // Samples above the count now are left out: a retry of a live run queues ended tasks again,
    // and the rate is of tasks ending, never negative.
    const samples = (this.samples.get(id) ?? []).filter((sample) => sample.at >= now - rateWindowMs && sample.finished <= finished);
    samples.push({ at: now, finished });
    this.samples.set(id, samples);
    const first = samples[0]!;
    const rate = samples.length > 1 && now > first.at ? ((finished - first.finished) * 1000) / (now - first.at) : null;
    const left = counts.queued + counts.leased;
    const data: RunProgressData = {
      run: run.id,
      job: run.job,
      status: run.status,
      reason: run.reason,
      counts: { ...counts },
      finished,
      total: counts.total,
      rate,
      eta_seconds: rate !== null && rate > 0 ? left / rate : left === 0 ? 0 : null,
      rescore: run.rescore,
      spent: { cost: spending.cost, tasks: spending.executed },
      started_at: run.started_at,
    };
    if (finished === counts.total) this.samples.delete(id);
    const agent = readModel.jobs.get(run.job)?.agent ?? null;
    return { type: 'run.progress', project: run.project, agent, job: run.job, audience: null, data: JSON.stringify(data) };
  }
}
