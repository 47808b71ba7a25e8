// The service restarted under a running worker command: the service (started as `npm start`
// starts it, on LMDB) is killed with SIGKILL while the worker runs commands, and started again on
// the same port a moment later. The worker keeps the results it could not send, tries again with
// backoff, and the run ends with one result per task, each the one its command printed.
import { rmSync } from 'node:fs';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { spawn, type ChildProcess } from 'node:child_process';
import { freePort, npmStartArgs, root, waitForHealth } from '../../scripts/service-process.ts';
import { Client } from '../helpers/client.ts';
import { createApiKey, memberWithProject } from '../helpers/fixtures.ts';
import { createRun, runSetup, tasksOf } from '../helpers/run-fixtures.ts';
import { tempDataDir } from '../helpers/service.ts';
import { until } from '../helpers/wait.ts';
import { exitOf, spawnWorker } from '../helpers/worker-process.ts';

/** The service as `npm start` starts it, on a port of the test's choosing (the same one after a restart). */
async function startService(env: Record<string, string>): Promise<{ url: string; child: ChildProcess; exited: Promise<unknown> }> {
  const child = spawn(process.execPath, npmStartArgs(), { cwd: root, env: { ...process.env, HOST: '127.0.0.1', LOG_LEVEL: 'warn', PASSWORD_HASH_COST: '1024', ...env }, stdio: 'ignore' });
  const exited = new Promise((resolve) => child.once('exit', resolve));
  const url = `http://127.0.0.1:${env.PORT}`;
  await waitForHealth(url, child, 60_000);
  return { url, child, exited };
}

test('the service killed and started again under a running worker: the worker keeps its results, sends them once it is back, and the run completes', async () => {
  const dataDir = tempDataDir();
  const port = await freePort();
  const env = { DATA_DIR: dataDir, STORAGE: 'lmdb', PORT: String(port) };
  let service = await startService(env);
  let worker: ReturnType<typeof spawnWorker> | undefined;
  try {
    const { member, project } = await memberWithProject(new Client(service.url));
    const key = await createApiKey(member.client, project.id);
    const setup = await runSetup(member.client, project.id, 12, 1);
    const run = await createRun(member.client, setup, { lease_seconds: 30 });
    worker = spawnWorker([
      '--url', service.url, '--api-key', key.key, '--run', run.id, '--concurrency', '3',
      '--command', 'sleep 0.2; echo "{\\"output\\": \\"$OVERMIND_DATAPOINT_ORDER\\", \\"score\\": 1}"',
    ]);
    const done = async () => (await member.client.get(`/api/runs/${run.id}/`)).body.counts.done as number;
    await until(async () => (await done()) >= 3, 'some tasks done', 10_000);
    service.child.kill('SIGKILL');
    await service.exited;
    // Commands finish while the service is down: their results wait in the worker.
    await new Promise((resolve) => setTimeout(resolve, 1000));
    service = await startService(env);
    assert.is(await exitOf(worker, 60_000), 0, worker.stderr());
    assert.match(worker.stderr(), /the service cannot answer now/);
    assert.match(worker.stderr(), /the service answers again/);
    assert.match(worker.stderr(), /the run has ended: said goodbye/);
    const state = (await member.client.get(`/api/runs/${run.id}/`)).body;
    assert.equal([state.status, state.counts.done, state.counts.dead], ['completed', 12, 0]);
    const rows = await member.client.listAll(`/api/job-iterations/${setup.iterations[0].id}/results/`);
    assert.is(rows.length, 12, 'one result per task');
    const tasks = await tasksOf(member.client, run);
    for (const row of rows) {
      const detail = (await member.client.get(`/api/job-iterations/${setup.iterations[0].id}/results/${row.id}/`)).body;
      assert.is(detail.output, String(row.datapoint_order), 'the result its command printed');
      assert.ok(tasks.some((task: any) => task.result === row.id));
    }
  } finally {
    worker?.child.kill('SIGKILL');
    service.child.kill('SIGKILL');
    await service.exited;
    rmSync(dataDir, { recursive: true, force: true });
  }
});

test.run();
