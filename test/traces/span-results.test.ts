// Results from traces, with no extra call: a span that links to an iteration and reports a
// datapoint and a score records that result (linked to its trace and span), pinning the iteration
// to overmind.dataset.id when it is not yet. A span whose result cannot be applied is stored as a
// span all the same, and counted.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { createApiKey, memberWithProject } from '../helpers/fixtures.ts';
import { evaluated, resultsPath, summaryOf, writeResults } from '../helpers/result-fixtures.ts';
import { withService } from '../helpers/service.ts';
import { baseNs, exporting, ms, otlpJson, postJson, SpanStatusCode, spanId, traceId } from './helpers.ts';

/** The span_results counter's value for an outcome, from GET /metrics. */
async function spanResults(client: { get(path: string): Promise<{ text: string }> }, outcome: string): Promise<number> {
  const text = (await client.get('/metrics')).text;
  const line = text.split('\n').find((candidate) => candidate.startsWith(`overmind_span_results_total{outcome="${outcome}"}`));
  return Number(line?.split(' ')[1] ?? NaN);
}

test('a span reporting a datapoint and a score records that result, linked to its trace, and pins the iteration', () =>
  withService(async (running) => {
    const { member, project } = await memberWithProject(running.client);
    const { dataset, iteration } = await evaluated(member.client, project.id, 3);
    const key = await createApiKey(member.client, project.id);
    const sdk = exporting(running.url, { protocol: 'protobuf', headers: { 'x-api-key': key.key }, resource: { 'overmind.dataset.id': dataset.id } });
    const span = sdk.start('case 2', {
      attributes: {
        'overmind.iteration.id': iteration.id,
        'overmind.datapoint.id': dataset.datapoints[1].id,
        'overmind.eval.score': 0.75,
        'overmind.eval.attempt': 1,
        'overmind.eval.passed': true,
        'overmind.eval.dimension_scores': JSON.stringify({ accuracy: 1, tone: 0.5 }),
        'overmind.eval.cost': 0.002,
      },
      startTime: Date.now() - 1500,
    });
    span.end();
    const failing = sdk.start('case 3', {
      attributes: { 'overmind.iteration.id': iteration.id, 'overmind.run.case.index': 2, 'overmind.eval.score': 0 },
    });
    failing.setStatus({ code: SpanStatusCode.ERROR, message: 'tool call failed' });
    failing.end();
    await sdk.flush();
    await sdk.shutdown();
    const rows = (await member.client.get(resultsPath(iteration))).body.results;
    assert.equal(rows.map((row: any) => [row.datapoint_order, row.attempt, row.score, row.status]), [[1, 1, 0.75, 'ok'], [2, 0, 0, 'error']]);
    const context = span.spanContext();
    assert.equal([rows[0].trace_id, rows[0].span_id], [context.traceId, context.spanId]);
    assert.equal([rows[0].passed, rows[0].dimension_scores, rows[0].cost], [true, { accuracy: 1, tone: 0.5 }, 0.002]);
    assert.ok(rows[0].latency_ms >= 1500 && rows[0].latency_ms < 60_000, `latency ${rows[0].latency_ms}`);
    assert.is(rows[1].error, 'tool call failed');
    assert.equal((await summaryOf(member.client, iteration)).dataset, { id: dataset.id, version: 1 });
    // The row's trace opens: the span was stored as well.
    assert.is((await member.client.get(`/api/traces/${rows[0].trace_id}/`)).status, 200);
    assert.is(await spanResults(running.client, 'applied'), 2);
  }));

test('a later span for the same datapoint and attempt replaces the result, as a posted row does', () =>
  withService(async (running) => {
    const { member, project } = await memberWithProject(running.client);
    const { dataset, iteration } = await evaluated(member.client, project.id, 2);
    await writeResults(member.client, iteration, { dataset: dataset.id, results: [{ datapoint_order: 0, score: 0.1 }] });
    const key = await createApiKey(member.client, project.id);
    const attributes = { 'overmind.iteration.id': iteration.id, 'overmind.run.case.index': 0, 'overmind.eval.score': 0.9 };
    const reply = await postJson(running.client.as({ apiKey: key.key }), otlpJson({ 'service.name': 'evals' }, [
      { traceId: traceId(7), spanId: spanId(1), start: baseNs, end: baseNs + ms(20), attributes },
    ]));
    assert.is(reply.status, 200);
    const rows = (await member.client.get(resultsPath(iteration))).body.results;
    assert.equal(rows.map((row: any) => [row.score, row.trace_id, row.latency_ms]), [[0.9, traceId(7), 20]]);
  }));

test('a span whose result cannot be applied is stored as a span and counted, never refused', () =>
  withService(async (running) => {
    const { member, project } = await memberWithProject(running.client);
    const pinned = await evaluated(member.client, project.id, 2);
    await writeResults(member.client, pinned.iteration, { dataset: pinned.dataset.id, results: [{ datapoint_order: 0, score: 1 }] });
    const unpinned = await evaluated(member.client, project.id, 2);
    const elsewhere = await memberWithProject(running.client);
    const theirs = await evaluated(elsewhere.member.client, elsewhere.project.id, 2);
    const key = await createApiKey(member.client, project.id);
    const span = (n: number, attributes: Record<string, string | number | boolean>) => ({
      traceId: traceId(100 + n), spanId: spanId(n), start: baseNs, end: baseNs + ms(5), attributes,
    });
    const reply = await postJson(running.client.as({ apiKey: key.key }), otlpJson({ 'service.name': 'evals' }, [
      span(1, { 'overmind.iteration.id': pinned.iteration.id, 'overmind.datapoint.id': '00000000-0000-4000-8000-000000000000', 'overmind.eval.score': 1 }),
      span(2, { 'overmind.iteration.id': pinned.iteration.id, 'overmind.run.case.index': 1, 'overmind.eval.score': 'high' }),
      span(3, { 'overmind.iteration.id': pinned.iteration.id, 'overmind.run.case.index': 1, 'overmind.eval.score': 1, 'overmind.eval.dimension_scores': 'not json' }),
      span(4, { 'overmind.iteration.id': unpinned.iteration.id, 'overmind.run.case.index': 0, 'overmind.eval.score': 1 }),
      span(5, { 'overmind.iteration.id': theirs.iteration.id, 'overmind.run.case.index': 0, 'overmind.eval.score': 1, 'overmind.dataset.id': theirs.dataset.id }),
      span(6, { 'overmind.iteration.id': pinned.iteration.id, 'overmind.eval.score': 1 }),
      span(7, { 'overmind.iteration.id': unpinned.iteration.id, 'overmind.run.case.index': 0, 'overmind.eval.score': 1, 'overmind.dataset.id': pinned.dataset.id }),
      span(8, { 'overmind.iteration.id': pinned.iteration.id, 'overmind.run.case.index': 1, 'overmind.eval.score': 0.5 }),
    ]));
    assert.is(reply.status, 200);
    assert.equal(reply.body, {}, 'no span was refused');
    assert.is((await member.client.get('/api/traces/', { all_spans: true })).body.count, 8);
    assert.equal((await member.client.get(resultsPath(pinned.iteration))).body.results.map((row: any) => [row.datapoint_order, row.score]), [[0, 1], [1, 0.5]]);
    assert.is((await member.client.get(resultsPath(unpinned.iteration))).body.count, 0);
    assert.is((await elsewhere.member.client.get(resultsPath(theirs.iteration))).body.count, 0);
    assert.equal([await spanResults(running.client, 'applied'), await spanResults(running.client, 'not_applied')], [1, 7]);
  }));

test.run();
