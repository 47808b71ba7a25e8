// A job's runs in its snapshot and its journal (src/actors/job-codec.ts): a snapshot holds each
// run's record, task columns, leases, heap and spending, and reads back (through msgpack, as LMDB
// stores it) to a state that decides exactly as the original; a run's events are journaled
// compactly (a lease's tokens as one string, a completion as parallel lists without its rows) and
// replay to the same state.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { pack, unpack } from 'msgpackr';
import { jobCodec, runEventCodec } from '../../src/actors/job-codec.ts';
import { defaultLimits } from '../../src/config.ts';
import { replay } from '../../src/domain/decider.ts';
import { jobDecider, newIteration, newJob, type JobCommand, type JobEvent, type JobState } from '../../src/domain/job.ts';
import { resolveRowAt } from '../../src/domain/result-batch.ts';
import type { CompletionItem, Run } from '../../src/domain/run.ts';
import type { RunShape } from '../../src/domain/run-tasks.ts';

const limits = { ...defaultLimits, runRetryDelayMs: 100, runRetryDelayMsMax: 1000 };
const iso = (ms: number) => new Date(ms).toISOString();

type PlainRun = Pick<Run, 'id' | 'job' | 'project' | 'dataset' | 'iterations' | 'attempts' | 'order' | 'seed' | 'max_tries' | 'lease_seconds' | 'max_in_flight' | 'budget' | 'status' | 'reason' | 'created_at' | 'started_at' | 'finished_at'>;
const jsonText = (value: object) => JSON.stringify(value);
const throughStore = <T>(value: T): T => unpack(pack(value)) as T;

let tokenCount = 0;
const tokens = (count: number) => Array.from({ length: count }, () => String(++tokenCount).padStart(22, 'T'));

/** Decides and applies, as the actor does; the events are kept in `journal`. */
function step(state: JobState, command: JobCommand, journal: JobEvent[]): JobState {
  const events = jobDecider.decide(state, command, limits);
  journal.push(...events);
  return replay(jobDecider, state, events);
}

/** A plain run as the route makes it: the fields every run has (those of a scored, rescored or racing run left absent). */
function runRecord(iterations: string[]): Run {
  const record: PlainRun = {
    id: 'run-1', job: 'job-1', project: 'p1', dataset: 'ds-1', iterations, attempts: 2, order: 'shuffled', seed: 3, max_tries: 2,
    lease_seconds: 30, max_in_flight: 6, budget: { max_cost: 100, max_tasks: null }, status: 'queued', reason: null,
    created_at: iso(0), started_at: null, finished_at: null,
  };
  return record as Run;
}

/** A job with two iterations and a run of them on 4 datapoints x 2 attempts, part-way: leased, done, retried with an error, rate-limited, dead. */
function jobMidRun(): { state: JobState; journal: JobEvent[] } {
  const journal: JobEvent[] = [];
  let state = step(jobDecider.initialState(), { type: 'CreateJob', job: newJob({ id: 'job-1', now: iso(0), project: 'p1', triggeredBy: 1 }), sent: {} }, journal);
  for (const i of [0, 1]) {
    state = step(state, { type: 'AddIteration', iteration: newIteration({ id: `it-${i}`, now: iso(0), job: 'job-1', project: 'p1', iterationName: `it ${i}` }) }, journal);
  }
  const shape: RunShape = { iterations: 2, datapoints: 4, attempts: 2, datapointOrder: [3, 1, 0, 2] };
  state = step(state, { type: 'CreateRun', run: runRecord(['it-0', 'it-1']), shape } as Extract<JobCommand, { type: 'CreateRun' }>, journal);
  state = step(state, { type: 'LeaseTasks', run: 'run-1', worker: 'w1', max: 4, tokens: tokens(4), nowMs: 1000, now: iso(1000) }, journal);
  state = step(state, { type: 'LeaseTasks', run: 'run-1', worker: 'w2', max: 2, tokens: tokens(2), nowMs: 1100, now: iso(1100) }, journal);
  const held = (worker: string) => [...state.runs.get('run-1')!.tasks.leases].filter(([, lease]) => lease.worker === worker);
  const row = (position: number, input: Record<string, unknown>): CompletionItem['result'] => {
    const { iteration, datapoint, attempt } = state.runs.get('run-1')!.tasks.taskAt(position);
    const resolved = resolveRowAt(datapoint, attempt, input, limits);
    assert.ok('row' in resolved);
    return { iteration: `it-${iteration}`, row: resolved.row };
  };
  const [a, b, c, d] = held('w1');
  const items: CompletionItem[] = [
    { position: a![0], token: a![1].token, result: row(a![0], { score: 0.5, cost: 1.5, output: { answer: 'yes' } }) },
    { position: b![0], token: b![1].token, result: row(b![0], { status: 'error', error: 'first: timeout' }) },
  ];
  state = step(state, { type: 'CompleteTasks', run: 'run-1', worker: 'w1', items, nowMs: 2000, now: iso(2000) }, journal);
  // b comes back after its wait (first, before the rest of the sequence) and fails again: dead.
  state = step(state, { type: 'LeaseTasks', run: 'run-1', worker: 'w1', max: 1, tokens: tokens(1), nowMs: 5000, now: iso(5000) }, journal);
  const again = held('w1').find(([position]) => position === b![0]);
  assert.ok(again, 'the retry is leased again');
  state = step(state, { type: 'CompleteTasks', run: 'run-1', worker: 'w1', items: [{ position: b![0], token: again[1].token, result: row(b![0], { status: 'error', error: 'second: timeout' }) }], nowMs: 5100, now: iso(5100) }, journal);
  state = step(state, { type: 'CompleteTasks', run: 'run-1', worker: 'w1', items: [{ position: c![0], token: c![1].token, result: 'rate_limited' }], nowMs: 5200, now: iso(5200) }, journal);
  state = step(state, { type: 'ExtendLeases', runs: ['run-1'], worker: 'w1', nowMs: 6000 }, journal);
  assert.ok(d, 'w1 still holds one');
  return { state, journal };
}

/** A run's state as comparable plain data. */
function runPlain(state: JobState) {
  return [...state.runs.values()].map(({ run, tasks, spending }) => ({ run, tasks: pack(tasks.toPlain()), spending, counts: tasks.counts, nextReadyAt: tasks.nextReadyAt() }));
}

/** What the state decides next (applied to it as they are decided), for comparing two states' behaviour. */
function nextDecisions(state: JobState): JobEvent[] {
  const tokensNext = Array.from({ length: 8 }, (_, i) => `next-${i}`.padEnd(22, '_'));
  const events: JobEvent[] = [];
  const commands: JobCommand[] = [
    { type: 'LeaseTasks', run: 'run-1', worker: 'w3', max: 8, tokens: tokensNext, nowMs: 6500, now: iso(6500) },
    { type: 'ExpireLeases', run: 'run-1', nowMs: 33_000 },
    { type: 'LeaseTasks', run: 'run-1', worker: 'w3', max: 8, tokens: tokensNext, nowMs: 33_000, now: iso(33_000) },
    { type: 'ExpireLeases', run: 'run-1', nowMs: 40_000 },
    { type: 'LeaseTasks', run: 'run-1', worker: 'w3', max: 8, tokens: tokensNext, nowMs: 40_000, now: iso(40_000) },
  ];
  for (const command of commands) {
    const decided = jobDecider.decide(state, command, limits);
    replay(jobDecider, state, decided);
    events.push(...decided);
  }
  return events;
}

test('the mid-run state is what the test means it to be', () => {
  const { state } = jobMidRun();
  const run = state.runs.get('run-1')!;
  assert.equal(run.tasks.counts, { total: 16, queued: 11, leased: 3, done: 1, dead: 1, skipped: 0, cancelled: 0 });
  assert.equal([run.spending.cost, run.spending.executed, run.spending.inFlightAllowed], [1.5, 3, 2]);
  assert.equal([run.run.status, state.job!.status, state.job!.worker_task_id], ['running', 'running', 'run-1']);
  assert.is(run.tasks.lastErrors.size, 1);
  assert.ok(run.tasks.nextReadyAt() !== undefined, 'the rate-limited task waits in the heap');
});

test('a snapshot with a run reads back, through msgpack, to the same run, tasks, leases, heap and spending, which decide the same next', () => {
  const { state } = jobMidRun();
  const { value, newParts } = jobCodec.encode(state, new Set(), jsonText);
  const parts = new Map(newParts.map(([id, part]) => [id, throughStore(part)]));
  const { state: restored } = jobCodec.decode(throughStore(value), (id) => parts.get(id));
  assert.equal(runPlain(restored), runPlain(state));
  assert.equal(restored.job, state.job);
  assert.equal([...restored.iterations.keys()], [...state.iterations.keys()]);
  // The restored state is its own: deciding on it changes nothing of the original's.
  const before = runPlain(state);
  const decided = nextDecisions(restored);
  assert.equal(runPlain(state), before);
  assert.ok(decided.some((event) => event.type === 'TasksLeased') && decided.some((event) => event.type === 'WorkerReleased'));
  assert.equal(nextDecisions(state), decided);
  assert.equal(runPlain(restored), runPlain(state));
});

test('a snapshot is a copy: the run going on after it leaves it as it was', () => {
  const { state } = jobMidRun();
  const { value } = jobCodec.encode(state, new Set(), jsonText);
  const before = pack(value);
  nextDecisions(state);
  assert.equal(pack(value), before);
});

test('a run\'s events journaled compactly read back the same (a completion without its rows), and replay to the same state', () => {
  const { state, journal } = jobMidRun();
  const stored = journal.map((event) => throughStore(runEventCodec.encode(event, jsonText)));
  const leased = stored.find((event: any) => event.type === 'TasksLeased') as any;
  assert.is(typeof leased.tokens, 'string', 'a lease\'s tokens as one string');
  assert.is(leased.tokens.length, 22 * 4);
  const completed = stored.find((event: any) => event.type === 'TasksCompleted') as any;
  assert.equal(Object.keys(completed).sort(), ['cost', 'errors', 'nowMs', 'positions', 'readyAt', 'run', 'to', 'type']);
  assert.equal(completed.errors, [[1, 'first: timeout']]);
  const decoded = stored.map((event) => runEventCodec.decode(event));
  const withoutRows = journal.map((event) =>
    event.type === 'TasksCompleted' ? { ...event, tasks: event.tasks.map((task) => ({ ...task, result: null })) } : event,
  );
  assert.equal(decoded, withoutRows);
  const replayed = replay(jobDecider, jobDecider.initialState(), decoded);
  assert.equal(runPlain(replayed), runPlain(state));
  assert.equal(nextDecisions(replayed), nextDecisions(state));
});

test("a completion's and a release's skipped tasks (a race's stopped candidates') are journaled with them; an event written before skipping existed reads with none", () => {
  const completed = { type: 'TasksCompleted', run: 'r', nowMs: 5, tasks: [
    { position: 1, to: 'retry', readyAt: 9, error: 'boom', cost: 0, result: null, skipped: true },
    { position: 2, to: 'rate_limited', readyAt: 9, error: null, cost: 0, result: null },
  ] } as unknown as JobEvent;
  assert.equal(runEventCodec.decode(throughStore(runEventCodec.encode(completed, jsonText))), completed);
  const released = { type: 'WorkerReleased', run: 'r', worker: 'w', nowMs: 5, skipped: [3, 4] } as unknown as JobEvent;
  assert.equal(runEventCodec.decode(throughStore(runEventCodec.encode(released, jsonText))), released);
  const before = { type: 'TasksCompleted', run: 'r', nowMs: 5, positions: [1], to: [2], readyAt: [9], cost: [0], errors: [[0, 'boom']] };
  assert.equal((runEventCodec.decode(before) as unknown as { tasks: { skipped?: true }[] }).tasks[0]!.skipped, undefined);
});

test('recovery from a snapshot plus the journal after it is the state that was live', () => {
  const { state, journal } = jobMidRun();
  const cut = journal.findIndex((event) => event.type === 'TasksCompleted');
  const head = replay(jobDecider, jobDecider.initialState(), journal.slice(0, cut));
  const { value } = jobCodec.encode(head, new Set(), jsonText);
  const { state: fromSnapshot } = jobCodec.decode(throughStore(value), () => undefined);
  const tail = journal.slice(cut).map((event) => runEventCodec.decode(throughStore(runEventCodec.encode(event, jsonText))));
  const recovered = replay(jobDecider, fromSnapshot, tail);
  assert.equal(runPlain(recovered), runPlain(state));
});

test('a snapshot written before runs reads with none', () => {
  const { state } = jobMidRun();
  const { value } = jobCodec.encode(state, new Set(), jsonText);
  const { runs: _runs, ...older } = value as Record<string, unknown>;
  const { state: restored } = jobCodec.decode(throughStore(older), () => undefined);
  assert.is(restored.runs.size, 0);
  assert.is(restored.iterations.size, 2);
});

test.run();
