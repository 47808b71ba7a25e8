// The data the console's browser test walks through, made through the public API as any client
// would: a project with members, an agent with three dataset versions (the second active), a
// running job with scored iterations (four of them with results per datapoint of the third
// version, some failed, some errors, some traced, some datapoints missing; two of them compare with
// a verdict, flips and traced regressions), a finished job with
// 10,000 iterations, traces (one of 2,000 spans), a job evaluated by runs (one ended by its
// budget, one half way with dead tasks, driven by workers over HTTP), a project whose run races four
// candidates against an incumbent (one already stopped as worse, the race half way), and a second
// project in which every field a person or an agent writes holds markup and script.
import * as assert from 'uvu/assert';
import type { Client } from '../helpers/client.ts';
import { createApiKey, registerUser, type Member } from '../helpers/fixtures.ts';
import { complete, lease, registerWorker } from '../helpers/run-fixtures.ts';
import { baseNs, ms, otlpJson, postJson, spanId, traceId, type JsonSpan } from '../traces/helpers.ts';

export const password = 'correct horse battery';

/** Markup that would run if the console ever parsed a value as HTML; `where` says which field. */
export function hostile(where: string): string {
  return `<img src=x onerror="window.__pwned='${where}'"><script>window.__pwned='${where}'</script><a href="javascript:window.__pwned='${where}'">${where}</a>`;
}

/** The same for fields of at most 64 characters (iteration names). */
export function hostileShort(where: string): string {
  return `<img src=x onerror=__pwned=1>${where}`.slice(0, 64);
}

export const bigJobIterations = 10_000;
export const bigTraceSpans = 2_000;
export const runningIterations = 24;

export interface Seeded {
  ada: Member;
  apiKey: string;
  project: { id: string; name: string };
  members: string[];
  agent: { id: string; name: string };
  longAgent: { id: string; name: string };
  datasets: { id: string; version: number }[];
  runningJob: { id: string };
  runningIterations: { id: string; iteration_name: string; avg_score: number; status: string | null; dimension_scores: Record<string, number> }[];
  bigJob: { id: string };
  bigTraceId: string;
  traceIds: string[];
  hostileProject: { id: string };
  hostileAgent: { id: string };
  hostileDatasets: string[];
  hostileJob: { id: string };
  hostileIterations: string[];
  hostileTraceId: string;
  hostileRun: string;
  results: SeededResults;
  runs: SeededRuns;
  race: SeededRace;
}

/**
 * A project of its own (Returns desk) whose job races four candidates against its incumbent on 60
 * datapoints (score range [0, 1], alpha 0.05, at least 10 pairs), driven by a worker over HTTP:
 * the incumbent's results were written before the run (it is not run), and the seed pairs the
 * first `raceSeededPairs` datapoints of the run's order. By then v8-terse is stopped as worse; the
 * rest of the race (`raceRounds`) stops v8-strict-json as cannot_win (the exact rule), and
 * v8-few-shot and v8-reasoning run to the end (finished).
 */
export interface SeededRace {
  project: { id: string; name: string };
  job: { id: string };
  dataset: string;
  /** returns-v7, its results written beforehand. */
  incumbent: { id: string; iteration_name: string };
  /** v8-terse, v8-strict-json, v8-few-shot, v8-reasoning: the run's iterations, in its order. */
  candidates: { id: string; iteration_name: string }[];
  run: string;
  worker: { id: string; name: string };
}

export const raceDatapoints = 60;
/** Datapoints the seed pairs (of the run's order) before the tests look. */
export const raceSeededPairs = 30;
export const raceCandidateNames = ['v8-terse', 'v8-strict-json', 'v8-few-shot', 'v8-reasoning'];

/** The job evaluated by runs (of the agent's v3, 40 datapoints), and the workers that ran them. */
export interface SeededRuns {
  job: { id: string };
  /** baseline-prompt, concise-prompt, friendly-prompt. */
  iterations: { id: string; iteration_name: string }[];
  /** friendly-prompt's run, ended by its budget of 30 tasks (10 skipped). */
  budgetRun: string;
  /** baseline-prompt and concise-prompt's run, half way: 52 tasks ended (6 of them dead), 4 leased, 24 queued. */
  run: string;
  /** Who holds what: eval-worker-1 completed the first 52, eval-worker-2 holds 4, eval-worker-3 never leased. */
  workers: { id: string; name: string }[];
  /** The leases eval-worker-2 holds, for a test to complete. */
  held: { id: string; lease: string }[];
}

/** The half-way run's dead tasks: datapoint order -> [iteration index, its error]. */
export const runErrors: [number, number, string][] = [
  [4, 1, 'the answer did not match the output schema'],
  [9, 0, 'tool search_kb raised KeyError: \'article_id\''],
  [13, 1, 'context length exceeded (131,072 tokens)'],
  [17, 0, 'model provider timed out after 30 s'],
  [21, 0, 'sandbox killed: memory limit of 2 GiB'],
  [19, 1, 'sandbox killed: memory limit of 2 GiB'],
];
/**
 * Tasks of the half-way run completed by the seed: tasks go out 16 datapoints at a time, one
 * iteration after the other, so baseline-prompt's datapoints 0-31 and concise-prompt's 0-19.
 */
export const runEnded = 52;
export const runHeld = 4;
export const runDatapoints = 40;

/** Which iterations of the running job have results (of `dataset`, the agent's v3). */
export interface SeededResults {
  dataset: string;
  /** candidate-23: 37 of 40 datapoints run (two of them twice), three of them errors, five traced. */
  showcase: string;
  /**
   * candidate-24: every datapoint scored, better than candidate-23 on most (a verdict of improved
   * when the two are compared), worse on `resultRegressed`, some flipping between pass and fail.
   */
  complete: string;
  /** candidate-22: the first twelve datapoints. */
  partial: string;
  /** Datapoint order -> the trace of its (first) run, for the traced rows of the showcase. */
  traces: Record<number, string>;
  /** The same for candidate-24's traced runs (`resultTracedComplete`). */
  tracesComplete: Record<number, string>;
}

/** The showcase's datapoints: errors, those run twice, those traced, those with no result. */
export const resultErrors: Record<number, string> = {
  5: 'tool timed out after 30 s',
  17: 'rate limited by the model provider (429)',
  29: 'the answer did not match the output schema',
};
export const resultRetried = [0, 1];
export const resultTraced = [2, 3, 5, 8, 13];
export const resultDatapoints = 40;
export const resultMissing = [37, 38, 39];
/** The datapoints candidate-24 does worse on than candidate-23; the others it does better on. */
export const resultRegressed = [3, 8, 13, 26];
/** candidate-24's traced runs: three of the regressions (traced on both sides) and an improvement. */
export const resultTracedComplete = [2, 3, 8, 13];

async function created<T = any>(client: Client, path: string, body: unknown): Promise<T> {
  const reply = await client.post(path, body);
  assert.is(reply.status, 201, `POST ${path}: ${reply.text.slice(0, 300)}`);
  return reply.body as T;
}

/** Runs `make(i)` for i in [0, n), at most `width` at a time. */
async function inParallel(n: number, width: number, make: (i: number) => Promise<unknown>): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < n) await make(next++);
  };
  await Promise.all(Array.from({ length: Math.min(width, n) }, worker));
}

/** A score curve that climbs with noise, the same on every run. */
function scoreAt(i: number): number {
  const noise = Math.sin(i * 12.9898) * 43758.5453;
  return Math.round((0.55 + 0.3 * (1 - Math.exp(-i / 60)) + (noise - Math.floor(noise) - 0.5) * 0.12) * 10_000) / 10_000;
}

const dimensions = ['accuracy', 'tone', 'tool_use', 'latency'];

function dimensionScores(i: number): Record<string, number> {
  return Object.fromEntries(dimensions.map((name, d) => [name, Math.round(scoreAt(i + d * 7) * 100) / 100]));
}

function agentCode(i: number): string {
  return [
    'def answer(question, tools):',
    `    """Candidate ${i}."""`,
    `    context = tools.search(question, top_k=${3 + (i % 4)})`,
    i % 2 === 0 ? '    context = [c for c in context if c.score > 0.5]' : '    context = context[:3]',
    `    prompt = f"Answer politely using {context}: {question}"`,
    `    return tools.llm(prompt, temperature=${(i % 5) / 10})`,
    '',
  ].join('\n');
}

function datapoints(count: number, version: number): object[] {
  return Array.from({ length: count }, (_, i) => ({
    input: { question: `How do I reset my password? (case ${i + 1})`, channel: i % 2 ? 'email' : 'chat' },
    expected_output: version > 1 && i % 5 === 0 ? `Use the reset link (revised ${version}).` : 'Use the reset link on the sign-in page.',
    persona: ['new customer', 'admin', 'returning customer'][i % 3],
    tags: ['password', i % 2 ? 'email' : 'chat'],
  }));
}

export async function seedConsole(anonymous: Client): Promise<Seeded> {
  const ada = await registerUser(anonymous, 'ada@example.com', password);
  const client = ada.client;
  const project = await created(client, '/api/projects/', { name: 'Customer support', slug: 'customer-support', description: 'Agents that answer customers, and how well they do it.' });
  const members = ['bob@example.com', 'carol@example.com'];
  for (const email of members) {
    await registerUser(anonymous, email, password);
    await created(client, `/api/projects/${project.id}/memberships/`, { email });
  }
  const apiKey = (await createApiKey(client, project.id, { name: 'console test' })).key as string;

  const agent = await created(client, '/api/agents/', {
    project: project.id, name: 'support-bot', slug: 'support-bot', display_name: 'Support bot', model: 'gpt-4o-mini', analyzer_model: 'gpt-4o',
    description: 'Answers account and billing questions.', status: 'active', agent_path: 'agents/support.py', entrypoint_fn: 'answer',
    tags: ['support', 'prod'], output_fields: ['answer'], structure_weight: 25,
  });
  const longName = `triage-${'very-long-name-'.repeat(14)}end`;
  const longAgent = await created(client, '/api/agents/', { project: project.id, name: longName, slug: 'triage', display_name: longName, model: 'claude-3-haiku' });
  const datasets = [];
  for (const [version, size] of [[1, 20], [2, 22], [3, 40]] as const) {
    datasets.push(await created(client, '/api/datasets/', { agent: agent.id, name: `support v${version}`, datapoints: datapoints(size, version), make_active: version !== 3, source: version === 3 ? 'synthetic' : 'seed' }));
  }

  const runningJob = await created(client, '/api/jobs/', { agent: agent.id, job_type: 'prompt_tuning', status: 'running', baseline_score: 0.58, prompt_slug: 'support-answer', analyzer_model: 'gpt-4o' });
  const running: Seeded['runningIterations'] = [];
  for (let i = 0; i < runningIterations; i++) {
    const status = i % 3 === 2 ? null : scoreAt(i) > scoreAt(i - 1) ? 'keep' : 'discard';
    running.push(await created(client, '/api/job-iterations/', {
      job: runningJob.id, iteration_name: `candidate-${i + 1}`, order: i, avg_score: scoreAt(i), status,
      dimension_scores: dimensionScores(i), agent_code: agentCode(i), description: i % 4 === 0 ? 'Tighter retrieval' : 'Prompt rewording',
    }));
  }
  const best = Math.max(...running.map((iteration) => iteration.avg_score));
  assert.is((await client.patch(`/api/jobs/${runningJob.id}/`, { best_score: best })).status, 200);

  const bigJob = await created(client, '/api/jobs/', { agent: agent.id, job_type: 'model_backtesting', status: 'completed', baseline_score: 0.5, prompt_slug: 'backtest' });
  await inParallel(bigJobIterations, 64, (i) => created(client, '/api/job-iterations/', {
    job: bigJob.id, iteration_name: `sweep-${i + 1}`, order: i, avg_score: scoreAt(i), status: i % 7 === 0 ? 'keep' : 'discard', dimension_scores: { accuracy: scoreAt(i) },
  }));
  assert.is((await client.patch(`/api/jobs/${bigJob.id}/`, { best_score: Math.max(...Array.from({ length: bigJobIterations }, (_, i) => scoreAt(i))) })).status, 200);

  const { bigTraceId, traceIds } = await seedTraces(client);
  const hostileSeed = await seedHostile(client);
  const results = await seedResults(client, running, datasets[2]!.id);
  const runs = await seedRuns(client, project.id, agent.id, datasets[2]!.id);
  const race = await seedRace(client);
  return {
    ada, apiKey, project, members: [ada.email, ...members], agent, longAgent, datasets,
    runningJob, runningIterations: running, bigJob, bigTraceId, traceIds, ...hostileSeed, results, runs, race,
  };
}

/** Twelve small traces over three services (some failed), and one trace of 2,000 spans. */
async function seedTraces(client: Client): Promise<{ bigTraceId: string; traceIds: string[] }> {
  const traceIds: string[] = [];
  const services = ['support-api', 'retriever', 'billing'];
  for (let t = 1; t <= 12; t++) {
    const id = traceId(0x1000 + t);
    traceIds.push(id);
    const start = baseNs + ms(t * 60_000);
    const spans: JsonSpan[] = [
      { traceId: id, spanId: spanId(t * 100), name: `answer question ${t}`, start, end: start + ms(200 + t * 40), attributes: { 'gen_ai.operation.name': 'invoke_agent' }, ...(t % 4 === 0 ? { status: { code: 2, message: 'tool timed out' } } : {}) },
      { traceId: id, spanId: spanId(t * 100 + 1), parentSpanId: spanId(t * 100), name: 'search knowledge base', start: start + ms(10), end: start + ms(80), attributes: { 'db.system': 'qdrant' } },
      { traceId: id, spanId: spanId(t * 100 + 2), parentSpanId: spanId(t * 100), name: 'chat gpt-4o-mini', start: start + ms(90), end: start + ms(180 + t * 30), attributes: { 'gen_ai.request.model': 'gpt-4o-mini', 'gen_ai.usage.input_tokens': 400 + t, 'gen_ai.usage.output_tokens': 120 } },
    ];
    const reply = await postJson(client, otlpJson({ 'service.name': services[t % 3]! }, spans));
    assert.is(reply.status, 200, `export trace ${t}: ${reply.text}`);
  }

  const bigTraceId = traceId(0xb16);
  const start = baseNs + ms(3_600_000);
  const spans: JsonSpan[] = [{ traceId: bigTraceId, spanId: spanId(1), name: 'optimize run', start, end: start + ms(60_000), attributes: { 'gen_ai.operation.name': 'invoke_agent' } }];
  // A root, 40 steps under it, and under each step a chain of tool and model calls.
  for (let s = 0; s < 40; s++) {
    const stepId = 2 + s * 50;
    const stepStart = start + ms(s * 1_400 + 100);
    spans.push({ traceId: bigTraceId, spanId: spanId(stepId), parentSpanId: spanId(1), name: `step ${s + 1}`, start: stepStart, end: stepStart + ms(1_300), attributes: { step: s } });
    for (let c = 1; c < 50 && spans.length < bigTraceSpans; c++) {
      const callStart = stepStart + ms(c * 25);
      const llm = c % 3 === 0;
      spans.push({
        traceId: bigTraceId, spanId: spanId(stepId + c), parentSpanId: spanId(c % 5 === 0 ? stepId + c - 1 : stepId),
        name: llm ? 'chat gpt-4o' : `tool lookup_${c}`, start: callStart, end: callStart + ms(llm ? 60 : 20),
        attributes: llm ? { 'gen_ai.request.model': 'gpt-4o', 'gen_ai.usage.total_tokens': 900 } : { 'gen_ai.tool.name': `lookup_${c}` },
        ...(s === 7 && c === 9 ? { status: { code: 2, message: 'rate limited' } } : {}),
      });
    }
  }
  assert.is(spans.length, bigTraceSpans);
  const reply = await postJson(client, otlpJson({ 'service.name': 'optimizer' }, spans));
  assert.is(reply.status, 200, `export the big trace: ${reply.text}`);
  return { bigTraceId, traceIds };
}

/** Writes a batch of results for an iteration. */
export async function writeResults(client: Client, iteration: string, dataset: string, results: object[]): Promise<void> {
  const reply = await client.post(`/api/job-iterations/${iteration}/results/`, { dataset, results });
  assert.is(reply.status, 200, `POST results of ${iteration}: ${reply.text.slice(0, 300)}`);
}

/** A score for a datapoint's run, the same on every run of the test. */
export function caseScore(order: number, attempt: number, seed: number): number {
  const noise = Math.sin((order + 1) * 7.31 + attempt * 3.7 + seed * 1.9) * 43758.5453;
  return Math.round((0.4 + 0.58 * (noise - Math.floor(noise))) * 1000) / 1000;
}

/** A datapoint's run as a harness reports it: passed at 0.6 and above, some dimensions, its latency and cost. */
export function caseResult(order: number, attempt: number, seed: number): Record<string, unknown> {
  const score = caseScore(order, attempt, seed);
  return {
    datapoint_order: order, attempt, score, passed: score >= 0.6,
    dimension_scores: { accuracy: caseScore(order, attempt, seed + 11), tone: caseScore(order, attempt, seed + 23), ...(order % 2 === 0 ? { tool_use: caseScore(order, attempt, seed + 37) } : {}) },
    latency_ms: 400 + ((order * 137 + attempt * 61) % 2600), cost: Math.round((0.0008 + order * 0.00002) * 1e6) / 1e6,
  };
}

/**
 * candidate-24's run of a datapoint: candidate-23's first run of it moved up by 0.08 to 0.16, or
 * down by 0.26 for the regressed ones (its dimensions too, but tone), passed at 0.6 and above.
 */
export function completeResult(order: number): Record<string, unknown> {
  const base = caseResult(order, 0, 23) as { score: number; dimension_scores: Record<string, number> };
  const noise = Math.sin(order * 5.7) * 1000;
  const lift = resultRegressed.includes(order) ? -0.26 : 0.08 + 0.08 * (noise - Math.floor(noise));
  const moved = (value: number) => Math.round(Math.min(1, Math.max(0, value + lift)) * 1000) / 1000;
  const score = moved(base.score);
  const { accuracy, tool_use: toolUse } = base.dimension_scores;
  return {
    ...base, score, passed: score >= 0.6,
    dimension_scores: { accuracy: moved(accuracy!), tone: caseScore(order, 0, 47), ...(toolUse === undefined ? {} : { tool_use: moved(toolUse) }) },
  };
}

/** The three spans of an evaluation harness's run of a datapoint (the root failed with `error`). */
function caseSpans(id: string, order: number, start: bigint, name: string, error?: string): JsonSpan[] {
  const root = 0xe0000 + order * 10 + (name.includes('candidate-24') ? 5 : 0);
  return [
    { traceId: id, spanId: spanId(root), name, start, end: start + ms(320 + order * 9), attributes: { 'gen_ai.operation.name': 'invoke_agent' }, ...(error ? { status: { code: 2, message: error } } : {}) },
    { traceId: id, spanId: spanId(root + 1), parentSpanId: spanId(root), name: 'search knowledge base', start: start + ms(5), end: start + ms(60), attributes: { 'db.system': 'qdrant' } },
    { traceId: id, spanId: spanId(root + 2), parentSpanId: spanId(root), name: 'chat gpt-4o-mini', start: start + ms(70), end: start + ms(300 + order * 9), attributes: { 'gen_ai.request.model': 'gpt-4o-mini', 'gen_ai.usage.total_tokens': 700 + order }, ...(error ? { status: { code: 2, message: error } } : {}) },
  ];
}

/** Results for three iterations of the running job, and a trace for each traced run of the showcase and of candidate-24. */
async function seedResults(client: Client, running: Seeded['runningIterations'], dataset: string): Promise<SeededResults> {
  const [partial, showcase, complete] = [running[21]!, running[22]!, running[23]!];
  const traces: Record<number, string> = {};
  for (const order of resultTraced) {
    const id = traceId(0xe000 + order);
    traces[order] = id;
    const start = baseNs + ms(1_800_000 + order * 10_000);
    const reply = await postJson(client, otlpJson({ 'service.name': 'eval-harness' }, caseSpans(id, order, start, `evaluate case ${order}`, resultErrors[order])));
    assert.is(reply.status, 200, `export the trace of case ${order}: ${reply.text}`);
  }
  const tracesComplete: Record<number, string> = {};
  for (const order of resultTracedComplete) {
    const id = traceId(0xf000 + order);
    tracesComplete[order] = id;
    const start = baseNs + ms(2_400_000 + order * 10_000);
    const reply = await postJson(client, otlpJson({ 'service.name': 'eval-harness' }, caseSpans(id, order, start, `evaluate case ${order} (candidate-24)`)));
    assert.is(reply.status, 200, `export candidate-24's trace of case ${order}: ${reply.text}`);
  }

  const rows: Record<string, unknown>[] = [];
  for (let order = 0; order < resultDatapoints; order++) {
    if (resultMissing.includes(order)) continue;
    for (let attempt = 0; attempt < (resultRetried.includes(order) ? 2 : 1); attempt++) {
      const error = resultErrors[order];
      const row = error ? { datapoint_order: order, attempt, status: 'error', error, latency_ms: 30_000 } : caseResult(order, attempt, 23);
      rows.push({ ...row, ...(traces[order] && attempt === 0 ? { trace_id: traces[order] } : {}) });
    }
  }
  await writeResults(client, showcase.id, dataset, rows);
  await writeResults(client, complete.id, dataset, Array.from({ length: resultDatapoints }, (_, order) => ({
    ...completeResult(order), ...(tracesComplete[order] ? { trace_id: tracesComplete[order] } : {}),
  })));
  await writeResults(client, partial.id, dataset, Array.from({ length: 12 }, (_, order) => caseResult(order, 0, 22)));
  return { dataset, showcase: showcase.id, complete: complete.id, partial: partial.id, traces, tracesComplete };
}

/** A project where every field a person or an agent writes holds markup and script. */
async function seedHostile(client: Client) {
  const hostileProject = await created(client, '/api/projects/', { name: hostile('project name'), slug: 'hostile', description: hostile('project description') });
  const hostileAgent = await created(client, '/api/agents/', {
    project: hostileProject.id, name: hostile('agent name'), slug: 'hostile-agent', display_name: hostile('agent display name'),
    description: hostile('agent description'), model: hostile('model').slice(0, 128), status: '<b>bold</b>', tags: [hostile('agent tag')],
    agent_path: hostile('agent path'), output_fields: [hostile('eval spec')],
  });
  const hostileDatasets = [];
  for (const version of [1, 2]) {
    const dataset = await created(client, '/api/datasets/', {
      agent: hostileAgent.id, name: hostile(`dataset name ${version}`).slice(0, 255), datapoints: [
        { input: { question: hostile(`datapoint input ${version}`) }, expected_output: hostile(`expected output ${version}`), persona: hostile('persona').slice(0, 128), tags: [hostile(`datapoint tag ${version}`)] },
        { input: hostile('datapoint input text'), persona: 'plain' },
      ],
    });
    hostileDatasets.push(dataset.id as string);
  }
  const hostileJob = await created(client, '/api/jobs/', { agent: hostileAgent.id, status: 'running', job_type: 'prompt_tuning', prompt_slug: hostile('prompt slug').slice(0, 255), analyzer_model: hostile('analyzer').slice(0, 128), baseline_score: 0.1 });
  const hostileIterations = [];
  for (let i = 0; i < 2; i++) {
    const iteration = await created(client, '/api/job-iterations/', {
      job: hostileJob.id, iteration_name: hostileShort(`iteration ${i}`), order: i, avg_score: 0.2 + i / 10, status: i ? 'keep' : 'discard',
      description: hostile(`iteration description ${i}`), agent_code: `${hostile(`agent code ${i}`)}\nreturn ${i}\n`,
      dimension_scores: { [hostile('dimension name')]: 0.3 + i / 10, plain: 0.5 },
    });
    hostileIterations.push(iteration.id as string);
  }
  const hostileTraceId = traceId(0xbad);
  const start = baseNs + ms(7_200_000);
  const reply = await postJson(client, otlpJson({ 'service.name': hostile('service name'), 'overmind.project.id': hostileProject.id }, [
    { traceId: hostileTraceId, spanId: spanId(0xbad1), name: hostile('span name'), start, end: start + ms(50), attributes: { [hostile('attribute key')]: hostile('attribute value'), plain: 'text' }, status: { code: 2, message: hostile('status message') } },
    { traceId: hostileTraceId, spanId: spanId(0xbad2), parentSpanId: spanId(0xbad1), name: hostile('child span name'), start: start + ms(5), end: start + ms(20) },
  ]));
  assert.is(reply.status, 200, `export the hostile trace: ${reply.text}`);
  await writeResults(client, hostileIterations[0]!, hostileDatasets[0]!, [
    { datapoint_order: 0, status: 'error', error: hostile('result error') },
    { datapoint_order: 1, score: 0.4, passed: false, dimension_scores: { [hostileShort('result dimension')]: 0.4 } },
  ]);
  // A run of an iteration of its own, by a worker whose name, host and metadata hold markup, one
  // task dead with an error that does too.
  const runIteration = await created(client, '/api/job-iterations/', { job: hostileJob.id, iteration_name: hostileShort('run iteration'), order: 2, agent_code: hostile('run agent code') });
  const hostileRun = await created(client, `/api/jobs/${hostileJob.id}/runs/`, { dataset: hostileDatasets[0], iterations: [runIteration.id], max_tries: 1 });
  const worker = await registerWorker(client, { project: hostileProject.id, name: hostile('worker name').slice(0, 255), host: hostile('worker host').slice(0, 255), metadata: { note: hostile('worker metadata') } });
  const tasks = await lease(client, worker, { max: 2 });
  await accepted(client, worker, tasks.map((task) => ({ task: task.id, lease: task.lease, ...(task.datapoint.order === 0 ? { status: 'error', error: hostile('task error') } : { score: 0.5 }) })));
  return { hostileProject, hostileAgent, hostileDatasets, hostileJob, hostileIterations, hostileTraceId, hostileRun: hostileRun.id as string };
}

/** Completes tasks, every one of which must be accepted. */
async function accepted(client: Client, worker: { id: string }, results: Record<string, unknown>[]): Promise<void> {
  const reply = await complete(client, worker, results);
  assert.is(reply.status, 200, reply.text);
  assert.equal(reply.body.results.map((item: { outcome: string }) => item.outcome), results.map(() => 'accepted'), reply.text);
}

/**
 * A job of the agent evaluated by runs on its v3: friendly-prompt's run ended by its budget (30
 * of 40 tasks done, 10 skipped), then baseline-prompt and concise-prompt's run half way through
 * (baseline-prompt's first 32 datapoints and concise-prompt's first 20 ended, six of those tasks
 * dead with their errors, three of each; four tasks held by a second worker for an hour; the rest
 * queued), and a third worker that never leased.
 */
async function seedRuns(client: Client, project: string, agent: string, dataset: string): Promise<SeededRuns> {
  const job = await created(client, '/api/jobs/', { agent, job_type: 'judge_scoring', baseline_score: 0.6, prompt_slug: 'support-answer', analyzer_model: 'gpt-4o' });
  const iterations: { id: string; iteration_name: string }[] = [];
  for (const [i, name] of ['baseline-prompt', 'concise-prompt', 'friendly-prompt'].entries()) {
    iterations.push(await created(client, '/api/job-iterations/', { job: job.id, iteration_name: name, order: i, agent_code: agentCode(40 + i), description: `The ${name.replace('-', ' ')}` }));
  }
  const workers: { id: string; name: string }[] = [];
  for (const [i, host] of ['gpu-box-1', 'gpu-box-2', 'ada-laptop'].entries()) {
    workers.push(await registerWorker(client, { project, name: `eval-worker-${i + 1}`, host, metadata: { concurrency: 8 } }));
  }
  const [first, second] = workers;
  const result = (order: number, seed: number) => {
    const row = caseResult(order, 0, seed);
    return { score: row.score, passed: row.passed, dimension_scores: row.dimension_scores, latency_ms: row.latency_ms, cost: row.cost };
  };

  const budgetRun = await created(client, `/api/jobs/${job.id}/runs/`, { dataset, iterations: [iterations[2].id], budget: { max_tasks: 30 } });
  const budgeted = await lease(client, second, { max: 30, run: budgetRun.id });
  await accepted(client, second, budgeted.map((task) => ({ task: task.id, lease: task.lease, ...result(task.datapoint.order, 61) })));

  const run = await created(client, `/api/jobs/${job.id}/runs/`, { dataset, iterations: [iterations[0].id, iterations[1].id], max_tries: 1, lease_seconds: 3600 });
  const tasks = await lease(client, first, { max: runEnded, run: run.id });
  assert.is(tasks.length, runEnded);
  const errorOf = (task: any) => runErrors.find(([order, iteration]) => order === task.datapoint.order && iterations[iteration].id === task.iteration.id)?.[2];
  await accepted(client, first, tasks.map((task) => {
    const error = errorOf(task);
    return { task: task.id, lease: task.lease, ...(error ? { status: 'error', error, latency_ms: 30_000 } : result(task.datapoint.order, task.iteration.id === iterations[0].id ? 41 : 42)) };
  }));
  const held = await lease(client, second, { max: runHeld, run: run.id });
  assert.is(held.length, runHeld);
  return {
    job, iterations, budgetRun: budgetRun.id, run: run.id, workers,
    held: held.map((task) => ({ id: task.id as string, lease: task.lease as string })),
  };
}

/** A number in [0, 1) from a seed, the same on every run of the test. */
function unit(seed: number): number {
  const noise = Math.sin(seed * 12.9898 + 78.233) * 43758.5453;
  return noise - Math.floor(noise);
}

/**
 * A race's score of a datapoint: how hard the datapoint is (shared by every iteration, so that the
 * paired differences vary less than the scores), plus each iteration's own effect and noise, in
 * [0, 1]. `iteration` 0 is the incumbent, 1-4 the candidates in `raceCandidateNames`' order.
 */
export function raceScore(iteration: number, order: number): number {
  const ease = 0.7 + 0.2 * (unit(order + 1) - 0.5);
  const [effect, spread] = ([[0, 0.06], [-0.5, 0.12], [-0.12, 0.1], [0.005, 0.14], [0.04, 0.12]] as const)[iteration]!;
  const value = ease + effect + spread * (unit(order * 31 + iteration * 977 + 5) - 0.5);
  return Math.round(Math.min(1, Math.max(0, value)) * 1000) / 1000;
}

/**
 * Runs a race on, a datapoint at a time (a lease of as many tasks as it has live candidates, each
 * completed with `raceScore`), until `pairs` datapoints of its order are paired or nothing is left.
 */
export async function raceRounds(client: Client, worker: { id: string }, race: Pick<SeededRace, 'run' | 'candidates'>, pairs: number): Promise<void> {
  const index = (iteration: string) => race.candidates.findIndex((candidate) => candidate.id === iteration) + 1;
  for (;;) {
    const run = (await client.get(`/api/runs/${race.run}/`)).body as { race: { candidates: { state: string; pairs: number }[] } };
    const live = run.race.candidates.filter((candidate) => candidate.state === 'live');
    if (live.length === 0 || Math.min(...live.map((candidate) => candidate.pairs)) >= pairs) return;
    const tasks = await lease(client, worker, { max: live.length, run: race.run });
    if (tasks.length === 0) return;
    await accepted(client, worker, tasks.map((task) => {
      const score = raceScore(index(task.iteration.id), task.datapoint.order);
      return { task: task.id, lease: task.lease, score, passed: score >= 0.6, cost: 0.0012 };
    }));
  }
}

/** The Returns desk project, its incumbent's results, and its race half way (see `SeededRace`). */
async function seedRace(client: Client): Promise<SeededRace> {
  const project = await created(client, '/api/projects/', { name: 'Returns desk', slug: 'returns-desk', description: 'The agent that handles return and refund requests.' });
  const agent = await created(client, '/api/agents/', { project: project.id, name: 'returns-bot', slug: 'returns-bot', display_name: 'Returns bot', model: 'gpt-4o-mini' });
  const dataset = await created(client, '/api/datasets/', {
    agent: agent.id, name: 'returns v1', make_active: true, datapoints: Array.from({ length: raceDatapoints }, (_, i) => ({
      input: { question: `Can I return order #${4100 + i}? (case ${i + 1})` }, expected_output: i % 4 === 0 ? 'Refund to the original payment method.' : 'Yes, within 30 days.', persona: ['customer', 'courier'][i % 2],
    })),
  });
  const job = await created(client, '/api/jobs/', { agent: agent.id, job_type: 'prompt_tuning', status: 'running', baseline_score: 0.84, prompt_slug: 'returns-answer', analyzer_model: 'gpt-4o' });
  const names = ['returns-v7', ...raceCandidateNames];
  const iterations: { id: string; iteration_name: string }[] = [];
  for (const [i, name] of names.entries()) {
    iterations.push(await created(client, '/api/job-iterations/', { job: job.id, iteration_name: name, order: i, agent_code: agentCode(60 + i), description: i === 0 ? 'The best so far' : `Candidate ${name}` }));
  }
  const [incumbent, ...candidates] = iterations as [typeof iterations[number], ...typeof iterations];
  await writeResults(client, incumbent.id, dataset.id, Array.from({ length: raceDatapoints }, (_, order) => ({ datapoint_order: order, score: raceScore(0, order), passed: raceScore(0, order) >= 0.6 })));
  const run = await created(client, `/api/jobs/${job.id}/runs/`, {
    dataset: dataset.id, iterations: candidates.map((candidate) => candidate.id), seed: 7,
    race: { incumbent: incumbent.id, alpha: 0.05, min_pairs: 10, score_range: [0, 1] },
  });
  const worker = await registerWorker(client, { project: project.id, name: 'returns-worker-1', host: 'gpu-box-3' });
  const race = { project: { id: project.id as string, name: project.name as string }, job: { id: job.id as string }, dataset: dataset.id as string, incumbent, candidates, run: run.id as string, worker: { id: worker.id as string, name: worker.name as string } };
  await raceRounds(client, worker, race, raceSeededPairs);
  return race;
}
