import { rmSync } from 'node:fs';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { createAgent, createDataset, datapoints } from '../helpers/agent-fixtures.ts';
import { Client } from '../helpers/client.ts';
import { createProject, registerUser, type Member } from '../helpers/fixtures.ts';
import { spawnService } from '../helpers/process.ts';
import { start, tempDataDir } from '../helpers/service.ts';

interface History {
  project: any;
  agent: any;
}

/** Agents and datasets with every kind of change: deletes, a move, an active dataset, a large dataset. */
async function buildHistory(member: Member): Promise<History> {
  const project = await createProject(member.client);
  const elsewhere = await createProject(member.client);
  const agent = await createAgent(member.client, project.id, { slug: 'kept', tags: ['t'], input_schema: { type: 'object' } });
  const deleted = await createAgent(member.client, project.id, { slug: 'freed' });
  const moved = await createAgent(member.client, project.id, { slug: 'moved' });
  const datasets = [
    await createDataset(member.client, agent.id, { datapoints: datapoints(2_000), name: 'large' }),
    await createDataset(member.client, agent.id, { make_active: true, metadata: { seed: 7 } }),
    await createDataset(member.client, agent.id, { source: 'seed' }),
  ];
  assert.is((await member.client.delete(`/api/datasets/${datasets[2].id}/`)).status, 204);
  await createDataset(member.client, deleted.id);
  assert.is((await member.client.delete(`/api/agents/${deleted.id}/`)).status, 204);
  await createDataset(member.client, moved.id);
  assert.is((await member.client.patch(`/api/agents/${moved.id}/`, { project: elsewhere.id, model: 'm' })).status, 200);
  return { project, agent };
}

/** Everything a user could read back about agents and datasets. */
async function observe(client: Client, history: History) {
  const datasets = (await client.get('/api/datasets/', { page_size: 100 })).body;
  const details = [];
  for (const item of datasets.results) {
    details.push((await client.get(`/api/datasets/${item.id}/`)).body);
    details.push((await client.get(`/api/datasets/${item.id}/datapoints/`, { page: 3, page_size: 7, ordering: '-order' })).body);
  }
  return {
    agents: (await client.get('/api/agents/', { page_size: 100 })).body,
    agent: (await client.get(`/api/agents/${history.agent.id}/`)).body,
    evalSpec: (await client.get(`/api/agents/${history.agent.id}/eval_spec/`)).body,
    datasets,
    details: details.map((body) => JSON.parse(JSON.stringify(body).replaceAll(client.baseUrl, 'BASE'))),
  };
}

/** What the restarted service must still decide the same way: version numbers and slug claims. */
async function checkDecisions(client: Client, history: History, nextVersion: number) {
  const next = await client.post('/api/datasets/', { agent: history.agent.id, datapoints: [], make_active: false });
  assert.is(next.status, 201);
  assert.is(next.body.version, nextVersion);
  assert.is((await client.delete(`/api/datasets/${next.body.id}/`)).status, 204);
  const taken = await client.post('/api/agents/', { name: 'n', slug: 'kept', project: history.project.id });
  assert.equal(taken.body, { non_field_errors: ['The fields project, slug must make a unique set.'] });
  const freed = await client.post('/api/agents/', { name: 'n', slug: 'freed', project: history.project.id });
  assert.is(freed.status, 201);
  assert.is((await client.delete(`/api/agents/${freed.body.id}/`)).status, 204);
}

test('agents and datasets read back identically after restarts, from journal and from snapshots with parts', async () => {
  for (const snapshotEvery of [1000, 2]) {
    const dataDir = tempDataDir();
    try {
      let running = await start({ lmdb: true, dataDir, limits: { snapshotEvery } });
      const member = await registerUser(running.client);
      const history = await buildHistory(member);
      const before = await observe(member.client, history);
      assert.is(before.datasets.count, 4);
      await running.stop({ keepData: true });

      for (const [round, nextVersion] of [[1, 4], [2, 5]] as const) {
        running = await start({ lmdb: true, dataDir, limits: { snapshotEvery } });
        const client = running.client.as({ token: member.access });
        assert.equal(await observe(client, history), before, `snapshotEvery ${snapshotEvery}, restart ${round}`);
        await checkDecisions(client, history, nextVersion);
        await running.stop({ keepData: true });
      }
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  }
});

test('datasets acknowledged before a SIGKILL are all there after the restart', async () => {
  const dataDir = tempDataDir();
  try {
    let service = await spawnService({ DATA_DIR: dataDir, LIMIT_SNAPSHOT_EVERY: '3' });
    const member = await registerUser(new Client(service.url));
    const project = await createProject(member.client);
    const agent = await createAgent(member.client, project.id);
    const acknowledged = new Map<number, string>();
    await Promise.all(
      Array.from({ length: 10 }, async (_, i) => {
        const reply = await member.client.post('/api/datasets/', { agent: agent.id, datapoints: datapoints(50 + i) });
        if (reply.status === 201) acknowledged.set(reply.body.version, reply.body.id);
      }),
    );
    service.child.kill('SIGKILL');
    await service.exited;

    service = await spawnService({ DATA_DIR: dataDir, LIMIT_SNAPSHOT_EVERY: '3' });
    const client = new Client(service.url, { token: member.access });
    const listed = await client.get('/api/datasets/', { agent: agent.id, ordering: 'version' });
    assert.equal(listed.body.results.map((item: any) => [item.version, item.id]), [...acknowledged].sort((a, b) => a[0] - b[0]));
    for (const item of listed.body.results) {
      const detail = await client.get(`/api/datasets/${item.id}/`);
      assert.is(detail.body.datapoints.length, item.num_datapoints);
    }
    assert.is((await client.post('/api/datasets/', { agent: agent.id, datapoints: [] })).body.version, 11);
    service.child.kill('SIGTERM');
    assert.is(await service.exited, 0);
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
});

test.run();
