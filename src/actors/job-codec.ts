// How a job's state is snapshotted. A job grows to many thousands of iterations, and encoding them
// all in every snapshot made each snapshot of a large job stall its writes for tens of
// milliseconds. Its iterations are stored instead in parts of `iterationsPerPart`, in insertion
// order: a full part is written once and referenced by later snapshots for as long as it holds
// the same records, so a snapshot encodes the job, a reference per part, the iterations of the
// last, unfilled part and any part whose records changed (an update or removal), and checks the
// other records by identity. Records are immutable, so an unchanged record is the same object.
//
// Iterations are stored without `job` and `project` (both are the job's own) and restored by
// reference: a million iterations then hold two strings fewer each. A snapshot written before
// parts holds every iteration inline and reads as it did.
import { jobDecider, type JobState } from '../domain/job.ts';
import type { Job, JobIteration } from '../domain/records.ts';
import type { JobEvent } from '../domain/job.ts';
import type { CompletedTask, Run, RunSpending, RunState } from '../domain/run.ts';
import { raceFromPlain, raceToPlain, type RaceStatePlain } from '../domain/run-race.ts';
import { RunTasks, type RunTasksPlain } from '../domain/run-tasks.ts';
import type { EventCodec, SnapshotCodec } from './actor-kind.ts';

/**
 * Iterations per part. A changed record costs its part's re-encoding at the next snapshot, and a
 * snapshot lists one reference per part: 128 keeps both small (a part is about 40 KB).
 */
export const iterationsPerPart = 128;

type StoredIteration = Omit<JobIteration, 'job' | 'project'>;

interface PartedSnapshot {
  job: Job | null;
  /** Part ids, in order; each part holds `iterationsPerPart` iterations. */
  parts: string[];
  /** The iterations after the last full part. */
  tail: StoredIteration[];
  /** Its runs with their task columns (absent in snapshots written before runs). */
  runs?: StoredRun[];
}

/** A run as a snapshot holds it. */
interface StoredRun {
  run: Run;
  tasks: RunTasksPlain;
  spending: RunSpending;
  race?: RaceStatePlain | null;
}

/**
 * Tasks of a run that count as one item of a snapshot (snapshotItems): a run's columns are encoded
 * whole (about 2.4 bytes a task: 483 KB for 200,000 tasks), so a job with a large run is
 * snapshotted after as many journal entries as half its tasks / this, whatever the run's size:
 * about 1.2 KB of snapshot per journal entry, two entries a task when workers lease one at a time.
 * Measured against 16 times fewer snapshots (runs bench, one task a lease): no difference in
 * tasks/s or CPU a task; fewer would mean more entries to replay when the service starts.
 */
const runTasksPerSnapshotItem = 256;

/** What a job's runs add to its snapshot's size, in items. */
export function runSnapshotItems(state: JobState): number {
  let items = 0;
  for (const run of state.runs.values()) items += Math.ceil(run.tasks.total / runTasksPerSnapshotItem);
  return items;
}

/** A snapshot written before parts. */
interface WholeSnapshot {
  job: Job | null;
  iterations: StoredIteration[];
}

/** The records each stored part of a state holds, in order; a part is named by its first iteration's id. */
type Layout = Map<string, readonly JobIteration[]>;

/**
 * What the last snapshot encoded or decoded of each live state's iterations. A state reloaded
 * after a failed commit is a new Map, whose layout is unknown: its parts are all written again.
 */
const layouts = new WeakMap<Map<string, JobIteration>, Layout>();

export const jobCodec: SnapshotCodec<JobState> = {
  encode(state, storedParts) {
    const previous = layouts.get(state.iterations);
    const layout: Layout = new Map();
    const newParts: [string, unknown][] = [];
    const records = state.iterations.values();
    for (let full = Math.floor(state.iterations.size / iterationsPerPart); full > 0; full--) {
      const first = records.next().value!;
      const stored = storedParts.has(first.id) ? previous?.get(first.id) : undefined;
      const part = partStartingWith(first, records, stored);
      if (part !== stored) newParts.push([first.id, part.map(storedIteration)]);
      layout.set(first.id, part);
    }
    layouts.set(state.iterations, layout);
    const staleParts = [...storedParts].filter((id) => !layout.has(id));
    const runs = [...state.runs.values()].map(storedRun);
    const value: PartedSnapshot = { job: state.job, parts: [...layout.keys()], tail: [...records].map(storedIteration), runs };
    return { value, newParts, staleParts };
  },

  decode(value, readPart) {
    const state = jobDecider.initialState();
    const snapshot = value as PartedSnapshot | WholeSnapshot;
    state.job = snapshot.job;
    const job = snapshot.job;
    if (!job) return { state, storedParts: new Set() };
    const restore = (stored: StoredIteration[]) => stored.map((iteration) => restoreIteration(iteration, job));
    if ('iterations' in snapshot) {
      for (const iteration of restore(snapshot.iterations)) state.iterations.set(iteration.id, iteration);
      return { state, storedParts: new Set() };
    }
    const layout: Layout = new Map();
    for (const id of snapshot.parts) {
      const records = restore(readPart(id) as StoredIteration[]);
      for (const iteration of records) state.iterations.set(iteration.id, iteration);
      layout.set(id, records);
    }
    for (const iteration of restore(snapshot.tail)) state.iterations.set(iteration.id, iteration);
    layouts.set(state.iterations, layout);
    for (const stored of snapshot.runs ?? []) state.runs.set(stored.run.id, restoredRun(stored));
    return { state, storedParts: new Set(snapshot.parts) };
  },
};

/**
 * The part that starts with `first`: the stored one itself when the next records are the same
 * objects, else its current records; either way the iterator ends past the part.
 */
function partStartingWith(first: JobIteration, records: Iterator<JobIteration>, stored: readonly JobIteration[] | undefined): readonly JobIteration[] {
  if (stored?.[0] !== first) return [first, ...take(records, iterationsPerPart - 1)];
  for (let i = 1; i < iterationsPerPart; i++) {
    const record = records.next().value!;
    if (record !== stored[i]) return [...stored.slice(0, i), record, ...take(records, iterationsPerPart - i - 1)];
  }
  return stored;
}

/** The next `count` values of an iterator. */
function take<T>(values: Iterator<T>, count: number): T[] {
  const taken: T[] = [];
  for (let i = 0; i < count; i++) taken.push(values.next().value!);
  return taken;
}

function storedIteration({ job: _job, project: _project, ...stored }: JobIteration): StoredIteration {
  return stored;
}

/**
 * Completed in place, not copied (recovery restores a million of them): LMDB decodes each afresh,
 * and a MemoryKv part holds the codec's own objects (storedIteration's), which only the state
 * being restored will hold.
 */
function restoreIteration(stored: StoredIteration, job: Job): JobIteration {
  const iteration = stored as { -readonly [K in keyof JobIteration]: JobIteration[K] };
  iteration.job = job.id;
  iteration.project = job.project;
  return iteration;
}

function storedRun({ run, tasks, spending, race }: RunState): StoredRun {
  return { run, tasks: tasks.toPlain(), spending: { ...spending }, race: race && raceToPlain(race) };
}

function restoredRun(stored: StoredRun): RunState {
  const tasks = RunTasks.fromPlain(stored.tasks);
  const race = stored.race ? raceFromPlain(stored.race, stored.run.iterations, tasks.shape.datapoints) : null;
  return { run: stored.run, tasks, spending: { ...stored.spending }, race };
}

// ---- a run's events in the journal ----
//
// A lease or a completion concerns up to a thousand tasks, and is journaled with every lease and
// completion: as parallel lists (positions, where each went, ...) rather than an object per task,
// and a lease's tokens as one string (each is 22 characters), msgpack writes them several times
// faster. A completed task's result row is not journaled at all: it is written to the results
// store in the same commit.

const completedTo: readonly CompletedTask['to'][] = ['done', 'dead', 'retry', 'rate_limited'];
const tokenChars = 22;

type Leased = Extract<JobEvent, { type: 'TasksLeased' }>;
type Completed = Extract<JobEvent, { type: 'TasksCompleted' }>;

interface StoredLeased extends Omit<Leased, 'tokens'> {
  tokens: string;
}

interface StoredCompleted extends Omit<Completed, 'tasks'> {
  positions: number[];
  to: number[];
  readyAt: number[];
  cost: number[];
  /** [index in the lists, error] of the tasks that failed. */
  errors: [number, string][];
  /** Indexes in the lists of the tasks skipped instead of queued again (absent: none, as in events written before). */
  skipped?: number[];
}

export const runEventCodec: EventCodec<JobEvent> = {
  encode(event) {
    if (event.type === 'TasksLeased') return { ...event, tokens: event.tokens.join('') } satisfies StoredLeased;
    if (event.type !== 'TasksCompleted') return event;
    const { tasks } = event;
    const errors: [number, string][] = [];
    tasks.forEach((task, i) => task.error !== null && errors.push([i, task.error]));
    const skipped: number[] = [];
    tasks.forEach((task, i) => task.skipped && skipped.push(i));
    return {
      type: event.type,
      run: event.run,
      nowMs: event.nowMs,
      positions: tasks.map((task) => task.position),
      to: tasks.map((task) => completedTo.indexOf(task.to)),
      readyAt: tasks.map((task) => task.readyAt),
      cost: tasks.map((task) => task.cost),
      errors,
      ...(skipped.length > 0 ? { skipped } : {}),
    } satisfies StoredCompleted;
  },
  decode(stored) {
    const event = stored as JobEvent | StoredLeased | StoredCompleted;
    if (event.type === 'TasksLeased' && typeof event.tokens === 'string') {
      const joined = event.tokens;
      const tokens = Array.from({ length: joined.length / tokenChars }, (_, i) => joined.slice(i * tokenChars, (i + 1) * tokenChars));
      return { ...event, tokens };
    }
    if (event.type !== 'TasksCompleted' || !('positions' in event)) return event as JobEvent;
    const errors = new Map(event.errors);
    const skipped = new Set(event.skipped ?? []);
    const tasks = event.positions.map((position, i): CompletedTask => ({
      position,
      to: completedTo[event.to[i]!]!,
      readyAt: event.readyAt[i]!,
      error: errors.get(i) ?? null,
      cost: event.cost[i]!,
      result: null,
      ...(skipped.has(i) ? { skipped: true as const } : {}),
    }));
    return { type: event.type, run: event.run, nowMs: event.nowMs, tasks };
  },
};
