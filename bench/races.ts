// `npm run bench -- races`: what racing candidates saves (issue 37).
// - The simulation (bench/race-savings.ts): many seeded races of the issue's mix and of an
//   optimization loop's proposals, the race rule applied pair by pair as the service applies it.
// - The service's own work per completion: src/domain/run-race.ts deciding (advanceRace) and
//   writing (applyRaceAdvance) what one completed task changes, for 8 candidates on 500
//   datapoints, one task at a time.
// - One real race over HTTP: an in-memory service, the issue's mix drawn from a seed (an
//   incumbent with its 500 results already written, 8 candidates), and in-process workers
//   (runWorker) answering each task with its drawn score; the candidate tasks it ran against the
//   full grid, whether the best candidate left is the full grid's best, and its time.
import { pino } from 'pino';
import { advanceRace, applyRaceAdvance, newRace, type RaceValue } from '../src/domain/run-race.ts';
import { createService } from '../src/service.ts';
import { runWorker } from '../src/worker/handler-worker.ts';
import { Sampler } from '../test/helpers/race-simulation.ts';
import { median, type Row } from './harness.ts';
import { raceSavingsRows } from './race-savings.ts';

const datapoints = 500;
const effects = [-0.3, -0.2, -0.15, -0.1, -0.05, 0, 0.03, 0.08];
const completionMicrosecondsMax = 5;
const tasksSavedMin = 0.4;

export async function run(): Promise<Row[]> {
  return [...(await raceSavingsRows()), serviceWorkRow(), ...(await realRaceRows())];
}

/** The issue's mix, drawn from `seed`: the incumbent's scores and each candidate's. */
function issueMix(seed: number): { incumbent: number[]; candidates: number[][] } {
  const sampler = new Sampler(seed);
  const incumbent = Array.from({ length: datapoints }, () => sampler.beta(2, 1.2));
  const candidates = effects.map((effect) => incumbent.map((score) => Math.min(1, Math.max(0, score + effect + 0.15 * sampler.normal()))));
  return { incumbent, candidates };
}

/** Microseconds the service's race code takes per completed task (decide, then apply), all candidates live to the end. */
function serviceWorkRow(): Row {
  const { incumbent, candidates } = issueMix(11);
  const iterations = ['incumbent', ...effects.map((_, k) => `candidate-${k}`)];
  const config = { incumbent: 'incumbent', alpha: 0.05, min_pairs: datapoints, stop_better: false, score_range: [0, 1] as [number, number] };
  const round = (): number => {
    // min_pairs = N keeps every candidate live: the work measured is the most a completion costs.
    const race = newRace(config, { iterations: iterations.slice(1), datapoints, attempts: 1, datapointOrder: Array.from({ length: datapoints }, (_, i) => i) }, incumbent);
    const started = performance.now();
    for (let d = 0; d < datapoints; d++) {
      for (let k = 0; k < candidates.length; k++) {
        const values: RaceValue[] = [[k, d, candidates[k]![d]!]];
        const advance = advanceRace(race, values, '2026-12-05T00:00:00.000Z');
        if (advance) applyRaceAdvance(race, advance);
      }
    }
    return ((performance.now() - started) * 1000) / (datapoints * candidates.length);
  };
  round();
  const microseconds = median(Array.from({ length: 5 }, round));
  return {
    name: 'race: the service\'s work per completion (decide + apply)',
    value: microseconds,
    unit: 'us',
    target: `<= ${completionMicrosecondsMax} us`,
    pass: microseconds <= completionMicrosecondsMax,
    note: `src/domain/run-race.ts, 8 candidates live on ${datapoints} datapoints, one task a completion; median of 5 rounds`,
  };
}

/** A JSON call that must succeed. */
async function call(url: string, method: string, path: string, headers: Record<string, string>, body?: unknown): Promise<any> {
  const response = await fetch(url + path, { method, headers: { 'content-type': 'application/json', ...headers }, body: body === undefined ? undefined : JSON.stringify(body) });
  const text = await response.text();
  if (!response.ok) throw new Error(`${method} ${path}: ${response.status} ${text}`);
  return text ? JSON.parse(text) : null;
}

async function realRaceRows(): Promise<Row[]> {
  const service = await createService({ storage: 'memory', logger: pino({ level: 'silent' }), passwordHashCost: 1024 });
  const { port } = await service.listen(0, '127.0.0.1');
  const url = `http://127.0.0.1:${port}`;
  try {
    const { incumbent, candidates } = issueMix(2026);
    const token = { authorization: `Bearer ${(await call(url, 'POST', '/api/auth/register/', {}, { email: 'race@example.com', password: 'race bench', password_confirm: 'race bench' })).access}` };
    const project = await call(url, 'POST', '/api/projects/', token, { name: 'Race', slug: 'race' });
    const key = (await call(url, 'POST', '/api/auth/api-keys/', token, { project: project.id, name: 'bench' })).key as string;
    const auth = { 'x-api-key': key };
    const agent = await call(url, 'POST', '/api/agents/', auth, { name: 'Raced', slug: 'raced', project: project.id });
    const points = Array.from({ length: datapoints }, (_, i) => ({ input: { i } }));
    const dataset = await call(url, 'POST', '/api/datasets/', auth, { agent: agent.id, datapoints: points });
    const job = await call(url, 'POST', '/api/jobs/', auth, { agent: agent.id });
    const made = [];
    for (let i = 0; i <= effects.length; i++) made.push(await call(url, 'POST', '/api/job-iterations/', auth, { job: job.id, order: i, iteration_name: i === 0 ? 'incumbent' : `candidate ${i}` }));
    const [best, ...rest] = made;
    await call(url, 'POST', `/api/job-iterations/${best.id}/results/`, auth, { dataset: dataset.id, results: incumbent.map((score, order) => ({ datapoint_order: order, score })) });
    const candidateOf = new Map<string, number>(rest.map((iteration, k) => [iteration.id, k]));
    const started = performance.now();
    const run = await call(url, 'POST', `/api/jobs/${job.id}/runs/`, auth, {
      dataset: dataset.id,
      iterations: rest.map((iteration) => iteration.id),
      seed: 7,
      race: { incumbent: best.id, score_range: [0, 1] },
    });
    const worker = runWorker({
      service,
      apiKey: key,
      run: run.id,
      concurrency: 32,
      batch: 64,
      handler: (task) => ({ score: candidates[candidateOf.get(task.iteration_id)!]![task.order]! }),
    });
    await worker.done;
    const seconds = (performance.now() - started) / 1000;
    const ended = await call(url, 'GET', `/api/runs/${run.id}/`, auth);
    const executed = ended.counts.done + ended.counts.dead;
    const grid = effects.length * datapoints;
    const saved = 1 - executed / grid;
    const means = candidates.map((scores) => scores.reduce((sum, score) => sum + score, 0) / datapoints);
    const gridBest = means.indexOf(Math.max(...means));
    const left = ended.race.candidates.map((candidate: any, k: number) => (candidate.stopped_at === null ? means[k]! : Number.NEGATIVE_INFINITY));
    const raceBest = left.indexOf(Math.max(...left));
    const states = ended.race.candidates.map((candidate: any) => `${candidate.state}${candidate.stopped_at === null ? '' : `@${candidate.stopped_at}`}`).join(', ');
    return [
      {
        name: 'race over HTTP: candidate tasks saved (8 candidates, 500 datapoints, in-process workers)',
        value: 100 * saved,
        unit: '%',
        target: `>= ${100 * tasksSavedMin}% fewer than the full grid`,
        pass: saved >= tasksSavedMin,
        note: `${executed} of ${grid} tasks in ${seconds.toFixed(2)} s; ${ended.reason}; candidates: ${states}`,
      },
      {
        name: 'race over HTTP: the best candidate left is the full grid\'s best',
        value: raceBest === gridBest ? 1 : 0,
        unit: 'yes (1) / no (0)',
        target: '1',
        pass: raceBest === gridBest,
        note: `full grid's best: candidate ${gridBest + 1} (effect ${effects[gridBest]})`,
      },
    ];
  } finally {
    await service.close();
  }
}
