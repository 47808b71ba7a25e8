import { test } from 'uvu';
import { defaultLimits } from '../../src/config.ts';
import * as assert from 'uvu/assert';
import { agentKind } from '../../src/actors/kinds.ts';
import { agentDecider, newAgent, newDataset, type AgentCommand, type AgentEvent, type AgentState } from '../../src/domain/agent.ts';
import { replay } from '../../src/domain/decider.ts';
import { rejection, snapshotRoundTrip, step as decide, storedEvents } from '../helpers/deciders.ts';

const now = '2026-01-01T00:00:00.000Z';
const later = '2026-01-02T00:00:00.000Z';

const step = (state: AgentState, command: AgentCommand) => decide(agentDecider, state, command);

const agent = (fields = {}) => newAgent({ id: 'a1', now, project: 'p1', name: 'Agent', slug: 'agent' }, fields);

const dataset = (id: string) => newDataset({ id, agent: 'a1', project: 'p1', now, datapointIds: [`${id}-d1`] }, { name: id }, [{}]);

function created(): AgentState {
  return step(agentDecider.initialState(), { type: 'CreateAgent', agent: agent() }).state;
}

function withDatasets(...ids: string[]): AgentState {
  let state = created();
  for (const id of ids) state = step(state, { type: 'CreateDataset', dataset: dataset(id), makeActive: false }).state;
  return state;
}

test('a new agent has omitted text fields blank, the model\'s defaults, other optional fields null, and given fields kept', () => {
  const record = agent({ model: 'gpt', tags: ['x'], id: 'ignored-by-type', display_name: null });
  assert.is(record.id, 'a1');
  assert.is(record.model, 'gpt');
  assert.equal(record.tags, ['x']);
  assert.is(record.description, '');
  assert.is(record.display_name, null);
  assert.is(record.agent_description, null);
  assert.is(record.dataset_size, 0);
  assert.is(record.dataset_has_expected_output, false);
  assert.is(record.active_dataset, null);
  assert.is(record.is_deleted, false);
  assert.is(record.created_at, now);
  assert.is(record.updated_at, now);
});

test('creating an agent with an active dataset is refused: a new agent has no datasets', () => {
  const command: AgentCommand = { type: 'CreateAgent', agent: agent({ active_dataset: 'd9' }) };
  assert.equal(rejection(() => agentDecider.decide(agentDecider.initialState(), command, defaultLimits)), {
    kind: 'invalid',
    fields: { active_dataset: ['Invalid pk "d9" - object does not exist.'] },
  });
});

test('every command but CreateAgent on an empty stream is not found', () => {
  const empty = agentDecider.initialState();
  for (const command of [
    { type: 'UpdateAgent', changes: {}, now },
    { type: 'DeleteAgent', now },
    { type: 'CreateDataset', dataset: dataset('d1'), makeActive: false },
    { type: 'DeleteDataset', id: 'd1', now },
    { type: 'ActivateDataset', id: 'd1', now },
  ] as AgentCommand[]) {
    assert.equal(rejection(() => agentDecider.decide(empty, command, defaultLimits)), { kind: 'not_found' }, command.type);
  }
});

test('a second dataset for the same agent gets version 2, with the agent and project of the agent', () => {
  let state = created();
  const first = step(state, { type: 'CreateDataset', dataset: dataset('d1'), makeActive: false });
  state = first.state;
  const foreign = { ...dataset('d2'), agent: 'someone-else', project: 'elsewhere', version: 99 };
  const second = step(state, { type: 'CreateDataset', dataset: foreign, makeActive: false });
  assert.equal(first.events.map((event) => event.type), ['DatasetCreated']);
  const made = second.events[0] as Extract<AgentEvent, { type: 'DatasetCreated' }>;
  assert.is(made.dataset.version, 2);
  assert.is(made.dataset.agent, 'a1');
  assert.is(made.dataset.project, 'p1');
  assert.is(second.state.lastVersion, 2);
});

test('versions are never reused: deleting the newest version does not lower the next one', () => {
  let state = withDatasets('d1', 'd2');
  state = step(state, { type: 'DeleteDataset', id: 'd2', now }).state;
  const next = step(state, { type: 'CreateDataset', dataset: dataset('d3'), makeActive: false });
  assert.is((next.events[0] as Extract<AgentEvent, { type: 'DatasetCreated' }>).dataset.version, 3);
  assert.equal([...next.state.datasets.keys()], ['d1', 'd3']);
});

test('make_active makes the new dataset the active one in the same decision', () => {
  const { events, state } = step(created(), { type: 'CreateDataset', dataset: dataset('d1'), makeActive: true });
  assert.equal(events.map((event) => event.type), ['DatasetCreated', 'AgentUpdated']);
  assert.is(state.agent!.active_dataset, 'd1');
});

test('activating a dataset sets active_dataset; activating it again changes nothing; an unknown one is not found', () => {
  let state = withDatasets('d1', 'd2');
  const activated = step(state, { type: 'ActivateDataset', id: 'd2', now: later });
  state = activated.state;
  assert.is(state.agent!.active_dataset, 'd2');
  assert.is(state.agent!.updated_at, later);
  assert.equal(agentDecider.decide(state, { type: 'ActivateDataset', id: 'd2', now: later }, defaultLimits), []);
  assert.equal(rejection(() => agentDecider.decide(state, { type: 'ActivateDataset', id: 'nope', now }, defaultLimits)), { kind: 'not_found' });
});

test('deleting the active dataset clears active_dataset; deleting another keeps it', () => {
  let state = withDatasets('d1', 'd2');
  state = step(state, { type: 'ActivateDataset', id: 'd1', now }).state;
  const other = step(state, { type: 'DeleteDataset', id: 'd2', now });
  assert.equal(other.events.map((event) => event.type), ['DatasetDeleted']);
  assert.is(other.state.agent!.active_dataset, 'd1');
  const active = step(other.state, { type: 'DeleteDataset', id: 'd1', now });
  assert.equal(active.events.map((event) => event.type), ['DatasetDeleted', 'AgentUpdated']);
  assert.is(active.state.agent!.active_dataset, null);
  assert.equal(rejection(() => agentDecider.decide(active.state, { type: 'DeleteDataset', id: 'd1', now }, defaultLimits)), { kind: 'not_found' });
});

test("active_dataset may only name one of the agent's own datasets, and null clears it", () => {
  const state = withDatasets('d1');
  assert.equal(rejection(() => agentDecider.decide(state, { type: 'UpdateAgent', changes: { active_dataset: 'other' }, now }, defaultLimits)), {
    kind: 'invalid',
    fields: { active_dataset: ['Invalid pk "other" - object does not exist.'] },
  });
  const set = step(state, { type: 'UpdateAgent', changes: { active_dataset: 'd1' }, now });
  assert.is(set.state.agent!.active_dataset, 'd1');
  const cleared = step(set.state, { type: 'UpdateAgent', changes: { active_dataset: null }, now });
  assert.is(cleared.state.agent!.active_dataset, null);
});

test('an update changes only the given fields and stamps updated_at', () => {
  const { state } = step(created(), { type: 'UpdateAgent', changes: { model: 'm2', tags: { a: 1 } }, now: later });
  assert.is(state.agent!.model, 'm2');
  assert.equal(state.agent!.tags, { a: 1 });
  assert.is(state.agent!.name, 'Agent');
  assert.is(state.agent!.created_at, now);
  assert.is(state.agent!.updated_at, later);
});

test('moving an agent to another project moves each of its datasets along', () => {
  const state = withDatasets('d1', 'd2');
  const moved = step(state, { type: 'UpdateAgent', changes: { project: 'p2' }, now });
  assert.equal(moved.events.map((event) => event.type), ['AgentUpdated', 'DatasetMoved', 'DatasetMoved']);
  assert.equal([...moved.state.datasets.values()].map((item) => item.project), ['p2', 'p2']);
  const stay = step(moved.state, { type: 'UpdateAgent', changes: { project: 'p2', name: 'n' }, now });
  assert.equal(stay.events.map((event) => event.type), ['AgentUpdated']);
});

test('a deleted agent refuses updates and new datasets, but its datasets can still be deleted', () => {
  let state = withDatasets('d1', 'd2');
  const deleted = step(state, { type: 'DeleteAgent', now: later });
  state = deleted.state;
  assert.is(state.agent!.is_deleted, true);
  assert.is(state.agent!.updated_at, later);
  assert.equal(rejection(() => agentDecider.decide(state, { type: 'DeleteAgent', now }, defaultLimits)), { kind: 'not_found' });
  assert.equal(rejection(() => agentDecider.decide(state, { type: 'UpdateAgent', changes: { is_deleted: false }, now }, defaultLimits)), { kind: 'not_found' });
  assert.equal(rejection(() => agentDecider.decide(state, { type: 'CreateDataset', dataset: dataset('d3'), makeActive: false }, defaultLimits)), {
    kind: 'invalid',
    fields: { agent: ['Invalid pk "a1" - object does not exist.'] },
  });
  const removed = step(state, { type: 'DeleteDataset', id: 'd1', now });
  assert.equal([...removed.state.datasets.keys()], ['d2']);
});

test('a new dataset defaults each order to its index and keeps datapoints sorted by order, then position', () => {
  const datapointIds = ['x0', 'x1', 'x2', 'x3', 'x4'];
  const made = newDataset({ id: 'd1', agent: 'a1', project: 'p1', now, datapointIds }, { source: 'seed' }, [
    { order: 5 },
    {},
    { order: 0, persona: 'p', input: { q: 1 }, expected_output: false, tags: [] },
    { order: 5 },
    { order: null },
  ]);
  assert.equal(made.datapoints.map((point) => [point.id, point.order]), [
    ['x2', 0], ['x1', 1], ['x4', 4], ['x0', 5], ['x3', 5],
  ]);
  assert.equal(made.datapoints[0], { id: 'x2', expected_output: false, input: { q: 1 }, order: 0, persona: 'p', tags: [] });
  assert.equal(made.datapoints[1], { id: 'x1', expected_output: null, input: null, order: 1, persona: '', tags: null });
  assert.is(made.num_datapoints, 5);
  assert.is(made.source, 'seed');
  assert.is(made.name, '');
  assert.is(made.policy_hash, '');
  assert.is(made.metadata, null);
  assert.is(newDataset({ id: 'd2', agent: 'a1', project: 'p1', now, datapointIds: [] }, { name: null }, []).name, null);
  assert.is(newDataset({ id: 'd3', agent: 'a1', project: 'p1', now, datapointIds: [] }, {}, []).source, 'seed');
});

test('recovery rebuilds the same state, from the stored events or from a snapshot', () => {
  let state = created();
  const events: AgentEvent[] = [{ type: 'AgentCreated', agent: state.agent! }];
  for (const command of [
    { type: 'CreateDataset', dataset: dataset('d1'), makeActive: true },
    { type: 'CreateDataset', dataset: dataset('d2'), makeActive: false },
    { type: 'DeleteDataset', id: 'd1', now },
    { type: 'UpdateAgent', changes: { project: 'p2' }, now },
  ] as AgentCommand[]) {
    const result = step(state, command);
    state = result.state;
    events.push(...result.events);
  }
  for (const rebuilt of [replay(agentDecider, agentDecider.initialState(), storedEvents(agentKind, events)), snapshotRoundTrip(agentKind, state)]) {
    assert.equal(rebuilt.agent, state.agent);
    assert.equal([...rebuilt.datasets.entries()], [...state.datasets.entries()]);
    assert.is(rebuilt.lastVersion, 2);
  }
});

test.run();
