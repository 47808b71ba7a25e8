// The worker command (`overmind-eval-service worker`, from dist/) against a real service: what a
// command is given (stdin, environment, agent code, trace context) and how what it does becomes a
// result: JSON with an output, plain text, invalid JSON, a non-zero exit, a hang, a flood, exit 75;
// and how the worker stops: SIGTERM (grace, then kill and release, goodbye, exit 0), a second
// signal, and a worker killed with SIGKILL whose tasks are leased again once their leases expire.
import { mkdtempSync, readFileSync, readdirSync, rmSync, existsSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { createApiKey, memberWithProject } from '../helpers/fixtures.ts';
import { createRun, lease, registerWorker, runOf, runSetup, tasksOf } from '../helpers/run-fixtures.ts';
import { start, type Running } from '../helpers/service.ts';
import { until } from '../helpers/wait.ts';
import { exitOf, spawnWorker, type WorkerProcess } from '../helpers/worker-process.ts';

let running: Running;
let scratch: string;

test.before.each(async () => {
  // Tasks tried again (an error, rate limited) are ready again at once.
  running = await start({ limits: { runRetryDelayMs: 1, runRetryDelayMsMax: 2 } });
  scratch = mkdtempSync(join(tmpdir(), 'overmind-worker-test-'));
});

test.after.each(async () => {
  await running.stop();
  rmSync(scratch, { recursive: true, force: true });
});

async function project(size: number, iterations = 1) {
  const { member, project } = await memberWithProject(running.client);
  const key = await createApiKey(member.client, project.id);
  const setup = await runSetup(member.client, project.id, size, iterations);
  return { client: member.client, apiKey: key.key as string, setup };
}

/** The worker's temporary folder (its agent code files) in the test's scratch: one killed with SIGKILL cannot remove its own. */
function worker(apiKey: string, run: { id: string } | null, command: string, flags: string[] = []): WorkerProcess {
  return spawnWorker(['--url', running.url, '--api-key', apiKey, ...(run ? ['--run', run.id] : []), '--command', command, ...flags], { TMPDIR: scratch });
}

/** The results of an iteration, by datapoint order. */
async function rowsOf(client: any, iteration: { id: string }): Promise<any[]> {
  const rows = await client.listAll(`/api/job-iterations/${iteration.id}/results/`);
  const full = await Promise.all(rows.map(async (row: any) => (await client.get(`/api/job-iterations/${iteration.id}/results/${row.id}/`)).body));
  return full.sort((a: any, b: any) => a.datapoint_order - b.datapoint_order);
}

test('JSON with an output: the output and its score, passed, dimensions and cost; the command reads its task on stdin, its ids in the environment, its agent code in a file, and a fresh TRACEPARENT whose trace the result names', async () => {
  const { client, apiKey, setup } = await project(3, 2);
  const run = await createRun(client, setup);
  const command = [
    'task=$(cat)',
    'printf \'{"output": {"stdin": %s, "env": ["%s", "%s", "%s", "%s", "%s", "%s"], "code": "%s", "traceparent": "%s", "key": "%s"}, "score": 0.75, "passed": true, "dimension_scores": {"clarity": 0.5}, "cost": 0.25}\' ' +
      '"$task" "$OVERMIND_TASK_ID" "$OVERMIND_RUN_ID" "$OVERMIND_ITERATION_ID" "$OVERMIND_DATAPOINT_ID" "$OVERMIND_DATAPOINT_ORDER" "$OVERMIND_ATTEMPT" "$(cat "$OVERMIND_AGENT_CODE_FILE")" "$TRACEPARENT" "${OVERMIND_API_KEY:-none}"',
  ].join('; ');
  const spawned = spawnWorker(['--url', running.url, '--run', run.id, '--command', command, '--concurrency', '2'], { OVERMIND_API_KEY: apiKey });
  assert.is(await exitOf(spawned), 0, spawned.stderr());
  assert.match(spawned.stderr(), /the run has ended: said goodbye/);
  const tasks = await tasksOf(client, run);
  for (const [index, iteration] of setup.iterations.entries()) {
    const rows = await rowsOf(client, iteration);
    assert.is(rows.length, 3);
    for (const row of rows) {
      const task = tasks.find((one: any) => one.result === row.id);
      const datapoint = setup.dataset.datapoints[row.datapoint_order];
      assert.equal([row.status, row.score, row.passed, row.dimension_scores, row.cost], ['ok', 0.75, true, { clarity: 0.5 }, 0.25]);
      const { stdin, env, code, traceparent, key } = row.output;
      assert.equal(stdin, {
        task_id: task.id,
        run_id: run.id,
        iteration_id: iteration.id,
        iteration_name: iteration.iteration_name,
        datapoint_id: datapoint.id,
        order: row.datapoint_order,
        input: datapoint.input,
        persona: datapoint.persona,
        tags: datapoint.tags,
        attempt: 0,
        try: 1,
      });
      assert.equal(env, [task.id, run.id, iteration.id, datapoint.id, String(row.datapoint_order), '0']);
      assert.is(code, `code ${index}`);
      assert.is(key, 'none', 'the API key is not passed to the command');
      assert.is(traceparent, `00-${row.trace_id}-${row.span_id}-01`);
      assert.ok(row.latency_ms > 0);
    }
  }
  const traces = new Set(tasks.map((task: any) => task.result));
  assert.is(traces.size, 6);
});

test("a command exports its spans with the span token in OpenTelemetry's environment (never the key): they land in its result's trace; a worker naming its own OTLP endpoint keeps it", async () => {
  const { client, apiKey, setup } = await project(2);
  const run = await createRun(client, setup);
  // What an OpenTelemetry SDK does with these variables: one span, a child of TRACEPARENT, sent as OTLP/JSON.
  const agent = join(scratch, 'agent.mjs');
  writeFileSync(agent, `
    const [, traceId, parentId] = process.env.TRACEPARENT.split('-');
    const headers = Object.fromEntries(process.env.OTEL_EXPORTER_OTLP_TRACES_HEADERS.split(',').map((pair) => pair.split('=').map(decodeURIComponent)));
    const now = BigInt(Date.now()) * 1000000n;
    const span = { traceId, spanId: process.env.OVERMIND_TASK_ID.replace(/-/g, '').slice(-16), parentSpanId: parentId, name: 'tool.search', kind: 1,
      startTimeUnixNano: String(now), endTimeUnixNano: String(now + 1000n), attributes: [{ key: 'gen_ai.tool.name', value: { stringValue: 'search' } }] };
    const body = { resourceSpans: [{ resource: { attributes: [] }, scopeSpans: [{ scope: { name: 'agent' }, spans: [span] }] }] };
    const exported = await fetch(process.env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT, { method: 'POST', headers: { ...headers, 'content-type': 'application/json' }, body: JSON.stringify(body) });
    const agents = await fetch(process.env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT.replace('/v1/traces', '/api/agents/'), { headers });
    console.log(JSON.stringify({ output: { exported: exported.status, agents: agents.status, key: process.env.OVERMIND_API_KEY ?? 'none', token: process.env.OVERMIND_SPAN_TOKEN === headers.Authorization.slice(7) } }));
  `);
  const spawned = worker(apiKey, run, `node ${agent}`);
  assert.is(await exitOf(spawned), 0, spawned.stderr());
  for (const row of await rowsOf(client, setup.iterations[0])) {
    assert.equal(row.output, { exported: 200, agents: 401, key: 'none', token: true });
    const trace = await client.get(`/api/traces/${row.trace_id}/`);
    assert.is(trace.status, 200, trace.text);
    assert.equal(trace.body.spans.map((span: any) => [span.name, span.parent_span_id]), [['tool.search', row.span_id]]);
  }

  const second = await createRun(client, await runSetup(client, setup.job.project, 1, 1));
  const own = join(scratch, 'own.sh');
  writeFileSync(own, 'printf \'{"output": {"endpoint": "%s", "headers": "%s", "token": %s}}\' "$OTEL_EXPORTER_OTLP_TRACES_ENDPOINT" "$OTEL_EXPORTER_OTLP_TRACES_HEADERS" "${OVERMIND_SPAN_TOKEN:+true}"\n');
  const keeping = spawnWorker(['--url', running.url, '--api-key', apiKey, '--run', second.id, '--command', `sh ${own}`], { TMPDIR: scratch, OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector.example:4318' });
  assert.is(await exitOf(keeping), 0, keeping.stderr());
  const [kept] = await client.listAll(`/api/job-iterations/${(await tasksOf(client, second))[0].iteration}/results/`);
  const detail = (await client.get(`/api/job-iterations/${kept.iteration}/results/${kept.id}/`)).body;
  assert.equal(detail.output, { endpoint: '', headers: '', token: true });
});

test("an agent using OpenTelemetry's SDK with no settings of its own: its tool spans reach its result's trace, and the eval spec scores its tool use from them", async () => {
  const { client, apiKey, setup } = await project(2);
  assert.is((await client.patch(`/api/agents/${setup.agent.id}/`, { tool_config: { expected_tools: ['search', 'fetch'] }, tool_usage_weight: 10 })).status, 200);
  const run = await createRun(client, setup, { scoring: { method: 'spec' } });
  const agent = join(scratch, 'sdk-agent.mjs');
  writeFileSync(agent, `
    import { createRequire } from 'node:module';
    const require = createRequire(${JSON.stringify(fileURLToPath(new URL('../../package.json', import.meta.url)))});
    const api = require('@opentelemetry/api');
    const { W3CTraceContextPropagator } = require('@opentelemetry/core');
    const { OTLPTraceExporter } = require('@opentelemetry/exporter-trace-otlp-proto');
    const { BasicTracerProvider, SimpleSpanProcessor } = require('@opentelemetry/sdk-trace-base');
    const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(new OTLPTraceExporter())] });
    const parent = new W3CTraceContextPropagator().extract(api.context.active(), { traceparent: process.env.TRACEPARENT }, api.defaultTextMapGetter);
    provider.getTracer('agent').startSpan('search', { attributes: { 'gen_ai.tool.name': 'search', 'gen_ai.operation.name': 'execute_tool' } }, parent).end();
    await provider.shutdown();
    console.log(JSON.stringify({ output: 'done' }));
  `);
  const spawned = worker(apiKey, run, `node ${agent}`);
  assert.is(await exitOf(spawned), 0, spawned.stderr());
  for (const row of await rowsOf(client, setup.iterations[0])) {
    assert.is(row.status, 'ok', row.error);
    assert.is(row.dimension_scores.tool_usage, 5, 'one of the two expected tools called: half of 10 points');
    const trace = await client.get(`/api/traces/${row.trace_id}/`);
    assert.equal(trace.body.spans.map((span: any) => [span.name, span.span_type, span.parent_span_id]), [['search', 'tool_call', row.span_id]]);
  }
});

test('plain text is the output as text; printed invalid JSON too; on a run whose scores the worker reports, a result without a score is sent as an error saying why, with the output', async () => {
  const { client, apiKey, setup } = await project(2);
  const run = await createRun(client, setup, { max_tries: 1 });
  const spawned = worker(apiKey, run, 'if [ "$OVERMIND_DATAPOINT_ORDER" = 0 ]; then printf "hello\\nworld\\n\\n"; else echo \'{"output": broken\'; fi');
  assert.is(await exitOf(spawned), 0, spawned.stderr());
  const rows = await rowsOf(client, setup.iterations[0]);
  assert.equal(rows.map((row) => row.output), ['hello\nworld', '{"output": broken']);
  for (const row of rows) {
    assert.is(row.status, 'error');
    assert.match(row.error, /^the service refused this result: \{"score":\["This field is required\."\]\}$/);
  }
  assert.match(spawned.stderr(), /refused its result/);
});

test('a score that is not a number fails its own task only: an error result saying why; the results after it keep their scores (the worker does not take the run for one the service scores)', async () => {
  const { client, apiKey, setup } = await project(4);
  const run = await createRun(client, setup, { max_tries: 1 });
  const spawned = worker(apiKey, run, 'if [ "$OVERMIND_DATAPOINT_ORDER" = 0 ]; then echo \'{"output": "n", "score": "high"}\'; else echo \'{"output": "ok", "score": 0.5}\'; fi', ['--concurrency', '1']);
  assert.is(await exitOf(spawned), 0, spawned.stderr());
  const rows = await rowsOf(client, setup.iterations[0]);
  assert.equal(rows.map((row) => [row.status, row.score]), [['error', null], ['ok', 0.5], ['ok', 0.5], ['ok', 0.5]]);
  assert.is(rows[0].error, 'the service refused this result: {"score":["A valid number is required."]}');
  assert.is(rows[0].output, 'n');
  assert.equal((await runOf(client, run)).counts, { total: 4, queued: 0, leased: 0, done: 3, dead: 1, skipped: 0, cancelled: 0 });
});

test('on a run the service scores, the worker sends no score of the command\'s (the task says so): the service scores each output', async () => {
  const { client, apiKey, setup } = await project(2);
  const run = await createRun(client, setup, { scoring: { method: 'scorers', pass_threshold: 0.5, scorers: [{ type: 'contains', name: 'says_ok', value: 'ok' }] } });
  const spawned = worker(apiKey, run, 'echo \'{"output": "ok", "score": 0.1, "passed": false}\'');
  assert.is(await exitOf(spawned), 0, spawned.stderr());
  for (const row of await rowsOf(client, setup.iterations[0])) assert.equal([row.status, row.score, row.passed], ['ok', 1, true], row.error);
  assert.not.match(spawned.stderr(), /refused its result/);
});

test('a non-zero exit is an error result with the tail of stderr; the task is tried again until max_tries', async () => {
  const { client, apiKey, setup } = await project(1);
  const run = await createRun(client, setup, { max_tries: 2 });
  const spawned = worker(apiKey, run, 'echo "the first line" >&2; head -c 20000 /dev/zero | tr "\\0" x >&2; echo >&2; echo "the last line" >&2; exit 3');
  assert.is(await exitOf(spawned), 0, spawned.stderr());
  const [row] = await rowsOf(client, setup.iterations[0]);
  assert.is(row.status, 'error');
  // The last 8 KiB of stderr, whole.
  assert.ok(row.error.startsWith('exit code 3\nxxx'), row.error.slice(0, 40));
  assert.ok(row.error.endsWith('xxx\nthe last line'), row.error.slice(-40));
  assert.ok(row.error.length >= 8192 && row.error.length <= 8192 + 20, `${row.error.length} characters`);
  assert.not.match(row.error, /the first line/);
  const [task] = await tasksOf(client, run);
  assert.equal([task.state, task.tries], ['dead', 2]);
  assert.match(spawned.stderr(), /datapoint 0, .*try 2\): exit code 3/);
});

test('a command that hangs is killed with its whole process group at the timeout: an error "timed out after N s"', async () => {
  const { client, apiKey, setup } = await project(1);
  const run = await createRun(client, setup, { max_tries: 1 });
  const pids = join(scratch, 'pids');
  const started = performance.now();
  const spawned = worker(apiKey, run, `sleep 300 & echo $! >> ${pids}; sh -c 'echo $$ >> ${pids}; sleep 300'`, ['--timeout', '1']);
  assert.is(await exitOf(spawned), 0, spawned.stderr());
  assert.ok(performance.now() - started < 10_000);
  const [row] = await rowsOf(client, setup.iterations[0]);
  assert.equal([row.status, row.error], ['error', 'timed out after 1 s']);
  const started_ = readFileSync(pids, 'utf8').trim().split('\n').map(Number);
  assert.is(started_.length, 2);
  await until(() => started_.every((pid) => !alive(pid)), 'every process of the group gone');
});

test('a command that floods its output: read to the end, its first 64 KiB kept (the output marked as cut), the worker\'s memory flat', async () => {
  const { client, apiKey, setup } = await project(1);
  const run = await createRun(client, setup, { max_tries: 1 });
  const spawned = worker(apiKey, run, 'yes 0123456789abcdef | head -c 300000000');
  let peakKb = 0;
  const sampling = setInterval(() => (peakKb = Math.max(peakKb, memoryKb(spawned.child.pid!))), 20);
  try {
    assert.is(await exitOf(spawned, 60_000), 0, spawned.stderr());
  } finally {
    clearInterval(sampling);
  }
  const [row] = await rowsOf(client, setup.iterations[0]);
  assert.ok(typeof row.output === "string" && row.output.startsWith("0123456789abcdef\n0123"), JSON.stringify(row).slice(0, 800));
  assert.ok(row.output.endsWith('\n[output truncated: 300000000 bytes in all]'), row.output.slice(-60));
  assert.ok(JSON.stringify(row.output).length <= 65536);
  assert.ok(peakKb > 0 && peakKb < 250 * 1024, `the worker's peak RSS: ${peakKb} kB for 300 MB printed`);
});

test('exit 75 (EX_TEMPFAIL) is rate_limited: the task is leased again without using a try', async () => {
  const { client, apiKey, setup } = await project(2);
  const run = await createRun(client, setup, { max_tries: 1 });
  const marks = join(scratch, 'marks');
  const spawned = worker(apiKey, run, `mkdir -p ${marks}; if [ ! -e ${marks}/$OVERMIND_TASK_ID ]; then touch ${marks}/$OVERMIND_TASK_ID; exit 75; fi; echo '{"output": "ok", "score": 1}'`);
  assert.is(await exitOf(spawned), 0, spawned.stderr());
  const tasks = await tasksOf(client, run);
  assert.equal(tasks.map((task: any) => [task.state, task.tries]), [['done', 0], ['done', 0]], 'no try used');
  assert.is(readdirSync(marks).length, 2);
});

test('SIGTERM: no more leases, commands that finish within the grace period are sent, the rest killed and given back; goodbye; exit 0', async () => {
  const { client, apiKey, setup } = await project(3);
  const run = await createRun(client, setup, { lease_seconds: 60 });
  const pids = join(scratch, 'pids');
  // Datapoint 0 finishes within the grace period; the others would take 300 s.
  const spawned = worker(apiKey, run, `echo $$ >> ${pids}; if [ "$OVERMIND_DATAPOINT_ORDER" = 0 ]; then sleep 0.5; echo '{"output": "quick", "score": 1}'; else exec sleep 300; fi`, ['--concurrency', '2', '--grace', '1.5']);
  await until(async () => (await runOf(client, run)).counts.leased === 2 && existsSync(pids) && readFileSync(pids, 'utf8').trim().split('\n').length === 2, 'two commands running', 10_000);
  const signalled = performance.now();
  spawned.child.kill('SIGTERM');
  assert.is(await exitOf(spawned), 0, spawned.stderr());
  const took = performance.now() - signalled;
  assert.ok(took >= 1400 && took < 6000, `exited ${took.toFixed(0)} ms after SIGTERM (grace 1.5 s)`);
  assert.match(spawned.stderr(), /SIGTERM: leasing no more/);
  assert.match(spawned.stderr(), /stopped: said goodbye/);
  const state = await runOf(client, run);
  assert.equal([state.counts.done, state.counts.leased, state.counts.queued], [1, 0, 2], 'the quick one sent; the killed one and the unleased one queued');
  assert.equal((await client.get('/api/workers/')).body.count, 0, 'the worker said goodbye');
  const other = await registerWorker(client);
  assert.is((await lease(client, other, { run: run.id })).length, 2, 'the tasks it gave back are leased again at once');
  const commandPids = readFileSync(pids, 'utf8').trim().split('\n').map(Number);
  await until(() => commandPids.every((pid) => !alive(pid)), 'the killed command gone');
});

test('a second signal stops at once: the commands killed, a non-zero exit', async () => {
  const { client, apiKey, setup } = await project(1);
  const run = await createRun(client, setup);
  const pids = join(scratch, 'pids');
  const spawned = worker(apiKey, run, `echo $$ >> ${pids}; exec sleep 300`, ['--grace', '60']);
  await until(() => existsSync(pids), 'the command running', 10_000);
  spawned.child.kill('SIGINT');
  await until(() => spawned.stderr().includes('SIGINT: leasing no more'), 'the first signal heard');
  spawned.child.kill('SIGINT');
  assert.is(await exitOf(spawned, 5000), 130);
  const [pid] = readFileSync(pids, 'utf8').trim().split('\n').map(Number);
  await until(() => !alive(pid!), 'the command killed');
  assert.is((await runOf(client, run)).counts.leased, 1, 'no goodbye: its lease runs out by itself');
});

test('a worker killed with SIGKILL mid-task: its tasks are leased again once their leases expire, and another worker finishes the run', async () => {
  const { client, apiKey, setup } = await project(4);
  const run = await createRun(client, setup, { lease_seconds: 1 });
  const pids = join(scratch, 'pids');
  const first = worker(apiKey, run, `echo $$ >> ${pids}; exec sleep 300`, ['--concurrency', '2']);
  await until(() => existsSync(pids) && readFileSync(pids, 'utf8').trim().split('\n').length === 2, 'both commands started', 10_000);
  first.child.kill('SIGKILL');
  await first.exited;
  // Its commands ran in process groups of their own: they outlive it, as they would any crash.
  for (const pid of readFileSync(pids, 'utf8').trim().split('\n').map(Number)) process.kill(pid, 'SIGKILL');
  const second = worker(apiKey, run, `echo '{"output": "second", "score": 1}'`, ['--concurrency', '4']);
  assert.is(await exitOf(second), 0, second.stderr());
  const state = await runOf(client, run);
  assert.equal([state.status, state.counts.done], ['completed', 4]);
  const rows = await rowsOf(client, setup.iterations[0]);
  assert.equal(rows.map((row) => row.output), ['second', 'second', 'second', 'second']);
});

test('bad settings: a usage error (exit 2); a key the service refuses: exit 1 saying so', async () => {
  const usage = spawnWorker(['--url', running.url, '--command', 'true']);
  assert.is(await exitOf(usage), 2);
  assert.match(usage.stderr(), /--api-key is required/);
  const concurrency = spawnWorker(['--url', running.url, '--api-key', 'k', '--command', 'true', '--concurrency', '0']);
  assert.is(await exitOf(concurrency), 2);
  assert.match(concurrency.stderr(), /--concurrency must be an integer from 1 to 1000/);
  const help = spawnWorker(['--help']);
  assert.is(await exitOf(help), 0);
  assert.match(help.stdout(), /^Usage: overmind-eval-service worker/);
  const refused = spawnWorker(['--url', running.url, '--api-key', 'not-a-key', '--command', 'true']);
  assert.is(await exitOf(refused), 1);
  assert.match(refused.stderr(), /the worker stopped: registering the worker: the service answered 401/);
});

function alive(pid: number): boolean {
  try {
    const state = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.[0];
    return state !== 'Z';
  } catch {
    return false;
  }
}

function memoryKb(pid: number): number {
  try {
    return Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0);
  } catch {
    return 0;
  }
}

test.run();
