// The floor: how close to the bare server Koa, @koa/router and koa-body alone come on this
// machine (bench/koa-floor-server.ts), measured as the service's figures are, and the service's
// own iteration post with no disk under it (STORAGE=memory). Reported, not targets: they show how
// much of a service figure's distance from the bare server is the stack's, how much the service's
// request path adds, and so how much is left for the durable store. Last, the durable store's own
// floor: one synced write through the service's LMDB store (src/store/lmdb-kv.ts) at a time, the
// least a durable answer (an iteration post, a lease) can wait.
import { type ChildServer, compareWithBare, comparisonNote, percentile, removeDir, signUp, startBare, startChildServer, startService, type Comparison, type Row } from './harness.ts';
import { comparePosts, iterationBodies } from './jobs.ts';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LmdbKv } from '../src/store/lmdb-kv.ts';

/** Synced writes timed one after another, a millisecond apart (an idle store, as a lone request finds it). */
const commitSamples = 500;

/** Running jobs the posts spread over, as in the jobs suite's ten-job figure. */
const spreadJobs = 10;

export async function run(): Promise<Row[]> {
  const bare = await startBare();
  try {
    return [...(await stackFloor(bare)), ...(await postsWithoutDisk(bare)), ...(await commitFloor())];
  } finally {
    await bare.stop();
  }
}

async function stackFloor(bare: ChildServer): Promise<Row[]> {
  const floor = await startChildServer('bench/koa-floor-server.ts');
  try {
    const get = await compareWithBare(bare, { url: `${floor.url}/api/agents/0b0b/`, serverPid: floor.pid, connections: 50 });
    const post = await compareWithBare(bare, {
      url: `${floor.url}/api/job-iterations/`,
      serverPid: floor.pid,
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      bodies: iterationBodies(['00000000-0000-4000-8000-000000000000']),
      connections: 50,
    });
    return [
      reported('floor: Koa + @koa/router, GET of a ready JSON text (50 connections)', get),
      reported('floor: Koa + @koa/router + koa-body, POST of an iteration (50 connections)', post),
    ];
  } finally {
    await floor.stop();
  }
}

/**
 * The jobs suite's iteration posts, over ten jobs and on one, made by the whole service (auth,
 * validation, actors, read model, answer) on the in-memory store: what a durable post would reach
 * if its commit were free.
 */
async function postsWithoutDisk(bare: ChildServer): Promise<Row[]> {
  const service = await startService({ env: { STORAGE: 'memory', LIMIT_ITERATIONS_PER_JOB_MAX: '100000' } });
  try {
    const { access, projectId } = await signUp(service.url, 'floor');
    const posts = (jobs: number) => comparePosts(bare, service, access, projectId, jobs);
    const name = 'floor: the service on STORAGE=memory, POST /api/job-iterations/';
    return [
      reported(`${name} (${spreadJobs} running jobs, 50 connections)`, await posts(spreadJobs)),
      reported(`${name} (all 50 connections on one job)`, await posts(1)),
    ];
  } finally {
    await service.stop();
    removeDir(service.dataDir);
  }
}

/** One small synced write at a time through the service's LMDB store, in this process: its latency. */
async function commitFloor(): Promise<Row[]> {
  const dir = mkdtempSync(join(tmpdir(), 'overmind-bench-commit-'));
  const kv = new LmdbKv(dir);
  try {
    const db = kv.db('floor');
    const times: number[] = [];
    for (let i = 0; i < commitSamples; i++) {
      const started = performance.now();
      await kv.write([{ db, key: ['floor', i], value: { i, text: 'a small value' } }]);
      times.push(performance.now() - started);
      await new Promise((resolve) => setTimeout(resolve, 1));
    }
    return [{
      name: 'floor: one synced LMDB write at a time (the store alone), p50',
      value: percentile(times, 0.5),
      unit: 'ms',
      target: 'reported',
      pass: true,
      note: `p99 ${percentile(times, 0.99).toFixed(2)} ms, ${commitSamples} writes; a durable answer waits at least this`,
    }];
  } finally {
    await kv.close();
    removeDir(dir);
  }
}

function reported(name: string, comparison: Comparison): Row {
  return {
    name,
    value: comparison.serviceRps,
    unit: 'req/s',
    ratio: comparison.ratio,
    target: 'reported',
    pass: comparison.failures === 0,
    note: comparisonNote(comparison),
  };
}
