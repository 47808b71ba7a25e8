// Runs survive a restart exactly: the service, started as `npm start` starts it, is killed with
// SIGKILL while workers lease and complete tasks (one of them completing and leasing in one call),
// again and again; after each restart every acknowledged completion is there, a lease not yet
// expired is honoured (its token still completes its task), an expired one goes back to the
// queue, and the run ends with exactly one result per task, each the result of one completion
// that was sent for it.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { rmSync } from 'node:fs';
import { Client } from '../helpers/client.ts';
import { memberWithProject } from '../helpers/fixtures.ts';
import { spawnService, type ServiceProcess } from '../helpers/process.ts';
import { createRun, registerWorker, runSetup } from '../helpers/run-fixtures.ts';
import { tempDataDir } from '../helpers/service.ts';

const env = (dataDir: string) => ({ DATA_DIR: dataDir, STORAGE: 'lmdb', LIMIT_SNAPSHOT_EVERY: '4', LIMIT_RUN_RETRY_DELAY_MS: '1', LIMIT_RUN_RETRY_DELAY_MS_MAX: '2' });

async function restart(service: ServiceProcess, dataDir: string, signal: NodeJS.Signals): Promise<ServiceProcess> {
  service.child.kill(signal);
  await service.exited;
  return spawnService(env(dataDir));
}

test('a lease survives a SIGKILL while unexpired (its token completes its task), goes back to the queue once expired, and every task ends with one result', async () => {
  const dataDir = tempDataDir();
  let service = await spawnService(env(dataDir));
  try {
    const anonymous = new Client(service.url);
    const { member, project } = await memberWithProject(anonymous);
    const setup = await runSetup(member.client, project.id, 6, 1);
    const other = await runSetup(member.client, project.id, 2, 1);
    const long = await createRun(member.client, setup, { lease_seconds: 600 });
    const short = await createRun(member.client, other, { lease_seconds: 1 });
    const worker = await registerWorker(member.client);
    const held = (await member.client.post(`/api/workers/${worker.id}/lease/`, { max: 4, run: long.id })).body.tasks;
    const expiring = (await member.client.post(`/api/workers/${worker.id}/lease/`, { max: 2, run: short.id })).body.tasks;
    const first = await member.client.post(`/api/workers/${worker.id}/complete/`, { results: [{ task: held[0].id, lease: held[0].lease, score: 0.1 }] });
    assert.equal(first.body.results[0].outcome, 'accepted');

    service = await restart(service, dataDir, 'SIGKILL');
    const client = member.client.at(service.url);
    const after = (await client.get(`/api/runs/${long.id}/`)).body;
    assert.equal([after.counts.done, after.counts.leased, after.counts.queued], [1, 3, 2], 'the acknowledged completion and the leases are there');
    const rest = await client.post(`/api/workers/${worker.id}/complete/`, { results: held.slice(1).map((task: any) => ({ task: task.id, lease: task.lease, score: 0.2 })) });
    assert.equal(rest.body.results.map((item: any) => item.outcome), ['accepted', 'accepted', 'accepted'], 'unexpired leases are honoured');
    // The short run's leases expired while the service was down: back to the queue, leased again.
    const again = (await client.post(`/api/workers/${worker.id}/lease/`, { max: 10, run: short.id, wait_ms: 3000 })).body.tasks;
    assert.equal(again.map((task: any) => task.id).sort(), expiring.map((task: any) => task.id).sort());
    const late = await client.post(`/api/workers/${worker.id}/complete/`, { results: [{ task: expiring[0].id, lease: expiring[0].lease, score: 1 }] });
    assert.equal(late.body.results[0].outcome, 'stale', 'the old token no longer completes it');
  } finally {
    service.child.kill('SIGKILL');
    await service.exited;
    rmSync(dataDir, { recursive: true, force: true });
  }
});

test('killed with SIGKILL again and again while workers complete tasks: no acknowledged completion lost, none applied twice, one result per task', async () => {
  const dataDir = tempDataDir();
  let service = await spawnService(env(dataDir));
  try {
    const anonymous = new Client(service.url);
    const { member, project } = await memberWithProject(anonymous);
    const setup = await runSetup(member.client, project.id, 40, 3);
    const run = await createRun(member.client, setup, { lease_seconds: 2 });
    const workers = [await registerWorker(member.client), await registerWorker(member.client), await registerWorker(member.client)];
    let url = service.url;
    /** Every score sent for each task, and the one whose completion was acknowledged as accepted. */
    const sent = new Map<string, Set<number>>();
    const accepted = new Map<string, number>();
    /** Tasks whose completion was accepted twice (there must be none). */
    const twice: string[] = [];
    let next = 0;
    let stopping = false;
    /** Tasks that came with a completion's answer (`next`). */
    let leasedWithCompletions = 0;
    /** A worker's loop; `chained`: each completion leases the next tasks (`next`), leasing alone only when it holds none. */
    const work = async (worker: any, chained: boolean) => {
      let held: any[] = [];
      while (!stopping) {
        try {
          const client = member.client.at(url);
          let tasks = held;
          held = [];
          if (tasks.length === 0) {
            const leased = await client.post(`/api/workers/${worker.id}/lease/`, { max: 5, wait_ms: 200 });
            if (leased.status !== 200) continue;
            tasks = leased.body.tasks;
          }
          const items = tasks.map((task: any) => {
            const score = ++next;
            if (!sent.has(task.id)) sent.set(task.id, new Set());
            sent.get(task.id)!.add(score);
            return { task: task.id, lease: task.lease, score };
          });
          if (items.length === 0) continue;
          const completed = await client.post(`/api/workers/${worker.id}/complete/`, { results: items, ...(chained ? { next: { max: 5, wait_ms: 0 } } : {}) });
          if (completed.status !== 200) continue;
          if (chained) {
            held = completed.body.tasks;
            leasedWithCompletions += held.length;
          }
          completed.body.results.forEach((result: any, i: number) => {
            if (result.outcome !== 'accepted') return;
            if (accepted.has(result.task)) twice.push(result.task);
            accepted.set(result.task, items[i].score);
          });
        } catch {
          await new Promise((resolve) => setTimeout(resolve, 20)); // the service is down: try again
        }
      }
    };
    // One worker completes and leases in one call: its completions and leases share commits that the kills cut through too.
    const running = workers.map((worker, i) => work(worker, i === 0));
    for (let round = 0; round < 4; round++) {
      await new Promise((resolve) => setTimeout(resolve, 150 + round * 70));
      service = await restart(service, dataDir, 'SIGKILL');
      url = service.url;
    }
    const client = member.client.at(service.url);
    for (let waited = 0; waited < 30_000; waited += 100) {
      if ((await client.get(`/api/runs/${run.id}/`)).body.status === 'completed') break;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    stopping = true;
    await Promise.all(running);
    assert.equal(twice, [], 'no completion is accepted twice');
    assert.ok(accepted.size > 0, 'completions were acknowledged across the restarts');
    assert.ok(leasedWithCompletions > 0, 'tasks were leased with completions');
    const state = (await client.get(`/api/runs/${run.id}/`)).body;
    assert.equal([state.status, state.counts.done, state.counts.total], ['completed', 120, 120]);
    const tasks = await client.listAll(`/api/runs/${run.id}/tasks/`);
    for (const iteration of setup.iterations) {
      const rows = await client.listAll(`/api/job-iterations/${iteration.id}/results/`);
      assert.is(rows.length, 40, 'one result per task');
      for (const row of rows) {
        const task = tasks.find((one: any) => one.result === row.id);
        assert.ok(task, `row ${row.id} is a task's`);
        assert.ok(sent.get(task.id)?.has(row.score), `task ${task.id}'s result is one that was sent for it`);
        if (accepted.has(task.id)) assert.is(row.score, accepted.get(task.id), `task ${task.id}'s acknowledged completion is its result`);
      }
    }
  } finally {
    service.child.kill('SIGKILL');
    await service.exited;
    rmSync(dataDir, { recursive: true, force: true });
  }
});

test.run();
