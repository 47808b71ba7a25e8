// A run's pure decisions (src/domain/run.ts), driven as the job's actor drives them: decide with
// the time and tokens handed in, then apply the events. Leases within the in-flight cap; fencing;
// budgets (max_tasks, max_cost); rate_limited halving what may be in flight, one more on each
// success; error results retried after a growing, jittered, bounded wait until max_tries, then
// dead; a retry queuing only the failed; cancel; expiry; failure.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { defaultLimits } from '../../src/config.ts';
import { resolveRowAt } from '../../src/domain/result-batch.ts';
import type { ResultInput } from '../../src/domain/result-row.ts';
import {
  applyRunEvent, decideCancel, decideCompletion, decideExpiry, decideExtend, decideFailure, decideLease, decideRelease, decideRetry, newRunState, retryDelay,
  type CompletionItem, type Run, type RunBudget, type RunCommand, type RunEvent, type RunLimits, type RunState,
} from '../../src/domain/run.ts';
import type { RunShape } from '../../src/domain/run-tasks.ts';
import { rejection } from '../helpers/deciders.ts';

const limits: RunLimits = { runRetryDelayMs: 100, runRetryDelayMsMax: 1000, tasksPerLeaseMax: 1000 };
const iso = (ms: number) => new Date(ms).toISOString();

type PlainRun = Pick<Run, 'id' | 'job' | 'project' | 'dataset' | 'iterations' | 'attempts' | 'order' | 'seed' | 'max_tries' | 'lease_seconds' | 'max_in_flight' | 'budget' | 'status' | 'reason' | 'created_at' | 'started_at' | 'finished_at'>;

/** A plain run as the route makes it: the fields every run has (those of a scored, rescored or racing run left absent). */
function runRecord(fields: Partial<PlainRun> = {}): Run {
  const record: PlainRun = {
    id: 'run-1', job: 'job-1', project: 'p1', dataset: 'ds-1', iterations: ['it-0'], attempts: 1, order: 'dataset', seed: null, max_tries: 3,
    lease_seconds: 60, max_in_flight: null, budget: { max_cost: null, max_tasks: null }, status: 'queued', reason: null,
    created_at: iso(0), started_at: null, finished_at: null, ...fields,
  };
  return record as Run;
}

/** A new run of `datapoints` datapoints (its other fields as given), as RunCreated makes it. */
function created(datapoints: number, fields: Partial<PlainRun> = {}): RunState {
  const run = runRecord(fields);
  const shape: RunShape = { iterations: run.iterations.length, datapoints, attempts: run.attempts, datapointOrder: Array.from({ length: datapoints }, (_, i) => i) };
  return newRunState({ type: 'RunCreated', run, shape, inFlightCap: run.max_in_flight ?? limits.tasksPerLeaseMax } as Extract<RunEvent, { type: 'RunCreated' }>);
}

/** A retry of the state's run: the positions whose rows are error results now, when, and a budget from now on. */
function retryOf(state: RunState, failed: number[], nowMs: number, budget?: RunBudget): Extract<RunCommand, { type: 'RetryRun' }> {
  return { type: 'RetryRun', run: state.run.id, failedResults: new Set(failed), nowMs, ...(budget ? { budget } : {}) };
}

function apply(state: RunState, events: readonly RunEvent[]): void {
  for (const event of events) {
    assert.ok(event.type !== 'RunCreated');
    applyRunEvent(state, event as Exclude<RunEvent, { type: 'RunCreated' }>);
  }
}

let tokenCount = 0;
const tokens = (count: number) => Array.from({ length: count }, () => `token-${++tokenCount}`.padEnd(22, '_'));

/** Leases up to `max` tasks to a worker at `nowMs`: the positions and tokens handed out. */
function lease(state: RunState, worker: string, max: number, nowMs: number): { position: number; token: string }[] {
  const { events, positions } = decideLease(state, { type: 'LeaseTasks', run: state.run.id, worker, max, tokens: tokens(max), nowMs, now: iso(nowMs) });
  apply(state, events);
  const leased = events.find((event) => event.type === 'TasksLeased');
  return positions.map((position, i) => ({ position, token: leased!.type === 'TasksLeased' ? leased!.tokens[i]! : '' }));
}

/** A task's result row as a completion sends it. */
function result(state: RunState, position: number, input: ResultInput): CompletionItem['result'] {
  const { iteration, datapoint, attempt } = state.tasks.taskAt(position);
  const resolved = resolveRowAt(datapoint, attempt, input, defaultLimits);
  assert.ok('row' in resolved);
  return { iteration: state.run.iterations[iteration]!, row: resolved.row };
}

const ok = (state: RunState, position: number, cost = 0) => result(state, position, { score: 1, cost });
const failure = (state: RunState, position: number, error = 'boom') => result(state, position, { status: 'error', error });

function complete(state: RunState, worker: string, items: [position: number, token: string, result: CompletionItem['result']][], nowMs: number) {
  const decision = decideCompletion(state, { type: 'CompleteTasks', run: state.run.id, worker, items: items.map(([position, token, outcome]) => ({ position, token, result: outcome })), nowMs, now: iso(nowMs) }, limits);
  apply(state, decision.events);
  return decision;
}

const types = (events: readonly RunEvent[]) => events.map((event) => event.type);

test('a lease takes the ready tasks up to max, the tokens given and the room in flight; the first starts the run; an ended run leases nothing', () => {
  const state = created(10, { max_in_flight: 4 });
  const { events, positions } = decideLease(state, { type: 'LeaseTasks', run: 'run-1', worker: 'w', max: 3, tokens: tokens(2), nowMs: 1000, now: iso(1000) });
  assert.equal(positions, [0, 1], 'no more than the tokens');
  assert.equal(types(events), ['RunUpdated', 'TasksLeased']);
  const [started, leased] = events as [Extract<RunEvent, { type: 'RunUpdated' }>, Extract<RunEvent, { type: 'TasksLeased' }>];
  assert.equal([started.run.status, started.run.started_at], ['running', iso(1000)]);
  assert.equal([leased.expiresAt, leased.rankAfter, leased.tokens.length], [61_000, 2, 2]);
  apply(state, events);
  assert.equal(lease(state, 'w', 10, 2000).map((task) => task.position), [2, 3], 'max_in_flight 4, 2 in flight');
  assert.equal(lease(state, 'w', 10, 2000), [], 'no room');
  assert.equal(state.run.started_at, iso(1000), 'started once');
  apply(state, decideCancel(state, iso(3000)));
  assert.equal(decideLease(state, { type: 'LeaseTasks', run: 'run-1', worker: 'w', max: 1, tokens: tokens(1), nowMs: 4000, now: iso(4000) }), { events: [], positions: [] });
});

test('fencing: a wrong token, another worker, an expired lease, an item twice: stale, nothing decided for it; an ended run answers cancelled', () => {
  const state = created(3);
  const [a, b] = lease(state, 'w1', 2, 0);
  const stale = complete(state, 'w1', [[a!.position, 'x'.repeat(22), ok(state, a!.position)], [a!.position, b!.token, ok(state, a!.position)]], 1000);
  assert.equal(stale, { events: [], outcomes: ['stale', 'stale'] });
  assert.equal(complete(state, 'w2', [[a!.position, a!.token, ok(state, a!.position)]], 1000).outcomes, ['stale'], 'another worker, the right token');
  assert.equal(complete(state, 'w1', [[a!.position, a!.token, ok(state, a!.position)]], 60_000).outcomes, ['stale'], 'at its expiry');
  const twice = complete(state, 'w1', [[a!.position, a!.token, ok(state, a!.position)], [a!.position, a!.token, ok(state, a!.position)]], 59_999);
  assert.equal(twice.outcomes, ['accepted', 'stale']);
  assert.equal(types(twice.events), ['TasksCompleted']);
  assert.equal(state.tasks.counts.done, 1);
  apply(state, decideCancel(state, iso(70_000)));
  assert.equal(complete(state, 'w1', [[b!.position, b!.token, ok(state, b!.position)]], 70_001), { events: [], outcomes: ['cancelled'] });
});

test('budget max_tasks: the run ends (completed, budget) once that many tasks were executed, a rate-limited answer not one; the rest skipped', () => {
  const state = created(5, { budget: { max_cost: null, max_tasks: 2 } });
  const tasks = lease(state, 'w', 4, 0);
  const first = complete(state, 'w', [[tasks[1]!.position, tasks[1]!.token, failure(state, tasks[1]!.position)]], 10);
  assert.equal(types(first.events), ['TasksCompleted'], 'an error result is executed too');
  assert.is(state.spending.executed, 1);
  const limited = complete(state, 'w', [[tasks[0]!.position, tasks[0]!.token, 'rate_limited']], 20);
  assert.equal(types(limited.events), ['TasksCompleted'], 'a rate-limited answer is not the second');
  assert.is(state.spending.executed, 1);
  const second = complete(state, 'w', [[tasks[2]!.position, tasks[2]!.token, ok(state, tasks[2]!.position)]], 30);
  assert.equal(types(second.events), ['TasksCompleted', 'RunEnded']);
  const ended = second.events[1] as Extract<RunEvent, { type: 'RunEnded' }>;
  assert.equal([ended.run.status, ended.run.reason, ended.run.finished_at, ended.tasksEnd], ['completed', 'budget', iso(30), 'skipped']);
  assert.equal(state.tasks.counts, { total: 5, queued: 0, leased: 0, done: 1, dead: 0, skipped: 4, cancelled: 0 });
  assert.equal([state.spending.executed, state.tasks.finished], [2, true]);
});

test('budget max_cost: completions\' costs add up; reaching it exactly ends the run', () => {
  const state = created(4, { budget: { max_cost: 1, max_tasks: null } });
  const tasks = lease(state, 'w', 4, 0);
  assert.equal(types(complete(state, 'w', [[tasks[0]!.position, tasks[0]!.token, ok(state, tasks[0]!.position, 0.25)], [tasks[1]!.position, tasks[1]!.token, ok(state, tasks[1]!.position, 0.5)]], 1).events), ['TasksCompleted']);
  assert.is(state.spending.cost, 0.75);
  const reached = complete(state, 'w', [[tasks[2]!.position, tasks[2]!.token, failure(state, tasks[2]!.position)], [tasks[3]!.position, tasks[3]!.token, ok(state, tasks[3]!.position, 0.25)]], 2);
  assert.equal(types(reached.events), ['TasksCompleted', 'RunEnded']);
  assert.equal([state.run.status, state.run.reason, state.spending.cost, state.tasks.counts.skipped], ['completed', 'budget', 1, 1]);
});

test('rate_limited: back to the queue without a try, after a wait; the allowed in flight halves (of what is in flight, at least 1) and grows by one per success up to the cap', () => {
  const state = created(20, { max_in_flight: 8 });
  const tasks = lease(state, 'w', 8, 0);
  assert.is(state.spending.inFlightAllowed, 8);
  const decision = complete(state, 'w', [[tasks[0]!.position, tasks[0]!.token, 'rate_limited']], 100);
  const completed = decision.events[0] as Extract<RunEvent, { type: 'TasksCompleted' }>;
  assert.equal(completed.tasks[0]!.to, 'rate_limited');
  assert.is(completed.tasks[0]!.readyAt, 100 + retryDelay(state.run, tasks[0]!.position, 1, limits));
  assert.equal([state.spending.inFlightAllowed, state.tasks.tries[tasks[0]!.position], state.tasks.stateOf(tasks[0]!.position)], [4, 0, 'queued']);
  complete(state, 'w', [[tasks[1]!.position, tasks[1]!.token, 'rate_limited'], [tasks[2]!.position, tasks[2]!.token, 'rate_limited']], 100);
  assert.is(state.spending.inFlightAllowed, 1, '4 -> 2 -> 1');
  complete(state, 'w', [[tasks[3]!.position, tasks[3]!.token, 'rate_limited']], 100);
  assert.is(state.spending.inFlightAllowed, 1, 'never below one');
  assert.equal(lease(state, 'w', 5, 10_000), [], '4 in flight, 1 allowed');
  complete(state, 'w', tasks.slice(4, 7).map((task): [number, string, CompletionItem['result']] => [task.position, task.token, ok(state, task.position)]), 200);
  assert.is(state.spending.inFlightAllowed, 4, 'one more per success');
  assert.is(lease(state, 'w', 5, 10_000).length, 3, '1 in flight, 4 allowed');
  // Halving takes what is in flight when it is less: 4 in flight, allowed 4 -> 2.
  const more = [...state.tasks.leases].filter(([, held]) => held.worker === 'w').map(([position, held]) => ({ position, token: held.token }));
  complete(state, 'w', [[more[0]!.position, more[0]!.token, 'rate_limited']], 300);
  assert.is(state.spending.inFlightAllowed, 2);
  // Fewer in flight than allowed: half of those in flight.
  const few = created(10, { max_in_flight: 8 });
  const [one] = lease(few, 'w', 2, 0);
  complete(few, 'w', [[one!.position, one!.token, 'rate_limited']], 1);
  assert.is(few.spending.inFlightAllowed, 1, 'half of 2 in flight, not of 8 allowed');
  const capped = created(3, { max_in_flight: 2 });
  const two = lease(capped, 'w', 2, 0);
  complete(capped, 'w', two.map((task): [number, string, CompletionItem['result']] => [task.position, task.token, ok(capped, task.position)]), 1);
  assert.is(capped.spending.inFlightAllowed, 2, 'never above max_in_flight');
});

test('an error result is retried after base · 2^(tries-1) (jittered, bounded) until max_tries; then the task is dead, its error its row; the run fails only if every task is dead', () => {
  const state = created(2, { max_tries: 3 });
  let [task] = lease(state, 'w', 1, 0);
  const position = task!.position;
  const waits: number[] = [];
  let nowMs = 0;
  for (let tryNumber = 1; tryNumber <= 3; tryNumber++) {
    const decision = complete(state, 'w', [[position, task!.token, failure(state, position, `boom ${tryNumber}`)]], nowMs);
    const done = (decision.events[0] as Extract<RunEvent, { type: 'TasksCompleted' }>).tasks[0]!;
    if (tryNumber < 3) {
      assert.equal([done.to, done.result, done.error], ['retry', null, `boom ${tryNumber}`]);
      waits.push(done.readyAt - nowMs);
      assert.is(done.readyAt - nowMs, retryDelay(state.run, position, tryNumber, limits));
      assert.equal([state.tasks.tries[position], state.tasks.lastErrors.get(position)], [tryNumber, `boom ${tryNumber}`]);
      assert.ok(!state.tasks.ready(5, done.readyAt - 1).positions.includes(position), 'not ready before its wait');
      nowMs = done.readyAt;
      [task] = lease(state, 'w', 1, nowMs);
      assert.is(task!.position, position, 'the retry first, once ready');
    } else {
      assert.equal([done.to, done.error, done.result!.row.fields.status, done.result!.row.fields.error], ['dead', 'boom 3', 'error', 'boom 3']);
    }
  }
  assert.ok(waits[0]! >= 50 && waits[0]! < 150, `first wait ${waits[0]} in [50, 150)`);
  assert.ok(waits[1]! >= 100 && waits[1]! < 300, `second wait ${waits[1]} in [100, 300)`);
  assert.equal([state.tasks.stateOf(position), state.tasks.tries[position], state.run.status], ['dead', 3, 'running']);
  const [other] = lease(state, 'w', 1, nowMs);
  complete(state, 'w', [[other!.position, other!.token, failure(state, other!.position)]], nowMs);
  assert.equal([state.run.status, state.run.reason], ['running', null], 'one try of three');
  // A run whose tasks all end dead fails; one with a task done completes.
  const single = created(1, { max_tries: 1 });
  const [only] = lease(single, 'w', 1, 0);
  complete(single, 'w', [[only!.position, only!.token, failure(single, only!.position)]], 1);
  assert.equal([single.run.status, single.run.reason], ['failed', 'failed']);
});

test('retryDelay: the same for the same run, task and try; doubling up to the bound; jitter in [0.5, 1.5)', () => {
  const run = runRecord();
  assert.is(retryDelay(run, 3, 2, limits), retryDelay(run, 3, 2, limits));
  for (let position = 0; position < 200; position++) {
    for (const [tries, base] of [[1, 100], [2, 200], [3, 400], [4, 800], [5, 1000], [12, 1000]] as const) {
      const wait = retryDelay(run, position, tries, limits);
      assert.ok(wait >= base * 0.5 && wait <= base * 1.5, `try ${tries}: ${wait} around ${base}`);
    }
  }
  const spread = new Set(Array.from({ length: 50 }, (_, position) => retryDelay(run, position, 1, limits)));
  assert.ok(spread.size > 10, 'jittered: tasks failing together do not come back together');
});

test('a retry queues again only the dead and those done with an error result, tries starting over; an ended run is queued again; nothing failed or a cancelled run is a conflict', () => {
  const state = created(4, { max_tries: 1 });
  const tasks = lease(state, 'w', 4, 0);
  complete(state, 'w', [
    [tasks[0]!.position, tasks[0]!.token, ok(state, tasks[0]!.position)],
    [tasks[1]!.position, tasks[1]!.token, failure(state, tasks[1]!.position)],
    [tasks[2]!.position, tasks[2]!.token, ok(state, tasks[2]!.position)],
    [tasks[3]!.position, tasks[3]!.token, ok(state, tasks[3]!.position)],
  ], 10);
  assert.equal([state.run.status, state.tasks.counts.dead], ['completed', 1]);
  // Task 2's row was replaced by an error row since (a posted batch after the run): failedResults says so.
  const events = decideRetry(state, retryOf(state, [tasks[2]!.position], 20));
  assert.equal(types(events), ['RunUpdated', 'TasksQueuedAgain']);
  const queued = events[1] as Extract<RunEvent, { type: 'TasksQueuedAgain' }>;
  assert.equal(queued.positions, [tasks[1]!.position, tasks[2]!.position].sort((a, b) => a - b));
  apply(state, events);
  assert.equal([state.run.status, state.run.reason, state.run.finished_at], ['queued', null, null]);
  assert.equal([state.tasks.counts.queued, state.tasks.counts.done, state.tasks.tries[tasks[1]!.position], state.tasks.lastErrors.has(tasks[1]!.position)], [2, 2, 0, false]);
  assert.equal(lease(state, 'w', 5, 20).map((task) => task.position), queued.positions);
  assert.is(rejection(() => decideRetry(state, retryOf(state, [], 30))).kind, 'conflict', 'nothing ended dead or with an error');
  apply(state, decideCancel(state, iso(40)));
  assert.is(rejection(() => decideRetry(state, retryOf(state, [tasks[1]!.position], 50))).kind, 'conflict');
});

test("a run whose budget is spent takes no retry (it would run nothing), unless the retry brings a larger budget, the run's from then on", () => {
  const state = created(3, { max_tries: 1, budget: { max_cost: null, max_tasks: 1 } });
  const [task] = lease(state, 'w', 1, 0);
  complete(state, 'w', [[task!.position, task!.token, failure(state, task!.position)]], 10);
  assert.equal([state.run.status, state.run.reason, state.tasks.counts.dead, state.tasks.counts.skipped], ['completed', 'budget', 1, 2]);
  const refused = rejection(() => decideRetry(state, retryOf(state, [], 20)));
  assert.is(refused.kind, 'conflict');
  assert.match(JSON.stringify(refused), /budget is spent \(1 tasks executed of max_tasks 1\)/);
  assert.is(rejection(() => decideRetry(state, retryOf(state, [], 20, { max_cost: null, max_tasks: 1 }))).kind, 'conflict', 'a budget no larger is spent too');
  const events = decideRetry(state, retryOf(state, [], 20, { max_cost: null, max_tasks: 2 }));
  assert.equal(types(events), ['RunUpdated', 'TasksQueuedAgain']);
  apply(state, events);
  assert.equal([state.run.status, state.run.budget], ['queued', { max_cost: null, max_tasks: 2 }]);
  // The task it runs again ends it: its others were skipped when the budget first ended it, and
  // stay so (a retry queues the failed only), so the budget ends it again.
  const [again] = lease(state, 'w', 1, 30);
  complete(state, 'w', [[again!.position, again!.token, ok(state, again!.position)]], 40);
  assert.equal([state.run.status, state.run.reason, state.spending.executed], ['completed', 'budget', 2]);

  // Its budget spent and nothing failed: that is what a retry is told, whatever budget it brings.
  const allDone = created(4, { budget: { max_cost: null, max_tasks: 2 } });
  const both = lease(allDone, 'w', 2, 0);
  complete(allDone, 'w', both.map((task) => [task.position, task.token, ok(allDone, task.position)] as const), 10);
  assert.equal([allDone.run.reason, allDone.spending.executed, allDone.tasks.counts.skipped], ['budget', 2, 2]);
  assert.match(JSON.stringify(rejection(() => decideRetry(allDone, retryOf(allDone, [], 20, { max_cost: null, max_tasks: 100 })))), /nothing to retry/);
  assert.match(JSON.stringify(rejection(() => decideRetry(allDone, retryOf(allDone, [], 20)))), /nothing to retry/);

  // A live run retried with a budget takes it at once.
  const live = created(2, { max_tries: 1 });
  const [first] = lease(live, 'w', 1, 0);
  complete(live, 'w', [[first!.position, first!.token, failure(live, first!.position)]], 10);
  const liveEvents = decideRetry(live, retryOf(live, [], 20, { max_cost: 5, max_tasks: null }));
  assert.equal(types(liveEvents), ['RunUpdated', 'TasksQueuedAgain']);
  apply(live, liveEvents);
  assert.equal([live.run.status, live.run.budget], ['running', { max_cost: 5, max_tasks: null }]);
});

test('a cancel ends the run and cancels its queued and leased tasks; again, nothing; a run that ended otherwise cannot be cancelled', () => {
  const state = created(3);
  lease(state, 'w', 1, 0);
  const events = decideCancel(state, iso(5));
  assert.equal(types(events), ['RunEnded']);
  apply(state, events);
  assert.equal([state.run.status, state.run.reason, state.run.finished_at], ['cancelled', 'cancelled', iso(5)]);
  assert.equal(state.tasks.counts, { total: 3, queued: 0, leased: 0, done: 0, dead: 0, skipped: 0, cancelled: 3 });
  assert.equal(decideCancel(state, iso(6)), []);
  const failed = created(1);
  apply(failed, decideFailure(failed, iso(1)));
  assert.equal([failed.run.status, failed.tasks.counts.skipped], ['failed', 1]);
  assert.equal(decideFailure(failed, iso(2)), [], 'once');
  assert.is(rejection(() => decideCancel(failed, iso(3))).kind, 'conflict');
});

test('expiry gives back the leases of workers whose expiry has come; a heartbeat moves a holder\'s on; a goodbye gives them back at once', () => {
  const state = created(6, { lease_seconds: 10 });
  lease(state, 'early', 2, 0);
  lease(state, 'late', 2, 5000);
  assert.equal(decideExpiry(state, 9999), []);
  assert.equal(decideExpiry(state, 10_000), [{ type: 'WorkerReleased', run: 'run-1', worker: 'early', nowMs: 10_000 }]);
  assert.equal(decideExtend(state, 'late', 12_000), [{ type: 'LeasesExtended', run: 'run-1', worker: 'late', expiresAt: 22_000 }]);
  assert.equal(decideExtend(state, 'nobody', 12_000), []);
  apply(state, [...decideExpiry(state, 10_000), ...decideExtend(state, 'late', 12_000)]);
  assert.equal([state.tasks.counts.queued, state.tasks.counts.leased], [4, 2]);
  assert.equal(decideExpiry(state, 21_999), []);
  apply(state, decideRelease(state, 'late', 13_000));
  assert.equal([state.tasks.counts.queued, state.tasks.counts.leased, state.tasks.byWorker.size], [6, 0, 0]);
  assert.equal(decideRelease(state, 'late', 13_000), []);
  assert.equal(lease(state, 'other', 6, 13_000).length, 6, 'all ready again');
});

test.run();
