// Results whose names and text are unusual: a dimension may be named like an object's own
// machinery ("constructor", "__proto__" refused as a body's key is, also from spans) and stays a
// dimension like any other; text that UTF-8 cannot hold (a lone surrogate) is refused rather than
// stored changed.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { createApiKey, memberWithProject } from '../helpers/fixtures.ts';
import { createIteration } from '../helpers/job-fixtures.ts';
import { evaluated, postResults, resultsPath, summaryOf, writeResults } from '../helpers/result-fixtures.ts';
import { withService } from '../helpers/service.ts';
import { baseNs, ms, otlpJson, postJson, spanId, traceId } from '../traces/helpers.ts';

test('a dimension named like an object\'s own machinery is compared only when both sides have it; one named __proto__ in a span is not applied, and the summary and comparisons still answer', () =>
  withService(async ({ client }) => {
    const { member, project } = await memberWithProject(client);
    const { dataset, job, iteration: from } = await evaluated(member.client, project.id, 3);
    const to = await createIteration(member.client, job.id, { order: 2 });
    await writeResults(member.client, from, { dataset: dataset.id, results: [0, 1, 2].map((i) => ({ datapoint_order: i, score: i / 3, dimension_scores: { constructor: 1, toString: 2, acc: i } })) });
    await writeResults(member.client, to, { dataset: dataset.id, results: [0, 1].map((i) => ({ datapoint_order: i, score: i / 2, dimension_scores: { acc: i * 2 } })) });
    const compared = await member.client.get(`/api/job-iterations/${from.id}/compare/${to.id}/`);
    assert.is(compared.status, 200, compared.text);
    assert.equal(compared.body.results.dimensions.map((dimension: { name: string }) => dimension.name), ['acc']);
    assert.equal((await summaryOf(member.client, from)).dimensions.map((dimension: { name: string }) => dimension.name).sort(), ['acc', 'constructor', 'toString']);
    // From a span: refused as a request body's "__proto__" is, counted as not applied.
    const key = await createApiKey(member.client, project.id);
    const span = { traceId: traceId(7), spanId: spanId(1), start: baseNs, end: baseNs + ms(20), attributes: {
      'overmind.iteration.id': to.id, 'overmind.run.case.index': 2, 'overmind.eval.score': 0.9, 'overmind.eval.dimension_scores': '{"__proto__": 1, "length": 1}',
    } };
    assert.is((await postJson(client.as({ apiKey: key.key }), otlpJson({ 'service.name': 'evals' }, [span]))).status, 200);
    assert.is((await member.client.get(resultsPath(to))).body.count, 2, 'not applied');
    assert.is((await member.client.get(`${resultsPath(to)}summary/`)).status, 200);
    assert.is((await member.client.get(`/api/job-iterations/${from.id}/compare/${to.id}/`)).status, 200);
  }));

test('text UTF-8 cannot hold (a lone surrogate) in an error or a dimension name is refused, and nothing of the batch is written', () =>
  withService(async ({ client }) => {
    const { member, project } = await memberWithProject(client);
    const { dataset, iteration } = await evaluated(member.client, project.id, 3);
    const refusal = ['Enter valid text: it holds a lone surrogate (half of a UTF-16 pair), which cannot be stored.'];
    const reply = await postResults(member.client, iteration, { dataset: dataset.id, results: [
      { datapoint_order: 0, status: 'error', error: 'cut \ud83d' },
      { datapoint_order: 1, score: 1, dimension_scores: { 'a\ud800': 1 } },
      { datapoint_order: 2, score: 1, dimension_scores: { 'fine 🙂': 1 }, error: 'whole 🙂' },
    ] });
    assert.is(reply.status, 400, reply.text);
    assert.equal(reply.body, { results: [{ error: refusal }, { dimension_scores: refusal }, {}] });
    assert.is((await member.client.get(resultsPath(iteration))).body.count, 0);
  }));

test.run();
