// The change feed's pure parts: which changes a committed message makes, and the bounded log that
// numbers them and answers "what came after id N".
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { newAgent, newDataset } from '../../src/domain/agent.ts';
import { newJob, newIteration } from '../../src/domain/job.ts';
import { newProject } from '../../src/domain/project.ts';
import { ChangeFeed, type FeedEvent, type Published } from '../../src/events/change-feed.ts';
import { agentChanges, jobChanges, projectChanges, type Before } from '../../src/events/changes.ts';

const now = '2026-11-25T00:00:00.000Z';
const agent = newAgent({ id: 'a1', now, project: 'p1', name: 'Agent', slug: 'agent' });
const dataset = { ...newDataset({ id: 'd1', agent: 'a1', project: 'p1', now, datapointIds: [] }, {}, []), version: 1 };
const before = (live: typeof agent | undefined, members: number[] = []): Before => ({ agent: () => live, members: () => members });
const types = (changes: { type: string }[]) => changes.map((change) => change.type);

test('an agent update that points active_dataset elsewhere also activates that dataset', () => {
  const activated = { ...agent, active_dataset: 'd1' };
  assert.equal(types(agentChanges('a1', [{ type: 'DatasetCreated', dataset }, { type: 'AgentUpdated', agent: activated }], before(agent))), [
    'dataset.created', 'agent.updated', 'dataset.activated',
  ]);
  assert.equal(types(agentChanges('a1', [{ type: 'AgentUpdated', agent: { ...activated, model: 'm' } }], before(activated))), ['agent.updated']);
  assert.equal(types(agentChanges('a1', [{ type: 'AgentUpdated', agent: { ...activated, active_dataset: null } }], before(activated))), ['agent.updated']);
});

test('a soft delete is the agent\'s deletion; an agent born deleted is never announced', () => {
  assert.equal(types(agentChanges('a1', [{ type: 'AgentUpdated', agent: { ...agent, is_deleted: true } }], before(agent))), ['agent.deleted']);
  assert.equal(agentChanges('a1', [{ type: 'AgentCreated', agent: { ...agent, is_deleted: true } }], before(undefined)), []);
  assert.equal(types(agentChanges('a1', [{ type: 'AgentCreated', agent }], before(undefined))), ['agent.created']);
  assert.equal(agentChanges('a1', [{ type: 'DatasetMoved', id: 'd1', project: 'p2' }], before(agent)), []);
});

test('job and iteration events map one to one; a project deletion names the members it had', () => {
  const job = newJob({ id: 'j1', now, project: 'p1', triggeredBy: 1 });
  const iteration = newIteration({ id: 'i1', now, job: 'j1', project: 'p1', iterationName: 'n' });
  assert.equal(types(jobChanges([
    { type: 'JobCreated', job }, { type: 'IterationAdded', iteration }, { type: 'IterationUpdated', iteration },
    { type: 'IterationRemoved', iteration }, { type: 'JobUpdated', job }, { type: 'JobDeleted', job },
  ])), ['job.created', 'iteration.created', 'iteration.updated', 'iteration.deleted', 'job.updated', 'job.deleted']);
  const project = newProject({ id: 'p1', now, name: 'P', slug: 'p' });
  assert.equal(projectChanges([{ type: 'ProjectDeleted', project }], before(undefined, [3, 4])), [{ type: 'project.deleted', project, members: [3, 4] }]);
  assert.equal(projectChanges([{ type: 'MembershipRemoved', membership: { id: 'm', project: 'p1', user: 3, user_email: 'e', created_at: now, updated_at: now } }], before(undefined)), []);
});

const change = (n: number, data = `{"n":${n}}`): Published => ({ type: 'project.updated', project: 'p1', agent: null, job: null, audience: null, data });

test('the log numbers events from its first id, answers what followed an id, and forgets the oldest past its limits', () => {
  const feed = new ChangeFeed({ eventLogEventsMax: 3, eventLogCharsMax: 10_000 }, 100);
  assert.is(feed.lastSeq, 99);
  assert.equal(feed.since(99), []);
  assert.is(feed.since(98), null, 'nothing was ever given out before the first id');
  feed.publish([change(1), change(2)]);
  feed.publish([change(3), change(4)]);
  assert.is(feed.lastSeq, 103);
  assert.equal(feed.since(101)!.map((event) => event.seq), [102, 103]);
  assert.equal(feed.since(100)!.map((event) => event.seq), [101, 102, 103]);
  assert.is(feed.since(99), null, 'event 100 was forgotten');
  assert.is(feed.since(104), null, 'an id never given out');
  assert.is(feed.since(1.5), null);
  assert.is(feed.since(103)!.length, 0);
  assert.is(feed.since(101)![0]!.frame, 'id: 102\nevent: project.updated\ndata: {"n":3}\n\n');
});

test('the log also forgets by the characters it holds, and compacts as it goes', () => {
  const feed = new ChangeFeed({ eventLogEventsMax: 1_000_000, eventLogCharsMax: 200 }, 1);
  for (let n = 0; n < 5000; n++) feed.publish([change(n, `"${'x'.repeat(40)}"`)]);
  const kept = feed.since(feed.lastSeq - 2);
  assert.ok(kept !== null && kept.length === 2);
  assert.is(feed.since(feed.lastSeq - 4), null, 'at most three events of ~70 characters fit in 200');
});

test('subscribers get each burst of published events in one delivery, and are ended by close', async () => {
  const feed = new ChangeFeed({ eventLogEventsMax: 100, eventLogCharsMax: 10_000 }, 1);
  const deliveries: number[][] = [];
  let closed = 0;
  const subscriber = { deliver: (events: readonly FeedEvent[]) => deliveries.push(events.map((event) => event.seq)), close: () => closed++ };
  const unsubscribe = feed.subscribe(subscriber);
  feed.publish([change(1)]);
  feed.publish([change(2), change(3)]);
  assert.equal(deliveries, [], 'delivered after the current turn, not inside the commit');
  await new Promise((resolve) => setImmediate(resolve));
  assert.equal(deliveries, [[1, 2, 3]]);
  unsubscribe();
  feed.publish([change(4)]);
  await new Promise((resolve) => setImmediate(resolve));
  assert.is(deliveries.length, 1);
  feed.subscribe(subscriber);
  feed.close();
  assert.is(closed, 1);
  feed.subscribe(subscriber);
  assert.is(closed, 2, 'a stream opened after close is ended at once');
});

test.run();
