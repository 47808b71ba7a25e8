// One worker: it registers, leases tasks for its free slots (and, while tasks are short, a batch
// ahead, so that a slot that frees starts at once), runs each with `execute`, sends
// their results (keeping every one until the service accepts or refuses it), heartbeats in the
// background while it holds leases, stops what the service takes back, and on stop() leases no
// more, lets running tasks finish within the grace period, aborts the rest, sends what finished
// and says goodbye (which gives back every lease it still holds). The worker command
// (src/cli/worker.ts) and the in-process handler worker (handler-worker.ts) are both this loop.
//
// Three loops share the state: leasing, sending results, heartbeats. A lease rides with results
// about to be sent (the completion's `next`: one call, and one commit on the service, for both);
// the leasing loop asks in a call of its own when there is nothing to send. Memory is bounded by the
// concurrency and the batch: at most `concurrency + min(batch, concurrency)` tasks are held, and
// no lease is asked for while `unsentMax` results wait. Every decision is a pure function of
// worker-decisions.ts.
import type { Json } from '../domain/records.ts';
import {
  afterRefusal,
  checkWorkerBounds,
  completionChunk,
  fitError,
  hasEnded,
  heartbeatPeriodMs,
  leaseAhead,
  leaseRidesWithResults,
  leaseSize,
  leaseTimes,
  orphanedLeases,
  recentTasksMax,
  rideAlongSize,
} from './worker-decisions.ts';
import type { CompletionAnswer, Leased, LeaseBody, WorkerProtocol } from './worker-protocol.ts';
import type { CompletionItem, LeasedTask, TaskOutcome } from './worker-task.ts';
import { Wakeup } from './wakeup.ts';

/** What an executor is handed with its task: `signal` aborts when the task must stop at once (its result is not sent). */
export interface TaskControl {
  readonly signal: AbortSignal;
}

/** Runs one task. */
export type Executor = (task: LeasedTask, control: TaskControl) => Promise<TaskOutcome>;

export interface WorkerLoopOptions {
  protocol: WorkerProtocol;
  execute: Executor;
  /** Tasks run at once. */
  concurrency: number;
  /** Tasks asked for in one lease, at most (the service's tasksPerLeaseMax bounds it). */
  batch: number;
  /** Only this run's tasks, and stop once it has ended; null: every live run of the project, until stopped. */
  run: string | null;
  /** How long a lease waits for a task when none is ready (a long poll). */
  leaseWaitMs?: number;
  /** How long running tasks may take to finish once a stop is asked for without one (the run ended). */
  graceMs: number;
  /** After the tasks, how long finished results and the goodbye may take to reach the service. */
  finishMs?: number;
  identity: { name: string; host: string; metadata: Json };
  log?: (line: string) => void;
  /** Hears of each task's outcome once it has run (before its result is sent). */
  ran?: (task: LeasedTask, outcome: TaskOutcome) => void;
}

export interface WorkerCounts {
  /** Tasks leased. */
  leased: number;
  /** Tasks running now. */
  running: number;
  /** Results accepted: ok, error, rate_limited. */
  done: number;
  errors: number;
  rateLimited: number;
  /** Results refused as stale (the lease had expired or moved) or cancelled (the run had ended). */
  stale: number;
  cancelled: number;
  /** Results the service refused as invalid and that were not sent again. */
  refused: number;
  /** Tasks stopped unfinished: taken back by the service, or aborted at a stop. */
  stopped: number;
}

/** Why a worker ended. */
export type WorkerEnd = 'stopped' | 'run ended';

/** A leased task not yet finished: waiting for a slot, parked (its lease ran out before it started), or running. */
class Held implements TaskControl {
  state: 'waiting' | 'parked' | 'running' = 'waiting';
  /** Its result is not wanted (the service took it back, or the worker stopped it). */
  stopped = false;
  /** Still running when a stop's grace ran out: no longer waited for, its outcome dropped. */
  forgotten = false;
  startedAt = 0;
  /** Made when its signal is first asked for: most tasks never are (an AbortController cost a handler task more than its own work). */
  controller: AbortController | undefined;

  constructor(
    readonly task: LeasedTask,
    public deadlineMs: number,
    readonly leaseMs: number,
  ) {}

  get signal(): AbortSignal {
    this.controller ??= new AbortController();
    if (this.stopped && !this.controller.signal.aborted) this.controller.abort(new Error('stopped'));
    return this.controller.signal;
  }
}

/** A finished task's result not yet accepted or refused. */
interface Unsent {
  task: string;
  /** The lease token its copy of the task was run under. */
  lease: string;
  item: CompletionItem;
  text: string;
  bytes: number;
  refusals: number;
  leaseMs: number;
}

const leaseWaitMsDefault = 10_000;
/** A lease for a named run waits less: an ended run does not answer a waiting lease, so the worker looks at the run this often when idle. */
const runLeaseWaitMsMax = 2_000;
const finishMsDefault = 10_000;
/** How long the worker is idle before it looks whether its run has ended. */
const idleLookMs = 100;
/** How long the goodbye may take once results are sent. */
const goodbyeMs = 5_000;

export class WorkerLoop {
  readonly counts: WorkerCounts = { leased: 0, running: 0, done: 0, errors: 0, rateLimited: 0, stale: 0, cancelled: 0, refused: 0, stopped: 0 };
  private workerId: string | undefined;
  /**
   * By lease token, not task id: a task whose lease ran out can be leased again to this worker
   * while its first copy still runs, and the two copies are held (and end) apart.
   */
  private readonly held = new Map<string, Held>();
  /** Held tasks waiting for a slot, in the order leased (stopped ones are skipped when reached). */
  private waiting: Held[] = [];
  private waitingHead = 0;
  /** How long the last tasks took, for leaseAhead (at most recentTasksMax). */
  private readonly recentTaskMs: number[] = [];
  private unsent: Unsent[] = [];
  private sending: Unsent[] = [];
  /** Any change of held tasks or results. */
  private readonly changed = new Wakeup();
  /** Asks the heartbeat loop to look again (a task parked, or leases held where none were). */
  private readonly beats = new Wakeup();
  private beatNow = false;
  private stopping = false;
  private finished = false;
  private ending: WorkerEnd = 'stopped';
  private failure: unknown;
  /** Aborts a waiting lease (and a registration) when a stop is asked for. */
  private readonly leasing = new AbortController();
  /** Aborts sending and heartbeats once the time to finish is up. */
  private readonly closing = new AbortController();
  private graceTimer: NodeJS.Timeout | undefined;
  private idleLook: NodeJS.Timeout | undefined;
  /** A lease's answer may have been lost: count the leases the service holds for this worker. */
  private checkLeases = false;
  /** The count is on its way (until its answer): no completion, and no lease riding with one. */
  private countingLeases = false;
  private flushPaused = false;
  /** The service holds leases this worker lost: finish everything, then say goodbye and register again. */
  private draining = false;
  /** The heartbeat loop's heartbeat on its way, if any: a drain gives it up before its goodbye. */
  private beat: { controller: AbortController; ended: Promise<unknown> } | undefined;
  /** A lease of the lease loop's own is waiting for its answer. */
  private leaseInFlight = false;
  /** A completion on its way carries the next lease (its `next`): the lease loop leaves leasing to it. */
  private leaseRidesAlong = false;

  constructor(private readonly options: WorkerLoopOptions) {
    checkWorkerBounds(options.concurrency, options.batch);
  }

  /** The worker's id once registered. */
  get worker(): string | undefined {
    return this.workerId;
  }

  /** Registers and works until stop() (or the named run ends); resolves once it has said goodbye. */
  async run(): Promise<WorkerEnd> {
    const { protocol, identity } = this.options;
    try {
      this.workerId = (await protocol.register(identity, this.leasing.signal)).id;
    } catch (error) {
      clearTimeout(this.graceTimer);
      protocol.close();
      if (this.stopping && !this.failure) return this.ending;
      throw error;
    }
    const heartbeats = this.heartbeatLoop();
    const flushes = this.flushLoop();
    await this.leaseLoop().catch((error: unknown) => this.fail(error));
    await this.drained();
    clearTimeout(this.graceTimer);
    clearTimeout(this.idleLook);
    const deadline = setTimeout(() => this.closing.abort(new Error('out of time to send results')), this.options.finishMs ?? finishMsDefault);
    await flushes;
    clearTimeout(deadline);
    // A heartbeat still trying to reach the service is of no use now.
    this.finished = true;
    this.closing.abort(new Error('finished'));
    this.beats.notify();
    await heartbeats;
    await this.goodbye();
    protocol.close();
    if (this.failure) throw this.failure;
    return this.ending;
  }

  /**
   * Leases no more; running tasks get `graceMs` to finish, then are aborted (their leases go back
   * with the goodbye). Asking again changes nothing.
   */
  stop(graceMs = this.options.graceMs): void {
    if (this.stopping) return;
    this.stopping = true;
    this.leasing.abort(new Error('stopping'));
    for (const held of this.held.values()) if (held.state !== 'running') this.stopTask(held);
    if (graceMs <= 0) this.abortHeld();
    else this.graceTimer = setTimeout(() => this.abortHeld(), graceMs);
    this.changed.notify();
    this.beats.notify();
  }

  /** Tasks held and results waiting, now. */
  load(): { held: number; unsent: number } {
    return { held: this.held.size, unsent: this.unsent.length + this.sending.length };
  }

  // ---- leasing ----

  private async leaseLoop(): Promise<void> {
    const { protocol, concurrency, batch, run } = this.options;
    const waitMs = Math.min(this.options.leaseWaitMs ?? leaseWaitMsDefault, run ? runLeaseWaitMsMax : Infinity);
    while (!this.stopping) {
      if (this.checkLeases) await this.lookForLostLeases();
      else if (this.draining) await this.drainAndRegisterAgain();
      else {
        const ahead = leaseAhead(this.recentTaskMs, concurrency, batch);
        const max = leaseSize({ concurrency, batch, held: this.held.size, unsent: this.unsent.length + this.sending.length, ahead });
        if (max === 0 || this.leaseWillRideAlong()) await this.changed.next();
        else {
          this.leaseInFlight = true;
          try {
            await this.leaseSome(await protocol.lease(this.workerId!, { max, wait_ms: waitMs, run }, this.leasing.signal).catch((error: unknown) => this.unlessStopping(error)));
          } finally {
            this.leaseInFlight = false;
          }
        }
      }
    }
  }

  private leaseWillRideAlong(): boolean {
    return leaseRidesWithResults({ unsent: this.unsent.length, sending: this.sending.length, flushPaused: this.flushPaused, riding: this.leaseRidesAlong });
  }

  /** The lease a completion sent now carries, if any: it does not wait, so results are never held back. */
  private rideAlongLease(): LeaseBody | undefined {
    const { concurrency, batch, run } = this.options;
    const blockers = { stopping: this.stopping, draining: this.draining, checkingLeases: this.checkLeases || this.countingLeases, leaseInFlight: this.leaseInFlight };
    const max = rideAlongSize(blockers, { concurrency, batch, held: this.held.size, unsent: this.unsent.length, ahead: leaseAhead(this.recentTaskMs, concurrency, batch) });
    return max > 0 ? { max, wait_ms: 0, run } : undefined;
  }

  private unlessStopping(error: unknown): undefined {
    if (this.stopping) return undefined;
    throw error;
  }

  private async leaseSome(leased: Leased | undefined): Promise<void> {
    if (!leased) return;
    this.admitLeased(leased);
    if (leased.tasks.length === 0 && !this.stopping) return this.lookAtRun();
  }

  /** What a lease brought (its own, or a completion's `next`): held, and started as slots free. */
  private admitLeased(leased: Leased): void {
    if (leased.mayHaveLost) this.checkLeases = true;
    // Asked to stop meanwhile: what it brought goes back with the goodbye.
    if (this.stopping || leased.tasks.length === 0) return;
    this.counts.leased += leased.tasks.length;
    for (const task of leased.tasks) this.admit(task, leased);
    this.startWaiting();
  }

  /** A task as leased: held, and started as soon as a slot is free. */
  private admit(task: LeasedTask, leased: Leased): void {
    const { deadlineMs, leaseMs } = leaseTimes(task.lease_expires_at, leased.receivedAtMs, leased.offsetMs);
    const held = new Held(task, deadlineMs, leaseMs);
    if (this.held.size === 0) this.beats.notify();
    this.held.set(task.lease, held);
    this.waiting.push(held);
  }

  /**
   * Starts waiting tasks while slots are free; one whose lease has run out by this machine's
   * clock is parked instead: the next heartbeat (at once) says whether it is still the worker's.
   */
  private startWaiting(): void {
    while (this.counts.running < this.options.concurrency && this.waitingHead < this.waiting.length && !this.stopping) {
      const held = this.waiting[this.waitingHead++]!;
      if (held.stopped || held.state !== 'waiting') continue;
      if (Date.now() >= held.deadlineMs) {
        held.state = 'parked';
        this.beatNow = true;
        this.beats.notify();
      } else this.start(held);
    }
    if (this.waitingHead === this.waiting.length) {
      this.waiting = [];
      this.waitingHead = 0;
    }
  }

  /** Whether the named run has ended (then the worker stops). */
  private async lookAtRun(): Promise<void> {
    const { run, protocol } = this.options;
    if (!run || this.stopping) return;
    const state = await protocol.run(run, this.leasing.signal).catch((error: unknown) => this.unlessStopping(error));
    if (!state) return;
    if (hasEnded(state.status) && !this.stopping) {
      this.ending = 'run ended';
      this.stop();
    }
  }

  // ---- running ----

  private start(held: Held): void {
    held.state = 'running';
    held.startedAt = performance.now();
    this.counts.running++;
    let outcome: Promise<TaskOutcome>;
    try {
      outcome = this.options.execute(held.task, held);
    } catch (error) {
      outcome = Promise.reject(error);
    }
    outcome.then(
      (ran) => this.finish(held, ran),
      (error: unknown) => this.finish(held, { kind: 'result', fields: { status: 'error', error: fitError(messageOf(error)) } }),
    );
  }

  private finish(held: Held, outcome: TaskOutcome): void {
    if (held.forgotten) return;
    this.counts.running--;
    this.held.delete(held.task.lease);
    if (held.stopped || outcome.kind === 'interrupted') this.counts.stopped++;
    else {
      if (this.recentTaskMs.push(performance.now() - held.startedAt) > recentTasksMax) this.recentTaskMs.shift();
      this.options.ran?.(held.task, outcome);
      this.unsent.push(unsentOf(held, held.task.scored_by_service ? withoutScores(outcome) : outcome));
    }
    this.startWaiting();
    this.changed.notify();
  }

  /** The service took it back, or the worker stops: its result is not wanted. */
  private stopTask(held: Held): void {
    held.stopped = true;
    held.controller?.abort(new Error('stopped'));
    if (held.state === 'running') return;
    this.held.delete(held.task.lease);
    this.counts.stopped++;
    this.changed.notify();
  }

  /** A stop's grace is over: every task held is stopped, and a running one is no longer waited for. */
  private abortHeld(): void {
    for (const held of [...this.held.values()]) {
      this.stopTask(held);
      if (held.state === 'running') this.forget(held);
    }
  }

  /**
   * Aborted (a command's process group is killed as its signal aborts), but a handler may ignore
   * its signal: the worker ends without it rather than waiting as long as it runs.
   */
  private forget(held: Held): void {
    held.forgotten = true;
    this.held.delete(held.task.lease);
    this.counts.running--;
    this.counts.stopped++;
    this.changed.notify();
  }

  private async drained(): Promise<void> {
    while (this.held.size > 0) await this.changed.next();
  }

  // ---- sending results ----

  private async flushLoop(): Promise<void> {
    for (;;) {
      if (this.unsent.length === 0 || this.flushPaused) {
        if (this.stopping && this.held.size === 0 && this.unsent.length === 0) return;
        await this.changed.next();
        continue;
      }
      // A turn of the event loop first: a lease asked for as the same tasks finished goes out
      // ahead (the next task starts one commit sooner), and results finishing now join this batch.
      await new Promise((resolve) => setImmediate(resolve));
      // A count of the leases may have started meanwhile: it must see no completion go out.
      if (this.unsent.length === 0 || this.flushPaused) continue;
      const sent = this.unsent.splice(0, completionChunk(this.unsent.map((one) => one.bytes)));
      this.sending = sent;
      const next = this.rideAlongLease();
      this.leaseRidesAlong = next !== undefined;
      const { protocol } = this.options;
      const items = sent.map((one) => one.text);
      let answer: CompletionAnswer;
      try {
        answer = next ? await protocol.completeAndLease(this.workerId!, items, next, this.closing.signal) : await protocol.complete(this.workerId!, items, this.closing.signal);
      } catch (error) {
        this.sending = [];
        this.leaseRidesAlong = false;
        if (this.closing.signal.aborted) this.options.log?.(`${sent.length + this.unsent.length} results could not be sent in time: their tasks will be leased again`);
        else this.fail(error);
        return;
      }
      this.sending = [];
      this.leaseRidesAlong = false;
      try {
        this.settle(sent, answer.results);
      } catch (error) {
        this.fail(error);
        return;
      }
      if (answer.leased) this.admitLeased(answer.leased);
      this.changed.notify();
    }
  }

  private settle(sent: readonly Unsent[], answers: readonly { outcome: string; errors?: unknown }[]): void {
    if (answers.length !== sent.length) throw new Error(`the service answered ${answers.length} items of a completion of ${sent.length}`);
    let runMayHaveEnded = false;
    answers.forEach(({ outcome, errors }, at) => {
      const one = sent[at]!;
      if (outcome === 'accepted') this.accepted(one.item);
      else if (outcome === 'stale') this.counts.stale++;
      else if (outcome === 'cancelled') {
        this.counts.cancelled++;
        runMayHaveEnded = true;
      } else this.refused(one, errors);
    });
    if (runMayHaveEnded) void this.lookAtRun().catch((error: unknown) => this.fail(error));
    else if (this.held.size === 0 && this.unsent.length === 0) this.lookAtRunIfIdle();
  }

  /**
   * With nothing held and nothing to send, the run may have ended (a lease waiting for a task of
   * an ended run is not answered before its wait is up): a look a moment later, if still idle.
   */
  private lookAtRunIfIdle(): void {
    if (!this.options.run || this.idleLook || this.stopping) return;
    this.idleLook = setTimeout(() => {
      this.idleLook = undefined;
      if (this.held.size === 0 && this.unsent.length === 0 && this.sending.length === 0) void this.lookAtRun().catch((error: unknown) => this.fail(error));
    }, idleLookMs);
  }

  private accepted(item: CompletionItem): void {
    if (item.status === 'rate_limited') this.counts.rateLimited++;
    else if (item.status === 'error') this.counts.errors++;
    else this.counts.done++;
  }

  private refused(one: Unsent, errors: unknown): void {
    const next = afterRefusal(one.item, errors, one.refusals);
    const reason = JSON.stringify(errors ?? {});
    if (!next) {
      this.counts.refused++;
      this.options.log?.(`task ${one.task}: the service refused its result (${reason}); its lease will run out and it will be leased again`);
      return;
    }
    const text = JSON.stringify(next);
    this.options.log?.(`task ${one.task}: the service refused its result (${reason}); sending an error result saying why`);
    this.unsent.unshift({ ...one, item: next, text, bytes: Buffer.byteLength(text), refusals: one.refusals + 1 });
  }

  // ---- heartbeats ----

  private async heartbeatLoop(): Promise<void> {
    let lastBeat = Date.now();
    let holding = false;
    while (!this.finished) {
      const period = heartbeatPeriodMs(this.leaseLengths());
      if (period === null) {
        holding = false;
        await this.beats.next();
        continue;
      }
      // Leases just taken where none were held run from now: the first beat is a period away.
      if (!holding) lastBeat = Date.now();
      holding = true;
      const dueIn = lastBeat + period - Date.now();
      if (!this.beatNow && dueIn > 0) {
        await this.beats.nextWithin(dueIn);
        continue;
      }
      this.beatNow = false;
      lastBeat = Date.now();
      await this.periodicHeartbeat();
    }
  }

  /** A heartbeat that ends when the time to send is up, or when a drain gives it up. */
  private async periodicHeartbeat(): Promise<void> {
    const controller = new AbortController();
    const closed = () => controller.abort(this.closing.signal.reason);
    if (this.closing.signal.aborted) closed();
    else this.closing.signal.addEventListener('abort', closed, { once: true });
    const ended = this.heartbeat(controller.signal);
    this.beat = { controller, ended };
    try {
      await ended;
    } finally {
      this.beat = undefined;
      this.closing.signal.removeEventListener('abort', closed);
    }
  }

  private *leaseLengths(): Generator<number> {
    for (const held of this.held.values()) yield held.leaseMs;
    for (const one of this.unsent) yield one.leaseMs;
    for (const one of this.sending) yield one.leaseMs;
  }

  /**
   * One heartbeat naming every task held or awaiting its result's answer; answers the leases the
   * service holds and how many of those the worker knows (undefined: `signal` ended it first).
   */
  private async heartbeat(signal: AbortSignal): Promise<{ leases: number; known: number } | undefined> {
    const worker = this.workerId!;
    // The copies it names, as they are now: its `stop` means these, never a copy of one of their
    // tasks leased again after it was sent.
    const copies = [...this.held.values()];
    const results = [...this.unsent, ...this.sending];
    const named = [...new Set([...copies.map((held) => held.task.id), ...results.map((one) => one.task)])];
    const namedLeases = new Set([...copies.map((held) => held.task.lease), ...results.map((one) => one.lease)]);
    const sentAt = Date.now();
    let answer;
    try {
      answer = await this.options.protocol.heartbeat(worker, named, signal);
    } catch (error) {
      // A heartbeat of a registration the worker has left (a drain's goodbye) is refused as of no worker: no matter.
      if (!signal.aborted && worker === this.workerId) this.fail(error);
      return undefined;
    }
    const stop = new Set(answer.stop);
    for (const held of copies) {
      // Finished or stopped meanwhile.
      if (this.held.get(held.task.lease) !== held) continue;
      if (stop.has(held.task.id)) this.stopTask(held);
      else {
        held.deadlineMs = sentAt + held.leaseMs;
        if (held.state === 'parked' && !held.stopped) {
          held.state = 'waiting';
          this.waiting.push(held);
        }
      }
    }
    this.startWaiting();
    const before = this.unsent.length;
    this.unsent = this.unsent.filter((one) => !(stop.has(one.task) && namedLeases.has(one.lease)));
    this.counts.stopped += before - this.unsent.length;
    return { leases: answer.leases, known: named.filter((id) => !stop.has(id)).length };
  }

  /**
   * Counts the leases the service holds for this worker against those it knows, with no lease
   * and no completion in flight (so neither can change the count meanwhile).
   */
  private async lookForLostLeases(): Promise<void> {
    // Cleared now: a lease that may have been lost while this count waits asks for another count.
    this.checkLeases = false;
    this.countingLeases = true;
    this.flushPaused = true;
    try {
      // A stop ends the count (the goodbye gives every lease back, lost ones too): neither its wait
      // nor its heartbeat may outlast it while the service is unreachable (closing aborts only
      // once the lease loop has returned, and this is the lease loop).
      while (this.sending.length > 0 && !this.stopping) await this.changed.next();
      if (this.stopping) return;
      const counted = await this.heartbeat(this.leasing.signal);
      const orphans = counted ? orphanedLeases(counted.leases, counted.known) : 0;
      if (orphans === 0) return;
      this.options.log?.(`the service holds ${orphans} leases whose answer was lost on the way: finishing the tasks held, then registering again to give them back`);
      this.draining = true;
    } finally {
      this.countingLeases = false;
      this.flushPaused = false;
      this.changed.notify();
    }
  }

  private async drainAndRegisterAgain(): Promise<void> {
    if (this.held.size > 0 || this.unsent.length > 0 || this.sending.length > 0) return this.changed.next();
    const { protocol, identity } = this.options;
    // A heartbeat still being tried again would land after the goodbye, refused (404): of no use now.
    if (this.beat) {
      this.beat.controller.abort(new Error('saying goodbye to register again'));
      await this.beat.ended;
    }
    await protocol.goodbye(this.workerId!, this.leasing.signal).catch((error: unknown) => this.unlessStopping(error));
    const registered = await protocol.register(identity, this.leasing.signal).catch((error: unknown) => this.unlessStopping(error));
    if (!registered) return;
    this.workerId = registered.id;
    this.draining = false;
    this.options.log?.(`registered again as worker ${this.workerId}`);
  }

  // ---- ending ----

  private fail(error: unknown): void {
    this.failure ??= error;
    this.options.log?.(`stopping: ${messageOf(error)}`);
    this.stop(0);
  }

  private async goodbye(): Promise<void> {
    const timer = new AbortController();
    const deadline = setTimeout(() => timer.abort(new Error('no answer to the goodbye in time')), goodbyeMs);
    try {
      await this.options.protocol.goodbye(this.workerId!, timer.signal);
    } catch (error) {
      this.options.log?.(`could not say goodbye (${messageOf(error)}): the leases it holds run out by themselves`);
    } finally {
      clearTimeout(deadline);
    }
  }
}

function unsentOf(held: Held, outcome: SentOutcome): Unsent {
  const { id: task, lease } = held.task;
  let item: CompletionItem = outcome.kind === 'rate_limited' ? { task, lease, status: 'rate_limited' } : { task, lease, ...outcome.fields };
  let text: string;
  try {
    text = JSON.stringify(item);
  } catch (error) {
    // A handler's output that is not JSON (a cycle, a BigInt): an error result saying so.
    item = { task, lease, status: 'error', error: fitError(`the result is not JSON: ${messageOf(error)}`) };
    text = JSON.stringify(item);
  }
  return { task, lease, item, text, bytes: Buffer.byteLength(text), refusals: 0, leaseMs: held.leaseMs };
}

/** An outcome that is sent: a result, or rate_limited. */
type SentOutcome = Exclude<TaskOutcome, { kind: 'interrupted' }>;

/** An outcome without the scores a run the service scores refuses. */
function withoutScores(outcome: SentOutcome): SentOutcome {
  if (outcome.kind !== 'result') return outcome;
  const { score: _score, passed: _passed, dimension_scores: _dimensions, ...fields } = outcome.fields;
  return { kind: 'result', fields };
}

export function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
