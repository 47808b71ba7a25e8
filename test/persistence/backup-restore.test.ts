import { execFile, spawn } from 'node:child_process';
import { existsSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { Client } from '../helpers/client.ts';
import { createApiKey, createProject, registerUser } from '../helpers/fixtures.ts';
import { spawnService } from '../helpers/process.ts';
import { freePort, npmStartArgs } from '../../scripts/service-process.ts';
import { claimStore, storeHolder } from '../../src/store/store-claim.ts';
import { tempDataDir } from '../helpers/service.ts';

/**
 * Runs `npm run <script> -- <file>` exactly as docs/API.md ("Operating it") documents it, without blocking this
 * process: the service's clients keep writing meanwhile.
 */
function npmRun(script: 'backup' | 'restore', file: string, dataDir: string): Promise<{ status: number; output: string }> {
  return new Promise((resolve) => {
    execFile('npm', ['run', '--silent', script, '--', file], { env: { ...process.env, DATA_DIR: dataDir }, timeout: 60_000 }, (error, stdout, stderr) => {
      const status = error ? (typeof error.code === 'number' ? error.code : 1) : 0;
      resolve({ status, output: `${stdout}${stderr}` });
    });
  });
}

async function everything(client: Client) {
  const projects = (await client.listAll('/api/projects/')).filter((project) => project.name !== 'during');
  const memberships = await Promise.all(projects.map(async (p: any) => (await client.get(`/api/projects/${p.id}/memberships/`)).body));
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

    // Writes keep arriving while the backup is taken (one after another, so the order in which
    // they were acknowledged is the order in which they committed); the copy is one moment.
    let writing = true;
    const acknowledged: string[] = [];
    const busy = (async () => {
      for (let i = 0; writing; i++) {
        const reply = await member.client.post('/api/projects/', { name: 'during', slug: `during-${i}` });
        assert.is(reply.status, 201, reply.text);
        acknowledged.push(reply.body.slug);
      }
    })();
    const made = await npmRun('backup', backup, dataDir);
    writing = false;
    await busy;
    assert.ok(acknowledged.length > 0, 'no write landed while the backup was taken');
    assert.is(made.status, 0, made.output);
    // Taken by the service: no other process opens a store it serves (src/store/store-claim.ts).
    assert.match(made.output, new RegExp(`taken by the service \\(process ${service.child.pid}\\)`));
    assert.ok(existsSync(backup));

    const whileRunning = await npmRun('restore', backup, dataDir);
    assert.is(whileRunning.status, 1);
    assert.match(whileRunning.output, /stop the service before restoring/);

    service.child.kill('SIGTERM');
    await service.exited;
    const restored = await npmRun('restore', backup, dataDir);
    assert.is(restored.status, 0, restored.output);
    assert.match(restored.output, /previous store is kept/);

    service = await spawnService({ DATA_DIR: dataDir });
    const client = new Client(service.url, { token: member.access });
    const after = await everything(client);
    // The writes the copy holds are the first of those acknowledged, none missing in between.
    const copied = (await client.listAll('/api/projects/', { search: 'during' })).map((project) => project.slug as string);
    // uvu shows two Sets as {}: the message names what was copied and what was acknowledged.
    assert.equal(new Set(copied), new Set(acknowledged.slice(0, copied.length)), `copied ${JSON.stringify(copied)}, acknowledged ${JSON.stringify(acknowledged)}`);
    assert.equal(after.projects, before.projects);
    assert.equal(after.memberships, before.memberships);
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
    writeFileSync(bogus, 'not a store\n');
    const refused = await npmRun('restore', bogus, join(dataDir, 'store'));
    assert.is(refused.status, 1);
    assert.match(refused.output, /cannot be restored/);
    const empty = await npmRun('backup', join(dataDir, 'x.backup'), join(dataDir, 'nothing-here'));
    assert.is(empty.status, 1);
    assert.match(empty.output, /nothing to back up/);
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
});

test('a store is served by one process: a second service on its directory refuses to start, and a marker left by a killed one does not stop the next', async () => {
  const dataDir = tempDataDir();
  let first = await spawnService({ DATA_DIR: dataDir });
  try {
    const port = String(await freePort());
    const second = spawn(process.execPath, npmStartArgs(), { env: { ...process.env, DATA_DIR: dataDir, PORT: port, HOST: '127.0.0.1', LOG_LEVEL: 'warn' }, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    second.stdout!.on('data', (chunk) => (output += chunk));
    second.stderr!.on('data', (chunk) => (output += chunk));
    const code = await new Promise((resolve) => second.once('exit', resolve));
    assert.is(code, 1, output);
    assert.match(output, new RegExp(`open in process ${first.child.pid} \\(a service\\)`));
    assert.ok(storeHolder(dataDir)?.pid === first.child.pid, 'the first still serves it');
    // A SIGUSR2 with no request waiting changes nothing.
    first.child.kill('SIGUSR2');
    assert.is((await fetch(`${first.url}/health/`)).status, 200);
    first.child.kill('SIGKILL');
    await first.exited;
    assert.is(storeHolder(dataDir), undefined, 'a claim of a process that is gone is ignored');
    first = await spawnService({ DATA_DIR: dataDir });
    assert.is(storeHolder(dataDir)?.pid, first.child.pid);
    first.child.kill('SIGTERM');
    await first.exited;
    assert.is(storeHolder(dataDir), undefined, 'a clean stop gives its claim up');
  } finally {
    first.child.kill('SIGKILL');
    await first.exited;
    rmSync(dataDir, { recursive: true, force: true });
  }
});

test('backups the service takes: two to one file, one refused; one asked while it stops is refused, not left for later; a command left waiting learns the service is gone', async () => {
  const dataDir = tempDataDir();
  const backupDir = tempDataDir();
  let service = await spawnService({ DATA_DIR: dataDir });
  try {
    const same = join(backupDir, 'same.backup');
    const both = await Promise.all([npmRun('backup', same, dataDir), npmRun('backup', same, dataDir)]);
    assert.equal(both.map((run) => run.status).sort(), [0, 1], both.map((run) => run.output).join('\n'));
    assert.match(both.find((run) => run.status === 1)!.output, /already exists/);
    // A request written while the service stops: refused at its stop, not taken by the next one.
    service.child.kill('SIGTERM');
    const during = npmRun('backup', join(backupDir, 'during-stop.backup'), dataDir);
    await service.exited;
    const answered = await during;
    assert.is(answered.status === 0 ? existsSync(join(backupDir, 'during-stop.backup')) : true, true, answered.output);
    service = await spawnService({ DATA_DIR: dataDir });
    const fresh = await npmRun('backup', join(backupDir, 'fresh.backup'), dataDir);
    assert.is(fresh.status, 0, fresh.output);
    assert.equal(readdirSync(dataDir).filter((name) => name.startsWith('backup-request-')), [], 'no request or answer left behind');
    if (answered.status !== 0) assert.not.ok(existsSync(join(backupDir, 'during-stop.backup')), 'a refused request is not taken later');
  } finally {
    service.child.kill('SIGTERM');
    await service.exited;
    rmSync(dataDir, { recursive: true, force: true });
    rmSync(backupDir, { recursive: true, force: true });
  }
});

test('a backup command waiting for a service that is killed before it answers says so and fails, leaving no request behind', async () => {
  const dataDir = tempDataDir();
  const backupDir = tempDataDir();
  const service = await spawnService({ DATA_DIR: dataDir });
  try {
    // Stopped, the service cannot take the request: the command waits for it.
    service.child.kill('SIGSTOP');
    const target = join(backupDir, 'never.backup');
    const waiting = npmRun('backup', target, dataDir);
    const deadline = Date.now() + 20_000;
    while (!readdirSync(dataDir).some((name) => name.startsWith('backup-request-')) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
    assert.ok(readdirSync(dataDir).some((name) => name.startsWith('backup-request-')), 'the command asked');
    service.child.kill('SIGKILL');
    await service.exited;
    const answered = await waiting;
    assert.is(answered.status, 1, answered.output);
    assert.match(answered.output, new RegExp(`The backup failed: the service \\(process ${service.child.pid}\\) stopped before it answered`));
    assert.not.ok(existsSync(target));
    assert.equal(readdirSync(dataDir).filter((name) => name.startsWith('backup-request-')), [], 'its request is removed');
  } finally {
    service.child.kill('SIGKILL');
    await service.exited;
    rmSync(dataDir, { recursive: true, force: true });
    rmSync(backupDir, { recursive: true, force: true });
  }
});

test('a backup of a store whose lock is held by a process that never names itself fails with a clear message, not a stack trace', async () => {
  const dataDir = tempDataDir();
  const backupDir = tempDataDir();
  try {
    writeFileSync(join(dataDir, 'data.mdb'), '');
    const held = await claimStore(dataDir, 'restore');
    assert.ok('release' in held);
    writeFileSync(join(dataDir, 'store.pid'), JSON.stringify({ pid: 4_194_305, role: 'service', started: '1' }));
    const answered = await npmRun('backup', join(backupDir, 'never.backup'), dataDir);
    held.release();
    assert.is(answered.status, 1, answered.output);
    assert.match(answered.output, /could not be claimed: the store under .* is claimed by a process that has not said which it is/);
    assert.not.match(answered.output, /\n\s+at /, 'no stack trace');
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
    rmSync(backupDir, { recursive: true, force: true });
  }
});

test.run();
