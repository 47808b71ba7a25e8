// Watching and comparing (issue 10) at full size: two versions of one agent's dataset of 100,000
// datapoints each, and a job of 100,000 iterations (LIMIT_ITERATIONS_PER_JOB_MAX raised for it),
// all posted over HTTP to the service started as `npm start` starts it. Each figure is the time
// to the last byte of a first page, as a client waits for it: the diff cold (both versions'
// digests and the diff computed), with its versions' digests known (the reverse diff), and warm
// (from the diff cache), and the progress of the job. `--quick` uses a tenth of the sizes.
import { quick, removeDir, sendJson, signUp, startService, type Row } from './harness.ts';

const scale = quick ? 10 : 1;
const datapoints = 100_000 / scale;
const iterations = 100_000 / scale;
/** Iterations posted at once while seeding: well under the mailbox limit of the job's actor. */
const postsInFlight = 256;
/** Requests per warm figure (the median is reported). */
const samples = 20;
const diffColdMsMax = 1000;
const diffWarmMsMax = 50;
const progressMsMax = 100;

export async function run(): Promise<Row[]> {
  const service = await startService({ env: { LIMIT_ITERATIONS_PER_JOB_MAX: String(iterations) } });
  try {
    const api = await client(service.url);
    const seedStarted = performance.now();
    const { from, to } = await seedVersions(api);
    const jobId = await seedJob(api);
    const seedSeconds = (performance.now() - seedStarted) / 1000;

    const diffPath = (a: string, b: string) => `/api/datasets/${a}/diff/${b}/`;
    const cold = await api.timed(diffPath(from, to));
    const digestsKnown = await api.timed(diffPath(to, from));
    const warm = await median(() => api.timed(diffPath(from, to)));
    const warmLast = await median(() => api.timed(`${diffPath(from, to)}?page=last`));
    const progressPath = `/api/jobs/${jobId}/progress/`;
    const progressFirst = await api.timed(progressPath);
    const progress = await median(() => api.timed(progressPath));
    const progressSmall = await median(() => api.timed(`${progressPath}?page_size=100`));
    const progressLast = await median(() => api.timed(`${progressPath}?page=last`));

    const size = (count: number) => count.toLocaleString('en-US');
    const diffName = `diff of two ${size(datapoints)}-datapoint versions, first page`;
    const progressName = `progress of a ${size(iterations)}-iteration job`;
    const ms = (value: number, max: number, name: string, note?: string): Row =>
      ({ name, value, unit: 'ms', target: `<= ${max} ms`, pass: value <= max, ...(note ? { note } : {}) });
    return [
      ms(cold, diffColdMsMax, `${diffName}, cold`, `seeding ${seedSeconds.toFixed(0)} s`),
      ms(digestsKnown, diffColdMsMax, `${diffName}, reverse (digests known, diff computed)`),
      ms(warm, diffWarmMsMax, `${diffName}, warm (cached diff)`, `median of ${samples}`),
      ms(warmLast, diffWarmMsMax, `diff, last page, warm`, `median of ${samples}`),
      ms(progressFirst, progressMsMax, `${progressName}, first page of 1,000, first request`),
      ms(progress, progressMsMax, `${progressName}, first page of 1,000`, `median of ${samples}`),
      ms(progressSmall, progressMsMax, `${progressName}, first page of 100`, `median of ${samples}`),
      ms(progressLast, progressMsMax, `${progressName}, last page of 1,000`, `median of ${samples}`),
    ];
  } finally {
    await service.stop();
    removeDir(service.dataDir);
  }
}

async function median(measure: () => Promise<number>): Promise<number> {
  const values: number[] = [];
  for (let i = 0; i < samples; i++) values.push(await measure());
  return values.sort((a, b) => a - b)[Math.floor(samples / 2)]!;
}

/** A user with a project, and calls made as that user. */
async function client(url: string) {
  const { access, projectId } = await signUp(url, 'bench-views');
  const headers = { authorization: `Bearer ${access}` };
  return {
    project: projectId,
    post: (path: string, body: unknown) => sendJson(url, 'POST', path, body, access),
    /** Milliseconds until the whole answer (200) has arrived. */
    async timed(path: string): Promise<number> {
      const started = performance.now();
      const response = await fetch(url + path, { headers });
      await response.arrayBuffer();
      if (response.status !== 200) throw new Error(`GET ${path} answered ${response.status}`);
      return performance.now() - started;
    },
  };
}

type Api = Awaited<ReturnType<typeof client>>;

/** Two versions of one agent's dataset: 1% of outputs changed, 0.5% removed, 0.5% added. */
async function seedVersions(api: Api): Promise<{ from: string; to: string }> {
  const agent = await api.post('/api/agents/', { name: 'Bench agent', slug: 'bench-agent', project: api.project });
  const point = (i: number) => ({ input: { question: `What is the status of ticket ${i}?`, channel: 'email' }, expected_output: `Ticket ${i} is open.`, persona: i % 2 ? 'customer' : 'agent', tags: ['bench'] });
  const first = Array.from({ length: datapoints }, (_, i) => point(i));
  const second = first
    .filter((_, i) => i % 200 !== 0)
    .map((datapoint, i) => (i % 100 === 0 ? { ...datapoint, expected_output: 'Ticket closed.' } : datapoint))
    .concat(Array.from({ length: datapoints / 200 }, (_, i) => point(datapoints + i)));
  const from = await api.post('/api/datasets/', { agent: agent.id, datapoints: first });
  const to = await api.post('/api/datasets/', { agent: agent.id, datapoints: second });
  return { from: from.id as string, to: to.id as string };
}

async function seedJob(api: Api): Promise<string> {
  const job = await api.post('/api/jobs/', { project: api.project, status: 'running' });
  let next = 0;
  const poster = async () => {
    for (let i = next++; i < iterations; i = next++) {
      await api.post('/api/job-iterations/', {
        job: job.id,
        iteration_name: `candidate-${i}`,
        order: i,
        avg_score: i % 7 === 0 ? null : Math.sin(i) / 2 + 0.5,
        status: ['keep', 'discard', null][i % 3],
        agent_code: `def run(question):\n    return model.answer(question, seed=${i})`,
        dimension_scores: { accuracy: (i % 10) / 10 },
      });
    }
  };
  await Promise.all(Array.from({ length: postsInFlight }, poster));
  return job.id as string;
}
