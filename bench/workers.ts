// Workers (issue 36), against the service started as `npm start` starts it, on LMDB (every
// completion answered after its commit is synced), with the workers in a process of their own on
// the load generator's core (bench/worker-child.ts):
// - the worker command's own cost per task: one task at a time with a trivial command (`cat`
//   reads the task, `echo` answers), the median task's wall time (its start to the next task's
//   start: its command, its completion, the next lease) minus the median time the same command
//   takes run bare from a Node loop (spawn to close); the median over alternating rounds;
// - the in-process handler worker (runWorker) completing trivial tasks end to end (lease, a
//   handler that answers at once, complete with its result row), tasks per second, the median
//   over rounds of one run each.
// - scoring on the server: outputs scored per second by the eval spec (10 fields) and by the
//   simple scorers, in this process (bench/scoring.ts).
// `--quick` uses smaller runs and fewer rounds.
import { scoringRows } from './scoring.ts';
import { median, quick, removeDir, rounds, sendJson, signUp, startLineChild, startService, type Row } from './harness.ts';

const commandTasks = quick ? 40 : 150;
const handlerTasks = quick ? 20_000 : 60_000;
const handlerConcurrency = 1000;
const handlerBatch = 1000;
/** Reads the task and answers with a score (a shell builtin: no process more than the shell). */
const trivialCommand = `cat > /dev/null; echo '{"output": "ok", "score": 1}'`;
const commandCostP50MsMax = 10;
const handlerPerSecondMin = 10_000;

export async function run(): Promise<Row[]> {
  const service = await startService();
  try {
    const { access, projectId } = await signUp(service.url, 'bench-workers');
    const post = (path: string, body: unknown) => sendJson(service.url, 'POST', path, body, access);
    const apiKey = (await post('/api/auth/api-keys/', { project: projectId, name: 'bench workers' })).key as string;
    const agent = await post('/api/agents/', { name: 'workers', slug: 'workers', project: projectId });
    const datasetOf = async (size: number) =>
      (await post('/api/datasets/', { agent: agent.id, make_active: false, datapoints: Array.from({ length: size }, (_, i) => ({ input: { question: `case ${i}` } })) })).id as string;
    const job = (await post('/api/jobs/', { agent: agent.id })).id as string;
    let made = 0;
    /** Iterations for runs of one dataset version (an iteration's results are of one version). */
    const iterationsOf = async (count: number) => {
      const ids: string[] = [];
      for (let i = 0; i < count; i++) ids.push((await post('/api/job-iterations/', { job, iteration_name: `candidate-${++made}`, order: made, agent_code: 'x' })).id as string);
      return ids;
    };
    const newRun = async (dataset: string, iterations: string[]) => (await post(`/api/jobs/${job}/runs/`, { dataset, iterations })).id as string;
    const warmUp = { dataset: await datasetOf(10), iterations: await iterationsOf(1) };
    const commands = { dataset: await datasetOf(commandTasks), iterations: await iterationsOf(1) };
    const handlers = { dataset: await datasetOf(handlerTasks / 10), iterations: await iterationsOf(10) };

    const child = await startLineChild(['bench/worker-child.ts'], { input: JSON.stringify({ url: service.url, apiKey }) });
    const ask = async <T>(line: string): Promise<T> => {
      child.send(line);
      return JSON.parse(await child.next()) as T;
    };

    // The command's own cost: bare rounds alternating with worker rounds, after one of each to warm up.
    await ask(`bare 20 ${trivialCommand}`);
    await ask(`command ${await newRun(warmUp.dataset, warmUp.iterations)} ${trivialCommand}`);
    const costs: number[] = [];
    const notes: string[] = [];
    for (let round = 0; round < rounds; round++) {
      const bare = await ask<{ p50Ms: number }>(`bare ${commandTasks} ${trivialCommand}`);
      const worker = await ask<{ wallP50Ms: number; latencyP50Ms: number; tasks: number }>(`command ${await newRun(commands.dataset, commands.iterations)} ${trivialCommand}`);
      costs.push(worker.wallP50Ms - bare.p50Ms);
      notes.push(`${worker.wallP50Ms.toFixed(2)} - ${bare.p50Ms.toFixed(2)}`);
    }

    // The handler worker end to end: one run per round.
    const rates: number[] = [];
    for (let round = 0; round < rounds; round++) {
      const handled = await ask<{ tasks: number; seconds: number }>(`handler ${await newRun(handlers.dataset, handlers.iterations)} ${handlerConcurrency} ${handlerBatch}`);
      if (handled.tasks !== handlerTasks) throw new Error(`the handler worker completed ${handled.tasks} tasks of ${handlerTasks}`);
      rates.push(handled.tasks / handled.seconds);
    }
    await child.end();

    const cost = median(costs);
    const rate = median(rates);
    return [
      {
        name: "the worker command's own cost per task (a trivial command, one at a time), p50 of wall minus the command's own time",
        value: cost,
        unit: 'ms',
        target: `<= ${commandCostP50MsMax} ms`,
        pass: cost <= commandCostP50MsMax,
        note: `rounds (worker p50 - bare p50, ms) ${notes.join(', ')}; ${commandTasks} tasks a round of \`${trivialCommand}\``,
      },
      {
        name: `in-process handler worker, trivial tasks end to end (lease, handler, complete with its result row; ${handlerConcurrency} at once)`,
        value: rate,
        unit: 'tasks/s',
        target: `>= ${handlerPerSecondMin.toLocaleString('en-US')} tasks/s`,
        pass: rate >= handlerPerSecondMin,
        note: `rounds ${rates.map((one) => Math.round(one).toLocaleString('en-US')).join('/')} tasks/s; ${handlerTasks.toLocaleString('en-US')} tasks a round`,
      },
      // Scoring on the server: a spec of 10 fields, outputs per second on one core (bench/scoring.ts).
      ...(await scoringRows()),
    ];
  } finally {
    await service.stop();
    removeDir(service.dataDir);
  }
}
