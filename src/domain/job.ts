// A job and its iterations: one stream per job.
import type { Decider } from './decider.ts';
import type { Job, JobIteration, JobStatus, Timestamp } from './records.ts';
import { conflict, notFound } from './rejection.ts';

export interface JobState {
  job: Job | null;
  iterations: Map<string, JobIteration>;
  gone: boolean;
}

export type JobChanges = Partial<Omit<Job, 'id' | 'created_at' | 'updated_at' | 'triggered_by'>>;
export type IterationChanges = Partial<Omit<JobIteration, 'id' | 'created_at' | 'job' | 'project'>>;

export type JobCommand =
  | { type: 'CreateJob'; job: Job }
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
 * either score (or creates the job) and both are known; otherwise the stored value stands.
 */
export function deriveImprovement(job: Job, sent: JobChanges | null): number | null {
  if (sent && 'improvement' in sent) return job.improvement;
  const scoresTouched = sent === null || 'best_score' in sent || 'baseline_score' in sent;
  if (scoresTouched && job.best_score !== null && job.baseline_score !== null) {
    return job.best_score - job.baseline_score;
  }
  return job.improvement;
}

export const jobDecider: Decider<JobState, JobCommand, JobEvent> = {
  initialState: () => ({ job: null, iterations: new Map(), gone: false }),

  decide(state, command) {
    if (command.type === 'CreateJob') {
      if (state.job || state.gone) throw new Error('a job stream is created once');
      const job = { ...command.job, improvement: deriveImprovement(command.job, null) };
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
