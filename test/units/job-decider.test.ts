import { test } from 'uvu';
import { defaultLimits } from '../../src/config.ts';
import * as assert from 'uvu/assert';
import { jobKind } from '../../src/actors/kinds.ts';
import { replay } from '../../src/domain/decider.ts';
import {
  canMove, changesNothing, deriveImprovement, jobDecider, newIteration, newJob,
  type JobChanges, type JobCommand, type JobEvent, type JobState,
} from '../../src/domain/job.ts';
import { jobStatuses, type JobStatus } from '../../src/domain/records.ts';
import { rejection, snapshotRoundTrip, step as decide, storedEvents } from '../helpers/deciders.ts';

const now = '2026-01-01T00:00:00.000Z';
const later = '2026-01-01T00:00:05.000Z';

const step = (state: JobState, command: JobCommand) => decide(jobDecider, state, command);

function created(fields: JobChanges = {}): JobState {
  const job = newJob({ id: 'job-1', now, project: 'p1', triggeredBy: 7 }, fields);
  return step(jobDecider.initialState(), { type: 'CreateJob', job, sent: fields }).state;
}

const iteration = (id: string, fields = {}) =>
  newIteration({ id, now, job: 'ignored', project: 'ignored', iterationName: id }, fields);

function withIterations(count: number, fields: JobChanges = {}): JobState {
  let state = created(fields);
  for (let i = 0; i < count; i++) state = step(state, { type: 'AddIteration', iteration: iteration(`it-${i}`) }).state;
  return state;
}

test('a new job has omitted text fields blank, other writable fields null, a pending status and the caller as triggered_by', () => {
  const job = newJob({ id: 'j', now, project: 'p', triggeredBy: 3 });
  assert.is(job.status, 'pending');
  assert.is(job.triggered_by, 3);
  assert.is(job.project, 'p');
  assert.is(job.created_at, now);
  assert.is(job.updated_at, now);
  for (const field of ['agent', 'result', 'best_score', 'improvement', 'job_type'] as const) assert.is(job[field], null, field);
  for (const field of ['analyzer_model', 'prompt_slug', 'report_markdown'] as const) assert.is(job[field], '', field);
  assert.is(newJob({ id: 'j', now, project: 'p', triggeredBy: 3 }, { prompt_slug: null }).prompt_slug, null);
  assert.is(newJob({ id: 'j', now, project: 'p', triggeredBy: 3 }, { status: 'running' }).status, 'running');
});

test('a new iteration belongs to the given job and project whatever the fields say', () => {
  const made = newIteration({ id: 'i', now, job: 'j', project: 'p', iterationName: 'n' }, { order: 4, status: 'keep' });
  assert.equal(made, {
    id: 'i', created_at: now, iteration_name: 'n', job: 'j', agent_code: '', avg_score: null, description: '',
    dimension_scores: null, order: 4, status: 'keep', project: 'p',
  });
});

test('creating a job derives improvement from both scores unless improvement was sent', () => {
  assert.is(created({ best_score: 0.75, baseline_score: 0.5 }).job!.improvement, 0.25);
  assert.is(created({ best_score: 0.75, baseline_score: 0.5, improvement: 9 }).job!.improvement, 9);
  assert.is(created({ best_score: 0.75, baseline_score: 0.5, improvement: null }).job!.improvement, null);
  assert.is(created({ best_score: 0.75 }).job!.improvement, null);
});

test('an update recomputes improvement only when it touches a score and both are known', () => {
  const job = created({ best_score: 1, baseline_score: 0.5, improvement: 4 }).job!;
  assert.is(deriveImprovement({ ...job, prompt_slug: 'x' }, { prompt_slug: 'x' }), 4);
  assert.is(deriveImprovement({ ...job, best_score: 2 }, { best_score: 2 }), 1.5);
  assert.is(deriveImprovement({ ...job, baseline_score: null }, { baseline_score: null }), 4);
  assert.is(deriveImprovement({ ...job, best_score: 2, improvement: 0 }, { best_score: 2, improvement: 0 }), 0);
});

test('status moves: forward from pending and running, nowhere from a final status, same status always', () => {
  const forward: Record<JobStatus, JobStatus[]> = {
    pending: ['running', 'completed', 'failed', 'cancelled'],
    running: ['completed', 'failed', 'cancelled'],
    completed: [],
    failed: [],
    cancelled: [],
  };
  for (const from of jobStatuses) {
    for (const to of jobStatuses) {
      const allowed = from === to || forward[from].includes(to);
      assert.is(canMove(from, to), allowed, `${from} -> ${to}`);
      const state = created({ status: from });
      const decide = () => jobDecider.decide(state, { type: 'UpdateJob', changes: { status: to }, now: later }, defaultLimits);
      if (allowed) assert.ok(Array.isArray(decide()), `${from} -> ${to}`);
      else assert.equal(rejection(decide), { kind: 'conflict', detail: `A job cannot move from "${from}" to "${to}".` });
    }
  }
});

test('an allowed move updates the status and updated_at; the same status decides nothing', () => {
  const state = created({ status: 'running' });
  const [event] = jobDecider.decide(state, { type: 'UpdateJob', changes: { status: 'completed' }, now: later }, defaultLimits);
  assert.is(event!.type, 'JobUpdated');
  assert.equal((event as Extract<JobEvent, { type: 'JobUpdated' }>).job, { ...state.job!, status: 'completed', updated_at: later });
  assert.equal(jobDecider.decide(state, { type: 'UpdateJob', changes: { status: 'running' }, now: later }, defaultLimits), []);
});

test('an update that only repeats stored values, JSON included, changes nothing', () => {
  const state = created({ result: { a: [1, { b: null }] }, prompt_slug: 's' });
  assert.ok(changesNothing(state.job!, { result: { a: [1, { b: null }] }, prompt_slug: 's' }));
  assert.not.ok(changesNothing(state.job!, { result: { a: [1, { b: 0 }] } }));
  assert.not.ok(changesNothing(state.job!, { result: { a: [1, { b: null }], c: 1 } }));
  assert.not.ok(changesNothing(state.job!, { result: [1] }));
  assert.not.ok(changesNothing(state.job!, { prompt_slug: null }));
  assert.ok(changesNothing(state.job!, {}));
});

test('a job moved to another project carries its iterations there', () => {
  const state = withIterations(2);
  const { state: moved, events } = step(state, { type: 'UpdateJob', changes: { project: 'p2' }, now: later });
  assert.equal(events.map((event) => event.type), ['JobUpdated', 'IterationUpdated', 'IterationUpdated']);
  assert.is(moved.job!.project, 'p2');
  for (const item of moved.iterations.values()) assert.is(item.project, 'p2');
});

test('deciding never changes the state it reads', () => {
  const state = withIterations(1, { best_score: 1 });
  const before = JSON.stringify({ job: state.job, iterations: [...state.iterations.values()] });
  jobDecider.decide(state, { type: 'UpdateJob', changes: { project: 'p2', best_score: 3 }, now: later }, defaultLimits);
  jobDecider.decide(state, { type: 'AddIteration', iteration: iteration('new') }, { ...defaultLimits, iterationsPerJobMax: 10 });
  jobDecider.decide(state, { type: 'RemoveIteration', id: 'it-0', now }, defaultLimits);
  jobDecider.decide(state, { type: 'DeleteJob' }, defaultLimits);
  assert.is(JSON.stringify({ job: state.job, iterations: [...state.iterations.values()] }), before);
});

test('an added iteration takes its job and project from the job, up to the limit', () => {
  let state = created();
  const [event] = jobDecider.decide(state, { type: 'AddIteration', iteration: iteration('a') }, { ...defaultLimits, iterationsPerJobMax: 1 });
  const added = (event as Extract<JobEvent, { type: 'IterationAdded' }>).iteration;
  assert.is(added.job, 'job-1');
  assert.is(added.project, 'p1');
  state = replay(jobDecider, state, [event!]);
  assert.equal(rejection(() => jobDecider.decide(state, { type: 'AddIteration', iteration: iteration('b') }, { ...defaultLimits, iterationsPerJobMax: 1 })), {
    kind: 'invalid',
    fields: { non_field_errors: ['A job may have at most 1 iterations.'] },
  });
});

test('iterations are updated and removed by id; an unknown id is not found', () => {
  let state = withIterations(2);
  state = step(state, { type: 'UpdateIteration', id: 'it-1', changes: { status: 'keep', avg_score: 0.5 } }).state;
  assert.equal({ ...state.iterations.get('it-1')! }, { ...iteration('it-1'), job: 'job-1', project: 'p1', status: 'keep', avg_score: 0.5 });
  state = step(state, { type: 'RemoveIteration', id: 'it-0', now }).state;
  assert.equal([...state.iterations.keys()], ['it-1']);
  assert.equal(rejection(() => jobDecider.decide(state, { type: 'UpdateIteration', id: 'it-0', changes: {} }, defaultLimits)), { kind: 'not_found' });
  assert.equal(rejection(() => jobDecider.decide(state, { type: 'RemoveIteration', id: 'nope', now }, defaultLimits)), { kind: 'not_found' });
});

test('a deleted job ends its stream: iterations go with it and later commands are not found', () => {
  const { state, events } = step(withIterations(3), { type: 'DeleteJob' });
  assert.is(events[0]!.type, 'JobDeleted');
  assert.ok(jobDecider.isGone(state));
  assert.is(state.job, null);
  assert.is(state.iterations.size, 0);
  assert.equal(rejection(() => jobDecider.decide(state, { type: 'UpdateJob', changes: {}, now }, defaultLimits)), { kind: 'not_found' });
  assert.equal(rejection(() => jobDecider.decide(state, { type: 'AddIteration', iteration: iteration('x') }, { ...defaultLimits, iterationsPerJobMax: 9 })), { kind: 'not_found' });
  assert.throws(() => jobDecider.decide(state, { type: 'CreateJob', job: newJob({ id: 'job-1', now, project: 'p', triggeredBy: 1 }), sent: {} }, defaultLimits));
});

test('recovery rebuilds the same state, from the stored events or from a snapshot', () => {
  const commands: JobCommand[] = [
    { type: 'AddIteration', iteration: iteration('a', { order: 2 }) },
    { type: 'AddIteration', iteration: iteration('b') },
    { type: 'UpdateJob', changes: { status: 'running', best_score: 0.9, baseline_score: 0.4 }, now: later },
    { type: 'UpdateIteration', id: 'a', changes: { status: 'discard' } },
    { type: 'RemoveIteration', id: 'b', now },
    { type: 'UpdateJob', changes: { project: 'p9' }, now: later },
  ];
  let state = created();
  const history: JobEvent[] = [{ type: 'JobCreated', job: state.job! }];
  for (const command of commands) {
    const result = step(state, command);
    state = result.state;
    history.push(...result.events);
  }
  for (const rebuilt of [replay(jobDecider, jobDecider.initialState(), storedEvents(jobKind, history)), snapshotRoundTrip(jobKind, state)]) {
    assert.equal(rebuilt.job, state.job);
    assert.equal([...rebuilt.iterations.entries()], [...state.iterations.entries()]);
    assert.is(rebuilt.job!.improvement, 0.5);
  }
});

test.run();
