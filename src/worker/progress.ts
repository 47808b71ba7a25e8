// What the worker command shows while it works: on a terminal, one line redrawn in place (done of
// total, rate, time left, errors); otherwise a log line every 10 s. The line is made by a pure
// function of what the worker counted and, for a named run, the run's own counts (every
// worker's), read from the service every few seconds.
import type { WorkerCounts } from './worker-loop.ts';
import type { RunState, WorkerProtocol } from './worker-protocol.ts';

export interface ProgressFacts {
  counts: WorkerCounts;
  /** The named run's state as last read. */
  run: RunState | undefined;
  /** Tasks finished per second lately (null: not known yet). */
  perSecond: number | null;
}

/** Tasks of a run that will not run again: done, dead, skipped or cancelled. */
export function finishedOf(run: RunState): number {
  const { done, dead, skipped, cancelled } = run.counts;
  return done + dead + skipped + cancelled;
}

/** Tasks finished as this reporter counts them: the run's (every worker's) when it is named, else this worker's results taken. */
export function finishedNow(facts: Omit<ProgressFacts, 'perSecond'>): number {
  if (facts.run) return finishedOf(facts.run);
  const { done, errors, stale, cancelled, refused } = facts.counts;
  return done + errors + stale + cancelled + refused;
}

export function progressLine({ counts, run, perSecond }: ProgressFacts): string {
  const parts: string[] = [];
  if (run) {
    const finished = finishedOf(run);
    const share = run.counts.total === 0 ? 100 : Math.floor((finished / run.counts.total) * 100);
    parts.push(`${finished} of ${run.counts.total} tasks (${share}%)`);
  } else parts.push(`${counts.done + counts.errors} tasks done`);
  if (perSecond !== null) parts.push(`${formatRate(perSecond)}/s`);
  if (run && perSecond !== null && perSecond > 0 && run.status !== 'completed') parts.push(`~${formatDuration((run.counts.total - finishedOf(run)) / perSecond)} left`);
  parts.push(`${counts.errors} ${counts.errors === 1 ? 'error' : 'errors'}`);
  if (counts.rateLimited > 0) parts.push(`${counts.rateLimited} rate limited`);
  parts.push(`${counts.running} running`);
  if (run) parts.push(`run ${run.status}`);
  return parts.join(' · ');
}

export function formatRate(perSecond: number): string {
  return perSecond >= 100 ? perSecond.toFixed(0) : perSecond.toFixed(1);
}

export function formatDuration(seconds: number): string {
  if (!Number.isFinite(seconds)) return '?';
  if (seconds < 60) return `${Math.ceil(seconds)} s`;
  if (seconds < 3600) return `${Math.round(seconds / 60)} min`;
  return `${Math.floor(seconds / 3600)} h ${Math.round((seconds % 3600) / 60)} min`;
}

/** The rate over a sliding window of samples (time, finished), at most `samplesMax` kept. */
export class RateWindow {
  private samples: { atMs: number; finished: number }[] = [];

  constructor(
    private readonly windowMs = 10_000,
    private readonly samplesMax = 64,
  ) {}

  add(atMs: number, finished: number): void {
    this.samples.push({ atMs, finished });
    while (this.samples.length > this.samplesMax || (this.samples.length > 2 && atMs - this.samples[1]!.atMs >= this.windowMs)) this.samples.shift();
  }

  reset(): void {
    this.samples = [];
  }

  perSecond(): number | null {
    const first = this.samples[0];
    const last = this.samples.at(-1);
    if (!first || !last || last.atMs - first.atMs < 500) return null;
    return ((last.finished - first.finished) * 1000) / (last.atMs - first.atMs);
  }
}

export interface ReporterOptions {
  stream: NodeJS.WritableStream & { isTTY?: boolean; columns?: number };
  counts: () => WorkerCounts;
  /** Reads the named run (for its totals), when there is one. */
  protocol?: WorkerProtocol;
  run: string | null;
  /** How often the line is shown (default: redrawn every 0.5 s on a terminal, a log line every 10 s elsewhere). */
  lineEveryMs?: number;
}

/** A terminal line redrawn this often; a log line (not a terminal) this often. */
const liveEveryMs = 500;
const logEveryMs = 10_000;
/** The named run is read this often. */
const runEveryMs = 2_000;
/** The last line's read of the run waits this long at most. */
const lastReadMs = 1_000;

export class ProgressReporter {
  private readonly live: boolean;
  private readonly lineEveryMs: number;
  private readonly rate = new RateWindow();
  private run: RunState | undefined;
  private runReadAt = 0;
  /** The run's read in flight, if any (settled, never rejected). */
  private reading: Promise<void> | undefined;
  private stopped = false;
  private timer: NodeJS.Timeout | undefined;
  private shown = false;
  private readonly stopReading = new AbortController();

  constructor(private readonly options: ReporterOptions) {
    this.live = options.stream.isTTY === true;
    this.lineEveryMs = options.lineEveryMs ?? (this.live ? liveEveryMs : logEveryMs);
  }

  start(): void {
    void this.readRun();
    this.timer = setInterval(() => this.tick(), this.lineEveryMs);
    this.timer.unref();
  }

  /** A line of its own, above the live line. */
  note(line: string): void {
    this.clear();
    this.options.stream.write(`${this.live ? '' : `${new Date().toISOString()} `}${line}\n`);
    if (this.live && this.shown) this.draw();
  }

  /** The last line, kept on screen (or logged), with the run as it is now (read once more, up to a second). */
  async stop(): Promise<void> {
    clearInterval(this.timer);
    this.stopped = true;
    const { protocol, run } = this.options;
    if (protocol && run) {
      const timeout = setTimeout(() => this.stopReading.abort(), lastReadMs);
      this.run = await protocol.run(run, this.stopReading.signal).catch(() => this.run);
      clearTimeout(timeout);
    }
    this.stopReading.abort();
    this.sample();
    this.clear();
    this.shown = false;
    this.note(progressLine(this.facts()));
  }

  private tick(): void {
    if (this.live) {
      this.sample();
      this.draw();
      void this.readRun();
      return;
    }
    // Log lines are 10 s apart: each waits for the run's counts read now, not those read for the
    // line before; while a read is still pending (a slow service) the line waits for the next tick.
    if (this.reading) return;
    void this.readRun(true).then(() => {
      if (this.stopped) return;
      this.sample();
      this.note(progressLine(this.facts()));
    });
  }

  private facts(): ProgressFacts {
    return { counts: this.options.counts(), run: this.run, perSecond: this.rate.perSecond() };
  }

  private sample(): void {
    this.rate.add(Date.now(), finishedNow({ counts: this.options.counts(), run: this.run }));
  }

  private draw(): void {
    const width = this.options.stream.columns ?? 120;
    this.options.stream.write(`\r\x1b[2K${progressLine(this.facts()).slice(0, Math.max(20, width - 1))}`);
    this.shown = true;
  }

  private clear(): void {
    if (this.live && this.shown) this.options.stream.write('\r\x1b[2K');
  }

  /** Reads the named run, at most every runEveryMs unless `now`; settles when the read in flight does. */
  private readRun(now = false): Promise<void> {
    const { protocol, run } = this.options;
    if (this.reading) return this.reading;
    if (!protocol || !run || (!now && Date.now() - this.runReadAt < runEveryMs)) return Promise.resolve();
    this.reading = protocol
      .run(run, this.stopReading.signal)
      .then((state) => {
        // The run's counts replace the worker's own: the rate starts over.
        if (!this.run) this.rate.reset();
        this.run = state;
        this.runReadAt = Date.now();
      })
      .catch(() => {})
      .finally(() => (this.reading = undefined));
    return this.reading;
  }
}
