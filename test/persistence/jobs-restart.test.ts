import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { Client } from '../helpers/client.ts';
import { createProject, memberWithProject } from '../helpers/fixtures.ts';
import { createIteration, createJob } from '../helpers/job-fixtures.ts';
import { start, type Running, type StartOptions } from '../helpers/service.ts';
import { MemoryKv } from '../../src/store/memory-kv.ts';
import type { KvDb } from '../../src/store/kv.ts';
import { FaultyKv } from '../helpers/faulty-kv.ts';

/**
 * A history touching every kind of job write: creates, updates, status moves, iterations added,
 * updated, moved between jobs and projects, deleted, and a job deleted with its iterations.
 */
async function writeHistory(client: Client): Promise<{ token: string; paths: string[] }> {
  const { member, project } = await memberWithProject(client);
  const second = await createProject(member.client);
  const a = await createJob(member.client, { project: project.id, best_score: 0.9, baseline_score: 0.4, result: { runs: [1, 2] } });
  const b = await createJob(member.client, { project: second.id, job_type: 'inference' });
  const doomed = await createJob(member.client, { project: project.id });
  const iterations = [];
  for (let i = 0; i < 6; i++) iterations.push(await createIteration(member.client, a.id, { order: i, avg_score: i / 10 }));
  await createIteration(member.client, doomed.id);
  await member.client.patch(`/api/jobs/${a.id}/`, { status: 'running' });
  await member.client.patch(`/api/jobs/${a.id}/`, { status: 'completed', report_markdown: '# done' });
  await member.client.patch(`/api/jobs/${b.id}/`, { project: project.id });
  await member.client.patch(`/api/job-iterations/${iterations[0].id}/`, { status: 'keep', dimension_scores: { x: 1 } });
  await member.client.patch(`/api/job-iterations/${iterations[1].id}/`, { job: b.id });
  await member.client.delete(`/api/job-iterations/${iterations[2].id}/`);
  await member.client.delete(`/api/jobs/${doomed.id}/`);
  const paths = ['/api/jobs/', '/api/job-iterations/', '/api/jobs/?status=completed', `/api/job-iterations/?job=${b.id}`];
  for (const job of [a, b, doomed]) paths.push(`/api/jobs/${job.id}/`);
  for (const iteration of iterations) paths.push(`/api/job-iterations/${iteration.id}/`);
  return { token: member.access, paths };
}

async function answers(client: Client, paths: string[]): Promise<unknown[]> {
  const replies = [];
  for (const path of paths) {
    const reply = await client.get(path);
    replies.push({ path, status: reply.status, body: reply.body });
  }
  return replies;
}

interface Restart {
  first: StartOptions;
  /** Runs before the first service stops (a crash loses the shutdown snapshots). */
  beforeStop?: () => void;
  second: (dataDir: string | undefined) => StartOptions;
  /** Runs against the restarted service. */
  check?: (second: Running) => void;
}

/** Writes a history, restarts on the same store, and compares every answer. */
async function restartKeepsAnswers(restart: Restart): Promise<void> {
  const first = await start(restart.first);
  let history: { token: string; paths: string[] };
  let before: unknown[];
  try {
    history = await writeHistory(first.client);
    before = await answers(first.client.as({ token: history.token }), history.paths);
    restart.beforeStop?.();
  } finally {
    await first.stop({ keepData: true });
  }
  const second = await start(restart.second(first.dataDir));
  try {
    assert.equal(await answers(second.client.as({ token: history.token }), history.paths), before);
    restart.check?.(second);
  } finally {
    await second.stop();
  }
}

const jobKeys = (db: KvDb) => [...db.keys({ start: ['job'], end: ['job', '\uffff'] })];

test('jobs and iterations answer the same after a restart on LMDB', () =>
  restartKeepsAnswers({ first: { lmdb: true }, second: (dataDir) => ({ lmdb: true, dataDir }) }));

test('with frequent snapshots the journal is compacted and a restart answers the same', () => {
  const limits = { snapshotEvery: 2 };
  return restartKeepsAnswers({
    first: { lmdb: true, limits },
    second: (dataDir) => ({ lmdb: true, dataDir, limits }),
    check(second) {
      const { kv } = second.service.deps;
      assert.is(jobKeys(kv.db('journal')).length, 0, 'a graceful stop snapshots every journaled stream');
      assert.is(jobKeys(kv.db('snapshots')).length, 2, 'the deleted job left no snapshot');
    },
  });
});

test('after a crash, recovery from snapshots and the journal suffix answers the same', () => {
  const store = new MemoryKv();
  const crashing = new FaultyKv(store);
  const limits = { snapshotEvery: 5 };
  return restartKeepsAnswers({
    first: { kv: crashing, limits },
    beforeStop: () => (crashing.discardWrites = true),
    second: () => ({ kv: store, limits }),
    check() {
      assert.ok(jobKeys(store.db('snapshots')).length > 0, 'some job state came from snapshots');
      assert.ok(jobKeys(store.db('journal')).length > 0, 'some job events came from the journal');
    },
  });
});

test.run();
