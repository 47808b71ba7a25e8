import { existsSync, readdirSync, rmSync } from 'node:fs';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { Client } from '../helpers/client.ts';
import { createApiKey, createProject, registerUser } from '../helpers/fixtures.ts';
import { spawnService } from '../helpers/process.ts';
import { start, tempDataDir } from '../helpers/service.ts';

/** Everything a user could read back, for comparing before and after a restart. */
async function observe(client: Client, projectId: string) {
  return {
    me: (await client.get('/api/auth/me/')).body,
    projects: (await client.get('/api/projects/', { ordering: 'slug' })).body,
    project: (await client.get(`/api/projects/${projectId}/`)).body,
    memberships: (await client.get(`/api/projects/${projectId}/memberships/`)).body,
    keys: (await client.get('/api/auth/api-keys/')).body,
  };
}

test('a restart on the same data serves identical answers, and tokens stay valid', async () => {
  const dataDir = tempDataDir();
  try {
    for (const snapshotEvery of [1000, 2]) {
      let running = await start({ lmdb: true, dataDir, limits: { snapshotEvery } });
      const member = await registerUser(running.client);
      const friend = await registerUser(running.client);
      const project = await createProject(member.client, { settings: { a: [1, 2, { b: null }] } });
      for (let i = 0; i < 5; i++) await createProject(member.client);
      await member.client.post(`/api/projects/${project.id}/memberships/`, { user_id: friend.id });
      await member.client.patch(`/api/projects/${project.id}/`, { description: 'after patch' });
      const key = await createApiKey(member.client, project.id);
      const before = await observe(member.client, project.id);
      await running.stop({ keepData: true });

      running = await start({ lmdb: true, dataDir, limits: { snapshotEvery } });
      const again = running.client.as({ token: member.access });
      assert.equal(await observe(again, project.id), before);
      assert.is((await running.client.as({ apiKey: key.key }).get('/api/auth/me/')).status, 200);
      const login = await running.client.post('/api/auth/token/', { email: member.email, password: 'correct horse' });
      assert.is(login.status, 200);
      const duplicate = await running.client.post('/api/projects/', { name: 'x', slug: project.slug });
      assert.is(duplicate.status, 401);
      assert.is((await again.post('/api/projects/', { name: 'x', slug: project.slug })).status, 400);
      await running.stop({ keepData: true });
    }
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
});

test('killed with SIGKILL mid-load, the service keeps every acknowledged write', async () => {
  const dataDir = tempDataDir();
  let service = await spawnService({ DATA_DIR: dataDir });
  try {
    const anonymous = new Client(service.url);
    const member = await registerUser(anonymous);
    const acknowledged: string[] = [];
    let stop = false;
    const writers = Array.from({ length: 8 }, async (_, writer) => {
      for (let i = 0; !stop; i++) {
        const slug = `w${writer}-${i}`;
        try {
          const reply = await member.client.post('/api/projects/', { name: slug, slug });
          if (reply.status === 201) acknowledged.push(reply.body.id);
        } catch {
          return; // the connection died with the process
        }
      }
    });
    await new Promise((resolve) => setTimeout(resolve, 300 + Math.random() * 400));
    service.child.kill('SIGKILL');
    stop = true;
    await service.exited;
    await Promise.all(writers);
    assert.ok(acknowledged.length > 10, `only ${acknowledged.length} writes before the kill`);

    service = await spawnService({ DATA_DIR: dataDir });
    const client = new Client(service.url, { token: member.access });
    const found = new Set((await client.listAll('/api/projects/')).map((project) => project.id as string));
    assert.ok(found.size >= acknowledged.length);
    for (const id of acknowledged) assert.ok(found.has(id), `acknowledged project ${id} is missing`);
  } finally {
    service.child.kill('SIGTERM');
    await service.exited;
    rmSync(dataDir, { recursive: true, force: true });
  }
});

test('SIGTERM finishes in-flight work, writes snapshots, exits 0, and loses nothing', async () => {
  const dataDir = tempDataDir();
  let service = await spawnService({ DATA_DIR: dataDir });
  try {
    const member = await registerUser(new Client(service.url));
    const writes = Array.from({ length: 40 }, (_, i) => member.client.post('/api/projects/', { name: `p${i}`, slug: `term-${i}` }));
    service.child.kill('SIGTERM');
    const replies = await Promise.allSettled(writes);
    const created = replies.filter((reply) => reply.status === 'fulfilled' && reply.value.status === 201).length;
    assert.is(await service.exited, 0);
    service = await spawnService({ DATA_DIR: dataDir });
    const count = (await new Client(service.url, { token: member.access }).get('/api/projects/')).body.count;
    assert.ok(count >= created, `${count} projects after restart, ${created} acknowledged`);
  } finally {
    service.child.kill('SIGTERM');
    await service.exited;
    rmSync(dataDir, { recursive: true, force: true });
  }
});

test('STORAGE=memory writes nothing to disk', async () => {
  const cwd = tempDataDir();
  const service = await spawnService({ STORAGE: 'memory', DATA_DIR: './data' }, cwd);
  try {
    const member = await registerUser(new Client(service.url));
    await createProject(member.client);
  } finally {
    service.child.kill('SIGTERM');
  }
  assert.is(await service.exited, 0);
  assert.not.ok(existsSync(`${cwd}/data`));
  assert.equal(readdirSync(cwd), []);
  rmSync(cwd, { recursive: true, force: true });
});

test('a corrupt store stops startup with a clear message instead of serving', async () => {
  const dataDir = tempDataDir();
  try {
    const running = await start({ lmdb: true, dataDir });
    await registerUser(running.client);
    await running.stop({ keepData: true });
    const { open } = await import('lmdb');
    const env = open({ path: dataDir, maxDbs: 32 });
    await env.openDB('meta', {}).put(['format'], 99);
    await env.close();
    const failed = await spawnService({ DATA_DIR: dataDir }).then(() => null, (error: Error) => error.message);
    assert.ok(failed, 'the service started on a store of another format');
    assert.match(failed!, /format version 99/);
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
});

test.run();
