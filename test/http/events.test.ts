// GET /api/events/: every committed change as a server-sent event, in commit order, only after it
// is durable, never for a refused or failed write, only to callers who may see it; resumable with
// Last-Event-ID; bounded (streams per user, bytes waiting for a slow reader); ended by shutdown.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { MemoryKv } from '../../src/store/memory-kv.ts';
import { createAgent, createDataset } from '../helpers/agent-fixtures.ts';
import { EventStreamReader } from '../helpers/event-stream.ts';
import { FaultyKv } from '../helpers/faulty-kv.ts';
import { createApiKey, createProject, memberWithProject, registerUser, type Member } from '../helpers/fixtures.ts';
import { createIteration, createJob } from '../helpers/job-fixtures.ts';
import { start, withService, type Running } from '../helpers/service.ts';
import { until } from '../helpers/wait.ts';
import { baseNs, ms, otlpJson, postJson, spanId, traceId } from '../traces/helpers.ts';

const bearer = (member: Member) => ({ authorization: `Bearer ${member.access}` });

async function openStream(running: Running, headers: Record<string, string>, query = ''): Promise<EventStreamReader> {
  const reader = await EventStreamReader.open(`${running.url}/api/events/${query}`, headers);
  assert.is(reader.status, 200);
  assert.match(String(reader.response.headers['content-type']), /^text\/event-stream/);
  return reader;
}

test('every kind of write is one event, in commit order, carrying the record as the REST API answers it', () =>
  withService(async (running) => {
    const { member, project } = await memberWithProject(running.client);
    const stream = await openStream(running, bearer(member));
    const client = member.client;
    await client.patch(`/api/projects/${project.id}/`, { description: 'watched' });
    const agent = await createAgent(client, project.id, { display_name: 'Watcher' });
    await client.patch(`/api/agents/${agent.id}/`, { model: 'gpt' });
    const listedAgent = (await client.get('/api/agents/')).body.results[0];
    const first = await createDataset(client, agent.id);
    const second = await createDataset(client, agent.id, { make_active: false });
    await client.post(`/api/datasets/${second.id}/activate/`);
    const listedSecond = (await client.get('/api/datasets/', { ordering: '-version' })).body.results[0];
    await client.delete(`/api/datasets/${first.id}/`);
    const job = await createJob(client, { agent: agent.id, status: 'running' });
    const iteration = await createIteration(client, job.id, { avg_score: 0.5 });
    await client.patch(`/api/job-iterations/${iteration.id}/`, { status: 'keep' });
    await client.delete(`/api/job-iterations/${iteration.id}/`);
    await client.patch(`/api/jobs/${job.id}/`, { status: 'completed' });
    const listedJob = (await client.get('/api/jobs/')).body.results[0];
    await client.delete(`/api/jobs/${job.id}/`);
    await client.delete(`/api/agents/${agent.id}/`);
    const key = await createApiKey(client, project.id);
    await postJson(running.client.as({ apiKey: key.key }), otlpJson({ 'service.name': 'svc' }, [
      { traceId: traceId(1), spanId: spanId(1), start: baseNs, end: baseNs + ms(1) },
      { traceId: traceId(1), spanId: spanId(2), parentSpanId: spanId(1), start: baseNs, end: baseNs + ms(1) },
    ]));
    const made = await createProject(client);
    await client.delete(`/api/projects/${made.id}/`);

    const expected = [
      'project.updated', 'agent.created', 'agent.updated',
      'dataset.created', 'agent.updated', 'dataset.activated',
      'dataset.created', 'agent.updated', 'dataset.activated', 'dataset.deleted',
      'job.created', 'iteration.created', 'iteration.updated', 'iteration.deleted', 'job.updated', 'job.deleted',
      'agent.deleted', 'spans.ingested', 'project.created', 'project.deleted',
    ];
    const events = await stream.waitForCount(expected.length);
    assert.equal(events.map((event) => event.event), expected);
    const ids = events.map((event) => Number(event.id));
    assert.ok(ids.every((id, i) => Number.isSafeInteger(id) && (i === 0 || id > ids[i - 1]!)), 'ids only grow');
    // The data is the REST answer: the project in full, agents, datasets and jobs as list items,
    // iterations in full, deletions by id.
    assert.equal(events[0]!.data, (await client.get(`/api/projects/${project.id}/`)).body);
    assert.is(events[1]!.data.display_name, 'Watcher');
    assert.equal(events[2]!.data, listedAgent);
    assert.equal(events[5]!.data, events[3]!.data);
    assert.is(events[5]!.data.id, first.id);
    assert.equal(events[8]!.data, listedSecond);
    assert.equal(events[9]!.data, { id: first.id });
    assert.is(events[10]!.data.agent_display_name, 'Watcher');
    assert.ok(!('iterations' in events[10]!.data), 'a job is announced in its list-item form');
    assert.equal(events[11]!.data, iteration);
    assert.is(events[12]!.data.status, 'keep');
    assert.equal(events[13]!.data, { id: iteration.id });
    assert.equal(events[14]!.data, listedJob);
    assert.equal(events[15]!.data, { id: job.id });
    assert.equal(events[16]!.data, { id: agent.id });
    assert.equal(events[17]!.data, { project: project.id, trace_ids: [traceId(1)], service_names: ['svc'], count: 2 });
    assert.equal(events[19]!.data, { id: made.id });
    stream.close();
  }));

test('a refused or failed write announces nothing; a span sent again is not announced again', async () => {
  const kv = new FaultyKv(new MemoryKv());
  const running = await start({ kv });
  try {
    const { member, project } = await memberWithProject(running.client);
    const agent = await createAgent(member.client, project.id, { slug: 'taken' });
    const job = await createJob(member.client, { status: 'completed' });
    const key = await createApiKey(member.client, project.id);
    const spans = otlpJson({ 'service.name': 'svc' }, [{ traceId: traceId(1), spanId: spanId(1), start: baseNs, end: baseNs + ms(1) }]);
    await postJson(running.client.as({ apiKey: key.key }), spans);
    const stream = await openStream(running, bearer(member));
    assert.is((await member.client.post('/api/agents/', { name: 'x', slug: 'taken', project: project.id })).status, 400);
    assert.is((await member.client.post('/api/agents/', { name: '', slug: 'ok', project: project.id })).status, 400);
    assert.is((await member.client.patch(`/api/jobs/${job.id}/`, { status: 'running' })).status, 409);
    assert.is((await member.client.post('/api/job-iterations/', { job: job.id })).status, 400);
    assert.is((await postJson(running.client.as({ apiKey: key.key }), spans)).status, 200);
    kv.failWith = new Error('disk full');
    assert.is((await member.client.patch(`/api/agents/${agent.id}/`, { model: 'm' })).status, 503);
    assert.is((await member.client.post('/api/jobs/', {})).status, 503);
    kv.failWith = null;
    // A write after them all is the first and only event.
    await member.client.patch(`/api/agents/${agent.id}/`, { model: 'after' });
    await stream.waitForCount(1);
    await new Promise((resolve) => setTimeout(resolve, 50));
    assert.equal(stream.events.map((event) => [event.event, event.data.model]), [['agent.updated', 'after']]);
    stream.close();
  } finally {
    await running.stop();
  }
});

test('an event is sent only once its write is durable', async () => {
  const kv = new FaultyKv(new MemoryKv());
  const running = await start({ kv });
  try {
    const { member, project } = await memberWithProject(running.client);
    const stream = await openStream(running, bearer(member));
    const release = kv.holdWrites();
    const pending = member.client.patch(`/api/projects/${project.id}/`, { description: 'slow disk' });
    await new Promise((resolve) => setTimeout(resolve, 100));
    assert.equal(stream.events, [], 'nothing while the commit is held');
    release();
    assert.is((await pending).status, 200);
    await stream.waitForCount(1);
    assert.is(stream.events[0]!.data.description, 'slow disk');
    stream.close();
  } finally {
    await running.stop();
  }
});

test('a stream shows only the projects its caller sees: other users see nothing, an API key its own project', () =>
  withService(async (running) => {
    const { member, project } = await memberWithProject(running.client);
    const second = await createProject(member.client);
    const stranger = await registerUser(running.client);
    const key = await createApiKey(member.client, project.id);
    const mine = await openStream(running, bearer(member));
    const theirs = await openStream(running, bearer(stranger));
    const peeking = await openStream(running, bearer(stranger), `?project=${project.id}`);
    const keyed = await openStream(running, { 'x-api-key': key.key });
    await createAgent(member.client, project.id, { slug: 'here' });
    await createAgent(member.client, second.id, { slug: 'there' });
    await mine.waitForCount(2);
    await keyed.waitForCount(1);
    await new Promise((resolve) => setTimeout(resolve, 50));
    assert.equal(keyed.events.map((event) => event.data.slug), ['here']);
    assert.equal(theirs.events, []);
    assert.equal(peeking.events, []);
    // A member who joins sees the project's changes from then on; one who leaves stops seeing them.
    const membership = await member.client.post(`/api/projects/${second.id}/memberships/`, { user_id: stranger.id });
    await member.client.patch(`/api/projects/${second.id}/`, { description: 'welcome' });
    await theirs.waitForCount(1);
    await member.client.delete(`/api/projects/${second.id}/memberships/${membership.body.id}/`);
    await member.client.patch(`/api/projects/${second.id}/`, { description: 'gone' });
    await member.client.delete(`/api/projects/${second.id}/`);
    await mine.waitForCount(5);
    assert.equal(mine.events.map((event) => event.event), ['agent.created', 'agent.created', 'project.updated', 'project.updated', 'project.deleted']);
    await new Promise((resolve) => setTimeout(resolve, 50));
    assert.equal(theirs.events.map((event) => event.data.description), ['welcome']);
    for (const stream of [mine, theirs, peeking, keyed]) stream.close();
  }));

test('the members of a deleted project are told, though it has no members any more', () =>
  withService(async (running) => {
    const { member } = await memberWithProject(running.client);
    const doomed = await createProject(member.client);
    const stream = await openStream(running, bearer(member), `?types=project.deleted`);
    const outsider = await openStream(running, bearer(await registerUser(running.client)));
    assert.is((await member.client.delete(`/api/projects/${doomed.id}/`)).status, 204);
    await stream.waitForCount(1);
    assert.equal(stream.events[0]!.data, { id: doomed.id });
    await new Promise((resolve) => setTimeout(resolve, 50));
    assert.equal(outsider.events, []);
    stream.close();
    outsider.close();
  }));

test('project, agent, job and types filters narrow the stream; bad filter values are 400', () =>
  withService(async (running) => {
    const { member, project } = await memberWithProject(running.client);
    const agent = await createAgent(member.client, project.id);
    const job = await createJob(member.client, { agent: agent.id });
    const other = await createJob(member.client);
    const byJob = await openStream(running, bearer(member), `?job=${job.id}`);
    const byAgent = await openStream(running, bearer(member), `?agent=${agent.id}&types=iteration.created,job.updated`);
    const byType = await openStream(running, bearer(member), `?types=${encodeURIComponent(' iteration.updated ')}&project=${project.id.toUpperCase()}`);
    const iteration = await createIteration(member.client, job.id);
    await createIteration(member.client, other.id);
    await member.client.patch(`/api/job-iterations/${iteration.id}/`, { avg_score: 1 });
    await member.client.patch(`/api/jobs/${job.id}/`, { status: 'running' });
    await byJob.waitForCount(3);
    await byAgent.waitForCount(2);
    await byType.waitForCount(1);
    assert.equal(byJob.events.map((event) => event.event), ['iteration.created', 'iteration.updated', 'job.updated']);
    assert.equal(byAgent.events.map((event) => event.event), ['iteration.created', 'job.updated']);
    assert.equal(byType.events.map((event) => event.data.id), [iteration.id]);
    for (const stream of [byJob, byAgent, byType]) stream.close();
    const bad = await member.client.get('/api/events/', { types: 'job.created,job.exploded' });
    assert.is(bad.status, 400);
    assert.equal(bad.body, { types: ['Select a valid choice. job.exploded is not one of the available choices.'] });
    assert.equal((await member.client.get('/api/events/', { job: 'nope' })).body, { job: ['Enter a valid UUID.'] });
    assert.is((await running.client.get('/api/events/')).status, 401);
    const head = await fetch(`${running.url}/api/events/`, { method: 'HEAD', headers: bearer(member) });
    assert.is(head.status, 200, 'HEAD answers the headers and ends');
    assert.match(String(head.headers.get('content-type')), /^text\/event-stream/);
  }));

test('Last-Event-ID resumes after that event; an id the log no longer holds, or never held, opens with reset', () =>
  withService(
    async (running) => {
      const { member, project } = await memberWithProject(running.client);
      const first = await openStream(running, bearer(member));
      for (let i = 1; i <= 3; i++) await member.client.patch(`/api/projects/${project.id}/`, { description: `v${i}` });
      const seen = await first.waitForCount(3);
      first.close();
      await member.client.patch(`/api/projects/${project.id}/`, { description: 'v4' });
      const resumed = await openStream(running, { ...bearer(member), 'last-event-id': seen[0]!.id! });
      await resumed.waitForCount(3);
      assert.equal(resumed.events.map((event) => event.data.description), ['v2', 'v3', 'v4']);
      await member.client.patch(`/api/projects/${project.id}/`, { description: 'v5' });
      await resumed.waitForCount(4);
      assert.equal(resumed.events.map((event) => event.id), [seen[1]!.id, seen[2]!.id, String(Number(seen[2]!.id) + 1), String(Number(seen[2]!.id) + 2)]);
      resumed.close();
      // The log keeps the last 5 events: resuming after v1 (v2..v5 kept) works, after anything older does not.
      for (let i = 6; i <= 8; i++) await member.client.patch(`/api/projects/${project.id}/`, { description: `v${i}` });
      for (const lastId of [seen[0]!.id!, '1', '99999999999999999999', 'not-a-number']) {
        const late = await openStream(running, { ...bearer(member), 'last-event-id': lastId });
        await late.waitForCount(1);
        assert.is(late.events[0]!.event, 'reset', lastId);
        await member.client.patch(`/api/projects/${project.id}/`, { description: `after ${lastId}` });
        await late.waitForCount(2);
        assert.is(late.events[1]!.data.description, `after ${lastId}`);
        late.close();
      }
      const recent = await openStream(running, { ...bearer(member), 'last-event-id': String(Number(seen[2]!.id) + 4) });
      await recent.waitForCount(5);
      assert.equal(recent.events[0]!.data.description, 'v8');
      recent.close();
    },
    { limits: { eventLogEventsMax: 5 } },
  ));

test('the log also forgets by characters kept', () =>
  withService(
    async (running) => {
      const { member, project } = await memberWithProject(running.client);
      const stream = await openStream(running, bearer(member));
      await member.client.patch(`/api/projects/${project.id}/`, { description: 'x'.repeat(600) });
      await member.client.patch(`/api/projects/${project.id}/`, { description: 'y'.repeat(600) });
      const [older] = await stream.waitForCount(2);
      stream.close();
      const resumed = await openStream(running, { ...bearer(member), 'last-event-id': String(Number(older!.id) - 1) });
      await resumed.waitForCount(1);
      assert.is(resumed.events[0]!.event, 'reset', 'the older event no longer fits the 1,000 characters kept');
      resumed.close();
    },
    { limits: { eventLogCharsMax: 1000 } },
  ));

test('heartbeats keep an idle stream alive, and end it once its credentials no longer hold', () =>
  withService(
    async (running) => {
      const { member, project } = await memberWithProject(running.client);
      const key = await createApiKey(member.client, project.id);
      const stream = await openStream(running, { 'x-api-key': key.key });
      await stream.waitFor(() => stream.comments.includes('heartbeat'), 'a heartbeat', 3000);
      assert.ok(!stream.ended);
      assert.is((await member.client.delete(`/api/auth/api-keys/${key.id}/`)).status, 204);
      await stream.waitFor(() => stream.ended, 'the stream of a revoked key ends', 3000);
    },
    { limits: { eventHeartbeatSeconds: 1 } },
  ));

test('a user may hold only so many streams open at once', () =>
  withService(
    async (running) => {
      const { member } = await memberWithProject(running.client);
      const open = [await openStream(running, bearer(member)), await openStream(running, bearer(member))];
      const refused = await member.client.get('/api/events/');
      assert.is(refused.status, 429);
      assert.equal(refused.body, { detail: 'At most 2 event streams may be open per user.', code: 'throttled' });
      assert.ok(refused.headers.get('retry-after'));
      const other = await openStream(running, bearer(await registerUser(running.client)));
      open[0]!.close();
      await until(async () => {
        const again = await EventStreamReader.open(`${running.url}/api/events/`, bearer(member));
        again.close();
        return again.status === 200;
      }, 'a closed stream frees its place');
      for (const stream of [...open, other]) stream.close();
    },
    { limits: { eventStreamsPerUserMax: 2 } },
  ));

test('a reader that lets too many bytes pile up is cut off; the service and other streams go on', () =>
  withService(
    async (running) => {
      const { member } = await memberWithProject(running.client);
      const job = await createJob(member.client);
      const slow = await openStream(running, bearer(member));
      const fast = await openStream(running, bearer(member));
      slow.pause();
      // Until the socket's own buffers are full, bytes leave the service; then they pile up.
      const code = 'x'.repeat(200_000);
      const feed = running.service.deps.changes;
      let posted = 0;
      while (feed.subscriberCount === 2 && posted < 400) {
        assert.is((await member.client.post('/api/job-iterations/', { job: job.id, iteration_name: `i${posted}`, agent_code: code })).status, 201);
        posted++;
        await fast.waitForCount(posted, 5000);
      }
      assert.is(feed.subscriberCount, 1, 'the slow stream was cut');
      slow.response.resume();
      await slow.waitFor(() => slow.ended, 'the slow reader sees its stream end', 5000);
      assert.ok(slow.events.length < posted, 'the slow reader did not get everything');
      assert.ok(!fast.ended);
      assert.is((await member.client.get(`/api/jobs/${job.id}/`)).status, 200);
      fast.close();
    },
    { limits: { eventStreamBufferBytesMax: 256 * 1024 } },
  ));

test('a graceful stop ends every open stream', async () => {
  const running = await start();
  const { member } = await memberWithProject(running.client);
  const streams = [await openStream(running, bearer(member)), await openStream(running, bearer(member), '?types=job.created')];
  const started = performance.now();
  await running.stop();
  assert.ok(performance.now() - started < 2000, 'the stop did not wait for the grace period');
  await until(() => streams.every((stream) => stream.ended), 'both streams ended');
});

test.run();
