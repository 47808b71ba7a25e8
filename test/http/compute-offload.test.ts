// Heavy answers run on worker threads (src/compute/): a summary, a comparison, its paired
// datapoints, its code diff and a dataset diff answer the same whether they are computed in place or on a
// worker; the queue of heavy work waiting for a worker is bounded (503 past it); a worker is
// made ready once the results held call for one; and a service stops its workers when it closes.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { createIteration } from '../helpers/job-fixtures.ts';
import { createApiKey, memberWithProject, type Member } from '../helpers/fixtures.ts';
import { evaluated, resultsPath, writeResults } from '../helpers/result-fixtures.ts';
import { start, withService } from '../helpers/service.ts';
import { baseNs, ms, otlpJson, postJson, spanId, traceId } from '../traces/helpers.ts';

/** Two iterations of one job with results on 40 datapoints, and two versions of the agent's dataset. */
async function comparisonOf(member: Member, project: string) {
  const { agent, dataset, job, iteration } = await evaluated(member.client, project, 40);
  // An order of its own: two iterations created within one millisecond would list by id.
  const other = await createIteration(member.client, job.id, { order: 1 });
  const rows = (shift: number) => dataset.datapoints.map((point: any, i: number) => ({
    datapoint: point.id,
    score: ((i * 37 + shift) % 100) / 100,
    passed: (i + shift) % 3 !== 0,
    dimension_scores: { accuracy: ((i * 11 + shift) % 10) / 10 },
  }));
  await writeResults(member.client, iteration, { dataset: dataset.id, results: rows(0) });
  await writeResults(member.client, other, { dataset: dataset.id, results: rows(7) });
  const code = (changed: number) => Array.from({ length: 200 }, (_, line) => (line % 50 === changed ? `changed ${line}` : `line ${line}`)).join('\n');
  for (const [index, one] of [iteration, other].entries()) assert.is((await member.client.patch(`/api/job-iterations/${one.id}/`, { agent_code: code(index * 7), iteration_name: ['first', 'second'][index] })).status, 200);
  const next = await member.client.post('/api/datasets/', { agent: agent.id, datapoints: dataset.datapoints.slice(5).map(({ id: _id, ...point }: any) => point) });
  return { from: iteration, to: other, job, versions: [dataset.id, next.body.id] };
}

/** Everything heavy the service answers about those. */
async function heavyAnswers(member: Member, made: Awaited<ReturnType<typeof comparisonOf>>) {
  const compare = `/api/job-iterations/${made.from.id}/compare/${made.to.id}/`;
  return {
    summary: (await member.client.get(`${resultsPath(made.from)}summary/`)).body,
    jobSummary: (await member.client.get(`/api/jobs/${made.job.id}/results-summary/`)).body.iterations,
    ...(({ results, code_diff }) => ({ comparison: results, codeDiff: code_diff }))((await member.client.get(compare, { confidence: 0.9 })).body),
    paired: (await member.client.get(`${compare}datapoints/`, { ordering: '-delta', page_size: 100 })).body.results,
    diff: (await member.client.get(`/api/datasets/${made.versions[0]}/diff/${made.versions[1]}/`)).body,
  };
}

test('heavy answers are the same computed in place or on a worker thread', async () => {
  const inPlace = await withService(async ({ client }) => {
    const { member, project } = await memberWithProject(client);
    const made = await comparisonOf(member, project.id);
    return { answers: await heavyAnswers(member, made), made };
  });
  const onWorkers = await withService(
    async ({ client, service }) => {
      const { member, project } = await memberWithProject(client);
      const made = await comparisonOf(member, project.id);
      const answers = await heavyAnswers(member, made);
      assert.ok(service.deps.compute.offloaded >= 6, `offloaded ${service.deps.compute.offloaded} tasks`);
      return { answers, made };
    },
    { limits: { computeInlineMicrosMax: 1 } },
  );
  // Ids differ between the two services; everything else must be equal.
  const withoutIds = (value: unknown) => JSON.parse(JSON.stringify(value).replace(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g, 'id'));
  assert.equal(withoutIds(onWorkers.answers), withoutIds(inPlace.answers));
  assert.is(inPlace.answers.comparison.comparable, true);
  assert.is(inPlace.answers.comparison.n_paired, 40);
  assert.match(inPlace.answers.codeDiff, /^-line 7\n\+changed 7$/m, 'the code diff, the same from a worker thread');
  assert.ok(inPlace.answers.comparison.ci95_bootstrap === undefined && inPlace.answers.comparison.score.ci95_bootstrap !== null);
});

test('an OTLP/JSON export is transcoded the same on a worker thread: the same spans stored, the same 400 for a malformed body', async () => {
  const exportAndRead = (options: { limits?: { computeInlineMicrosMax: number } }) =>
    withService(async ({ client, service }) => {
      const { member, project } = await memberWithProject(client);
      const keyClient = client.as({ apiKey: (await createApiKey(member.client, project.id)).key });
      const spans = Array.from({ length: 50 }, (_, n) => ({
        traceId: traceId(9), spanId: spanId(n + 1), parentSpanId: n === 0 ? undefined : spanId(1), name: `step ${n}`,
        start: baseNs + ms(n), end: baseNs + ms(n + 1), attributes: { 'gen_ai.request.model': 'gpt-4o', 'gen_ai.usage.input_tokens': n, big: 2 ** 53 + 2 },
      }));
      const exported = await postJson(keyClient, otlpJson({ 'service.name': 'agent' }, spans));
      assert.is(exported.status, 200, exported.text);
      const malformed = await keyClient.request('POST', '/v1/traces', `{"resourceSpans": [${' '.repeat(100)}`, { 'content-type': 'application/json' });
      assert.equal([malformed.status, malformed.body.code], [400, 'parse_error']);
      const trace = (await member.client.get(`/api/traces/${traceId(9)}/`)).body;
      return { offloaded: service.deps.compute.offloaded, trace, malformed: malformed.body.detail };
    }, options);
  const inPlace = await exportAndRead({});
  const onWorker = await exportAndRead({ limits: { computeInlineMicrosMax: 1 } });
  assert.is(inPlace.offloaded, 0);
  assert.is(onWorker.offloaded, 2, 'the export and the malformed body, each transcoded on a worker');
  const withoutIds = (value: unknown) => JSON.parse(JSON.stringify(value).replace(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g, 'id').replace(/"received_at":"[^"]*"/g, '"received_at":"at"'));
  assert.equal(withoutIds(onWorker.trace), withoutIds(inPlace.trace));
  assert.is(onWorker.trace.span_count, 50);
  assert.is(onWorker.malformed, inPlace.malformed);
});

test('heavy work waiting for a worker is bounded: past LIMIT_COMPUTE_QUEUE_MAX it is refused with 503 and Retry-After', () =>
  withService(
    async ({ client }) => {
      const { member, project } = await memberWithProject(client);
      const made = await comparisonOf(member, project.id);
      // Every request asks another confidence: none is answered from the cache.
      const replies = await Promise.all(
        Array.from({ length: 12 }, (_, i) => member.client.get(`/api/job-iterations/${made.from.id}/compare/${made.to.id}/`, { confidence: 0.9 + i / 1000 })),
      );
      const statuses = replies.map((reply) => reply.status);
      assert.ok(statuses.includes(200), statuses.join(','));
      const refused = replies.filter((reply) => reply.status === 503);
      assert.ok(refused.length > 0, `no request was refused: ${statuses.join(',')}`);
      assert.equal(refused[0]!.body.code, 'unavailable');
      assert.is(refused[0]!.headers.get('retry-after'), '1');
    },
    { limits: { computeInlineMicrosMax: 1, computeThreadsMax: 1, computeQueueMax: 1 } },
  ));

test('a worker thread is readied by the first batch whose iteration\'s summary would be offloaded, and at start when such results are stored; none before', async () => {
  // A summary of 40 rows over 40 datapoints is expected to take 10 us: past 5, it is offloaded.
  const limits = { computeInlineMicrosMax: 5 };
  const first = await start({ lmdb: true, limits });
  let restarted: Awaited<ReturnType<typeof start>> | undefined;
  try {
    const { member, project } = await memberWithProject(first.client);
    const { dataset, iteration } = await evaluated(member.client, project.id, 40);
    assert.is(first.service.deps.compute.threads, 0, 'no worker before any results');
    await writeResults(member.client, iteration, { dataset: dataset.id, results: dataset.datapoints.slice(0, 10).map((point: any) => ({ datapoint: point.id, score: 0.5 })) });
    assert.is(first.service.deps.compute.threads, 0, 'ten rows are summarized in place: no worker');
    await writeResults(member.client, iteration, { dataset: dataset.id, results: dataset.datapoints.map((point: any) => ({ datapoint: point.id, score: 0.25 })) });
    assert.is(first.service.deps.compute.threads, 1, 'readied by the batch, before any read');
    await first.stop({ keepData: true });
    restarted = await start({ lmdb: true, dataDir: first.dataDir, limits });
    assert.is(restarted.service.deps.compute.threads, 1, 'readied at start on the stored results');
    assert.is(restarted.service.deps.compute.offloaded, 0, 'nothing has run on it yet');
  } finally {
    await (restarted ?? first).stop();
  }
});

test.run();
