// A run: one or more iterations (candidates) of a job evaluated on one dataset version, each
// datapoint `attempts` times, as leased work (one task per iteration, datapoint and attempt; the
// tasks are columns, run-tasks.ts). This module is the pure part: what each command decides
// against a run's state (events), and how each event changes it (`applyRunEvent`, the same in the
// job's actor and in the read model). Time, lease tokens and the datapoint order come in with the
// commands: nothing here reads a clock or draws a random number (a retry's jitter is a hash of
// the task and its try, the same in every replay).
import { conflict } from './rejection.ts';
import type { ResolvedRow } from './result-batch.ts';
import { advanceRace, applyRaceAdvance, newRace, type RaceAdvance, type RaceConfig, type RaceState, type RaceValue } from './run-race.ts';
import { RunTasks, taskCode, type RunShape } from './run-tasks.ts';

export const runStatuses = ['queued', 'running', 'completed', 'cancelled', 'failed'] as const;
export type RunStatus = (typeof runStatuses)[number];
export const runReasons = ['all_done', 'budget', 'cancelled', 'failed', 'decided'] as const;
export type RunReason = (typeof runReasons)[number];
export const runOrders = ['dataset', 'shuffled'] as const;
export type RunOrder = (typeof runOrders)[number];

export interface RunBudget {
  /** Stop once the completions' summed `cost` reaches it. */
  readonly max_cost: number | null;
  /** Stop once this many tasks were executed (completed, whatever their result). */
  readonly max_tasks: number | null;
}

/**
 * How the service scores a run's results (schemas/scoring/fields.json, src/scoring/): by the
 * agent's eval spec, or by simple scorers; a run without one has its workers report scores.
 */
export type RunScoringConfig =
  | { readonly method: 'spec'; readonly pass_threshold?: number }
  | {
      readonly method: 'scorers';
      readonly scorers: readonly { readonly type: string; readonly name: string; readonly weight?: number; readonly [option: string]: unknown }[];
      readonly pass_threshold?: number;
    };

/** A run's latest rescoring: its results scored again from their stored outputs (run-rescore.ts). */
export interface RunRescore {
  readonly status: 'running' | 'completed';
  /** The one iteration rescored, or null for all of the run's. */
  readonly iteration: string | null;
  readonly done: number;
  readonly total: number;
  readonly started_at: string;
  readonly finished_at: string | null;
}

/** A run as the API answers it, less what its tasks say (counts, spent), which follows them. */
export interface Run {
  readonly id: string;
  readonly job: string;
  readonly project: string;
  readonly dataset: string;
  readonly iterations: readonly string[];
  readonly attempts: number;
  readonly order: RunOrder;
  readonly seed: number | null;
  readonly max_tries: number;
  readonly lease_seconds: number;
  readonly max_in_flight: number | null;
  readonly budget: RunBudget;
  /** How the service scores its results; null: its workers report their scores. */
  readonly scoring: RunScoringConfig | null;
  readonly rescore: RunRescore | null;
  /** Its candidates racing an incumbent (run-race.ts); null: every task runs. */
  readonly race: RaceConfig | null;
  readonly status: RunStatus;
  readonly reason: RunReason | null;
  readonly created_at: string;
  readonly started_at: string | null;
  readonly finished_at: string | null;
}

/** What a run has spent, and how many tasks it lets be leased at once now. */
export interface RunSpending {
  /** The most tasks it ever lets be in flight: its max_in_flight, else the lease bound (fixed when it is created). */
  readonly inFlightCap: number;
  /** Summed `cost` of its completions. */
  cost: number;
  /** Tasks executed: completions accepted (a rate-limited answer is none). */
  executed: number;
  /** Tasks it lets be leased at once: halved by a rate-limited answer, one more by each success. */
  inFlightAllowed: number;
}

/** A run in a job's state: its record, its tasks, what it spent, and its race's standings (a racing run). */
export interface RunState {
  run: Run;
  tasks: RunTasks;
  spending: RunSpending;
  race: RaceState | null;
}

/** How retries wait (a failed try waits base · 2^(tries - 1), at most the bound, times a jitter in [0.5, 1.5)), and a run's in-flight cap without max_in_flight. */
export interface RunLimits {
  runRetryDelayMs: number;
  runRetryDelayMsMax: number;
  tasksPerLeaseMax: number;
}

// ---- commands and events ----

/** A task's outcome as a completion reports it, resolved by the route against the task it names. */
export interface CompletionItem {
  readonly position: number;
  readonly token: string;
  /** `rate_limited`: back to the queue without a try; else its result row (an `error` status is a failed try). */
  readonly result: TaskResult | 'rate_limited';
}

/** A task's result row: of its iteration, resolved against the run's version. */
export interface TaskResult {
  readonly iteration: string;
  readonly row: ResolvedRow;
}

export type CompletionOutcome = 'accepted' | 'stale' | 'cancelled';

export type RunCommand =
  /** `incumbentValues`: a racing run's incumbent's value per datapoint, when it is not run (its results from before). */
  | { type: 'CreateRun'; run: Run; shape: RunShape; incumbentValues: readonly number[] | null }
  | { type: 'LeaseTasks'; run: string; worker: string; max: number; tokens: readonly string[]; nowMs: number; now: string }
  | { type: 'ExtendLeases'; runs: readonly string[]; worker: string; nowMs: number }
  | { type: 'CompleteTasks'; run: string; worker: string; items: readonly CompletionItem[]; nowMs: number; now: string }
  | { type: 'ExpireLeases'; run: string; nowMs: number }
  | { type: 'ReleaseWorker'; runs: readonly string[]; worker: string; nowMs: number }
  | { type: 'CancelRun'; run: string; now: string }
  /** `failedResults`: the positions whose result row has status error (read from the results store). */
  | { type: 'RetryRun'; run: string; failedResults: ReadonlySet<number>; nowMs: number; budget?: RunBudget }
  | { type: 'FailRuns'; runs: readonly string[]; now: string }
  | { type: 'StartRescore'; run: string; scoring: RunScoringConfig; iteration: string | null; total: number; now: string }
  | { type: 'RescoreProgress'; run: string; done: number; now: string };

/** A completed task as decided: where it goes, and the row it writes (if any: a done or dead task's). */
export interface CompletedTask {
  readonly position: number;
  readonly to: 'done' | 'dead' | 'retry' | 'rate_limited';
  /** When a retry (or a rate-limited task) is ready again. */
  readonly readyAt: number;
  readonly error: string | null;
  readonly cost: number;
  /** The row a done or dead task writes, in the event's commit; not journaled (the results store keeps it). */
  readonly result: TaskResult | null;
  /** A retry or rate-limited task of a race's stopped candidate: skipped (and saved) instead of queued again. */
  readonly skipped?: true;
}

export type RunEvent =
  | { type: 'RunCreated'; run: Run; shape: RunShape; inFlightCap: number; incumbentValues: readonly number[] | null }
  | { type: 'RunUpdated'; run: Run }
  | { type: 'TasksLeased'; run: string; worker: string; positions: readonly number[]; tokens: readonly string[]; rankAfter: number; expiresAt: number }
  | { type: 'LeasesExtended'; run: string; worker: string; expiresAt: number }
  | { type: 'TasksCompleted'; run: string; nowMs: number; tasks: readonly CompletedTask[] }
  /** `skipped`: the positions, among those it held, skipped instead of queued again (a race's stopped candidates'); absent: none. */
  | { type: 'WorkerReleased'; run: string; worker: string; nowMs: number; skipped?: readonly number[] }
  | { type: 'TasksQueuedAgain'; run: string; positions: readonly number[]; nowMs: number }
  | { type: 'RunEnded'; run: Run; tasksEnd: 'skipped' | 'cancelled' }
  /** A racing run's completions: their values, its candidates' new standings; a candidate it stops has its queued tasks skipped. */
  | { type: 'RaceAdvanced'; run: string; advance: RaceAdvance };

/** What a lease or a completion answers besides its events. */
export interface LeaseDecision {
  events: RunEvent[];
  positions: readonly number[];
}

export interface CompletionDecision {
  events: RunEvent[];
  outcomes: readonly CompletionOutcome[];
}

// ---- decisions ----

/** A new run's state, as its creation makes it. */
export function newRunState({ run, shape, inFlightCap, incumbentValues }: Extract<RunEvent, { type: 'RunCreated' }>): RunState {
  const race = run.race && newRace(run.race, { ...shape, iterations: run.iterations }, incumbentValues);
  return { run, tasks: new RunTasks(shape), spending: { inFlightCap, cost: 0, executed: 0, inFlightAllowed: inFlightCap }, race };
}

export function isEnded(run: Run): boolean {
  return run.status === 'completed' || run.status === 'cancelled' || run.status === 'failed';
}

/** Whether a run writes its iterations' results now: live, or being rescored. Another writer waits for it. */
export function isWriting(run: Run): boolean {
  return !isEnded(run) || run.rescore?.status === 'running';
}

/** Why an iteration cannot be written by another run while `writer` writes it. */
export function busyIteration(iteration: string, writer: Run): string {
  return isEnded(writer)
    ? `Iteration ${iteration} is being rescored by run ${writer.id}, whose rescoring has not finished.`
    : `Iteration ${iteration} is being evaluated by run ${writer.id}, which has not ended.`;
}

/**
 * Up to `max` ready tasks leased to a worker until now + lease_seconds, within what the run lets
 * be in flight; the first lease starts the run. An ended run leases nothing.
 */
export function decideLease(state: RunState, command: Extract<RunCommand, { type: 'LeaseTasks' }>): LeaseDecision {
  const { run, tasks, spending } = state;
  if (isEnded(run)) return { events: [], positions: [] };
  // The worker's leases expired already (the run's timer has not given them back yet) go back
  // first: a new lease sets the expiry of all the worker holds, and must not revive them.
  const events = expiredLeasesOf(state, command.worker, command.nowMs);
  if (events.some((event) => event.type === 'RunEnded')) return { events, positions: [] };
  const room = Math.max(0, spending.inFlightAllowed - tasks.counts.leased);
  const { positions, rankAfter } = tasks.ready(Math.min(command.max, room, command.tokens.length), command.nowMs);
  if (positions.length === 0) return { events, positions };
  if (run.status === 'queued') events.push({ type: 'RunUpdated', run: { ...run, status: 'running', started_at: run.started_at ?? command.now } });
  const expiresAt = command.nowMs + run.lease_seconds * 1000;
  events.push({ type: 'TasksLeased', run: run.id, worker: command.worker, positions, tokens: command.tokens.slice(0, positions.length), rankAfter, expiresAt });
  return { events, positions };
}

/** Every lease the worker holds in the run lasts lease_seconds from now; leases already expired go back to the queue instead. */
export function decideExtend(state: RunState, worker: string, nowMs: number): RunEvent[] {
  const expiresAt = state.tasks.leaseExpiry.get(worker);
  if (expiresAt === undefined || !state.tasks.byWorker.has(worker)) return [];
  if (expiresAt <= nowMs) return expiredLeasesOf(state, worker, nowMs);
  return [{ type: 'LeasesExtended', run: state.run.id, worker, expiresAt: nowMs + state.run.lease_seconds * 1000 }];
}

/**
 * The worker's leases, when they have expired and the run's timer has not given them back yet:
 * they go back now, never revived by a later heartbeat or lease, since a completion in the
 * meantime was answered stale.
 */
function expiredLeasesOf(state: RunState, worker: string, nowMs: number): RunEvent[] {
  const expiresAt = state.tasks.leaseExpiry.get(worker);
  if (expiresAt === undefined || expiresAt > nowMs || !state.tasks.byWorker.has(worker)) return [];
  return released(state, [worker], nowMs);
}

/**
 * Each item answered on its own: accepted (its task leased to this worker under this token, the
 * lease not expired), stale (anything else: fencing, so that a late answer writes nothing), or
 * cancelled (the run has ended). An accepted error result is retried after a backoff until
 * max_tries, then its task is dead with that result; a rate-limited one is retried without a try.
 * Then the run ends if its budget is spent or every task has ended.
 */
export function decideCompletion(state: RunState, command: Extract<RunCommand, { type: 'CompleteTasks' }>, limits: RunLimits): CompletionDecision {
  const { run, tasks } = state;
  if (isEnded(run)) return { events: [], outcomes: command.items.map(() => 'cancelled') };
  const expiry = tasks.leaseExpiry.get(command.worker);
  const held = expiry !== undefined && expiry > command.nowMs;
  const seen = new Set<number>();
  const completed: CompletedTask[] = [];
  // Items are taken in order, as separate calls would be: once an item accepted spends the budget
  // the run ends, and the items after it are answered as a later call's would be. (A live run whose
  // budget is spent already, which a store written before retries refused one may hold, takes one
  // item and ends again.)
  const spent = { cost: state.spending.cost, executed: state.spending.executed };
  const outcomes = command.items.map((item): CompletionOutcome => {
    if (completed.length > 0 && budgetSpent(run, spent.cost, spent.executed)) return 'cancelled';
    const lease = tasks.leases.get(item.position);
    if (!held || seen.has(item.position) || lease?.worker !== command.worker || lease.token !== item.token) return 'stale';
    seen.add(item.position);
    const task = completedTask(state, item, command.nowMs, limits);
    completed.push(task);
    spent.cost = costAfter(spent.cost, task);
    if (task.to !== 'rate_limited') spent.executed++;
    return 'accepted';
  });
  if (completed.length === 0) return { events: [], outcomes };
  const events: RunEvent[] = [{ type: 'TasksCompleted', run: run.id, nowMs: command.nowMs, tasks: completed }];
  const advance = state.race && advanceRace(state.race, raceValuesOf(state, completed), command.now);
  if (advance) events.push({ type: 'RaceAdvanced', run: run.id, advance });
  const ending = endingAfter(state, completed, advance, command.now);
  if (ending) events.push(ending);
  return { events, outcomes };
}

function completedTask(state: RunState, item: CompletionItem, nowMs: number, limits: RunLimits): CompletedTask {
  const { run, tasks } = state;
  const { position, result } = item;
  if (result === 'rate_limited') {
    return skippedInRace(state, { position, to: 'rate_limited', readyAt: nowMs + retryDelay(run, position, 1, limits), error: null, cost: 0, result: null });
  }
  const { fields } = result.row;
  const cost = fields.cost ?? 0;
  if (fields.status === 'ok') return { position, to: 'done', readyAt: nowMs, error: null, cost, result };
  const tries = tasks.tries[position]! + 1;
  if (tries >= run.max_tries) return { position, to: 'dead', readyAt: nowMs, error: fields.error, cost, result };
  return skippedInRace(state, { position, to: 'retry', readyAt: nowMs + retryDelay(run, position, tries, limits), error: fields.error, cost, result: null });
}

/** A task going back to the queue, or skipped instead when it is a race's stopped candidate's (the event says which). */
function skippedInRace(state: RunState, task: CompletedTask): CompletedTask {
  return stopsInRace(state, task.position) ? { ...task, skipped: true } : task;
}

/** What ended tasks bring a race: each done task's score, each dead one's error (null). */
function raceValuesOf({ tasks }: RunState, completed: readonly CompletedTask[]): RaceValue[] {
  const values: RaceValue[] = [];
  for (const task of completed) {
    if (task.to !== 'done' && task.to !== 'dead') continue;
    const { iteration, datapoint } = tasks.taskAt(task.position);
    values.push([iteration, datapoint, task.to === 'done' ? (task.result?.row.fields.score ?? null) : null]);
  }
  return values;
}

/** A run's end after these completions: its budget spent, its race decided, or every task ended; else none. */
function endingAfter(state: RunState, completed: readonly CompletedTask[], advance: RaceAdvance | null, now: string): RunEvent | null {
  const { run, tasks, spending } = state;
  let cost = spending.cost;
  let executed = spending.executed;
  // The queued tasks of candidates the race stops are skipped in the same commit.
  let ended = tasks.counts.done + tasks.counts.dead + tasks.counts.skipped + tasks.counts.cancelled + skippedBy(state, completed, advance);
  let dead = tasks.counts.dead;
  for (const task of completed) {
    cost = costAfter(cost, task);
    if (task.to !== 'rate_limited') executed++;
    if (task.to === 'done' || task.to === 'dead') ended++;
    else if (task.skipped) ended++;
    if (task.to === 'dead') dead++;
  }
  const spent = budgetSpent(run, cost, executed);
  // A run its budget ended, retried with a larger one, keeps the tasks the budget skipped (a retry
  // queues the failed only): it ends by its budget again, not as if every task had run.
  if (ended === tasks.total && !state.race && tasks.counts.skipped > 0) return { type: 'RunEnded', run: finished(run, 'completed', 'budget', now), tasksEnd: 'skipped' };
  if (ended === tasks.total) return everyTaskEnded(run, dead === tasks.total, now);
  if (advance && raceDecidedAfter(state.race!, advance)) return { type: 'RunEnded', run: finished(run, 'completed', 'decided', now), tasksEnd: 'skipped' };
  if (spent) return { type: 'RunEnded', run: finished(run, 'completed', 'budget', now), tasksEnd: 'skipped' };
  return null;
}

/** Whether a run that spent `cost` on `executed` tasks has reached its budget. */
export function budgetSpent({ budget }: Run, cost: number, executed: number): boolean {
  return (budget.max_cost !== null && cost >= budget.max_cost) || (budget.max_tasks !== null && executed >= budget.max_tasks);
}

/**
 * What a run has spent once a completed task's cost is added: at most the largest finite number,
 * so that a sum of finite costs stays one (JSON has no infinity; the budget is spent either way).
 */
function costAfter(cost: number, task: CompletedTask): number {
  return Math.min(Number.MAX_VALUE, cost + task.cost);
}

/** Tasks a race's advance skips: the queued tasks of the candidates it stops, those these completions queue again included. */
function skippedBy({ race, tasks }: RunState, completed: readonly CompletedTask[], advance: RaceAdvance | null): number {
  if (!race || !advance) return 0;
  let skipped = 0;
  for (const { k, candidate } of advance.candidates) {
    if (candidate.stopped_at === null) continue;
    const iteration = race.candidates[k]!.index;
    skipped += tasks.queuedOf(iteration);
    for (const task of completed) if ((task.to === 'retry' || task.to === 'rate_limited') && tasks.taskAt(task.position).iteration === iteration) skipped++;
  }
  return skipped;
}

/** Whether no candidate is left live once the advance is applied. */
function raceDecidedAfter(race: RaceState, advance: RaceAdvance): boolean {
  const advanced = new Map(advance.candidates.map(({ k, candidate }) => [k, candidate.state]));
  return race.candidates.every(({ candidate }, k) => (advanced.get(k) ?? candidate.state) !== 'live');
}

function finished(run: Run, status: RunStatus, reason: RunReason, now: string): Run {
  return { ...run, status, reason, finished_at: now };
}

/** A worker's expired leases in the run, back to the queue. */
export function decideExpiry(state: RunState, nowMs: number): RunEvent[] {
  const workers: string[] = [];
  for (const [worker, expiresAt] of state.tasks.leaseExpiry) if (expiresAt <= nowMs) workers.push(worker);
  return released(state, workers, nowMs);
}

/** A worker that says goodbye gives its leases back at once. */
export function decideRelease(state: RunState, worker: string, nowMs: number): RunEvent[] {
  return state.tasks.byWorker.has(worker) ? released(state, [worker], nowMs) : [];
}

/**
 * Workers' leases given back: their tasks go back to the queue, but those of a race's stopped
 * candidates are skipped; when that leaves no task unended, the run ends with them (a guard: a
 * live race has a live candidate's or the incumbent's task unended, since it ends decided once no
 * candidate is live).
 */
function released(state: RunState, workers: readonly string[], nowMs: number): RunEvent[] {
  const { run, tasks } = state;
  let skipped = 0;
  const events: RunEvent[] = workers.map((worker) => {
    const skippedOfWorker = [...(tasks.byWorker.get(worker) ?? [])].filter((position) => stopsInRace(state, position));
    skipped += skippedOfWorker.length;
    return skippedOfWorker.length > 0 ? { type: 'WorkerReleased', run: run.id, worker, nowMs, skipped: skippedOfWorker } : { type: 'WorkerReleased', run: run.id, worker, nowMs };
  });
  const { done, dead, skipped: skippedBefore, cancelled } = tasks.counts;
  if (skipped > 0 && done + dead + skippedBefore + cancelled + skipped === tasks.total) {
    events.push(everyTaskEnded(run, dead === tasks.total, new Date(nowMs).toISOString()));
  }
  return events;
}

/** Every task has ended: the run is completed (all_done), or failed when every one died. */
function everyTaskEnded(run: Run, allDead: boolean, now: string): RunEvent {
  return { type: 'RunEnded', run: finished(run, allDead ? 'failed' : 'completed', allDead ? 'failed' : 'all_done', now), tasksEnd: 'skipped' };
}

/** A task of a race's candidate that has stopped: it never goes back to the queue (it is skipped, and saved). */
function stopsInRace({ race, tasks }: RunState, position: number): boolean {
  if (!race) return false;
  const { iteration } = tasks.taskAt(position);
  return race.candidates.some((entry) => entry.index === iteration && entry.candidate.stopped_at !== null);
}

/** A cancel ends the run: its queued and leased tasks are cancelled (a worker holding one is told to stop). */
export function decideCancel(state: RunState, now: string): RunEvent[] {
  if (isEnded(state.run)) {
    if (state.run.status === 'cancelled') return [];
    throw conflict(`A run that has ended (${state.run.status}) cannot be cancelled.`);
  }
  return [{ type: 'RunEnded', run: finished(state.run, 'cancelled', 'cancelled', now), tasksEnd: 'cancelled' }];
}

/**
 * A retry queues again the tasks that ended dead or with an error result ("rerun only the
 * failed"), their tries starting over; an ended run runs again, with `budget` from now on when one
 * is given. A cancelled run takes no retry, nor does one whose budget is spent: it would run
 * nothing (or, as it once did, one task past its budget before ending again).
 */
export function decideRetry(state: RunState, command: Extract<RunCommand, { type: 'RetryRun' }>): RunEvent[] {
  const { tasks, spending } = state;
  const run = command.budget ? { ...state.run, budget: command.budget } : state.run;
  if (run.status === 'cancelled') throw conflict('A cancelled run cannot be retried.');
  if (run.rescore?.status === 'running') throw conflict('A run being rescored cannot be retried until its rescoring has finished.');
  if (state.race) throw conflict("A racing run is not retried: its decisions stand on the order its datapoints went out in. Start a new run for what failed.");
  const positions: number[] = [];
  for (let position = 0; position < tasks.total; position++) {
    const code = tasks.state[position]!;
    if (code === taskCode.dead || (code === taskCode.done && command.failedResults.has(position))) positions.push(position);
  }
  if (positions.length === 0) throw conflict('No task of this run ended dead or with an error result: there is nothing to retry.');
  if (budgetSpent(run, spending.cost, spending.executed)) throw conflict(budgetSpentMessage(run, spending));
  const events: RunEvent[] = [];
  // An ended run waits for its next lease again, as a new one does.
  if (isEnded(run)) events.push({ type: 'RunUpdated', run: { ...run, status: 'queued', reason: null, finished_at: null } });
  else if (run !== state.run) events.push({ type: 'RunUpdated', run });
  events.push({ type: 'TasksQueuedAgain', run: run.id, positions, nowMs: command.nowMs });
  return events;
}

/** Why a retry under a spent budget is refused, with what was spent against which cap. */
function budgetSpentMessage({ budget }: Run, spending: RunSpending): string {
  const reached: string[] = [];
  if (budget.max_tasks !== null && spending.executed >= budget.max_tasks) reached.push(`${spending.executed} tasks executed of max_tasks ${budget.max_tasks}`);
  if (budget.max_cost !== null && spending.cost >= budget.max_cost) reached.push(`cost ${spending.cost} of max_cost ${budget.max_cost}`);
  return `This run's budget is spent (${reached.join('; ')}): a retry would run nothing. Send a larger budget with the retry.`;
}

/** A run that cannot go on (its dataset version, an iteration or its agent went) fails. */
export function decideFailure(state: RunState, now: string): RunEvent[] {
  if (isEnded(state.run)) return [];
  return [{ type: 'RunEnded', run: finished(state.run, 'failed', 'failed', now), tasksEnd: 'skipped' }];
}

/**
 * A rescoring starts (with the scoring it uses from now on) once the run has ended and no other
 * rescoring of it is running: its results are then its completions' alone, none being written.
 */
export function decideRescoreStart(state: RunState, command: Extract<RunCommand, { type: 'StartRescore' }>): RunEvent[] {
  const { run } = state;
  if (!isEnded(run)) throw conflict(`A run is rescored once it has ended; this one is ${run.status}.`);
  if (run.rescore?.status === 'running') throw conflict('This run is being rescored already.');
  const rescore: RunRescore = { status: 'running', iteration: command.iteration, done: 0, total: command.total, started_at: command.now, finished_at: null };
  return [{ type: 'RunUpdated', run: { ...run, scoring: command.scoring, rescore } }];
}

/** A rescoring's progress: `done` results scored again; at its total it has completed. */
export function decideRescoreProgress(state: RunState, command: Extract<RunCommand, { type: 'RescoreProgress' }>): RunEvent[] {
  const { run } = state;
  if (run.rescore?.status !== 'running') return [];
  const done = Math.min(command.done, run.rescore.total);
  const finished = done === run.rescore.total;
  const rescore: RunRescore = { ...run.rescore, done, status: finished ? 'completed' : 'running', finished_at: finished ? command.now : null };
  return [{ type: 'RunUpdated', run: { ...run, rescore } }];
}

// ---- applying events ----

/** Changes a run's state by one of its events (RunCreated makes the state: newRunState). */
export function applyRunEvent(state: RunState, event: Exclude<RunEvent, { type: 'RunCreated' }>): void {
  const { tasks } = state;
  switch (event.type) {
    case 'RunUpdated':
      state.run = event.run;
      break;
    case 'TasksLeased':
      tasks.lease(event.positions, event.tokens, event.worker, event.rankAfter, event.expiresAt);
      break;
    case 'LeasesExtended':
      tasks.extend(event.worker, event.expiresAt);
      break;
    case 'TasksCompleted':
      for (const task of event.tasks) applyCompleted(state, task);
      break;
    case 'WorkerReleased': {
      // As the event says (one journaled before skipping existed skips nothing): replay is the live path.
      const skipped = new Set(event.skipped ?? []);
      tasks.releaseWorker(event.worker, event.nowMs, (position) => skipped.has(position));
      if (state.race) state.race.tasksSaved += skipped.size;
      break;
    }
    case 'TasksQueuedAgain':
      tasks.queueAgain(event.positions, event.nowMs);
      for (const position of event.positions) tasks.lastErrors.delete(position);
      break;
    case 'RunEnded': {
      state.run = event.run;
      const before = tasks.counts.skipped;
      tasks.endUnfinished(event.tasksEnd);
      // A race that has decided ends its run: what it did not run was saved.
      if (state.race && event.run.reason === 'decided') state.race.tasksSaved += tasks.counts.skipped - before;
      break;
    }
    case 'RaceAdvanced':
      for (const iteration of applyRaceAdvance(state.race!, event.advance)) state.race!.tasksSaved += tasks.skipQueuedOf(iteration);
      break;
  }
}

function applyCompleted(state: RunState, task: CompletedTask): void {
  const { tasks, spending } = state;
  spending.cost = costAfter(spending.cost, task);
  if (task.to === 'rate_limited') {
    spending.inFlightAllowed = Math.max(1, Math.floor(Math.min(spending.inFlightAllowed, tasks.counts.leased) / 2));
    backToQueue(state, task, false);
    return;
  }
  spending.executed++;
  if (task.error !== null) tasks.noteError(task.position, task.error);
  if (task.to === 'retry') {
    backToQueue(state, task, true);
    return;
  }
  if (task.to === 'done') {
    spending.inFlightAllowed = Math.min(spending.inFlightCap, spending.inFlightAllowed + 1);
    tasks.lastErrors.delete(task.position);
  }
  tasks.end(task.position, task.to);
}

/** A leased task goes back to the queue (a retry, rate limited), unless the decision skipped it (a race's stopped candidate's). */
function backToQueue(state: RunState, task: CompletedTask, failed: boolean): void {
  if (task.skipped) {
    state.tasks.end(task.position, 'skipped');
    state.race!.tasksSaved++;
    return;
  }
  state.tasks.requeue(task.position, task.readyAt, failed);
}

// ---- retries' waits ----

/** A failed try's wait: base · 2^(tries - 1), at most the bound, times a jitter in [0.5, 1.5) fixed by the task and its try. */
export function retryDelay(run: Run, position: number, tries: number, limits: RunLimits): number {
  const exponential = Math.min(limits.runRetryDelayMsMax, limits.runRetryDelayMs * 2 ** Math.max(0, tries - 1));
  return Math.round(exponential * (0.5 + jitter(run.id, position, tries)));
}

/** A number in [0, 1) from the run, the task and its try (a 32-bit hash: the same in every replay). */
function jitter(runId: string, position: number, tries: number): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < runId.length; i++) hash = Math.imul(hash ^ runId.charCodeAt(i), 0x01000193);
  hash = Math.imul(hash ^ position, 0x01000193);
  hash = Math.imul(hash ^ tries, 0x01000193);
  hash ^= hash >>> 16;
  hash = Math.imul(hash, 0x85ebca6b);
  hash ^= hash >>> 13;
  return (hash >>> 0) / 2 ** 32;
}
