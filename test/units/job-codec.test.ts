// Job snapshots in parts (src/actors/job-codec.ts): full parts are written once and referenced
// while they hold the same records; a changed or shifted part is written again; the last,
// unfilled part stays inline; snapshots written before parts still read.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { iterationsPerPart, jobCodec } from '../../src/actors/job-codec.ts';
import { replay } from '../../src/domain/decider.ts';
import { jobDecider, newIteration, newJob, type JobCommand, type JobState } from '../../src/domain/job.ts';
import { defaultLimits } from '../../src/config.ts';

const now = '2026-01-01T00:00:00.000Z';
const noText = () => '';

function run(state: JobState, command: JobCommand): JobState {
  return replay(jobDecider, state, jobDecider.decide(state, command, { ...defaultLimits, iterationsPerJobMax: 100_000 }));
}

function jobWith(count: number): JobState {
  const job = newJob({ id: 'job-1', now, project: 'p1', triggeredBy: 1 });
  let state = run(jobDecider.initialState(), { type: 'CreateJob', job, sent: {} });
  for (let i = 0; i < count; i++) {
    const iteration = newIteration({ id: `it-${i}`, now, job: 'job-1', project: 'p1', iterationName: `it ${i}` }, { order: i });
    state = run(state, { type: 'AddIteration', iteration });
  }
  return state;
}

/** A store of parts as the actor keeps one: what each snapshot wrote, less what it made stale. */
class Parts {
  readonly values = new Map<string, unknown>();

  snapshot(state: JobState) {
    const encoded = jobCodec.encode(state, new Set(this.values.keys()), noText);
    for (const [id, value] of encoded.newParts) this.values.set(id, structuredClone(value));
    for (const id of encoded.staleParts) this.values.delete(id);
    return { ...encoded, written: encoded.newParts.map(([id]) => id) };
  }

  read(value: unknown): JobState {
    return jobCodec.decode(structuredClone(value), (id) => structuredClone(this.values.get(id))).state;
  }
}

const ids = (state: JobState) => [...state.iterations.keys()];

test('full parts are written once, the unfilled last part stays in the snapshot', () => {
  const parts = new Parts();
  const state = jobWith(2 * iterationsPerPart + 5);
  const first = parts.snapshot(state);
  assert.equal(first.written, ['it-0', `it-${iterationsPerPart}`]);
  assert.is((first.value as { tail: unknown[] }).tail.length, 5);
  const grown = run(state, { type: 'AddIteration', iteration: newIteration({ id: 'it-new', now, job: 'job-1', project: 'p1', iterationName: 'new' }) });
  const second = parts.snapshot(grown);
  assert.equal([second.written, second.staleParts], [[], []], 'unchanged parts are referenced, not written');
  const read = parts.read(second.value);
  assert.equal(ids(read), ids(grown));
  assert.equal([...read.iterations.values()].map((iteration) => [iteration.job, iteration.project]).slice(0, 2), [['job-1', 'p1'], ['job-1', 'p1']]);
  assert.equal(read.iterations.get('it-7'), grown.iterations.get('it-7'));
});

test('an updated iteration writes its part again, under the same id, with the new record', () => {
  const parts = new Parts();
  let state = jobWith(3 * iterationsPerPart);
  parts.snapshot(state);
  const changed = `it-${iterationsPerPart + 3}`;
  state = run(state, { type: 'UpdateIteration', id: changed, changes: { status: 'keep', avg_score: 0.9 } });
  const snapshot = parts.snapshot(state);
  assert.equal(snapshot.written, [`it-${iterationsPerPart}`]);
  assert.equal(snapshot.staleParts, []);
  assert.is(parts.read(snapshot.value).iterations.get(changed)!.avg_score, 0.9);
});

test('a removed iteration shifts the parts after it: they are written again and the stale ones dropped', () => {
  const parts = new Parts();
  let state = jobWith(3 * iterationsPerPart + 1);
  parts.snapshot(state);
  state = run(state, { type: 'RemoveIteration', id: `it-${iterationsPerPart + 1}`, now });
  const snapshot = parts.snapshot(state);
  assert.equal(snapshot.written, [`it-${iterationsPerPart}`, `it-${2 * iterationsPerPart + 1}`]);
  assert.equal(snapshot.staleParts, [`it-${2 * iterationsPerPart}`]);
  assert.equal([...parts.values.keys()].sort(), ['it-0', `it-${iterationsPerPart}`, `it-${2 * iterationsPerPart + 1}`].sort());
  assert.equal(ids(parts.read(snapshot.value)), ids(state));
});

test('a state read back from parts references them, and a state whose layout is unknown writes them all', () => {
  const parts = new Parts();
  const state = jobWith(2 * iterationsPerPart);
  const first = parts.snapshot(state);
  const recovered = parts.read(first.value);
  assert.equal(parts.snapshot(recovered).written, [], 'a recovered state knows its parts');
  // As after a failed commit: the actor reloads into a new state, and nothing of the old layout is trusted.
  const rebuilt = jobWith(2 * iterationsPerPart);
  assert.equal(parts.snapshot(rebuilt).written, ['it-0', `it-${iterationsPerPart}`]);
});

test('a snapshot written before parts, with every iteration inline, still reads', () => {
  const state = jobWith(3);
  const whole = { job: state.job, iterations: [...state.iterations.values()].map(({ job: _job, project: _project, ...stored }) => stored) };
  const read = jobCodec.decode(structuredClone(whole), () => assert.unreachable('no parts')).state;
  assert.equal(ids(read), ['it-0', 'it-1', 'it-2']);
  assert.equal(read.iterations.get('it-1'), state.iterations.get('it-1'));
});

test('a deleted job has nothing to store', () => {
  const state = run(jobWith(iterationsPerPart + 1), { type: 'DeleteJob' });
  const encoded = jobCodec.encode(state, new Set(['it-0']), noText);
  assert.equal([encoded.newParts, encoded.staleParts], [[], ['it-0']]);
});

test.run();
