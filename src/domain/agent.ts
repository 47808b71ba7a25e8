// An agent and its dataset versions: one stream per agent, so that versions are assigned one
// after another even when datasets are posted concurrently.
import type { Decider } from './decider.ts';
import { agentBlankText, agentDefaults, agentWritableFields, writableOrDefault, type Agent, type Datapoint, type Dataset, type Json, type Timestamp, type Uuid } from './records.ts';
import { invalid, invalidPk, notFound } from './rejection.ts';

export interface AgentState {
  agent: Agent | null;
  datasets: Map<string, Dataset>;
  /** Highest version this agent ever had: versions are never reused, even after a delete. */
  lastVersion: number;
}

/**
 * The agent's eval spec: its evaluation settings with the documented defaults filled in, as
 * `GET /api/agents/{id}/eval_spec/` serves it and as a run scored by `spec` reads it.
 */
export const evalSpecOf = (agent: Agent) => ({
  agent_description: agent.description ?? '',
  agent_path: agent.agent_path ?? '',
  input_schema: agent.input_schema ?? {},
  output_fields: agent.output_fields ?? {},
  structure_weight: agent.structure_weight ?? 20,
  total_points: agent.total_points ?? 100,
  tool_config: agent.tool_config ?? {},
  tool_usage_weight: agent.tool_usage_weight ?? 10,
  consistency_rules: agent.consistency_rules ?? [],
  optimizable_elements: agent.optimizable_elements ?? [],
  fixed_elements: agent.fixed_elements ?? [],
});

export type AgentChanges = Partial<Omit<Agent, 'id' | 'created_at' | 'updated_at'>>;

/**
 * A new agent record: every writable field as given, else its default (text "", the `agentDefaults`
 * booleans and counts, is_deleted false, the rest null).
 */
export function newAgent(
  identity: { id: string; now: Timestamp; project: string; name: string; slug: string },
  fields: AgentChanges = {},
): Agent {
  return {
    id: identity.id,
    created_at: identity.now,
    updated_at: identity.now,
    ...writableOrDefault(agentWritableFields, fields, agentBlankText, agentDefaults),
    project: identity.project,
    name: identity.name,
    slug: identity.slug,
    is_deleted: fields.is_deleted ?? false,
  } as Agent;
}

/** A posted datapoint; an omitted persona reads back as "", other omitted fields as null. */
export interface DatapointInput {
  expected_output?: Json;
  input?: Json;
  order?: number | null;
  persona?: string | null;
  tags?: Json;
}

export type DatasetFields = Partial<Pick<Dataset, 'generator_model' | 'metadata' | 'name' | 'policy_hash' | 'source'>>;

/**
 * A new dataset (its agent assigns the version); `datapointIds[i]` is the id of `points[i]`. A
 * datapoint's order defaults to its index, and the datapoints are kept sorted by order, then
 * position, so that paging through them in their default order never sorts.
 */
export function newDataset(
  identity: { id: Uuid; agent: Uuid; project: Uuid; now: Timestamp; datapointIds: readonly Uuid[] },
  fields: DatasetFields,
  points: readonly DatapointInput[],
): Dataset {
  if (identity.datapointIds.length !== points.length) throw new Error('one id per datapoint');
  const datapoints: Datapoint[] = points.map((point, index) => ({
    id: identity.datapointIds[index]!,
    expected_output: point.expected_output ?? null,
    input: point.input ?? null,
    order: point.order ?? index,
    persona: point.persona === undefined ? '' : point.persona,
    tags: point.tags ?? null,
  }));
  datapoints.sort((a, b) => a.order - b.order); // stable: equal orders keep their position
  return {
    id: identity.id,
    agent: identity.agent,
    project: identity.project,
    created_at: identity.now,
    version: 0,
    generator_model: fields.generator_model === undefined ? '' : fields.generator_model,
    metadata: fields.metadata ?? null,
    name: fields.name === undefined ? '' : fields.name,
    policy_hash: fields.policy_hash === undefined ? '' : fields.policy_hash,
    source: fields.source === undefined ? 'seed' : fields.source,
    num_datapoints: datapoints.length,
    datapoints,
  };
}

export type AgentCommand =
  | { type: 'CreateAgent'; agent: Agent }
  | { type: 'UpdateAgent'; changes: AgentChanges; now: Timestamp }
  | { type: 'DeleteAgent'; now: Timestamp }
  /** `dataset.version`, `agent` and `project` are the agent's to assign. */
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
        if (agent.is_deleted) throw notFound();
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
        if (agent.is_deleted) throw invalid({ agent: [invalidPk(agent.id)] });
        const dataset: Dataset = { ...command.dataset, agent: agent.id, project: agent.project, version: state.lastVersion + 1 };
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
