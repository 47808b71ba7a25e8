// A job and its iterations: one stream per job.
import type { Decider } from './decider.ts';
import { iterationBlankText, iterationWritableFields, jobBlankText, jobWritableFields, writableOrDefault, type Job, type JobIteration, type JobStatus, type Json, type Timestamp } from './records.ts';
import { conflict, invalid, notFound } from './rejection.ts';

export interface JobState {
  job: Job | null;
  iterations: Map<string, JobIteration>;
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
  | { type: 'RemoveIteration'; id: string };

export type JobEvent =
  | { type: 'JobCreated'; job: Job }
  | { type: 'JobUpdated'; job: Job }
  | { type: 'JobDeleted'; job: Job }
  | { type: 'IterationAdded'; iteration: JobIteration }
  | { type: 'IterationUpdated'; iteration: JobIteration }
  | { type: 'IterationRemoved'; iteration: JobIteration };

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
export interface JobLimits {
  iterationsPerJobMax: number;
}

export const jobDecider: Decider<JobState, JobCommand, JobEvent, JobLimits> = {
  initialState: () => ({ job: null, iterations: new Map(), gone: false }),

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
        // Iterations carry their job's project; a job moved to another project takes them along.
        if (updated.project !== job.project) {
          for (const iteration of state.iterations.values()) {
            events.push({ type: 'IterationUpdated', iteration: { ...iteration, project: updated.project } });
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
        return [{ type: 'IterationRemoved', iteration }];
      }
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
    }
    return state;
  },

  isGone: (state) => state.gone,
};
