// /api/job-iterations/{id}/results/: one row per (iteration, datapoint, attempt), written in
// batches that are checked whole before anything is stored, pinned to one dataset version, read as
// a list, one row and a summary; the same tenancy as every record.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { createAgent } from '../helpers/agent-fixtures.ts';
import { createApiKey, memberWithProject } from '../helpers/fixtures.ts';
import { createIteration, createJob } from '../helpers/job-fixtures.ts';
import { evaluated, postResults, resultsPath, summaryOf, writeResults } from '../helpers/result-fixtures.ts';
import { withService } from '../helpers/service.ts';

const listItemFields = [
  'id', 'iteration', 'datapoint', 'datapoint_order', 'attempt', 'score', 'passed', 'dimension_scores', 'status', 'error',
  'trace_id', 'span_id', 'latency_ms', 'cost', 'created_at', 'updated_at',
];
const missingId = '00000000-0000-4000-8000-000000000000';
const traceId = '0af7651916cd43dd8448eb211c80319c';
const spanId = 'b7ad6b7169203331';

test('a batch is written, answered with its counts, and read back in datapoint order; the output only in a row of its own', () =>
  withService(async ({ client }) => {
    const { member, project } = await memberWithProject(client);
    const { dataset, iteration } = await evaluated(member.client, project.id, 3);
    const [first, second, third] = dataset.datapoints;
    const written = await writeResults(member.client, iteration, {
      dataset: dataset.id,
      results: [
        { datapoint: third.id, score: 0.25, passed: false, status: 'ok', output: { answer: 'no' }, latency_ms: 812.5, cost: 0.0021 },
        { datapoint: first.id, score: 1, passed: true, dimension_scores: { accuracy: 1, tone: 0.5 }, trace_id: traceId.toUpperCase(), span_id: spanId },
        { datapoint_order: 1, attempt: 1, status: 'error', error: 'timeout after 30 s' },
      ],
    });
    assert.equal(written, { dataset: dataset.id, created: 3, replaced: 0, results_count: 3 });
    const listed = await member.client.get(resultsPath(iteration));
    assert.is(listed.body.count, 3);
    const rows = listed.body.results;
    assert.equal(Object.keys(rows[0]), listItemFields);
    assert.equal(rows.map((row: any) => [row.datapoint, row.datapoint_order, row.attempt]), [[first.id, 0, 0], [second.id, 1, 1], [third.id, 2, 0]]);
    assert.equal(rows[0], {
      ...rows[0],
      iteration: iteration.id, score: 1, passed: true, dimension_scores: { accuracy: 1, tone: 0.5 }, status: 'ok', error: '',
      trace_id: traceId, span_id: spanId, latency_ms: null, cost: null,
    });
    assert.equal([rows[1].status, rows[1].score, rows[1].error, rows[1].passed], ['error', null, 'timeout after 30 s', null]);
    assert.is(rows[0].created_at, rows[0].updated_at);
    const detail = await member.client.get(`${resultsPath(iteration)}${rows[2].id}/`);
    assert.is(detail.status, 200);
    assert.equal(detail.body, { ...rows[2], output: { answer: 'no' } });
    assert.equal([detail.body.latency_ms, detail.body.cost], [812.5, 0.0021]);
    assert.is((await member.client.get(`${resultsPath(iteration)}${missingId}/`)).status, 404);
  }));

test('a row sent again replaces it, keeping its id and created_at: a retried batch is safe', () =>
  withService(async ({ client }) => {
    const { member, project } = await memberWithProject(client);
    const { dataset, iteration } = await evaluated(member.client, project.id, 3);
    const batch = { dataset: dataset.id, results: [{ datapoint_order: 0, score: 0.5 }, { datapoint_order: 1, score: 0.75, output: 'kept?' }] };
    await writeResults(member.client, iteration, batch);
    const before = (await member.client.get(resultsPath(iteration))).body.results;
    assert.equal(await writeResults(member.client, iteration, batch), { dataset: dataset.id, created: 0, replaced: 2, results_count: 2 });
    const changed = await writeResults(member.client, iteration, { results: [{ datapoint_order: 1, score: 0.9 }, { datapoint_order: 2, score: 0 }] });
    assert.equal(changed, { dataset: dataset.id, created: 1, replaced: 1, results_count: 3 });
    const after = (await member.client.get(resultsPath(iteration))).body.results;
    assert.equal(after.map((row: any) => row.score), [0.5, 0.9, 0]);
    assert.equal([after[0].id, after[1].id], [before[0].id, before[1].id]);
    assert.is(after[1].created_at, before[1].created_at);
    assert.ok(after[1].updated_at >= before[1].updated_at);
    // Replaced whole: the output it had is gone.
    assert.is((await member.client.get(`${resultsPath(iteration)}${after[1].id}/`)).body.output, null);
  }));

test('the first batch pins the iteration to its version: another version is refused, none means the pinned one', () =>
  withService(async ({ client }) => {
    const { member, project } = await memberWithProject(client);
    const { agent, dataset, iteration } = await evaluated(member.client, project.id, 3);
    const unpinned = await postResults(member.client, iteration, { results: [{ datapoint_order: 0, score: 1 }] });
    assert.equal([unpinned.status, unpinned.body], [400, { dataset: ['This field is required.'] }]);
    await writeResults(member.client, iteration, { dataset: dataset.id, results: [{ datapoint_order: 0, score: 1 }] });
    const next = await member.client.post('/api/datasets/', { agent: agent.id, datapoints: [{ input: 'x' }] });
    const other = await postResults(member.client, iteration, { dataset: next.body.id, results: [{ datapoint_order: 0, score: 1 }] });
    assert.is(other.status, 400);
    assert.equal(other.body, {
      dataset: [`This iteration's results are of dataset version 1 (${dataset.id}); results of another version need another iteration.`],
    });
    assert.is((await writeResults(member.client, iteration, { results: [{ datapoint_order: 1, score: 1 }] })).results_count, 2);
    // Another iteration of the job may take the new version.
    const second = await createIteration(member.client, iteration.job);
    assert.is((await writeResults(member.client, second, { dataset: next.body.id, results: [{ datapoint_order: 0, score: 1 }] })).dataset, next.body.id);
  }));

test("a batch's version must be a dataset version of the job's agent, visible to the caller", () =>
  withService(async ({ client }) => {
    const { member, project } = await memberWithProject(client);
    const { iteration } = await evaluated(member.client, project.id, 2);
    const stranger = await evaluated(member.client, project.id, 2);
    const row = [{ datapoint_order: 0, score: 1 }];
    const otherAgent = await postResults(member.client, iteration, { dataset: stranger.dataset.id, results: row });
    assert.equal([otherAgent.status, otherAgent.body], [400, { dataset: ["Must be a dataset version of the job's agent."] }]);
    const unknown = await postResults(member.client, iteration, { dataset: missingId, results: row });
    assert.equal(unknown.body, { dataset: [`Invalid pk "${missingId}" - object does not exist.`] });
    const someoneElse = await memberWithProject(client);
    const theirs = await evaluated(someoneElse.member.client, someoneElse.project.id, 2);
    const hidden = await postResults(member.client, iteration, { dataset: theirs.dataset.id, results: row });
    assert.equal(hidden.body, { dataset: [`Invalid pk "${theirs.dataset.id}" - object does not exist.`] });
    const agentless = await createIteration(member.client, (await createJob(member.client, { project: project.id })).id);
    const noAgent = await postResults(member.client, agentless, { dataset: stranger.dataset.id, results: row });
    assert.equal(noAgent.body, { dataset: ["Must be a dataset version of the job's agent."] });
  }));

test('a datapoint is named by its id or by its order, which must name exactly one datapoint', () =>
  withService(async ({ client }) => {
    const { member, project } = await memberWithProject(client);
    const agent = await createAgent(member.client, project.id);
    const dataset = (await member.client.post('/api/datasets/', { agent: agent.id, datapoints: [{ order: 10 }, { order: 7 }, { order: 10 }] })).body;
    const iteration = await createIteration(member.client, (await createJob(member.client, { agent: agent.id })).id);
    const reply = await postResults(member.client, iteration, {
      dataset: dataset.id,
      results: [
        { datapoint_order: 7, score: 1 },
        { datapoint_order: 10, score: 1 },
        { datapoint_order: 3, score: 1 },
        { datapoint: dataset.datapoints[2].id, datapoint_order: 7, score: 1 },
        { datapoint: missingId, score: 1 },
        { score: 1 },
        { datapoint: dataset.datapoints[2].id.toUpperCase(), datapoint_order: 10, score: 1 },
      ],
    });
    assert.is(reply.status, 400);
    assert.equal(reply.body, {
      results: [
        {},
        { datapoint_order: ['2 datapoints have order 10 in dataset version 1: name one by its id (datapoint).'] },
        { datapoint_order: ['No datapoint has order 3 in dataset version 1.'] },
        { datapoint_order: [`Datapoint ${dataset.datapoints[2].id} has order 10, not 7.`] },
        { datapoint: [`Invalid pk "${missingId}" - object does not exist.`] },
        { datapoint: ['This field is required.'] },
        {},
      ],
    });
    assert.is((await member.client.get(resultsPath(iteration))).body.count, 0, 'nothing of a refused batch is stored');
    assert.is((await summaryOf(member.client, iteration)).dataset, null, 'nor is the iteration pinned');
  }));

test('every row is checked before anything is written: errors name the row, as DRF nests them', () =>
  withService(async ({ client }) => {
    const { member, project } = await memberWithProject(client);
    const { dataset, iteration } = await evaluated(member.client, project.id, 4);
    // JSON has no infinity; 1e400 would parse to one, and is refused as the body reader refuses it anywhere.
    const body = `{"dataset": "${dataset.id}", "results": [{"datapoint_order": 0, "score": 1}, {"datapoint_order": 1, "score": 1e400}]}`;
    const infinite = await member.client.request('POST', resultsPath(iteration), body, { 'content-type': 'application/json' });
    assert.equal([infinite.status, infinite.body], [400, { detail: 'JSON parse error - a number is too large', code: 'parse_error' }]);
    const reply = await postResults(member.client, iteration, {
      dataset: dataset.id,
      results: [
        { datapoint_order: 0, score: 1 },
        { datapoint_order: 1, attempt: -1, score: 1 },
        { datapoint_order: 2, score: 1, trace_id: 'not-a-trace', span_id: '0123' },
        { datapoint_order: 3 },
        { datapoint_order: 3, score: null },
        { datapoint_order: 0, score: 'high', passed: 'yes', status: 'skipped', dimension_scores: { accuracy: 'good' } },
        { datapoint_order: 0, status: 'error' },
        { datapoint_order: 0, score: 0.5 },
      ],
    });
    assert.is(reply.status, 400);
    assert.equal(reply.body, {
      results: [
        {},
        { attempt: ['Ensure this value is greater than or equal to 0.'] },
        { trace_id: ['Enter a valid value.'], span_id: ['Enter a valid value.'] },
        {},
        {},
        {
          score: ['A valid number is required.'],
          passed: ['Must be a valid boolean.'],
          status: ['"skipped" is not a valid choice.'],
          dimension_scores: { accuracy: ['A valid number is required.'] },
        },
        {},
        {},
      ],
    });
    // Once every row passes the schema, the rows are resolved against the version, still before anything is written.
    const second = await postResults(member.client, iteration, {
      dataset: dataset.id,
      results: [
        { datapoint_order: 0, score: 1 },
        { datapoint_order: 3 },
        { datapoint_order: 0, status: 'error' },
        { datapoint_order: 1, score: 1, attempt: 2 },
        { datapoint_order: 1, score: 0, attempt: 2 },
        { datapoint_order: 2, score: null },
      ],
    });
    assert.equal(second.body, {
      results: [
        {},
        { score: ['This field is required.'] },
        { non_field_errors: ['Another row of this batch has the same datapoint and attempt.'] },
        {},
        { non_field_errors: ['Another row of this batch has the same datapoint and attempt.'] },
        { score: ['This field may not be null.'] },
      ],
    });
    const empty = await postResults(member.client, iteration, { dataset: dataset.id, results: [] });
    assert.equal(empty.body, { results: { non_field_errors: ['This list may not be empty.'] } });
    assert.is((await member.client.get(resultsPath(iteration))).body.count, 0);
  }));

test('a score or a dimension score beyond ±1e100 is refused in DRF\'s words; at the bound, the summary and the comparison answer finite figures', () =>
  withService(async ({ client }) => {
    const { member, project } = await memberWithProject(client);
    const { dataset, job, iteration: from } = await evaluated(member.client, project.id, 3);
    // Scores near the largest double once summed to infinity, and the summary answered null where its schema says a number.
    const beyond = await postResults(member.client, from, { dataset: dataset.id, results: [
      { datapoint_order: 0, score: 1.7e308 },
      { datapoint_order: 1, score: -1.000000000001e100, dimension_scores: { a: 1e101, b: -1e100 } },
      { datapoint_order: 2, score: 1e100, cost: 1.7e308 },
    ] });
    assert.is(beyond.status, 400, beyond.text);
    assert.equal(beyond.body, { results: [
      { score: ['Ensure this value is less than or equal to 1e+100.'] },
      { score: ['Ensure this value is greater than or equal to -1e+100.'], dimension_scores: { a: ['Ensure this value is less than or equal to 1e+100.'] } },
      {},
    ] });
    assert.is((await member.client.get(resultsPath(from))).body.count, 0, 'nothing of the batch written');
    const to = await createIteration(member.client, job.id, { order: 2 });
    await writeResults(member.client, from, { dataset: dataset.id, results: [0, 1, 2].map((order) => ({ datapoint_order: order, score: order === 1 ? -1e100 : 1e100, dimension_scores: { a: order === 0 ? -1e100 : 1e100 } })) });
    await writeResults(member.client, to, { dataset: dataset.id, results: [0, 1, 2].map((order) => ({ datapoint_order: order, score: -1e100 })) });
    // The client checks each answer against its documented schema (a null where a number belongs fails it).
    const summary = await summaryOf(member.client, from);
    const figures = [summary.mean_score, summary.score_ci95.low, summary.score_ci95.high, summary.dimensions[0].mean, summary.dimensions[0].ci95.low];
    assert.ok(figures.every(Number.isFinite), JSON.stringify(figures));
    assert.ok(Math.abs(summary.mean_score - 1e100 / 3) < 1e85, String(summary.mean_score));
    const compared = await member.client.get(`/api/job-iterations/${from.id}/compare/${to.id}/`);
    assert.is(compared.status, 200, compared.text);
    const { score } = compared.body.results;
    assert.ok([score.delta, score.se, score.ci95.low, score.ci95.high, score.p_value].every(Number.isFinite), JSON.stringify(score));
  }));

test('rows per batch, output size, attempts, dimensions and results per iteration are bounded; the body too', () =>
  withService(
    async ({ client }) => {
      const { member, project } = await memberWithProject(client);
      const { dataset, iteration } = await evaluated(member.client, project.id, 6);
      const row = (order: number, fields: Record<string, unknown> = {}) => ({ datapoint_order: order, score: 1, ...fields });
      const tooMany = await postResults(member.client, iteration, { dataset: dataset.id, results: [0, 1, 2, 3, 4].map((order) => row(order)) });
      assert.equal(tooMany.body, { results: { non_field_errors: ['Ensure this field has no more than 4 elements.'] } });
      const limited = await postResults(member.client, iteration, {
        dataset: dataset.id,
        results: [
          row(0, { output: 'x'.repeat(18) }),
          row(1, { attempt: 3 }),
          row(2, { dimension_scores: { a: 1, b: 2, c: 3 } }),
          row(3, { output: 'x'.repeat(17), attempt: 2, dimension_scores: { a: 1, b: 2 } }),
        ],
      });
      assert.equal(limited.body, {
        results: [
          { output: ['Ensure this value has at most 19 characters as JSON (it has 20).'] },
          { attempt: ['Ensure this value is less than or equal to 2.'] },
          { dimension_scores: ['Ensure this field has no more than 2 elements.'] },
          {},
        ],
      });
      await writeResults(member.client, iteration, { dataset: dataset.id, results: [row(0, { dimension_scores: { a: 1, b: 2 } }), row(1), row(2)] });
      const names = await postResults(member.client, iteration, { results: [row(3, { dimension_scores: { c: 1 } })] });
      assert.equal(names.body, { non_field_errors: ["An iteration's results have at most 2 dimension names; this batch would make 3."] });
      const full = await postResults(member.client, iteration, { results: [row(3), row(4)] });
      assert.equal(full.body, { non_field_errors: ['An iteration holds at most 4 results; this batch would make 5.'] });
      assert.is((await writeResults(member.client, iteration, { results: [row(3), row(0, { score: 0 })] })).results_count, 4);
      const large = await member.client.post(resultsPath(iteration), { results: [row(5, { error: 'x'.repeat(3000) })] });
      assert.equal([large.status, large.body.code], [413, 'payload_too_large']);
    },
    {
      limits: {
        resultRowsPerBatchMax: 4, resultOutputCharsMax: 19, attemptsPerDatapointMax: 3, resultDimensionsMax: 2,
        resultDimensionsPerIterationMax: 2, resultsPerIterationMax: 4, resultBodyBytesMax: 2048,
      },
    },
  ));

test('the list filters by status, passed, datapoint, attempt and score, and orders by score either way', () =>
  withService(async ({ client }) => {
    const { member, project } = await memberWithProject(client);
    const { dataset, iteration } = await evaluated(member.client, project.id, 4);
    await writeResults(member.client, iteration, {
      dataset: dataset.id,
      results: [
        { datapoint_order: 0, score: 0.9, passed: true },
        { datapoint_order: 0, attempt: 1, score: 0.2, passed: false },
        { datapoint_order: 1, score: 0.5, passed: true },
        { datapoint_order: 2, status: 'error', error: 'boom' },
        { datapoint_order: 3, score: 0.5 },
      ],
    });
    const keys = async (query: Record<string, string | number | boolean>) =>
      (await member.client.get(resultsPath(iteration), query)).body.results.map((row: any) => `${row.datapoint_order}/${row.attempt}`);
    assert.equal(await keys({}), ['0/0', '0/1', '1/0', '2/0', '3/0']);
    assert.equal(await keys({ status: 'error' }), ['2/0']);
    assert.equal(await keys({ passed: false }), ['0/1']);
    assert.equal(await keys({ passed: true }), ['0/0', '1/0']);
    assert.equal(await keys({ datapoint: dataset.datapoints[0].id.toUpperCase() }), ['0/0', '0/1']);
    assert.equal(await keys({ attempt: 1 }), ['0/1']);
    assert.equal(await keys({ score_min: 0.5 }), ['0/0', '1/0', '3/0']);
    assert.equal(await keys({ score_max: 0.5, score_min: 0.3 }), ['1/0', '3/0']);
    // Ties break on datapoint order, then attempt, in the last key's direction; a null score sorts last ascending.
    assert.equal(await keys({ ordering: 'score' }), ['0/1', '1/0', '3/0', '0/0', '2/0']);
    assert.equal(await keys({ ordering: '-score' }), ['2/0', '0/0', '3/0', '1/0', '0/1']);
    assert.equal(await keys({ ordering: '-datapoint_order' }), ['3/0', '2/0', '1/0', '0/1', '0/0']);
    assert.equal(await keys({ ordering: 'unknown' }), ['0/0', '0/1', '1/0', '2/0', '3/0']);
    const paged = await member.client.get(resultsPath(iteration), { page_size: 2, page: 2, ordering: '-score' });
    assert.equal([paged.body.count, paged.body.results.length], [5, 2]);
    assert.match(paged.body.next, /page=3/);
    const bad = await member.client.get(resultsPath(iteration), { score_min: 'high', status: 'skipped', datapoint: 'x', attempt: 'first' });
    assert.equal(bad.body, {
      score_min: ['Enter a number.'],
      status: ['Select a valid choice. skipped is not one of the available choices.'],
      datapoint: ['Enter a valid UUID.'],
      attempt: ['Enter a whole number.'],
    });
    assert.equal((await member.client.get(resultsPath(iteration), { score_max: '0x10', attempt: '0x1' })).body, {
      score_max: ['Enter a number.'],
      attempt: ['Enter a whole number.'],
    });
  }));

test('an iteration without results lists none and summarizes as empty', () =>
  withService(async ({ client }) => {
    const { member, project } = await memberWithProject(client);
    const { iteration } = await evaluated(member.client, project.id, 2);
    assert.equal((await member.client.get(resultsPath(iteration))).body, { count: 0, next: null, previous: null, results: [] });
    const summary = await summaryOf(member.client, iteration);
    assert.equal(summary, {
      iteration: iteration.id, dataset: null, datapoints: 0, results: 0, error_results: 0, scored: 0, errors: 0,
      missing: { count: 0, datapoints: [] }, attempts_max: 0, mean_score: null, score_ci95: null, passed: 0, failed: 0,
      pass_rate: null, pass_rate_ci95: null, dimensions: [],
    });
  }));

test('a summary counts every datapoint once: scored, errored or missing, the first 100 missing named in order', () =>
  withService(async ({ client }) => {
    const { member, project } = await memberWithProject(client);
    const { dataset, iteration } = await evaluated(member.client, project.id, 150);
    await writeResults(member.client, iteration, {
      dataset: dataset.id,
      results: [
        { datapoint_order: 0, score: 1, passed: true, dimension_scores: { accuracy: 1 } },
        { datapoint_order: 0, attempt: 1, status: 'error', error: 'flaky' },
        { datapoint_order: 0, attempt: 2, score: 0, passed: false, dimension_scores: { accuracy: 0.5 } },
        { datapoint_order: 1, score: 0.5, passed: true },
        { datapoint_order: 1, attempt: 1, score: 0.5, passed: true },
        { datapoint_order: 1, attempt: 2, score: 0.5, passed: false },
        { datapoint_order: 2, status: 'error', score: 0.9 },
        { datapoint_order: 3, score: 0.25, dimension_scores: { accuracy: 0 } },
      ],
    });
    const summary = await summaryOf(member.client, iteration);
    assert.equal(summary.dataset, { id: dataset.id, version: 1 });
    assert.equal([summary.datapoints, summary.results, summary.error_results], [150, 8, 2]);
    assert.equal([summary.scored, summary.errors, summary.missing.count], [3, 1, 146]);
    assert.equal(summary.missing.datapoints, dataset.datapoints.slice(4, 104).map((point: any) => point.id));
    assert.is(summary.attempts_max, 3);
    // Datapoint 0: its ok attempts average 0.5 and tie on passing (1 of 2): not passed.
    assert.equal([summary.mean_score, summary.passed, summary.failed, summary.pass_rate], [(0.5 + 0.5 + 0.25) / 3, 1, 1, 0.5]);
    assert.equal(summary.dimensions.map((dimension: any) => [dimension.name, dimension.n, dimension.mean]), [['accuracy', 2, 0.375]]);
  }));

test("another project's iteration, and its results, do not exist for the caller; an API key sees its own project's", () =>
  withService(async ({ client }) => {
    const owner = await memberWithProject(client);
    const { dataset, iteration } = await evaluated(owner.member.client, owner.project.id, 2);
    await writeResults(owner.member.client, iteration, { dataset: dataset.id, results: [{ datapoint_order: 0, score: 1 }] });
    const row = (await owner.member.client.get(resultsPath(iteration))).body.results[0];
    const stranger = await memberWithProject(client);
    const otherKey = await createApiKey(stranger.member.client, stranger.project.id);
    for (const caller of [stranger.member.client, client.as({ apiKey: otherKey.key })]) {
      for (const path of [resultsPath(iteration), `${resultsPath(iteration)}summary/`, `${resultsPath(iteration)}${row.id}/`, `/api/jobs/${iteration.job}/results-summary/`]) {
        assert.is((await caller.get(path)).status, 404, path);
      }
      assert.is((await postResults(caller, iteration, { dataset: dataset.id, results: [{ datapoint_order: 1, score: 1 }] })).status, 404);
    }
    const ownKey = await createApiKey(owner.member.client, owner.project.id);
    assert.is((await client.as({ apiKey: ownKey.key }).get(resultsPath(iteration))).body.count, 1);
    assert.is((await client.get(resultsPath(iteration))).status, 401);
  }));

test("a job's results summary lists every iteration with results, in the job's order, its missing datapoints counted", () =>
  withService(async ({ client }) => {
    const { member, project } = await memberWithProject(client);
    const { dataset, job, iteration } = await evaluated(member.client, project.id, 3);
    const later = await createIteration(member.client, job.id, { order: 5 });
    const none = await createIteration(member.client, job.id, { order: 6 });
    await writeResults(member.client, iteration, { dataset: dataset.id, results: [{ datapoint_order: 1, score: 1 }] });
    await writeResults(member.client, later, { dataset: dataset.id, results: [{ datapoint_order: 0, score: 0.5, dimension_scores: { a: 1 } }] });
    const reply = await member.client.get(`/api/jobs/${job.id}/results-summary/`);
    assert.is(reply.status, 200);
    assert.equal(reply.body.job, job.id);
    // By order, then created_at: an iteration without an order comes last; one without results is not listed.
    assert.equal(reply.body.iterations.map((summary: any) => summary.iteration), [later.id, iteration.id]);
    assert.not.ok(reply.body.iterations.some((summary: any) => summary.iteration === none.id));
    const { dimensions: _dimensions, missing, ...whole } = await summaryOf(member.client, later);
    assert.equal(reply.body.iterations[0], { ...whole, missing: missing.count });
    assert.is(reply.body.iterations[0].missing, 2);
  }));

test('moving an iteration to another job takes its results along', () =>
  withService(async ({ client }) => {
    const { member, project } = await memberWithProject(client);
    const { agent, dataset, iteration } = await evaluated(member.client, project.id, 2);
    await writeResults(member.client, iteration, { dataset: dataset.id, results: [{ datapoint_order: 0, score: 1 }] });
    const target = await createJob(member.client, { agent: agent.id });
    assert.is((await member.client.patch(`/api/job-iterations/${iteration.id}/`, { job: target.id })).status, 200);
    assert.is((await member.client.get(resultsPath(iteration))).body.count, 1);
    assert.is((await writeResults(member.client, iteration, { results: [{ datapoint_order: 1, score: 1 }] })).results_count, 2);
  }));

test.run();
