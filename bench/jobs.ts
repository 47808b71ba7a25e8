// Jobs and iterations at scale. A store is seeded with 100,000 jobs of 10 iterations each (in its
// own process, bench/seed.ts), then the service starts on it, recovering everything, and is
// measured: a page of running jobs, iterations posted (each answered after its LMDB commit), and
// its resident memory. `--quick` seeds a tenth as much, so its memory figure says little.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { compareWithBare, quick, removeDir, type Row, type Seeded, seedStore, startBareAndService } from './harness.ts';

const jobCount = quick ? 10_000 : 100_000;
const iterationsPerJob = 10;
/** Jobs the posted iterations cycle over. */
const postTargetJobs = 100;
const listRatioMin = 0.2;
const postRatioMin = 0.25;
const rssMbMax = 1536;

export async function run(): Promise<Row[]> {
  const dataDir = mkdtempSync(join(tmpdir(), 'overmind-bench-jobs-'));
  try {
    const seedStarted = performance.now();
    const seeded = await seedStore(dataDir, { jobs: jobCount, iterationsPerJob });
    const seedSeconds = (performance.now() - seedStarted) / 1000;
    const { bare, service } = await startBareAndService({ dataDir });
    try {
      const auth = { authorization: `Bearer ${await login(service.url, seeded)}` };
      const listUrl = `${service.url}/api/jobs/?status=running&ordering=-created_at`;
      await checkRunningPage(listUrl, auth);
      const list = await compareWithBare(bare, { url: listUrl, headers: auth });
      const rssMb = service.rssMb();
      const post = await compareWithBare(bare, {
        url: `${service.url}/api/job-iterations/`,
        method: 'POST',
        headers: { ...auth, 'content-type': 'application/json' },
        bodies: iterationBodies(seeded.jobIds.slice(0, postTargetJobs)),
      });
      const stored = `${jobCount.toLocaleString('en-US')} jobs`;
      return [
        {
          name: `GET /api/jobs/?status=running&ordering=-created_at (${stored})`,
          value: list.serviceRps,
          unit: 'req/s',
          ratio: list.ratio,
          target: `>= ${listRatioMin}x bare`,
          pass: list.ratio >= listRatioMin && list.failures === 0,
          note: `p50 ${list.serviceP50Ms} ms, bare ${Math.round(list.bareRps)} req/s${failures(list.failures)}`,
        },
        {
          name: `POST /api/job-iterations/ (durable, over ${postTargetJobs} jobs)`,
          value: post.serviceRps,
          unit: 'req/s',
          ratio: post.ratio,
          target: `>= ${postRatioMin}x bare`,
          pass: post.ratio >= postRatioMin && post.failures === 0,
          note: `p50 ${post.serviceP50Ms} ms, bare ${Math.round(post.bareRps)} req/s${failures(post.failures)}`,
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

function failures(count: number): string {
  return count ? `, ${count} failures` : '';
}

/** Runs the seeding script and reads the login and job ids it prints. */
async function login(url: string, seeded: Seeded): Promise<string> {
  const response = await fetch(`${url}/api/auth/token/`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email: seeded.email, password: seeded.password }),
  });
  if (!response.ok) throw new Error(`login answered ${response.status}: ${await response.text()}`);
  return ((await response.json()) as { access: string }).access;
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

/** Iteration bodies cycling over `jobIds`, as an evaluation loop posts its candidates. */
function iterationBodies(jobIds: string[]): string[] {
  return Array.from({ length: jobIds.length * 10 }, (_, i) =>
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
