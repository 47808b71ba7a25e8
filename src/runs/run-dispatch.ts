// Leased work as the service hands it out: which run a worker's lease draws from (the project's
// live runs in turn, so that a huge run does not starve a small one), leases that wait for a task
// (long polls parked per project, woken one at a time when tasks become ready, never by a scan of
// every worker), the timers that give a silent worker's expired leases back and wake waiters when
// retries become ready, and when each worker was last heard from. Every decision is the job's
// actor's (src/domain/run.ts): this module asks it, with the time and fresh lease tokens, and
// follows its committed events (`applied`), and a new run's as soon as they are decided
// (`decided`), so that waiting leases join the commit that creates it.
import type { Registry } from '../actors/registry.ts';
import type { Clock } from '../clock.ts';
import { timestamp } from '../clock.ts';
import type { Limits } from '../config.ts';
import type { JobCommand, JobEvent } from '../domain/job.ts';
import type { Worker } from '../domain/project.ts';
import { budgetSpent, isEnded, type CompletionItem, type CompletionOutcome, type Run } from '../domain/run.ts';
import type { ReadModel } from '../read-model.ts';
import { leaseTokens, runPrefixOf } from './task-ids.ts';

/** A task as a lease hands it out (the route adds what the run's records say of it). */
export interface LeasedTask {
  readonly run: Run;
  readonly position: number;
  readonly token: string;
  readonly expiresAt: number;
}

export interface LeaseRequest {
  readonly max: number;
  /** How long to wait for a task when none is ready (0: answer at once). */
  readonly waitMs: number;
  /** Only this run's tasks. */
  readonly run: string | null;
}

interface Waiter {
  readonly worker: Worker;
  readonly request: LeaseRequest;
  readonly resolve: (tasks: LeasedTask[]) => void;
  /** Its place in line: waiters are kept oldest first, and one that waits again goes back to its place. */
  readonly arrival: number;
  /** When its wait ends (performance.now()), and the timer that answers it with nothing then. */
  readonly until: number;
  deadline: NodeJS.Timeout;
}

export interface RunDispatchOptions {
  registry: Registry;
  readModel: ReadModel;
  clock: Clock;
  limits: Readonly<Limits>;
  /** A run's tasks or spending changed (its progress is announced, coalesced). */
  progressed(run: string): void;
}

export class RunDispatch {
  /** Each project's live runs (not ended), oldest first, and whose turn it is next. */
  private readonly live = new Map<string, { runs: string[]; turn: number }>();
  /** The project each live run is listed under in `live` (a run whose job moves leaves its old project's list). */
  private readonly listedIn = new Map<string, string>();
  /** Each project's leases waiting for a task, oldest first. */
  private readonly waiters = new Map<string, Waiter[]>();
  /** Projects whose waiters are being served now (a wake while it runs serves again after). */
  private readonly waking = new Map<string, boolean>();
  /** Each run's timer: at its next lease expiry or retry becoming ready, whichever is first. */
  private readonly timers = new Map<string, { at: number; timer: NodeJS.Timeout }>();
  /** When each worker was last heard from (epoch ms). */
  private readonly seen = new Map<string, number>();
  /** Runs by the prefix their tasks' ids carry. */
  private readonly byPrefix = new Map<string, string>();
  /** Waiters made so far (their arrival numbers). */
  private arrivals = 0;
  /** Lease decisions being made now, by worker (settled, never rejected): a goodbye waits for them. */
  private readonly deciding = new Map<string, Set<Promise<unknown>>>();
  /** Workers saying goodbye: their leases answer nothing from then on, and ask for nothing. */
  private readonly leaving = new Set<string>();
  private closed = false;

  /** Follows the runs recovered from the store: their timers are set (a lease that expired while the service was down is given back at once). */
  constructor(private readonly options: RunDispatchOptions) {
    for (const run of options.readModel.runs.values()) {
      this.follow(run);
      this.arm(run);
    }
  }

  // ---- asked by the routes ----

  /**
   * Up to `max` tasks for a worker, waiting up to `waitMs` for one when none is ready. `freed`: the
   * tasks per run that a completion asked for just before this lease gives back (its `next`): the
   * lease is decided behind it, so those runs' in-flight bounds count them as free.
   */
  async lease(worker: Worker, request: LeaseRequest, freed?: ReadonlyMap<string, number>): Promise<LeasedTask[]> {
    if (this.leaving.has(worker.id)) return [];
    this.heard(worker.id);
    const tasks = await this.leaseNow(worker, request, freed);
    // Its worker said goodbye meanwhile: it does not wait (the goodbye has answered its waiters).
    if (tasks.length > 0 || request.waitMs === 0 || this.closed || this.leaving.has(worker.id) || this.waitsInVain(request)) return tasks;
    if ((this.waiters.get(worker.project)?.length ?? 0) >= this.options.limits.leaseWaitersPerProjectMax) return tasks;
    return new Promise((resolve) => {
      const waiter: Waiter = {
        worker,
        request,
        resolve,
        arrival: ++this.arrivals,
        until: performance.now() + request.waitMs,
        deadline: setTimeout(() => this.dropWaiter(waiter, []), request.waitMs),
      };
      this.listWaiter(waiter);
    });
  }

  /**
   * Completes tasks of one run for a worker; each item answered on its own. Each task is named
   * once: the route refuses a repeat (and the decider would call one stale).
   */
  async complete(worker: Worker, run: Run, items: readonly CompletionItem[]): Promise<CompletionOutcome[]> {
    this.heard(worker.id);
    const { clock, readModel } = this.options;
    const events = await this.askJob(run, {
      type: 'CompleteTasks',
      run: run.id,
      worker: worker.id,
      items,
      nowMs: clock.nowMs(),
      now: timestamp(clock),
    });
    const accepted = new Set<number>();
    let decidedLive = false;
    let endedNow = false;
    for (const event of events) {
      if (event.type === 'RunEnded') endedNow = true;
      if (event.type !== 'TasksCompleted') continue;
      decidedLive = true;
      for (const task of event.tasks) accepted.add(task.position);
    }
    // Tasks were completed: the run was live when the items were decided, so one not accepted is
    // stale, even when this completion ended the run; but when it spent the budget, the items
    // after the last one accepted (the one that spent it) were cut as a later call's would be
    // (decideCompletion): cancelled. An ended run's spending no longer moves. Else the run had
    // ended before, or they were all stale.
    const state = readModel.runStates.get(run.id);
    const ended = !decidedLive && isEnded(state?.run ?? run);
    let spentAt = items.length - 1;
    if (endedNow && state && budgetSpent(state.run, state.spending.cost, state.spending.executed)) {
      while (spentAt >= 0 && !accepted.has(items[spentAt]!.position)) spentAt--;
    }
    return items.map((item, at) => (at > spentAt || ended ? 'cancelled' : accepted.has(item.position) ? 'accepted' : 'stale'));
  }

  /**
   * A worker is alive: every lease it holds lasts lease_seconds from now. Answers, of the tasks it
   * says it runs, those it no longer holds (cancelled, its run's budget reached, or its lease
   * expired and given to another): it must stop them.
   */
  async heartbeat(worker: Worker, running: readonly { run: string; position: number; id: string }[]): Promise<string[]> {
    this.heard(worker.id);
    const { clock, readModel } = this.options;
    const nowMs = clock.nowMs();
    await Promise.all(
      [...this.heldByJob(worker.id)].map(([job, { project, runs }]) => this.askJob({ job, project }, { type: 'ExtendLeases', runs, worker: worker.id, nowMs })),
    );
    return running
      .filter(({ run, position }) => readModel.runStates.get(run)?.tasks.leases.get(position)?.worker !== worker.id)
      .map(({ id }) => id);
  }

  /**
   * A worker says goodbye: every lease it holds goes back to the queue at once. Its waiting leases
   * are answered with nothing first, so that the tasks it gives back are not served to them; its
   * leases being decided now (waiting ones served, or asked at once, a completion's `next` too)
   * are waited for and answered with nothing, and what they took released with the rest. Until
   * `departed`, its leases answer nothing.
   */
  async release(worker: Worker): Promise<void> {
    this.leaving.add(worker.id);
    for (const waiting of [...this.waiters.values()]) {
      for (const waiter of waiting.filter((one) => one.worker.id === worker.id)) this.dropWaiter(waiter, []);
    }
    await Promise.all(this.deciding.get(worker.id) ?? []);
    const nowMs = this.options.clock.nowMs();
    await Promise.all(
      [...this.heldByJob(worker.id)].map(([job, { project, runs }]) => this.askJob({ job, project }, { type: 'ReleaseWorker', runs, worker: worker.id, nowMs })),
    );
    this.seen.delete(worker.id);
  }

  /** A worker's goodbye is over (it is removed, or its removal failed and it may lease again). */
  departed(worker: Worker): void {
    this.leaving.delete(worker.id);
  }

  /** The run (live or ended) whose tasks' ids carry this prefix. */
  runOfPrefix(prefix: string): Run | undefined {
    const id = this.byPrefix.get(prefix);
    return id === undefined ? undefined : this.options.readModel.runStates.get(id)?.run;
  }

  /** Whether a new run's id would share its tasks' prefix with a run's. */
  prefixTaken(run: string): boolean {
    return this.byPrefix.has(runPrefixOf(run));
  }

  /** When a worker was last heard from (epoch ms), if since the service started. */
  lastSeen(worker: string): number | undefined {
    return this.seen.get(worker);
  }

  // ---- following decided and committed events ----

  /**
   * A job's events as its actor decides them, before they are durable. A new run's tasks are
   * ready the moment its commit lands, so the project's waiting leases ask for them now: their
   * asks queue behind the run's creation on the same actor and join its commit while it is still
   * open (else the one right after), and a waiting worker holds its task as the run is created
   * rather than one commit later. A lease that gets nothing, or whose commit fails, waits again.
   */
  decided(events: readonly JobEvent[]): void {
    for (const event of events) {
      if (event.type === 'RunCreated') this.serveEarly(event.run, event.shape.iterations * event.shape.datapoints * event.shape.attempts, event.inFlightCap);
    }
  }

  /** A job's committed events: live runs noted, timers set, waiting leases served, progress marked. */
  applied(events: readonly JobEvent[]): void {
    const touched = new Map<string, Run>();
    for (const event of events) {
      switch (event.type) {
        case 'RunCreated':
        case 'RunUpdated':
        case 'RunEnded':
          this.follow(event.run);
          touched.set(event.run.id, event.run);
          break;
        case 'LeasesExtended': {
          // A heartbeat moves the expiry only: the timer follows, nothing progressed or became ready.
          const run = this.options.readModel.runStates.get(event.run)?.run;
          if (run && !touched.has(run.id)) this.arm(run);
          break;
        }
        case 'TasksLeased':
        case 'TasksCompleted':
        case 'WorkerReleased':
        case 'TasksQueuedAgain':
        case 'RaceAdvanced': {
          const run = this.options.readModel.runStates.get(event.run)?.run;
          if (run) touched.set(run.id, run);
          break;
        }
        case 'JobDeleted':
          this.forgetGone();
          break;
      }
    }
    for (const run of touched.values()) {
      this.options.progressed(run.id);
      this.arm(run);
      this.wake(run.project);
    }
  }

  /** Stops the timers; waiting leases are answered with nothing. */
  close(): void {
    this.closed = true;
    for (const { timer } of this.timers.values()) clearTimeout(timer);
    this.timers.clear();
    for (const waiting of [...this.waiters.values()]) for (const waiter of [...waiting]) this.dropWaiter(waiter, []);
  }

  // ---- inside ----

  private heard(worker: string): void {
    this.seen.set(worker, this.options.clock.nowMs());
  }

  /** Notes a run by its tasks' prefix, and whether it is live (in its project's turn). */
  private follow(run: Run): void {
    const state = this.options.readModel.runStates.get(run.id);
    if (state) this.byPrefix.set(runPrefixOf(run.id), run.id);
    const listed = this.listedIn.get(run.id);
    // Its job moved to another project: the old project's workers no longer take its turn.
    if (listed !== undefined && listed !== run.project) this.unlist(run.id, listed);
    if (isEnded(run) || !state) {
      this.unlist(run.id, run.project);
      this.disarm(run.id);
      // Leases waiting for this run's tasks only will get none: answered now, not at their deadline.
      for (const waiter of [...(this.waiters.get(run.project) ?? [])]) if (waiter.request.run === run.id) this.dropWaiter(waiter, []);
      return;
    }
    let project = this.live.get(run.project);
    if (!project) this.live.set(run.project, (project = { runs: [], turn: 0 }));
    if (!project.runs.includes(run.id)) project.runs.push(run.id);
    this.listedIn.set(run.id, run.project);
  }

  private unlist(run: string, projectId: string): void {
    this.listedIn.delete(run);
    const project = this.live.get(projectId);
    const at = project?.runs.indexOf(run) ?? -1;
    if (at >= 0) project!.runs.splice(at, 1);
    if (project?.runs.length === 0) this.live.delete(projectId);
  }

  /** Forgets the runs the read model no longer holds (their job or project was deleted). */
  forgetGone(): void {
    const { runStates } = this.options.readModel;
    for (const [prefix, id] of this.byPrefix) if (!runStates.has(id)) this.byPrefix.delete(prefix);
    for (const [project, live] of this.live) {
      for (const id of live.runs.filter((one) => !runStates.has(one))) {
        this.disarm(id);
        this.listedIn.delete(id);
      }
      live.runs = live.runs.filter((id) => runStates.has(id));
      if (live.runs.length === 0) this.live.delete(project);
    }
  }

  /**
   * Leases from the project's live runs in turn (or the one asked for), the first that has a task
   * ready; `freed`, as in `lease`. Each lease starts with the next run, so successive leases
   * alternate between the runs that have tasks.
   */
  private async leaseNow(worker: Worker, request: LeaseRequest, freed?: ReadonlyMap<string, number>): Promise<LeasedTask[]> {
    const { readModel, clock } = this.options;
    for (const runId of this.turnOrder(worker.project, request.run)) {
      const state = readModel.runStates.get(runId);
      if (!state || isEnded(state.run)) continue;
      const inFlight = state.tasks.counts.leased - (freed?.get(runId) ?? 0);
      if (inFlight >= state.spending.inFlightAllowed || !state.tasks.hasReady(clock.nowMs())) continue;
      const tasks = await this.leaseFrom(state.run, worker, request.max);
      if (tasks.length > 0) return tasks;
    }
    return [];
  }

  /** Asks a job's actor, inside its project's gate (every decision about runs is the job's). */
  private askJob(where: { job: string; project: string }, command: JobCommand): Promise<readonly JobEvent[]> {
    const { registry } = this.options;
    return registry.ask(registry.actor('job', where.job), [where.project], command);
  }

  /** Asks the run's job to lease up to `max` of its ready tasks to the worker: those it leased. */
  private async leaseFrom(run: Run, worker: Worker, max: number): Promise<LeasedTask[]> {
    const { readModel, clock } = this.options;
    // Checked and registered in one synchronous step, so that a goodbye either waits for this
    // decision or is seen by it.
    if (this.leaving.has(worker.id)) return [];
    const events = await this.whileDeciding(worker.id, this.askJob(run, {
      type: 'LeaseTasks',
      run: run.id,
      worker: worker.id,
      max,
      tokens: leaseTokens(max),
      nowMs: clock.nowMs(),
      now: timestamp(clock),
    }));
    // Its worker said goodbye meanwhile: the goodbye releases what this took.
    if (this.leaving.has(worker.id)) return [];
    for (const event of events) {
      if (event.type !== 'TasksLeased') continue;
      const leased = readModel.runStates.get(run.id)?.run ?? run;
      return event.positions.map((position, i) => ({ run: leased, position, token: event.tokens[i]!, expiresAt: event.expiresAt }));
    }
    return [];
  }

  /** A worker's lease decision, listed until it settles (a goodbye waits for it). */
  private async whileDeciding<T>(worker: string, decision: Promise<T>): Promise<T> {
    const settled = decision.catch(() => undefined);
    let ofWorker = this.deciding.get(worker);
    if (!ofWorker) this.deciding.set(worker, (ofWorker = new Set()));
    ofWorker.add(settled);
    try {
      return await decision;
    } finally {
      ofWorker.delete(settled);
      if (ofWorker.size === 0 && this.deciding.get(worker) === ofWorker) this.deciding.delete(worker);
    }
  }

  /**
   * The waiting leases a just-decided run can serve (see `decided`), oldest first, while its tasks
   * and the most it lets be in flight last: each taken from the waiting list and asked for at once.
   */
  private serveEarly(run: Run, tasks: number, inFlightCap: number): void {
    let left = Math.min(tasks, inFlightCap);
    for (const waiter of [...(this.waiters.get(run.project) ?? [])]) {
      if (left <= 0 || this.closed) return;
      if (waiter.request.run !== null && waiter.request.run !== run.id) continue;
      left -= waiter.request.max;
      void this.served(waiter, this.leaseFrom(run, waiter.worker, waiter.request.max));
    }
  }

  /**
   * A waiter taken out of line while `decision` is made, so that nothing else answers it meanwhile
   * (its deadline, a goodbye): its answer is what the lease took, or it waits again; a waiter whose
   * worker said goodbye meanwhile is answered with nothing (the goodbye releases what it took).
   */
  private async served(waiter: Waiter, decision: Promise<LeasedTask[]>): Promise<void> {
    this.removeWaiter(waiter);
    // The store or the job refused it now: it waits again.
    const tasks = await decision.catch((): LeasedTask[] => []);
    if (this.leaving.has(waiter.worker.id)) waiter.resolve([]);
    else if (tasks.length > 0) waiter.resolve(tasks);
    else this.waitAgain(waiter);
  }

  /** A waiter served got nothing: it waits again, in its place in line, for what is left of its wait. */
  private waitAgain(waiter: Waiter): void {
    const left = waiter.until - performance.now();
    if (left <= 0 || this.closed || this.waitsInVain(waiter.request)) return waiter.resolve([]);
    waiter.deadline = setTimeout(() => this.dropWaiter(waiter, []), left);
    this.listWaiter(waiter);
  }

  /** Lists a waiter in its project's line, by arrival (a new one goes last, one waiting again back to its place). */
  private listWaiter(waiter: Waiter): void {
    const waiting = this.waiters.get(waiter.worker.project) ?? [];
    let at = waiting.length;
    while (at > 0 && waiting[at - 1]!.arrival > waiter.arrival) at--;
    waiting.splice(at, 0, waiter);
    this.waiters.set(waiter.worker.project, waiting);
  }

  /** A lease for one run only, which has ended (or is not of the project's live runs): it would wait for nothing. */
  private waitsInVain(request: LeaseRequest): boolean {
    if (request.run === null) return false;
    const state = this.options.readModel.runStates.get(request.run);
    return !state || isEnded(state.run);
  }

  /** The runs a lease tries, in order: the one asked for, or the project's live runs from the one whose turn it is. */
  private *turnOrder(project: string, asked: string | null): Generator<string> {
    if (asked !== null) {
      yield asked;
      return;
    }
    const live = this.live.get(project);
    if (!live || live.runs.length === 0) return;
    const start = live.turn % live.runs.length;
    // The next lease starts with the next run, whatever this one takes.
    live.turn = start + 1;
    for (let k = 0; k < live.runs.length; k++) yield live.runs[(start + k) % live.runs.length]!;
  }

  /**
   * Serves the project's waiting leases, oldest first, while runs have tasks ready: each waiter is
   * tried once per wake; one answered with nothing stays waiting.
   */
  private wake(project: string): void {
    if (this.waking.has(project)) {
      this.waking.set(project, true);
      return;
    }
    this.waking.set(project, false);
    void this.serve(project).finally(() => {
      const again = this.waking.get(project);
      this.waking.delete(project);
      if (again) this.wake(project);
    });
  }

  /** Each waiter, oldest first, is served in turn (see `served`) while a run has a task ready. */
  private async serve(project: string): Promise<void> {
    for (const waiter of [...(this.waiters.get(project) ?? [])]) {
      if (!this.hasReadyIn(project)) return;
      if (!this.waiters.get(project)?.includes(waiter)) continue;
      await this.served(waiter, this.leaseNow(waiter.worker, waiter.request));
    }
  }

  private hasReadyIn(project: string): boolean {
    const nowMs = this.options.clock.nowMs();
    for (const id of this.live.get(project)?.runs ?? []) {
      const state = this.options.readModel.runStates.get(id);
      if (state && state.tasks.counts.leased < state.spending.inFlightAllowed && state.tasks.hasReady(nowMs)) return true;
    }
    return false;
  }

  private dropWaiter(waiter: Waiter, tasks: LeasedTask[]): void {
    this.removeWaiter(waiter);
    waiter.resolve(tasks);
  }

  private removeWaiter(waiter: Waiter): void {
    clearTimeout(waiter.deadline);
    const waiting = this.waiters.get(waiter.worker.project);
    const at = waiting?.indexOf(waiter) ?? -1;
    if (at >= 0) waiting!.splice(at, 1);
    if (waiting?.length === 0) this.waiters.delete(waiter.worker.project);
  }

  /** The leases a worker holds now (only live runs hold leases: an ended run gave its back). */
  leasesHeldBy(worker: string): number {
    let held = 0;
    for (const run of this.runsHeldBy(worker)) held += this.options.readModel.runStates.get(run.id)!.tasks.byWorker.get(worker)!.size;
    return held;
  }

  /** The live runs in which a worker holds a lease, by job (each job's actor decides for its runs). */
  private heldByJob(worker: string): Map<string, { project: string; runs: string[] }> {
    const byJob = new Map<string, { project: string; runs: string[] }>();
    for (const run of this.runsHeldBy(worker)) {
      const entry = byJob.get(run.job) ?? { project: run.project, runs: [] };
      entry.runs.push(run.id);
      byJob.set(run.job, entry);
    }
    return byJob;
  }

  /** The live runs in which a worker holds a lease. */
  private *runsHeldBy(worker: string): Generator<Run> {
    for (const { runs } of this.live.values()) {
      for (const id of runs) {
        const state = this.options.readModel.runStates.get(id);
        if (state?.tasks.byWorker.has(worker)) yield state.run;
      }
    }
  }

  /** Sets the run's timer at its next lease expiry or retry becoming ready. */
  private arm(run: Run): void {
    const state = this.options.readModel.runStates.get(run.id);
    if (!state || isEnded(state.run) || this.closed) return this.disarm(run.id);
    let at = state.tasks.nextReadyAt() ?? Infinity;
    for (const expiresAt of state.tasks.leaseExpiry.values()) at = Math.min(at, expiresAt);
    const armed = this.timers.get(run.id);
    if (armed && armed.at === at) return;
    this.disarm(run.id);
    if (at === Infinity) return;
    const timer = setTimeout(() => this.due(run.id), Math.max(0, at - this.options.clock.nowMs()));
    this.timers.set(run.id, { at, timer });
  }

  private disarm(run: string): void {
    const armed = this.timers.get(run);
    if (!armed) return;
    clearTimeout(armed.timer);
    this.timers.delete(run);
  }

  /** A run's timer is due: expired leases go back to the queue (the actor decides which), waiters are served. */
  private due(runId: string): void {
    this.timers.delete(runId);
    const state = this.options.readModel.runStates.get(runId);
    if (!state || isEnded(state.run) || this.closed) return;
    const nowMs = this.options.clock.nowMs();
    const expired = [...state.tasks.leaseExpiry.values()].some((at) => at <= nowMs);
    const { run } = state;
    if (!expired) {
      this.wake(run.project);
      this.arm(run);
      return;
    }
    this.askJob(run, { type: 'ExpireLeases', run: run.id, nowMs })
      .catch(() => undefined)
      // Its events re-arm the timer; a refusal (the store failed) tries again shortly.
      .finally(() => {
        if (!this.timers.has(runId) && !this.closed) this.timers.set(runId, { at: nowMs + 1000, timer: setTimeout(() => this.due(runId), 1000) });
      });
  }
}
