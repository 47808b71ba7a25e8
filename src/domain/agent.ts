// An agent and its dataset versions: one stream per agent, so that versions are assigned one
// after another even when datasets are posted concurrently.
import type { Decider } from './decider.ts';
import { agentWritableFields, type Agent, type Dataset, type Timestamp } from './records.ts';
import { invalid, invalidPk, notFound } from './rejection.ts';

export interface AgentState {
  agent: Agent | null;
  datasets: Map<string, Dataset>;
  /** Highest version this agent ever had: versions are never reused, even after a delete. */
  lastVersion: number;
}

export type AgentChanges = Partial<Omit<Agent, 'id' | 'created_at' | 'updated_at'>>;

/** A new agent record: every writable field null unless given (is_deleted false). */
export function newAgent(
  identity: { id: string; now: Timestamp; project: string; name: string; slug: string },
  fields: AgentChanges = {},
): Agent {
  const given = fields as Record<string, unknown>;
  const record: Record<string, unknown> = { id: identity.id, created_at: identity.now, updated_at: identity.now };
  for (const field of agentWritableFields) record[field] = field in given ? given[field] : null;
  Object.assign(record, { project: identity.project, name: identity.name, slug: identity.slug });
  record.is_deleted = given.is_deleted ?? false;
  return record as Agent;
}

export type AgentCommand =
  | { type: 'CreateAgent'; agent: Agent }
  | { type: 'UpdateAgent'; changes: AgentChanges; now: Timestamp }
  | { type: 'DeleteAgent'; now: Timestamp }
  /** `dataset.version` is ignored: the agent assigns it. */
  | { type: 'CreateDataset'; dataset: Dataset; makeActive: boolean }
  | { type: 'DeleteDataset'; id: string; now: Timestamp }
  | { type: 'ActivateDataset'; id: string; now: Timestamp };

export type AgentEvent =
  | { type: 'AgentCreated'; agent: Agent }
  | { type: 'AgentUpdated'; agent: Agent }
  | { type: 'DatasetCreated'; dataset: Dataset }
  | { type: 'DatasetDeleted'; dataset: Dataset }
  /** Datasets carry their agent's project; an agent moved to another project takes them along. */
  | { type: 'DatasetMoved'; id: string; project: string };

export const agentDecider: Decider<AgentState, AgentCommand, AgentEvent> = {
  initialState: () => ({ agent: null, datasets: new Map(), lastVersion: 0 }),

  decide(state, command) {
    if (command.type === 'CreateAgent') {
      if (state.agent) throw new Error('an agent stream is created once');
      if (command.agent.active_dataset !== null) {
        throw invalid({ active_dataset: [invalidPk(command.agent.active_dataset)] });
      }
      return [{ type: 'AgentCreated', agent: command.agent }];
    }
    const agent = state.agent;
    if (!agent) throw notFound();
    switch (command.type) {
      case 'UpdateAgent': {
        const activeDataset = command.changes.active_dataset;
        if (activeDataset != null && !state.datasets.has(activeDataset)) {
          throw invalid({ active_dataset: [invalidPk(activeDataset)] });
        }
        const updated = { ...agent, ...command.changes, updated_at: command.now };
        const events: AgentEvent[] = [{ type: 'AgentUpdated', agent: updated }];
        if (updated.project !== agent.project) {
          for (const id of state.datasets.keys()) events.push({ type: 'DatasetMoved', id, project: updated.project });
        }
        return events;
      }
      case 'DeleteAgent':
        if (agent.is_deleted) throw notFound();
        return [{ type: 'AgentUpdated', agent: { ...agent, is_deleted: true, updated_at: command.now } }];
      case 'CreateDataset': {
        const dataset: Dataset = { ...command.dataset, version: state.lastVersion + 1 };
        const events: AgentEvent[] = [{ type: 'DatasetCreated', dataset }];
        if (command.makeActive) {
          events.push({ type: 'AgentUpdated', agent: { ...agent, active_dataset: dataset.id, updated_at: dataset.created_at } });
        }
        return events;
      }
      case 'DeleteDataset': {
        const dataset = state.datasets.get(command.id);
        if (!dataset) throw notFound();
        const events: AgentEvent[] = [{ type: 'DatasetDeleted', dataset }];
        if (agent.active_dataset === dataset.id) {
          events.push({ type: 'AgentUpdated', agent: { ...agent, active_dataset: null, updated_at: command.now } });
        }
        return events;
      }
      case 'ActivateDataset': {
        if (!state.datasets.has(command.id)) throw notFound();
        if (agent.active_dataset === command.id) return [];
        return [{ type: 'AgentUpdated', agent: { ...agent, active_dataset: command.id, updated_at: command.now } }];
      }
    }
  },

  evolve(state, event) {
    switch (event.type) {
      case 'AgentCreated':
      case 'AgentUpdated':
        state.agent = event.agent;
        break;
      case 'DatasetCreated':
        state.datasets.set(event.dataset.id, event.dataset);
        state.lastVersion = Math.max(state.lastVersion, event.dataset.version);
        break;
      case 'DatasetDeleted':
        state.datasets.delete(event.dataset.id);
        break;
      case 'DatasetMoved': {
        const dataset = state.datasets.get(event.id);
        if (dataset) state.datasets.set(event.id, { ...dataset, project: event.project });
        break;
      }
    }
    return state;
  },

  isGone: () => false,
};
