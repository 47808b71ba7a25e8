// Results per datapoint end to end against an independent implementation: every case of
// test/data/results/reference.json (written by reference.py beside it, numpy and scipy from the
// documented rules, no code shared with the service) is posted through the API as two iterations'
// rows, and what the service answers — both summaries, the job's summary, the comparison at the
// case's confidence and every page of the paired datapoints — is held to the reference's figures:
// within a relative 1e-9 (absolute 1e-12 near zero), counts, nulls, verdicts, changes, traces and
// datapoint orders exactly. Then the two ways iterations are not comparable.
import { readFileSync } from 'node:fs';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { createAgent } from '../helpers/agent-fixtures.ts';
import type { Client } from '../helpers/client.ts';
import { memberWithProject } from '../helpers/fixtures.ts';
import { createIteration, createJob } from '../helpers/job-fixtures.ts';
import { resultsPath, summaryOf, writeResults } from '../helpers/result-fixtures.ts';
import { start, type Running } from '../helpers/service.ts';

interface Row {
  datapoint: number;
  attempt: number;
  score?: number;
  passed?: boolean;
  status: 'ok' | 'error';
  dimension_scores?: Record<string, number>;
  trace_id?: string;
  error?: string;
}
/** An entry naming its datapoint by index (regressions, improvements, paired datapoints). */
type Indexed = { datapoint: number } & Record<string, unknown>;
interface Case {
  name: string;
  datapoints: number;
  confidence: number;
  from: Row[];
  to: Row[];
  prior?: { from: Row[]; to: Row[] };
  expected: {
    summary_from: Record<string, any>;
    summary_to: Record<string, any>;
    comparison: Record<string, any>;
    paired: Indexed[];
  };
}
interface Reference {
  tolerance: { relative: number; absolute: number };
  datapoint_order: { scale: number; offset: number };
  cases: Case[];
}

const reference = JSON.parse(readFileSync(new URL('../data/results/reference.json', import.meta.url), 'utf8')) as Reference;
const { relative, absolute } = reference.tolerance;
const orderOf = (index: number) => reference.datapoint_order.scale * index + reference.datapoint_order.offset;
const batchRowsMax = 1000;

/** Keys whose numbers are counts or positions: equal exactly, never within a tolerance. */
const exactKeys = new Set([
  'datapoints', 'results', 'error_results', 'scored', 'errors', 'count', 'attempts_max', 'passed', 'failed', 'n',
  'n_paired', 'missing_in_from', 'missing_in_to', 'pass_to_fail', 'fail_to_pass', 'datapoint_order', 'version',
]);

/** Asserts `actual` has exactly the shape of `expected`: the same keys, each number within the tolerance. */
function assertFigures(actual: unknown, expected: unknown, where: string, key = ''): void {
  if (expected === null || typeof expected !== 'object') {
    if (typeof expected === 'number' && typeof actual === 'number' && !exactKeys.has(key)) {
      const near = Math.abs(actual - expected) <= Math.max(relative * Math.abs(expected), absolute);
      assert.ok(near, `${where}: ${actual} is not within tolerance of ${expected}`);
    } else {
      assert.is(actual, expected, `${where}: ${JSON.stringify(actual)} is not ${JSON.stringify(expected)}`);
    }
    return;
  }
  if (Array.isArray(expected)) {
    assert.ok(Array.isArray(actual), `${where}: ${JSON.stringify(actual)} is not an array`);
    const list = actual as unknown[];
    assert.is(list.length, expected.length, `${where}: ${list.length} items, not ${expected.length}`);
    expected.forEach((item, i) => assertFigures(list[i], item, `${where}[${i}]`, key));
    return;
  }
  assert.ok(actual !== null && typeof actual === 'object' && !Array.isArray(actual), `${where}: ${JSON.stringify(actual)} is not an object`);
  const object = actual as Record<string, unknown>;
  assert.equal(Object.keys(object).sort(), Object.keys(expected).sort(), `${where}: keys`);
  for (const [name, value] of Object.entries(expected)) assertFigures(object[name], value, `${where}.${name}`, name);
}

function chunks<T>(items: T[], size: number): T[][] {
  const out: T[][] = [];
  for (let at = 0; at < items.length; at += size) out.push(items.slice(at, at + size));
  return out;
}

/** A dataset version of `size` datapoints with orders 2i + 1, and its datapoint ids by index. */
async function datasetOf(client: Client, agent: string, size: number): Promise<{ id: string; version: number; ids: string[] }> {
  const datapoints = Array.from({ length: size }, (_, i) => ({ input: { question: `question ${i}` }, order: orderOf(i) }));
  const created = await client.post('/api/datasets/', { agent, datapoints });
  assert.is(created.status, 201, created.text);
  const points = created.body.datapoints as { id: string; order: number }[];
  assert.equal(points.map((point) => point.order), datapoints.map((point) => point.order));
  return { id: created.body.id, version: created.body.version, ids: points.map((point) => point.id) };
}

/** Posts rows (datapoints by index) in batches of at most 1,000, the first naming the version. */
async function post(client: Client, iteration: { id: string }, dataset: string, ids: string[], rows: Row[], first: boolean) {
  for (const [i, batch] of chunks(rows, batchRowsMax).entries()) {
    const results = batch.map(({ datapoint, ...rest }) => ({ datapoint: ids[datapoint], ...rest }));
    await writeResults(client, iteration, first && i === 0 ? { dataset, results } : { results });
  }
}

let running: Running;
let client: Client;
let project: string;

test.before(async () => {
  running = await start();
  const made = await memberWithProject(running.client);
  client = made.member.client;
  project = made.project.id;
});

test.after(async () => {
  await running?.stop();
});

for (const one of reference.cases) {
  test(one.name, async () => {
    const agent = await createAgent(client, project);
    const dataset = await datasetOf(client, agent.id, one.datapoints);
    const job = await createJob(client, { agent: agent.id, status: 'running' });
    // Distinct orders: two iterations created within one millisecond would otherwise list by id.
    const from = await createIteration(client, job.id, { order: 0 });
    const to = await createIteration(client, job.id, { order: 1 });
    const version = { id: dataset.id, version: dataset.version };
    for (const [iteration, side] of [[from, 'from'], [to, 'to']] as const) {
      const prior = one.prior?.[side] ?? [];
      if (prior.length > 0) await post(client, iteration, dataset.id, dataset.ids, prior, true);
      await post(client, iteration, dataset.id, dataset.ids, one[side], prior.length === 0);
    }
    const named = (item: Indexed) => ({ ...item, datapoint: dataset.ids[item.datapoint] });
    const summaryExpected = (iteration: { id: string }, figures: Record<string, any>) => ({
      ...figures,
      iteration: iteration.id,
      dataset: version,
      missing: { count: figures.missing.count, datapoints: figures.missing.datapoints.map((index: number) => dataset.ids[index]) },
    });

    const summaries = { from: summaryExpected(from, one.expected.summary_from), to: summaryExpected(to, one.expected.summary_to) };
    assertFigures(await summaryOf(client, from), summaries.from, 'summary of from');
    assertFigures(await summaryOf(client, to), summaries.to, 'summary of to');
    const jobSummary = await client.get(`/api/jobs/${job.id}/results-summary/`);
    assert.is(jobSummary.status, 200, jobSummary.text);
    // A job's summary lists the iterations with results, each without its dimensions and with its missing datapoints counted.
    const listed = ({ dimensions: _dimensions, missing, ...rest }: Record<string, any>) => ({ ...rest, missing: missing.count });
    const expectedItems = [[from, summaries.from], [to, summaries.to]].filter(([, summary]) => (summary as any).results > 0).map(([, summary]) => listed(summary as any));
    assertFigures(jobSummary.body.iterations, expectedItems, 'job summary');

    const comparePath = `/api/job-iterations/${from.id}/compare/${to.id}/`;
    const compared = await client.get(comparePath, { confidence: one.confidence });
    assert.is(compared.status, 200, compared.text);
    const { regressions, improvements, ...figures } = one.expected.comparison;
    // No race ran here: the service's own stopped_early is null on a comparable answer (scipy has no such figure).
    const expectedFigures = figures.comparable ? { ...figures, stopped_early: null } : figures;
    assertFigures(
      compared.body.results,
      { ...expectedFigures, dataset: version, regressions: regressions.map(named), improvements: improvements.map(named) },
      'comparison',
    );

    const paired = await client.listAll(`${comparePath}datapoints/`);
    assertFigures(paired, one.expected.paired.map(named), 'paired datapoints');
  });
}

test('iterations pinned to different versions, or to versions of two agents, are not comparable, and list no paired datapoints', async () => {
  const agent = await createAgent(client, project);
  const first = await datasetOf(client, agent.id, 3);
  const second = await datasetOf(client, agent.id, 3);
  const job = await createJob(client, { agent: agent.id, status: 'running' });
  const [a, b] = [await createIteration(client, job.id), await createIteration(client, job.id)];
  await post(client, a, first.id, first.ids, [{ datapoint: 0, attempt: 0, score: 0.5, status: 'ok' }], true);
  await post(client, b, second.id, second.ids, [{ datapoint: 0, attempt: 0, score: 0.75, status: 'ok' }], true);
  const results = async (x: { id: string }, y: { id: string }, query: Record<string, number> = {}) => {
    const reply = await client.get(`/api/job-iterations/${x.id}/compare/${y.id}/`, query);
    assert.is(reply.status, 200, reply.text);
    return reply.body.results;
  };
  assert.equal([first.version, second.version], [1, 2]);
  assert.equal(await results(a, b), { comparable: false, reason: 'different dataset versions: 1 and 2' });
  assert.equal(await results(b, a, { confidence: 0.8 }), { comparable: false, reason: 'different dataset versions: 2 and 1' });
  const pairs = await client.get(`/api/job-iterations/${a.id}/compare/${b.id}/datapoints/`);
  assert.equal([pairs.status, pairs.body.count, pairs.body.results], [200, 0, []]);

  const otherAgent = await createAgent(client, project);
  const otherDataset = await datasetOf(client, otherAgent.id, 3);
  const otherJob = await createJob(client, { agent: otherAgent.id, status: 'running' });
  const c = await createIteration(client, otherJob.id);
  await post(client, c, otherDataset.id, otherDataset.ids, [{ datapoint: 0, attempt: 0, score: 0.5, status: 'ok' }], true);
  assert.equal(await results(a, c), {
    comparable: false,
    reason: `different datasets: ${first.id} and ${otherDataset.id} (version 1 of two agents)`,
  });
});

test('an iteration without results is not comparable with any, and its summary is empty', async () => {
  const agent = await createAgent(client, project);
  const dataset = await datasetOf(client, agent.id, 3);
  const job = await createJob(client, { agent: agent.id, status: 'running' });
  const [scored, empty, alsoEmpty] = [await createIteration(client, job.id), await createIteration(client, job.id), await createIteration(client, job.id)];
  await post(client, scored, dataset.id, dataset.ids, [{ datapoint: 1, attempt: 0, score: 0.5, status: 'ok' }], true);
  const results = async (x: { id: string }, y: { id: string }) => (await client.get(`/api/job-iterations/${x.id}/compare/${y.id}/`)).body.results;
  assert.equal(await results(scored, empty), { comparable: false, reason: 'the second iteration has no results' });
  assert.equal(await results(empty, scored), { comparable: false, reason: 'the first iteration has no results' });
  assert.equal(await results(empty, alsoEmpty), { comparable: false, reason: 'neither iteration has results' });
  const pairs = await client.get(`/api/job-iterations/${scored.id}/compare/${empty.id}/datapoints/`);
  assert.equal([pairs.status, pairs.body.count], [200, 0]);
  assert.equal(await summaryOf(client, empty), {
    iteration: empty.id, dataset: null, datapoints: 0, results: 0, error_results: 0, scored: 0, errors: 0,
    missing: { count: 0, datapoints: [] }, attempts_max: 0, mean_score: null, score_ci95: null, passed: 0, failed: 0,
    pass_rate: null, pass_rate_ci95: null, dimensions: [],
  });
  assert.is((await client.get(resultsPath(empty))).body.count, 0);
});

test.run();
