// Jobs and iterations at scale. A store is seeded with 100,000 jobs of 10 iterations each (in its
// own process, bench/seed.ts), then the service starts on it, recovering everything, and is
// measured: a page of running jobs, its resident memory, and iterations posted (each answered
// after its LMDB commit) as evaluation loops post them: spread over ten running jobs, and all on
// one job. `--quick` seeds a tenth as much, so its memory figure says little.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type ChildServer, compareWithBare, type Comparison, comparisonNote, quick, removeDir, type Row, type Seeded, seedStore, sendJson, startBareAndService } from './harness.ts';

const jobCount = quick ? 10_000 : 100_000;
const iterationsPerJob = 10;
const connections = 50;
const listRatioMin = 0.3;
/** Ten running jobs, fifty connections: about five posts in flight per job. */
const spreadJobs = 10;
const spreadRatioMin = 0.25;
/** Every connection on one job: its actor decides every post. */
const hotRatioMin = 0.2;
const hotP99MsMax = 20;
/**
 * Fresh jobs take every round's posts; one job must hold a whole round of them (the default limit,
 * 10,000, is not what is measured here).
 */
const iterationsPerJobMax = 100_000;
const rssMbMax = 1536;

export async function run(): Promise<Row[]> {
  const dataDir = mkdtempSync(join(tmpdir(), 'overmind-bench-jobs-'));
  try {
    const seedStarted = performance.now();
    const seeded = await seedStore(dataDir, { jobs: jobCount, iterationsPerJob });
    const seedSeconds = (performance.now() - seedStarted) / 1000;
    const { bare, service } = await startBareAndService({ dataDir, env: { LIMIT_ITERATIONS_PER_JOB_MAX: String(iterationsPerJobMax) } });
    try {
      const access = await login(service.url, seeded);
      const auth = { authorization: `Bearer ${access}` };
      const listUrl = `${service.url}/api/jobs/?status=running&ordering=-created_at`;
      await checkRunningPage(listUrl, auth);
      const list = await compareWithBare(bare, { url: listUrl, serverPid: service.pid, headers: auth, connections });
      const rssMb = service.rssMb();
      const posts = (jobs: number) => comparePosts(bare, service, access, seeded.projectId, jobs);
      const spread = await posts(spreadJobs);
      const hot = await posts(1);
      const stored = `${jobCount.toLocaleString('en-US')} jobs`;
      return [
        {
          name: `GET /api/jobs/?status=running&ordering=-created_at (${stored}, ${connections} connections)`,
          value: list.serviceRps,
          unit: 'req/s',
          ratio: list.ratio,
          target: `>= ${listRatioMin}x bare`,
          pass: list.ratio >= listRatioMin && list.failures === 0,
          note: comparisonNote(list),
        },
        {
          name: `POST /api/job-iterations/ (durable, ${spreadJobs} running jobs, ${connections / spreadJobs} connections each)`,
          value: spread.serviceRps,
          unit: 'req/s',
          ratio: spread.ratio,
          target: `>= ${spreadRatioMin}x bare`,
          pass: spread.ratio >= spreadRatioMin && spread.failures === 0,
          note: comparisonNote(spread),
        },
        {
          name: `POST /api/job-iterations/ (durable, all ${connections} connections on one job)`,
          value: hot.serviceRps,
          unit: 'req/s',
          ratio: hot.ratio,
          target: `>= ${hotRatioMin}x bare, p99 <= ${hotP99MsMax} ms`,
          pass: hot.ratio >= hotRatioMin && hot.serviceP99Ms <= hotP99MsMax && hot.failures === 0,
          note: comparisonNote(hot),
        },
        {
          name: `RSS with ${stored} of ${iterationsPerJob} iterations`,
          value: rssMb,
          unit: 'MB',
          target: `<= ${rssMbMax} MB`,
          pass: rssMb <= rssMbMax,
          note: `startup with recovery ${(service.startupMs / 1000).toFixed(1)} s, seeding ${seedSeconds.toFixed(0)} s${quick ? ' (quick: a tenth of the jobs)' : ''}`,
        },
      ];
    } finally {
      await service.stop();
      await bare.stop();
    }
  } finally {
    removeDir(dataDir);
  }
}

/** Logs in as the seeded user. */
async function login(url: string, seeded: Seeded): Promise<string> {
  return (await sendJson(url, 'POST', '/api/auth/token/', { email: seeded.email, password: seeded.password })).access as string;
}

/** The measured page must be what it claims: a full page of the newest running jobs. */
async function checkRunningPage(url: string, headers: Record<string, string>): Promise<void> {
  const response = await fetch(url, { headers });
  const page = (await response.json()) as { count: number; results: { status: string; created_at: string }[] };
  const running = jobCount / 5;
  const sorted = page.results.every((job, i) => i === 0 || page.results[i - 1]!.created_at >= job.created_at);
  if (page.count !== running || page.results.length !== 25 || !sorted || page.results.some((job) => job.status !== 'running')) {
    throw new Error(`the running-jobs page is wrong: count ${page.count}, ${page.results.length} results`);
  }
}

/**
 * Iterations posted by 50 connections to `jobs` running jobs of the project, made afresh for every
 * round, against the bare server.
 */
export function comparePosts(bare: ChildServer, service: ChildServer, access: string, project: string, jobs: number): Promise<Comparison> {
  return compareWithBare(bare, async () => ({
    url: `${service.url}/api/job-iterations/`,
    serverPid: service.pid,
    method: 'POST',
    headers: { authorization: `Bearer ${access}`, 'content-type': 'application/json' },
    connections,
    bodies: iterationBodies(await runningJobs(service.url, access, project, jobs)),
  }));
}

/** `count` new running jobs in the project, made over HTTP as a client would. */
async function runningJobs(url: string, access: string, project: string, count: number): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < count; i++) {
    ids.push((await sendJson(url, 'POST', '/api/jobs/', { project, job_type: 'prompt_tuning', status: 'running' }, access)).id as string);
  }
  return ids;
}

/** Iteration bodies cycling over `jobIds`, as evaluation loops post their candidates. */
export function iterationBodies(jobIds: string[]): string[] {
  return Array.from({ length: jobIds.length * 100 }, (_, i) =>
    JSON.stringify({
      job: jobIds[i % jobIds.length],
      iteration_name: `bench-${i}`,
      agent_code: `def run(question):\n    return model.answer(question, seed=${i})`,
      avg_score: (i % 100) / 100,
      description: 'posted by the benchmark',
      dimension_scores: { accuracy: 0.5, tone: 0.25 },
      order: 100 + i,
    }),
  );
}
