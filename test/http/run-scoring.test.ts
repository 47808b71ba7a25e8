// Scoring on the server, over HTTP on the real store: a run with `scoring` has its results scored
// from the output, the datapoint's expected output (never sent to a worker) and, for the spec's
// tool usage, the tool-call spans of the result's trace; a completion with a score of its own is
// refused for that item; an ended run is rescored from its stored outputs, its results keeping
// their ids.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { scoreWithSpec } from '../../src/scoring/spec-score.ts';
import type { Client } from '../helpers/client.ts';
import { createApiKey, memberWithProject } from '../helpers/fixtures.ts';
import { createIteration, createJob } from '../helpers/job-fixtures.ts';
import { complete, completeAll, createRun, lease, registerWorker, runOf, runSetup, type RunSetup } from '../helpers/run-fixtures.ts';
import { withService } from '../helpers/service.ts';
import { until } from '../helpers/wait.ts';
import { baseNs, ms, otlpJson, postJson, spanId, traceId } from '../traces/helpers.ts';

const spec = {
  output_fields: {
    label: { type: 'enum', values: ['spam', 'ham'], weight: 50, importance: 'critical' },
    confidence: { type: 'number', weight: 30, tolerance: 10 },
  },
  structure_weight: 20,
  tool_usage_weight: 0,
};
/** The eval spec as the API serves it (with its defaults), which the service scores with. */
const served = (fields: Record<string, unknown> = {}) => ({ tool_config: {}, consistency_rules: [], ...spec, ...fields });
const specTotal = (fields: Record<string, unknown>, output: unknown, order: number) => scoreWithSpec(served(fields), output, expectedOutputs[order], null).total;
const expectedOutputs = [{ label: 'spam', confidence: 90 }, { label: 'ham', confidence: 20 }, { label: 'spam', confidence: 60 }];

/** An agent with the eval spec above (and `fields`), a dataset with expected outputs, a job and two iterations. */
async function scoredSetup(client: Client, project: string, fields: Record<string, unknown> = {}): Promise<RunSetup> {
  const agentReply = await client.post('/api/agents/', { name: 'classifier', slug: `classifier-${Math.random().toString(36).slice(2)}`, project, ...spec, ...fields });
  assert.is(agentReply.status, 201, agentReply.text);
  const agent = agentReply.body;
  const datapoints = expectedOutputs.map((expected_output, i) => ({ input: { text: `message ${i}` }, expected_output }));
  const dataset = await client.post('/api/datasets/', { agent: agent.id, datapoints });
  assert.is(dataset.status, 201, dataset.text);
  const job = await createJob(client, { agent: agent.id });
  const iterations = [await createIteration(client, job.id, { order: 0 }), await createIteration(client, job.id, { order: 1 })];
  return { agent, dataset: dataset.body, job, iterations };
}

async function resultsOf(client: Client, iteration: { id: string }): Promise<any[]> {
  return client.listAll(`/api/job-iterations/${iteration.id}/results/`);
}

test('spec scoring: each ok result is scored from its output and the expected output as the original scored it, passed at 70 points', () =>
  withService(async ({ client }) => {
    const { member, project } = await memberWithProject(client);
    const setup = await scoredSetup(member.client, project.id);
    const run = await createRun(member.client, setup, { scoring: { method: 'spec' }, max_tries: 1 });
    assert.equal(run.scoring, { method: 'spec', pass_threshold: 70 });
    const worker = await registerWorker(member.client);
    const tasks = await lease(member.client, worker, { max: 10 });
    assert.not.ok('expected_output' in tasks[0].datapoint, 'a worker never sees the answers');
    assert.ok(tasks.every((task: any) => task.scored_by_service === true), 'each task says the service scores it');
    const outputs: Record<number, unknown> = { 0: { label: 'spam', confidence: 85 }, 1: '{"label": "spam", "confidence": 20}', 2: 'not json at all' };
    await completeAll(member.client, worker, tasks, (task) =>
      task.datapoint.order === 2 && task.iteration.id === setup.iterations[1].id ? { status: 'error', error: 'crashed' } : { output: outputs[task.datapoint.order] },
    );
    const rows = await resultsOf(member.client, setup.iterations[0]);
    for (const row of rows) {
      const expected = scoreWithSpec(served(), outputs[row.datapoint_order], expectedOutputs[row.datapoint_order], null);
      assert.is(row.score, expected.total, `datapoint ${row.datapoint_order}`);
      assert.equal(row.dimension_scores, expected.dimensions);
      assert.is(row.passed, expected.total >= 70);
    }
    assert.equal(rows.map((row) => row.passed), [true, false, false]);
    assert.is(rows[0].score, 100, 'a perfect answer is the whole of the weights');
    const failed = (await resultsOf(member.client, setup.iterations[1])).find((row) => row.datapoint_order === 2);
    assert.equal([failed.status, failed.score, failed.error], ['error', null, 'crashed'], 'an error result is not scored');
  }));

test('a completion carrying its own score on a run the service scores is refused for that item, with the reason; the others are accepted', () =>
  withService(async ({ client }) => {
    const { member, project } = await memberWithProject(client);
    const setup = await scoredSetup(member.client, project.id);
    await createRun(member.client, setup, { scoring: { method: 'spec', pass_threshold: 50 } });
    const worker = await registerWorker(member.client);
    const [first, second] = await lease(member.client, worker, { max: 2 });
    const reply = await complete(member.client, worker, [
      { task: first.id, lease: first.lease, output: { label: 'ham' }, score: 1, passed: true },
      { task: second.id, lease: second.lease, output: { label: 'spam' } },
    ]);
    assert.is(reply.status, 200, reply.text);
    const message = (field: string) => [`This run is scored by the service (scoring "spec"): a completion does not send ${field}.`];
    assert.equal(reply.body.results, [
      { task: first.id, outcome: 'invalid', errors: { score: message('score'), passed: message('passed') } },
      { task: second.id, outcome: 'accepted' },
    ]);
    const again = await complete(member.client, worker, [{ task: first.id, lease: first.lease, output: { label: 'ham' } }]);
    assert.is(again.body.results[0].outcome, 'accepted', 'the lease was kept: the worker answers again without a score');
  }));

test('scorers: each a named dimension in [0, 1], the score their weighted mean, passed at the threshold; a bad scorer is 400 and no run is made', () =>
  withService(async ({ client }) => {
    const { member, project } = await memberWithProject(client);
    const setup = await scoredSetup(member.client, project.id, {
      output_schema: { type: 'object', required: ['label'], properties: { label: { enum: ['spam', 'ham'] } } },
    });
    const bad = await member.client.post(`/api/jobs/${setup.job.id}/runs/`, {
      dataset: setup.dataset.id,
      iterations: [setup.iterations[0].id],
      scoring: { method: 'scorers', scorers: [{ type: 'regex', name: 'shape', pattern: '(unclosed' }] },
    });
    assert.is(bad.status, 400, bad.text);
    assert.ok(bad.body.scoring.scorers[0].pattern[0].startsWith('Not a pattern RE2 accepts'), bad.text);
    assert.is((await member.client.get(`/api/jobs/${setup.job.id}/runs/`)).body.count, 0, 'nothing written');
    const scoring = {
      method: 'scorers',
      pass_threshold: 0.6,
      scorers: [
        { type: 'json_fields', name: 'fields', weight: 3 },
        { type: 'json_schema', name: 'schema', weight: 1 },
      ],
    };
    await createRun(member.client, { ...setup, iterations: [setup.iterations[0]] }, { scoring });
    const worker = await registerWorker(member.client);
    const tasks = await lease(member.client, worker, { max: 3 });
    const outputs = [{ label: 'spam', confidence: 90 }, { label: 'spam', confidence: 20 }, { label: 'maybe' }];
    await completeAll(member.client, worker, tasks, (task) => ({ output: outputs[task.datapoint.order] }));
    const rows = await resultsOf(member.client, setup.iterations[0]);
    assert.equal(rows.map((row) => row.dimension_scores), [{ fields: 1, schema: 1 }, { fields: 0.5, schema: 1 }, { fields: 0, schema: 0 }]);
    assert.equal(rows.map((row) => row.score), [1, (3 * 0.5 + 1) / 4, 0]);
    assert.equal(rows.map((row) => row.passed), [true, true, false]);
  }));

test('a scoring\'s errors are named at their field, as DRF nests them: a scorer of no known type, or none, a method of none, a field no scoring has, a scoring that is not a record', () =>
  withService(async ({ client }) => {
    const { member, project } = await memberWithProject(client);
    const setup = await scoredSetup(member.client, project.id);
    const post = (scoring: unknown) => member.client.post(`/api/jobs/${setup.job.id}/runs/`, { dataset: setup.dataset.id, iterations: [setup.iterations[0].id], scoring });
    const scorers = await post({ method: 'scorers', scorers: [{ type: 'exact', name: 'e' }, { type: 'fuzzy', name: 'f' }, { name: 'g' }, { type: 'regex', name: 'r' }, { type: 5, name: 'x' }] });
    assert.equal([scorers.status, scorers.body], [400, { scoring: { scorers: [
      {}, { type: ['"fuzzy" is not a valid choice.'] }, { type: ['This field is required.'] }, { pattern: ['This field is required.'] }, { type: ['"5" is not a valid choice.'] },
    ] } }]);
    assert.equal((await post({ method: 'judge' })).body, { scoring: { method: ['"judge" is not a valid choice.'] } });
    assert.equal((await post({})).body, { scoring: { method: ['This field is required.'] } });
    assert.equal((await post({ method: null })).body, { scoring: { method: ['This field may not be null.'] } });
    assert.equal((await post({ method: true })).body, { scoring: { method: ['"True" is not a valid choice.'] } });
    assert.equal((await post({ method: 'spec', threshold: 50 })).body, { scoring: { threshold: ['Unknown field.'] } });
    assert.equal((await post('spec')).body, { scoring: { non_field_errors: ['Invalid data. Expected a dictionary, but got str.'] } });
    assert.is((await member.client.get(`/api/jobs/${setup.job.id}/runs/`)).body.count, 0, 'nothing written');
  }));

test('an agent changed after its run began so that it gives no scorer: an ok result is invalid on scoring (not a 500), an error result is accepted; mended, results are scored again', () =>
  withService(async ({ client }) => {
    const { member, project } = await memberWithProject(client);
    const setup = await scoredSetup(member.client, project.id, { output_schema: { type: 'object', required: ['label'] } });
    await createRun(member.client, { ...setup, iterations: [setup.iterations[0]] }, { scoring: { method: 'scorers', scorers: [{ type: 'json_schema', name: 'schema' }] } });
    // A lookahead is not RE2: the schema no longer compiles as a user schema.
    const broken = await member.client.patch(`/api/agents/${setup.agent.id}/`, { output_schema: { type: 'object', properties: { label: { type: 'string', pattern: '(?=s)' } } } });
    assert.is(broken.status, 200, broken.text);
    const worker = await registerWorker(member.client);
    const tasks = await lease(member.client, worker, { max: 3 });
    const reply = await complete(member.client, worker, [
      { task: tasks[0].id, lease: tasks[0].lease, output: { label: 'spam' } },
      { task: tasks[1].id, lease: tasks[1].lease, status: 'error', error: 'the model is down' },
    ]);
    assert.is(reply.status, 200, reply.text);
    assert.equal(reply.body.results.map((item: any) => item.outcome), ['invalid', 'accepted']);
    assert.match(reply.body.results[0].errors.scoring[0], /cannot be made from its agent as it is now/);
    const mended = await member.client.patch(`/api/agents/${setup.agent.id}/`, { output_schema: { type: 'object', required: ['label'] } });
    assert.is(mended.status, 200, mended.text);
    await completeAll(member.client, worker, [tasks[0], tasks[2]], () => ({ output: { label: 'spam' } }));
    const rows = await resultsOf(member.client, setup.iterations[0]);
    assert.equal(rows.filter((row) => row.status === 'ok').map((row) => row.dimension_scores), [{ schema: 1 }, { schema: 1 }]);
  }, { limits: { runRetryDelayMs: 1, runRetryDelayMsMax: 2 } }));

test('a run the service scores whose job loses its agent: its ok results are invalid on scoring, never asked for scores of the worker\'s own; its tasks still say the service scores them; the agent given back, results are scored again', () =>
  withService(async ({ client }) => {
    const { member, project } = await memberWithProject(client);
    const setup = await scoredSetup(member.client, project.id);
    await createRun(member.client, { ...setup, iterations: [setup.iterations[0]] }, { scoring: { method: 'spec' } });
    const worker = await registerWorker(member.client);
    const [first] = await lease(member.client, worker, { max: 1 });
    const detached = await member.client.patch(`/api/jobs/${setup.job.id}/`, { agent: null });
    assert.is(detached.status, 200, detached.text);
    const [second, third] = await lease(member.client, worker, { max: 2 });
    assert.equal([first.scored_by_service, second.scored_by_service, third.scored_by_service], [true, true, true]);
    const reply = await complete(member.client, worker, [
      { task: first.id, lease: first.lease, output: { label: 'spam', confidence: 85 } },
      { task: second.id, lease: second.lease, output: { label: 'spam' }, score: 0.9, passed: true },
      { task: third.id, lease: third.lease, status: 'error', error: 'the model is down' },
    ]);
    assert.is(reply.status, 200, reply.text);
    assert.equal(reply.body.results.map((item: any) => item.outcome), ['invalid', 'invalid', 'accepted']);
    assert.equal(reply.body.results[0].errors, { scoring: ["This run's scoring cannot be made from its agent as it is now (changed since the run began): its job has no agent now (give the job its agent again)."] });
    assert.equal(Object.keys(reply.body.results[1].errors).sort(), ['passed', 'score'], 'its own scores are refused still');
    const given = await member.client.patch(`/api/jobs/${setup.job.id}/`, { agent: setup.agent.id });
    assert.is(given.status, 200, given.text);
    await completeAll(member.client, worker, [first], () => ({ output: { label: 'spam', confidence: 85 } }));
    const rows = await resultsOf(member.client, setup.iterations[0]);
    const scored = rows.find((row) => row.datapoint_order === first.datapoint.order);
    assert.equal([scored.status, typeof scored.score], ['ok', 'number']);
  }, { limits: { runRetryDelayMs: 1, runRetryDelayMsMax: 2 } }));

test('spec tool usage reads the tool-call spans of the result\'s trace (GenAI names first, the SDK\'s otherwise); without a trace the dimension is left out', () =>
  withService(async (running) => {
    const { member, project } = await memberWithProject(running.client);
    const tool_config = { expected_tools: ['search', 'fetch'], param_constraints: { search: { engine: ['web'] } } };
    const setup = await scoredSetup(member.client, project.id, { tool_config, tool_usage_weight: 10 });
    await createRun(member.client, { ...setup, iterations: [setup.iterations[0]] }, { scoring: { method: 'spec' } });
    const key = await createApiKey(member.client, project.id);
    const exported = await postJson(running.client.as({ apiKey: key.key }), otlpJson({ 'service.name': 'agent' }, [
      { traceId: traceId(7), spanId: spanId(1), name: 'agent run', start: baseNs, end: baseNs + ms(50) },
      { traceId: traceId(7), spanId: spanId(2), parentSpanId: spanId(1), name: 'tool', start: baseNs + ms(1), end: baseNs + ms(5),
        attributes: { 'gen_ai.operation.name': 'execute_tool', 'gen_ai.tool.name': 'search', 'gen_ai.tool.call.arguments': '{"engine": "web"}' } },
      { traceId: traceId(7), spanId: spanId(3), parentSpanId: spanId(1), name: 'lookup', start: baseNs + ms(6), end: baseNs + ms(9),
        attributes: { 'gen_ai.operation.name': 'execute_tool', 'tool.name': 'fetch', inputs: '{"url": "x"}' } },
    ]));
    assert.is(exported.status, 200, exported.text);
    const worker = await registerWorker(member.client);
    const tasks = await lease(member.client, worker, { max: 3 });
    const output = { label: 'spam', confidence: 90 };
    await completeAll(member.client, worker, tasks, (task) => (task.datapoint.order === 0 ? { output, trace_id: traceId(7) } : { output }));
    const rows = await resultsOf(member.client, setup.iterations[0]);
    assert.is(rows[0].dimension_scores.tool_usage, 10, 'both expected tools called, the search with an allowed engine');
    assert.is(rows[0].score, 110);
    assert.not.ok('tool_usage' in rows[1].dimension_scores, 'no trace: no tool calls to judge');
  }));

test('an eval spec whose results would hold more dimensions than a row does is 400 on scoring', () =>
  withService(async ({ client }) => {
    const { member, project } = await memberWithProject(client);
    const output_fields = Object.fromEntries(Array.from({ length: 30 }, (_, i) => [`field${i}`, { type: 'boolean', weight: 1 }]));
    const setup = await scoredSetup(member.client, project.id, { output_fields });
    const reply = await member.client.post(`/api/jobs/${setup.job.id}/runs/`, { dataset: setup.dataset.id, iterations: [setup.iterations[0].id], scoring: { method: 'spec' } });
    assert.is(reply.status, 400, reply.text);
    assert.equal(reply.body, { scoring: ["The agent's eval spec would give each result 34 dimensions (its output fields and 4 components); a result holds at most 32."] });
  }));

test('scores the service computes fit a result row (±1e100): a spec that can give more points is 400 on scoring, or, changed so after its run began, makes ok results invalid; a dimension beyond the bound makes its item invalid; scorer weights are at most 1,000,000', () =>
  withService(async ({ client }) => {
    const { member, project } = await memberWithProject(client);
    // Points overflowing a double, and a partial score far past the bound: both refused before any run is made.
    for (const [fields, points] of [
      [{ structure_weight: 1e308, tool_usage_weight: 1e308 }, 'more points than a number holds'],
      [{ output_fields: { label: { type: 'enum', values: ['spam', 'ham'], weight: 10, partial_credit: true, partial_score: 1e200 } } }, 'up to 1e+200 points'],
    ] as const) {
      const setup = await scoredSetup(member.client, project.id, fields);
      const reply = await member.client.post(`/api/jobs/${setup.job.id}/runs/`, { dataset: setup.dataset.id, iterations: [setup.iterations[0].id], scoring: { method: 'spec' } });
      assert.equal([reply.status, reply.body], [400, { scoring: [`The agent's eval spec can give a result ${points}; a score lies within ±1e100: lower its weights.`] }]);
      assert.is((await member.client.get(`/api/jobs/${setup.job.id}/runs/`)).body.count, 0);
    }
    const scorers = await scoredSetup(member.client, project.id);
    const heavy = await member.client.post(`/api/jobs/${scorers.job.id}/runs/`, { dataset: scorers.dataset.id, iterations: [scorers.iterations[0].id], scoring: { method: 'scorers', scorers: [{ type: 'exact', name: 'e', weight: 1e308 }, { type: 'json_fields', name: 'f', weight: 1e308 }] } });
    assert.equal([heavy.status, heavy.body], [400, { scoring: { scorers: [{ weight: ['Ensure this value is less than or equal to 1000000.'] }, { weight: ['Ensure this value is less than or equal to 1000000.'] }] } }]);
    // A spec within bounds at the start, changed since: ok results are invalid on scoring until it is mended.
    const setup = await scoredSetup(member.client, project.id);
    const run = await createRun(member.client, { ...setup, iterations: [setup.iterations[0]] }, { scoring: { method: 'spec' } });
    const worker = await registerWorker(member.client);
    const tasks = await lease(member.client, worker, { max: 3 });
    assert.is((await member.client.patch(`/api/agents/${setup.agent.id}/`, { structure_weight: 1e308, tool_usage_weight: 1e308 })).status, 200);
    const refused = await complete(member.client, worker, [{ task: tasks[0].id, lease: tasks[0].lease, output: { label: 'spam', confidence: 90 } }]);
    assert.equal(refused.body.results[0].outcome, 'invalid');
    assert.match(refused.body.results[0].errors.scoring[0], /cannot be made from its agent as it is now.*more points than a number holds/);
    // A huge negative weight keeps the score in range (it is at least 0) but not its dimension.
    assert.is((await member.client.patch(`/api/agents/${setup.agent.id}/`, { structure_weight: -1e200, tool_usage_weight: 0 })).status, 200);
    const negative = await complete(member.client, worker, [
      { task: tasks[0].id, lease: tasks[0].lease, output: { label: 'spam', confidence: 90 } },
      { task: tasks[1].id, lease: tasks[1].lease, output: {} },
    ]);
    assert.equal(negative.body.results.map((item: any) => item.outcome), ['invalid', 'accepted']);
    assert.equal(negative.body.results[0].errors, { scoring: ['Scoring gave dimension "structure" -1e+200 points; a dimension score lies within ±1e100: lower the eval spec\'s weights.'] });
    assert.is((await member.client.patch(`/api/agents/${setup.agent.id}/`, { structure_weight: 20 })).status, 200);
    await completeAll(member.client, worker, [tasks[0], tasks[2]], () => ({ output: { label: 'spam', confidence: 90 } }));
    assert.equal([(await runOf(member.client, run)).counts.done], [3]);
    const rows = await resultsOf(member.client, setup.iterations[0]);
    assert.ok(rows.every((row) => Math.abs(row.score) <= 1e100), JSON.stringify(rows.map((row) => row.score)));
  }));

test('rescoring an ended run: its results scored again from their stored outputs with the spec as it is now, the same ids, progress on the run; 409 while it is live', () =>
  withService(async ({ client }) => {
    const { member, project } = await memberWithProject(client);
    const setup = await scoredSetup(member.client, project.id);
    const run = await createRun(member.client, setup, { scoring: { method: 'spec' } });
    const worker = await registerWorker(member.client);
    const tasks = await lease(member.client, worker, { max: 10 });
    const live = await member.client.post(`/api/runs/${run.id}/rescore/`, {});
    assert.equal([live.status, live.body.detail], [409, 'A run is rescored once it has ended; this one is running.']);
    const outputOf = (order: number) => ({ label: 'ham', confidence: expectedOutputs[order]!.confidence });
    await completeAll(member.client, worker, tasks, (task) => ({ output: outputOf(task.datapoint.order) }));
    const before = await resultsOf(member.client, setup.iterations[0]);
    const scoresBefore = [0, 1, 2].map((order) => specTotal({}, outputOf(order), order));
    assert.equal(before.map((row) => row.score), scoresBefore);
    assert.is(scoresBefore[1], 100);
    // The spec changes: the label now weighs little.
    const output_fields = { ...spec.output_fields, label: { ...spec.output_fields.label, weight: 10 } };
    const patched = await member.client.patch(`/api/agents/${setup.agent.id}/`, { output_fields });
    assert.is(patched.status, 200, patched.text);
    const started = await member.client.post(`/api/runs/${run.id}/rescore/`, { iteration: setup.iterations[0].id });
    assert.is(started.status, 202, started.text);
    assert.equal([started.body.rescore.status, started.body.rescore.iteration, started.body.rescore.total], ['running', setup.iterations[0].id, 3]);
    await until(async () => (await runOf(member.client, run)).rescore.status === 'completed', 'the rescoring completes');
    const rescored = (await runOf(member.client, run)).rescore;
    assert.equal([rescored.done, rescored.total], [3, 3]);
    assert.ok(rescored.finished_at);
    const after = await resultsOf(member.client, setup.iterations[0]);
    assert.equal(after.map((row) => row.id), before.map((row) => row.id), 'the same results');
    assert.equal(after.map((row) => row.score), [0, 1, 2].map((order) => specTotal({ output_fields }, outputOf(order), order)));
    assert.is(after[1].score, 60);
    assert.equal(after.map((row) => row.created_at), before.map((row) => row.created_at));
    const untouched = await resultsOf(member.client, setup.iterations[1]);
    assert.equal(untouched.map((row) => row.score), scoresBefore, 'only the iteration named');
    const withScorers = await member.client.post(`/api/runs/${run.id}/rescore/`, { scoring: { method: 'scorers', scorers: [{ type: 'exact', name: 'exact' }] } });
    assert.is(withScorers.status, 202, withScorers.text);
    await until(async () => (await runOf(member.client, run)).rescore.status === 'completed', 'the second rescoring completes');
    assert.equal((await runOf(member.client, run)).scoring, { method: 'scorers', scorers: [{ type: 'exact', name: 'exact' }] }, 'from now on the run\'s scoring');
    assert.equal((await resultsOf(member.client, setup.iterations[1])).map((row) => row.dimension_scores), [{ exact: 0 }, { exact: 1 }, { exact: 0 }]);
  }));

test('an ended run is not rescored while another run writes its iteration (409): each iteration has one writer at a time', () =>
  withService(async ({ client }) => {
    const { member, project } = await memberWithProject(client);
    const setup = await runSetup(member.client, project.id, 3, 1);
    const scoring = { method: 'scorers', scorers: [{ type: 'regex', name: 'has_x', pattern: 'x' }] };
    const scored = await createRun(member.client, setup, { scoring });
    const worker = await registerWorker(member.client);
    await completeAll(member.client, worker, await lease(member.client, worker, { max: 10 }), () => ({ output: 'x' }));
    assert.is((await runOf(member.client, scored)).status, 'completed');
    const live = await createRun(member.client, setup);
    const held = await lease(member.client, worker, { max: 10 });
    const refused = await member.client.post(`/api/runs/${scored.id}/rescore/`, {});
    assert.equal([refused.status, refused.body.code], [409, 'conflict']);
    assert.match(refused.body.detail, live.id);
    assert.is((await runOf(member.client, scored)).rescore, null, 'no rescoring started');
    await completeAll(member.client, worker, held, () => ({ output: 'no', score: 0.3 }));
    const rows = await member.client.listAll(`/api/job-iterations/${setup.iterations[0].id}/results/`);
    assert.equal(rows.map((row: { score: number }) => row.score), [0.3, 0.3, 0.3], "the live run's results stand");
    assert.is((await member.client.post(`/api/runs/${scored.id}/rescore/`, {})).status, 202, 'once it has ended');
  }));

test('a run that is not scored by the service takes a rescoring only with a scoring named', () =>
  withService(async ({ client }) => {
    const { member, project } = await memberWithProject(client);
    const setup = await scoredSetup(member.client, project.id);
    const run = await createRun(member.client, setup);
    const worker = await registerWorker(member.client);
    await completeAll(member.client, worker, await lease(member.client, worker, { max: 10 }), () => ({ output: { label: 'spam' }, score: 0.5 }));
    const reply = await member.client.post(`/api/runs/${run.id}/rescore/`, {});
    assert.equal([reply.status, reply.body], [400, { scoring: ['This run is not scored by the service: name a scoring.'] }]);
    const other = await member.client.post(`/api/runs/${run.id}/rescore/`, { scoring: { method: 'spec' }, iteration: '00000000-0000-4000-8000-000000000000' });
    assert.equal([other.status, other.body], [400, { iteration: ['Not an iteration of this run.'] }]);
  }));

test.run();
