// When the store cannot write (disk full, map full, I/O error): the request gets 503, nothing in
// memory moves ahead of the store, health reports it, and everything works again once the store
// does. Every kind of write is tried, and a restart from the store must answer as before.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { MemoryKv } from '../../src/store/memory-kv.ts';
import { createAgent, createDataset } from '../helpers/agent-fixtures.ts';
import type { Client, Reply } from '../helpers/client.ts';
import { FaultyKv } from '../helpers/faulty-kv.ts';
import { createApiKey, createProject, registerUser, unique } from '../helpers/fixtures.ts';
import { createIteration, createJob } from '../helpers/job-fixtures.ts';
import { start } from '../helpers/service.ts';
import { baseNs, ms, otlpJson } from '../traces/helpers.ts';

/** Everything the caller can read, to compare before and after a failed write. */
async function everything(client: Client) {
  const read = async (path: string) => (await client.get(path, { page_size: 100 })).body;
  return {
    me: await read('/api/auth/me/'),
    keys: await read('/api/auth/api-keys/'),
    projects: await read('/api/projects/'),
    agents: await read('/api/agents/'),
    datasets: await read('/api/datasets/'),
    jobs: await read('/api/jobs/'),
    iterations: await read('/api/job-iterations/'),
    traces: await read('/api/traces/?all_spans=true'),
  };
}

const otlpExport = (traceId: string, project: string) =>
  otlpJson({ 'service.name': 'failing-store', 'overmind.project.id': project }, [
    { traceId, spanId: 'a1b2c3d4e5f60718', name: 'call', start: baseNs, end: baseNs + ms(1000) },
  ]);

test('every kind of write answers 503 on a store failure, changes nothing, and succeeds once the store recovers', async () => {
  const inner = new MemoryKv();
  const kv = new FaultyKv(inner);
  let running = await start({ kv });
  try {
    const member = await registerUser(running.client);
    const client = member.client;
    const project = await createProject(client);
    const spare = await createProject(client);
    const friend = await registerUser(running.client);
    const agent = await createAgent(client, project.id);
    const dataset = await createDataset(client, agent.id);
    const second = await createDataset(client, agent.id);
    const job = await createJob(client, { project: project.id, agent: agent.id });
    const other = await createJob(client, { project: project.id });
    const iteration = await createIteration(client, job.id);
    const key = await createApiKey(client, project.id);

    const writes: [string, () => Promise<Reply>, number][] = [
      ['register', () => running.client.post('/api/auth/register/', { email: `${unique('new')}@example.com`, password: 'long enough', password_confirm: 'long enough' }), 201],
      ['create an API key', () => client.post('/api/auth/api-keys/', { project: project.id }), 201],
      ['revoke an API key', () => client.delete(`/api/auth/api-keys/${key.id}/`), 204],
      ['create a project', () => client.post('/api/projects/', { name: 'new', slug: unique('new') }), 201],
      ['update a project', () => client.patch(`/api/projects/${project.id}/`, { description: 'changed' }), 200],
      ['add a member', () => client.post(`/api/projects/${project.id}/memberships/`, { user_id: friend.id }), 201],
      ['create an agent', () => client.post('/api/agents/', { name: 'a', slug: unique('agent'), project: project.id }), 201],
      ['update an agent', () => client.patch(`/api/agents/${agent.id}/`, { model: 'changed' }), 200],
      ['create a dataset', () => client.post('/api/datasets/', { agent: agent.id, datapoints: [{ input: 'x' }], make_active: true }), 201],
      ['activate a dataset', () => client.post(`/api/datasets/${second.id}/activate/`), 200],
      ['delete a dataset', () => client.delete(`/api/datasets/${dataset.id}/`), 204],
      ['create a job', () => client.post('/api/jobs/', { project: project.id }), 201],
      ['update a job', () => client.patch(`/api/jobs/${job.id}/`, { status: 'running', best_score: 0.9 }), 200],
      ['create an iteration', () => client.post('/api/job-iterations/', { job: job.id, iteration_name: 'new' }), 201],
      ['update an iteration', () => client.patch(`/api/job-iterations/${iteration.id}/`, { status: 'keep' }), 200],
      ['move an iteration', () => client.patch(`/api/job-iterations/${iteration.id}/`, { job: other.id }), 200],
      ['ingest spans', () => client.post('/v1/traces', otlpExport('0af7651916cd43dd8448eb211c80319c', project.id)), 200],
      ['delete an iteration', () => client.delete(`/api/job-iterations/${iteration.id}/`), 204],
      ['delete a job', () => client.delete(`/api/jobs/${other.id}/`), 204],
      ['delete an agent', () => client.delete(`/api/agents/${agent.id}/`), 204],
      ['delete a project', () => client.delete(`/api/projects/${spare.id}/`), 204],
    ];

    for (const [name, write, success] of writes) {
      const before = await everything(client);
      kv.failWith = new Error('MDB_MAP_FULL: Environment mapsize limit reached');
      const failed = await write();
      assert.is(failed.status, 503, `${name}: ${failed.text}`);
      assert.is(failed.body.code, 'unavailable', name);
      assert.ok(Number(failed.headers.get('retry-after')) >= 1, name);
      const sick = await running.client.get('/api/health/');
      assert.is(sick.status, 503, `${name}: health`);
      kv.failWith = null;
      assert.equal(await everything(client), before, `${name}: a failed write changed what readers see`);
      assert.is((await running.client.get('/api/health/')).status, 200, `${name}: health after recovery`);
      const retried = await write();
      assert.is(retried.status, success, `${name} after recovery: ${retried.text}`);
    }

    // Memory never ran ahead of the store: a service started from the store answers the same.
    const final = await everything(client);
    await running.stop();
    running = await start({ kv: inner });
    assert.equal(await everything(running.client.as({ token: member.access })), final);
  } finally {
    await running.stop();
  }
});

test('a failed commit fails every write that shared it, and a later commit succeeds', async () => {
  const kv = new FaultyKv(new MemoryKv());
  const running = await start({ kv });
  try {
    const member = await registerUser(running.client);
    const project = await createProject(member.client);
    const job = await createJob(member.client, { project: project.id });
    const release = kv.holdWrites();
    const blocked = member.client.post('/api/job-iterations/', { job: job.id, iteration_name: 'first' });
    await new Promise((resolve) => setTimeout(resolve, 50));
    const queued = Array.from({ length: 5 }, (_, i) => member.client.post('/api/job-iterations/', { job: job.id, iteration_name: `queued ${i}` }));
    await new Promise((resolve) => setTimeout(resolve, 50));
    kv.failWith = new Error('EIO: i/o error');
    release();
    const replies = await Promise.all([blocked, ...queued]);
    assert.equal(replies.map((reply) => reply.status), [503, 503, 503, 503, 503, 503]);
    assert.is((await member.client.get(`/api/jobs/${job.id}/`)).body.iterations.length, 0);
    kv.failWith = null;
    assert.is((await member.client.post('/api/job-iterations/', { job: job.id, iteration_name: 'later' })).status, 201);
    assert.is((await member.client.get(`/api/jobs/${job.id}/`)).body.iterations.length, 1);
  } finally {
    await running.stop();
  }
});

test.run();
