// A job large enough for its snapshots to store iterations in parts (src/actors/job-codec.ts),
// changed between snapshots, answers the same after a crash (snapshot parts and journal suffix)
// and after a graceful restart on LMDB, and its store keeps no part that no snapshot references.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { iterationsPerPart } from '../../src/actors/job-codec.ts';
import { MemoryKv } from '../../src/store/memory-kv.ts';
import type { Kv } from '../../src/store/kv.ts';
import { FaultyKv } from '../helpers/faulty-kv.ts';
import { memberWithProject } from '../helpers/fixtures.ts';
import { createIteration, createJob } from '../helpers/job-fixtures.ts';
import { start, type StartOptions } from '../helpers/service.ts';
import type { Client } from '../helpers/client.ts';

const limits = { snapshotEvery: 16 };

/** A job of three full parts and a partial one, with an update and a removal after some snapshots. */
async function bigJob(client: Client): Promise<{ token: string; job: string }> {
  const { member, project } = await memberWithProject(client);
  const job = await createJob(member.client, { project: project.id });
  const iterations = [];
  for (let i = 0; i < 3 * iterationsPerPart + 20; i++) iterations.push(await createIteration(member.client, job.id, { order: i }));
  await member.client.patch(`/api/job-iterations/${iterations[iterationsPerPart + 5].id}/`, { status: 'keep', avg_score: 0.75 });
  await member.client.delete(`/api/job-iterations/${iterations[3].id}/`);
  for (let i = 0; i < 40; i++) await createIteration(member.client, job.id, { order: 1000 + i });
  return { token: member.access, job: job.id };
}

/** The job as answered, and every page of its iterations (links name the server's port, so only results). */
async function answers(client: Client, job: string): Promise<unknown[]> {
  const replies: unknown[] = [(await client.get(`/api/jobs/${job}/`)).body];
  for (let page = 1; ; page++) {
    const reply = await client.get(`/api/job-iterations/?job=${job}&page=${page}`);
    replies.push(reply.body.results);
    if (!reply.body.next) return replies;
  }
}

/** Part keys of the job's stream, and the part ids its snapshot references. */
function partsOf(kv: Kv, job: string): { stored: string[]; referenced: string[] } {
  const stored = [...kv.db('parts').keys({ start: ['job', job], end: ['job', job, '\uffff'] })].map((key) => String(key[2]));
  const snapshot = kv.db('snapshots').get<{ state: { parts?: string[] } }>(['job', job]);
  return { stored: stored.sort(), referenced: [...(snapshot?.state.parts ?? [])].sort() };
}

async function restartKeepsAnswers(first: StartOptions, crash: (() => void) | null, second: (dataDir: string | undefined) => StartOptions) {
  const running = await start(first);
  let written: { token: string; job: string };
  let before: unknown[];
  try {
    written = await bigJob(running.client);
    before = await answers(running.client.as({ token: written.token }), written.job);
    crash?.();
  } finally {
    await running.stop({ keepData: true });
  }
  const restarted = await start(second(running.dataDir));
  try {
    const after = await answers(restarted.client.as({ token: written.token }), written.job);
    assert.equal(after, before);
    const parts = partsOf(restarted.service.deps.kv, written.job);
    assert.ok(parts.referenced.length >= 3, `the snapshot references its full parts: ${parts.referenced.length}`);
    assert.equal(parts.stored, parts.referenced, 'no part is left that no snapshot references');
  } finally {
    await restarted.stop();
  }
}

test('a job stored in parts answers the same after a graceful restart on LMDB', () =>
  restartKeepsAnswers({ lmdb: true, limits }, null, (dataDir) => ({ lmdb: true, dataDir, limits })));

test('a job stored in parts answers the same after a crash: parts, snapshot and journal suffix', () => {
  const store = new MemoryKv();
  const crashing = new FaultyKv(store);
  return restartKeepsAnswers({ kv: crashing, limits }, () => (crashing.discardWrites = true), () => ({ kv: store, limits }));
});

test.run();
