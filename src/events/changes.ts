// What a committed write means to someone watching: the domain events of one message, turned into
// the changes the event stream announces (pure: the records before the write come in through
// `Before`, nothing is read from the clock or the store).
import type { AgentEvent } from '../domain/agent.ts';
import type { JobEvent } from '../domain/job.ts';
import type { ProjectEvent } from '../domain/project.ts';
import type { Agent, Dataset, Job, JobIteration, Project } from '../domain/records.ts';
import type { RaceCandidate } from '../domain/run-race.ts';
import type { Run } from '../domain/run.ts';

export const changeTypes = [
  'project.created', 'project.updated', 'project.deleted',
  'agent.created', 'agent.updated', 'agent.deleted',
  'dataset.created', 'dataset.deleted', 'dataset.activated',
  'job.created', 'job.updated', 'job.deleted',
  'iteration.created', 'iteration.updated', 'iteration.deleted',
  'spans.ingested',
  'results.written',
  'run.created', 'run.progress', 'run.finished',
  'race.decided',
] as const;

export type ChangeType = (typeof changeTypes)[number];

/** A change with the record it is about (as committed); deletes need only what identifies it. */
export type Change =
  | { type: 'project.created' | 'project.updated'; project: Project }
  /** The project's members just before it went: afterwards nobody belongs to it any more. */
  | { type: 'project.deleted'; project: Project; members: readonly number[] }
  | { type: 'agent.created' | 'agent.updated' | 'agent.deleted'; agent: Agent }
  | { type: 'dataset.created' | 'dataset.deleted'; dataset: Dataset }
  /** The dataset is the read model's once the write is applied (the agent names only its id). */
  | { type: 'dataset.activated'; agent: Agent; datasetId: string }
  | { type: 'job.created' | 'job.updated' | 'job.deleted'; job: Job }
  | { type: 'iteration.created' | 'iteration.updated' | 'iteration.deleted'; iteration: JobIteration }
  /** A run as committed (its counts are the read model's when it is announced). */
  | { type: 'run.created' | 'run.finished'; run: Run }
  /** A race's candidate decided (stopped, or run to the end): its run's job and project are the read model's. */
  | { type: 'race.decided'; run: string; candidate: RaceCandidate };

/** The committed state just before a write, as far as its changes depend on it. */
export interface Before {
  agent(id: string): Agent | undefined;
  members(project: string): readonly number[];
}

export function projectChanges(events: readonly ProjectEvent[], before: Before): Change[] {
  const changes: Change[] = [];
  for (const event of events) {
    if (event.type === 'ProjectCreated') changes.push({ type: 'project.created', project: event.project });
    else if (event.type === 'ProjectUpdated') changes.push({ type: 'project.updated', project: event.project });
    else if (event.type === 'ProjectDeleted') {
      changes.push({ type: 'project.deleted', project: event.project, members: before.members(event.project.id) });
    }
  }
  return changes;
}

/**
 * An agent's events, as lists show the agent: a soft delete is its deletion (the lists drop it),
 * and an update that points active_dataset at another dataset also activates that dataset.
 */
export function agentChanges(id: string, events: readonly AgentEvent[], before: Before): Change[] {
  const changes: Change[] = [];
  let previous = before.agent(id);
  for (const event of events) {
    switch (event.type) {
      case 'AgentCreated':
        if (!event.agent.is_deleted) changes.push({ type: 'agent.created', agent: event.agent });
        previous = event.agent;
        break;
      case 'AgentUpdated': {
        const agent = event.agent;
        if (agent.is_deleted) {
          if (previous && !previous.is_deleted) changes.push({ type: 'agent.deleted', agent });
        } else {
          changes.push({ type: 'agent.updated', agent });
          if (agent.active_dataset !== null && agent.active_dataset !== previous?.active_dataset) {
            changes.push({ type: 'dataset.activated', agent, datasetId: agent.active_dataset });
          }
        }
        previous = agent;
        break;
      }
      case 'DatasetCreated':
        changes.push({ type: 'dataset.created', dataset: event.dataset });
        break;
      case 'DatasetDeleted':
        changes.push({ type: 'dataset.deleted', dataset: event.dataset });
        break;
      case 'DatasetMoved':
        break; // the agent's own update announces the move
    }
  }
  return changes;
}

/** A job's events as changes; a run's progress is announced apart (coalesced), only its creation and end here. */
export function jobChanges(events: readonly JobEvent[]): Change[] {
  return events.flatMap((event): Change[] => {
    switch (event.type) {
      case 'JobCreated':
        return [{ type: 'job.created', job: event.job }];
      case 'JobUpdated':
        return [{ type: 'job.updated', job: event.job }];
      case 'JobDeleted':
        return [{ type: 'job.deleted', job: event.job }];
      case 'IterationAdded':
        return [{ type: 'iteration.created', iteration: event.iteration }];
      case 'IterationUpdated':
        return [{ type: 'iteration.updated', iteration: event.iteration }];
      case 'IterationRemoved':
        return [{ type: 'iteration.deleted', iteration: event.iteration }];
      case 'RunCreated':
        return [{ type: 'run.created', run: event.run }];
      case 'RunEnded':
        return [{ type: 'run.finished', run: event.run }];
      case 'RaceAdvanced':
        return event.advance.candidates.filter(({ candidate }) => candidate.state !== 'live').map(({ candidate }) => ({ type: 'race.decided', run: event.run, candidate }));
      default:
        return [];
    }
  });
}
