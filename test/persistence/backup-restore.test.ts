import { spawnSync } from 'node:child_process';
import { existsSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { Client } from '../helpers/client.ts';
import { createApiKey, createProject, registerUser } from '../helpers/fixtures.ts';
import { spawnService } from '../helpers/process.ts';
import { tempDataDir } from '../helpers/service.ts';

/** Runs `npm run <script> -- <file>` exactly as the README documents it. */
function npmRun(script: 'backup' | 'restore', file: string, dataDir: string) {
  const result = spawnSync('npm', ['run', '--silent', script, '--', file], {
    env: { ...process.env, DATA_DIR: dataDir },
    encoding: 'utf8',
  });
  return { status: result.status, output: `${result.stdout}${result.stderr}` };
}

async function everything(client: Client) {
  const projects = (await client.get('/api/projects/', { page_size: 100 })).body;
  const memberships = await Promise.all(projects.results.map(async (p: any) => (await client.get(`/api/projects/${p.id}/memberships/`)).body));
  return { projects, memberships, keys: (await client.get('/api/auth/api-keys/')).body, me: (await client.get('/api/auth/me/')).body };
}

test('a backup taken while the service runs restores to exactly what it held', async () => {
  const dataDir = tempDataDir();
  const backupDir = tempDataDir();
  const backup = join(backupDir, 'store.backup');
  let service = await spawnService({ DATA_DIR: dataDir });
  try {
    const member = await registerUser(new Client(service.url));
    const friend = await registerUser(new Client(service.url));
    for (let i = 0; i < 20; i++) {
      const project = await createProject(member.client);
      if (i % 5 === 0) await member.client.post(`/api/projects/${project.id}/memberships/`, { user_id: friend.id });
      if (i % 7 === 0) await createApiKey(member.client, project.id);
    }
    const before = await everything(member.client);

    // Writes keep arriving while the backup is taken; the copy is one consistent moment.
    let writing = true;
    const busy = (async () => {
      while (writing) await member.client.post('/api/projects/', { name: 'during', slug: `during-${Math.random()}` });
    })();
    const made = npmRun('backup', backup, dataDir);
    writing = false;
    await busy;
    assert.is(made.status, 0, made.output);
    assert.ok(existsSync(backup));

    const whileRunning = npmRun('restore', backup, dataDir);
    assert.is(whileRunning.status, 1);
    assert.match(whileRunning.output, /stop the service before restoring/);

    service.child.kill('SIGTERM');
    await service.exited;
    const restored = npmRun('restore', backup, dataDir);
    assert.is(restored.status, 0, restored.output);
    assert.match(restored.output, /previous store is kept/);

    service = await spawnService({ DATA_DIR: dataDir });
    const client = new Client(service.url, { token: member.access });
    const after = await everything(client);
    const duringCount = after.projects.count - before.projects.count;
    assert.ok(duringCount >= 0);
    const withoutDuring = after.projects.results.filter((p: any) => p.name !== 'during');
    assert.equal(withoutDuring, before.projects.results.filter((p: any) => p.name !== 'during'));
    assert.equal(after.keys, before.keys);
    assert.equal(after.me, before.me);
  } finally {
    service.child.kill('SIGTERM');
    await service.exited;
    rmSync(dataDir, { recursive: true, force: true });
    rmSync(backupDir, { recursive: true, force: true });
  }
});

test('restore refuses a file that is not a backup, and backup refuses to overwrite', async () => {
  const dataDir = tempDataDir();
  try {
    const bogus = join(dataDir, 'bogus.backup');
    spawnSync('sh', ['-c', `echo not a store > ${bogus}`]);
    const refused = npmRun('restore', bogus, join(dataDir, 'store'));
    assert.is(refused.status, 1);
    assert.match(refused.output, /cannot be restored/);
    const empty = npmRun('backup', join(dataDir, 'x.backup'), join(dataDir, 'nothing-here'));
    assert.is(empty.status, 1);
    assert.match(empty.output, /nothing to back up/);
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
});

test.run();
