// A job, its iterations and its runs: one stream per job. A run's decisions are run.ts's; a job
// with runs follows them (its status moves with theirs).
import type { Decider } from './decider.ts';
import { iterationBlankText, iterationWritableFields, jobBlankText, jobWritableFields, writableOrDefault, type Job, type JobIteration, type JobStatus, type Json, type Timestamp } from './records.ts';
import { conflict, invalid, notFound } from './rejection.ts';
import {
  applyRunEvent, busyIteration, decideCancel, decideCompletion, decideExpiry, decideExtend, decideFailure, decideLease, decideRelease, decideRescoreProgress, decideRescoreStart, decideRetry, isEnded, isWriting,
  newRunState, type Run, type RunCommand, type RunEvent, type RunLimits, type RunState,
} from './run.ts';

export interface JobState {
  job: Job | null;
  iterations: Map<string, JobIteration>;
  /** Its runs, in the order they were created. */
  runs: Map<string, RunState>;
  gone: boolean;
}

export type JobChanges = Partial<Omit<Job, 'id' | 'created_at' | 'updated_at' | 'triggered_by'>>;
export type IterationChanges = Partial<Omit<JobIteration, 'id' | 'created_at' | 'job' | 'project'>>;

/** A new job: every writable field as given, else its default; status pending unless given. */
export function newJob(identity: { id: string; now: Timestamp; project: string; triggeredBy: number | null }, fields: JobChanges = {}): Job {
  return {
    id: identity.id,
    created_at: identity.now,
    updated_at: identity.now,
    ...writableOrDefault(jobWritableFields, fields, jobBlankText),
    project: identity.project,
    status: fields.status ?? 'pending',
    triggered_by: identity.triggeredBy,
  } as Job;
}

/** A new iteration of `job`: every optional field as given, else its default. */
export function newIteration(
  identity: { id: string; now: Timestamp; job: string; project: string; iterationName: string },
  fields: IterationChanges = {},
): JobIteration {
  return {
    id: identity.id,
    created_at: identity.now,
    ...writableOrDefault(iterationWritableFields, fields, iterationBlankText),
    job: identity.job,
    project: identity.project,
    iteration_name: identity.iterationName,
  } as JobIteration;
}

export type JobCommand =
  /** `sent` holds the fields the client sent, so that a sent improvement is kept as sent. */
  | { type: 'CreateJob'; job: Job; sent: JobChanges }
  | { type: 'UpdateJob'; changes: JobChanges; now: Timestamp }
  | { type: 'DeleteJob' }
  | { type: 'AddIteration'; iteration: JobIteration }
  | { type: 'UpdateIteration'; id: string; changes: IterationChanges }
  /** `now` (when given) ends the runs of the iteration as failed at that time. */
  | { type: 'RemoveIteration'; id: string; now: Timestamp }
  | RunCommand;

export type JobEvent =
  | { type: 'JobCreated'; job: Job }
  | { type: 'JobUpdated'; job: Job }
  | { type: 'JobDeleted'; job: Job }
  | { type: 'IterationAdded'; iteration: JobIteration }
  | { type: 'IterationUpdated'; iteration: JobIteration }
  | { type: 'IterationRemoved'; iteration: JobIteration }
  | RunEvent;

/** Where a job may go from each status; the final ones go nowhere. */
const statusMoves: Readonly<Record<JobStatus, readonly JobStatus[]>> = {
  pending: ['running', 'completed', 'failed', 'cancelled'],
  running: ['completed', 'failed', 'cancelled'],
  completed: [],
  failed: [],
  cancelled: [],
};

export function canMove(from: JobStatus, to: JobStatus): boolean {
  return from === to || statusMoves[from].includes(to);
}

/**
 * `improvement` when the client did not send it: best - baseline, recomputed whenever a write sets
 * either score and both are known; otherwise the stored value stands.
 */
export function deriveImprovement(job: Job, sent: JobChanges): number | null {
  if ('improvement' in sent) return job.improvement;
  const scoresTouched = 'best_score' in sent || 'baseline_score' in sent;
  if (scoresTouched && job.best_score !== null && job.baseline_score !== null) {
    return job.best_score - job.baseline_score;
  }
  return job.improvement;
}

/** True when every changed field already holds the value sent. */
export function changesNothing(job: Job, changes: JobChanges): boolean {
  const stored = job as unknown as Record<string, Json>;
  return Object.entries(changes).every(([field, value]) => jsonEqual(stored[field]!, value as Json));
}

function jsonEqual(a: Json, b: Json): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a) || Array.isArray(b)) {
    return Array.isArray(a) && Array.isArray(b) && a.length === b.length && a.every((item, i) => jsonEqual(item, b[i]!));
  }
  const keys = Object.keys(a);
  return keys.length === Object.keys(b).length && keys.every((key) => key in b && jsonEqual(a[key]!, b[key]!));
}

/** The configured limits a job's decisions read. */
export interface JobLimits extends RunLimits {
  iterationsPerJobMax: number;
  runsPerJobMax: number;
}

export const jobDecider: Decider<JobState, JobCommand, JobEvent, JobLimits> = {
  initialState: () => ({ job: null, iterations: new Map(), runs: new Map(), gone: false }),

  decide(state, command, limits) {
    if (command.type === 'CreateJob') {
      if (state.job || state.gone) throw new Error('a job stream is created once');
      const job = { ...command.job, improvement: deriveImprovement(command.job, command.sent) };
      return [{ type: 'JobCreated', job }];
    }
    const job = state.job;
    if (!job) throw notFound();
    switch (command.type) {
      case 'UpdateJob': {
        const status = command.changes.status;
        if (status !== undefined && !canMove(job.status, status)) {
          throw conflict(`A job cannot move from "${job.status}" to "${status}".`);
        }
        // Re-sending what is stored (a worker repeating its status) writes nothing.
        if (changesNothing(job, command.changes)) return [];
        const updated = { ...job, ...command.changes, updated_at: command.now };
        const events: JobEvent[] = [
          { type: 'JobUpdated', job: { ...updated, improvement: deriveImprovement(updated, command.changes) } },
        ];
        // Iterations and runs carry their job's project; a job moved to another project takes them along.
        if (updated.project !== job.project) {
          for (const iteration of state.iterations.values()) {
            events.push({ type: 'IterationUpdated', iteration: { ...iteration, project: updated.project } });
          }
          for (const { run } of state.runs.values()) events.push({ type: 'RunUpdated', run: { ...run, project: updated.project } });
        }
        // A job its client cancels stops its work: its live runs are cancelled with it (in the
        // job's project after this update: a move and a cancel may come in one request).
        if (status === 'cancelled' && job.status !== 'cancelled') {
          for (const run of state.runs.values()) {
            if (!isEnded(run.run)) events.push(...decideCancel({ ...run, run: { ...run.run, project: updated.project } }, command.now));
          }
        }
        return events;
      }
      case 'DeleteJob':
        return [{ type: 'JobDeleted', job }];
      case 'AddIteration':
        if (state.iterations.size >= limits.iterationsPerJobMax) {
          throw invalid({ non_field_errors: [`A job may have at most ${limits.iterationsPerJobMax} iterations.`] });
        }
        return [{ type: 'IterationAdded', iteration: { ...command.iteration, job: job.id, project: job.project } }];
      case 'UpdateIteration': {
        const iteration = state.iterations.get(command.id);
        if (!iteration) throw notFound();
        return [{ type: 'IterationUpdated', iteration: { ...iteration, ...command.changes } }];
      }
      case 'RemoveIteration': {
        const iteration = state.iterations.get(command.id);
        if (!iteration) throw notFound();
        // Its runs cannot go on without it.
        const runs = [...state.runs.values()].filter((run) => run.run.iterations.includes(iteration.id)).map((run) => run.run.id);
        return [{ type: 'IterationRemoved', iteration }, ...withJobStatus(state, job, decideRuns(state, { type: 'FailRuns', runs, now: command.now }, limits), command.now)];
      }
      default:
        return withJobStatus(state, job, withDiscards(state, decideRuns(state, command, limits)), decidedAt(command));
    }
  },

  evolve(state, event) {
    switch (event.type) {
      case 'JobCreated':
      case 'JobUpdated':
        state.job = event.job;
        break;
      case 'JobDeleted':
        state.job = null;
        state.iterations.clear();
        state.gone = true;
        break;
      case 'IterationAdded':
      case 'IterationUpdated':
        state.iterations.set(event.iteration.id, event.iteration);
        break;
      case 'IterationRemoved':
        state.iterations.delete(event.iteration.id);
        break;
      case 'RunCreated':
        state.runs.set(event.run.id, newRunState(event));
        break;
      default:
        applyRunEvent(runOf(state, typeof event.run === 'string' ? event.run : event.run.id), event);
    }
    return state;
  },

  isGone: (state) => state.gone,
};

// ---- runs ----

function runOf(state: JobState, id: string): RunState {
  const run = state.runs.get(id);
  if (!run) throw notFound();
  return run;
}

/** What a run command decides (the lease's and the completion's answers are read from their events). */
function decideRuns(state: JobState, command: RunCommand | { type: 'FailRuns'; runs: readonly string[]; now: string }, limits: JobLimits): RunEvent[] {
  switch (command.type) {
    case 'CreateRun':
      return decideCreate(state, command, limits);
    case 'LeaseTasks':
      return decideLease(runOf(state, command.run), command).events;
    case 'CompleteTasks':
      return decideCompletion(runOf(state, command.run), command, limits).events;
    case 'ExtendLeases':
      return command.runs.flatMap((id) => (state.runs.has(id) ? decideExtend(runOf(state, id), command.worker, command.nowMs) : []));
    case 'ExpireLeases':
      return decideExpiry(runOf(state, command.run), command.nowMs);
    case 'ReleaseWorker':
      return command.runs.flatMap((id) => (state.runs.has(id) ? decideRelease(runOf(state, id), command.worker, command.nowMs) : []));
    case 'CancelRun':
      return decideCancel(runOf(state, command.run), command.now);
    case 'RetryRun': {
      if (state.job?.status === 'cancelled') throw conflict('A cancelled job takes no retry.');
      const retried = runOf(state, command.run);
      // It runs its iterations again: each must still be this job's (not deleted, not moved away).
      const gone = retried.run.iterations.find((id) => !state.iterations.has(id));
      if (gone !== undefined) throw conflict(`Iteration ${gone} is no longer of this job (deleted, or moved to another): this run cannot run again. Start a new run.`);
      // An ended run that runs again must not share an iteration with one live meanwhile.
      if (isEnded(retried.run)) refuseBusyIterations(state, retried.run.id, retried.run.iterations, conflict);
      return decideRetry(retried, command);
    }
    case 'StartRescore': {
      const rescored = runOf(state, command.run);
      // Its results are written again: no other run may be writing them meanwhile.
      refuseBusyIterations(state, rescored.run.id, command.iteration === null ? rescored.run.iterations : [command.iteration], conflict);
      return decideRescoreStart(rescored, command);
    }
    case 'RescoreProgress':
      return decideRescoreProgress(runOf(state, command.run), command);
    case 'FailRuns':
      return command.runs.flatMap((id) => (state.runs.has(id) ? decideFailure(runOf(state, id), command.now) : []));
  }
}

function decideCreate(state: JobState, { run, shape, incumbentValues }: Extract<RunCommand, { type: 'CreateRun' }>, limits: JobLimits): RunEvent[] {
  if (state.job?.status === 'cancelled') throw conflict('A cancelled job takes no new run.');
  if (state.runs.size >= limits.runsPerJobMax) throw invalid({ non_field_errors: [`A job may have at most ${limits.runsPerJobMax} runs.`] });
  const missing = run.iterations.filter((id) => !state.iterations.has(id));
  if (missing.length > 0) throw invalid({ iterations: missing.map((id) => `Invalid pk "${id}" - object does not exist.`) });
  refuseBusyIterations(state, run.id, run.iterations, (message) => invalid({ iterations: [message] }));
  // Its in-flight cap is fixed with it: replaying its events never reads the configuration.
  return [{ type: 'RunCreated', run, shape, inFlightCap: run.max_in_flight ?? limits.tasksPerLeaseMax, incumbentValues }];
}

/**
 * An iteration is written by one run at a time (live, or being rescored): two would write the
 * same result rows (one per datapoint and attempt), and each run's "one result per task" would no
 * longer hold.
 */
/** Refuses when another run writes one of these iterations' results now (live, or being rescored): each has one writer at a time. */
function refuseBusyIterations(state: JobState, run: string, iterations: readonly string[], refusal: (message: string) => Error): void {
  for (const other of state.runs.values()) {
    if (other.run.id === run || !isWriting(other.run)) continue;
    const shared = iterations.find((id) => other.run.iterations.includes(id));
    if (shared) throw refusal(busyIteration(shared, other.run));
  }
}

/**
 * A race's stopped candidates are marked discard in the same commit (worse, or unable to win; a
 * candidate stopped as better is left as it is).
 */
function withDiscards(state: JobState, events: RunEvent[]): JobEvent[] {
  const discarded = events.flatMap((event) =>
    event.type === 'RaceAdvanced' ? event.advance.candidates.filter(({ candidate }) => candidate.state === 'worse' || candidate.state === 'cannot_win').map(({ candidate }) => candidate.iteration) : [],
  );
  const updates = discarded.flatMap((id) => {
    const iteration = state.iterations.get(id);
    return iteration && iteration.status !== 'discard' ? [{ type: 'IterationUpdated' as const, iteration: { ...iteration, status: 'discard' as const } }] : [];
  });
  return [...events, ...updates];
}

/**
 * The events of run decisions, then the job's own move if they make one (updated at `now`): a new run names itself
 * in worker_task_id; the job is running while one of its runs is, pending while one waits for its
 * first lease, and once they have all ended completed (failed if one failed, cancelled if all
 * were). These moves are the service's and may reopen a completed or failed job; a cancelled job
 * stays cancelled.
 */
function withJobStatus(state: JobState, job: Job, events: JobEvent[], now: string): JobEvent[] {
  // Only a run's record moving (created, updated, ended) can move the job: leases and completions
  // alone are most of a job's events and need not look at every run.
  if (!events.some((event) => event.type === 'RunCreated' || event.type === 'RunUpdated' || event.type === 'RunEnded')) return events;
  const runs = new Map([...state.runs].map(([id, run]) => [id, run.run]));
  let workerTaskId = job.worker_task_id;
  for (const event of events) {
    if (event.type === 'RunCreated') workerTaskId = event.run.id;
    if (event.type === 'RunCreated' || event.type === 'RunUpdated' || event.type === 'RunEnded') runs.set(event.run.id, event.run);
  }
  const status = job.status === 'cancelled' ? job.status : statusOfRuns([...runs.values()], job.status) ?? job.status;
  if (status === job.status && workerTaskId === job.worker_task_id) return events;
  return [...events, { type: 'JobUpdated', job: { ...job, status, worker_task_id: workerTaskId, updated_at: now } }];
}

/** When a run command was decided, as the API writes times (a new run: when it was made). */
function decidedAt(command: RunCommand): string {
  if ('now' in command) return command.now;
  if ('nowMs' in command) return new Date(command.nowMs).toISOString();
  return command.run.created_at;
}

/**
 * A job's status from its runs': running while one runs; pending while one waits for its first
 * lease, unless the job is running already (a job does not go back to pending while it has work
 * left: a run queued behind one that ended keeps it running); then failed when one failed,
 * cancelled when every one was cancelled, else completed (a run cancelled beside one completed
 * leaves what was evaluated standing, and the job open to new runs).
 */
function statusOfRuns(runs: readonly Run[], current: JobStatus): JobStatus | undefined {
  if (runs.length === 0) return undefined;
  if (runs.some((run) => run.status === 'running')) return 'running';
  if (runs.some((run) => run.status === 'queued')) return current === 'running' ? 'running' : 'pending';
  if (runs.some((run) => run.status === 'failed')) return 'failed';
  if (runs.every((run) => run.status === 'cancelled')) return 'cancelled';
  return 'completed';
}
