// `overmind-eval-service worker`: runs a shell command for each task of a project's runs (or of
// one run) and sends back what it printed, with the worker loop of src/worker/. The first SIGINT
// or SIGTERM stops leasing, lets running commands finish within the grace period, kills and gives
// back the rest, says goodbye and exits 0; a second one kills every command and exits at once.
import { constants, hostname } from 'node:os';
import { parseArgs } from 'node:util';
import { CommandRunner } from '../worker/command-task.ts';
import { ProgressReporter } from '../worker/progress.ts';
import { batchMax, concurrencyMax } from '../worker/worker-decisions.ts';
import { messageOf, WorkerLoop } from '../worker/worker-loop.ts';
import { hasOwnTracesEndpoint, SpanExport } from '../worker/span-export.ts';
import { WorkerProtocol } from '../worker/worker-protocol.ts';
import type { LeasedTask, TaskOutcome } from '../worker/worker-task.ts';

const usage = `Usage: overmind-eval-service worker --url URL --api-key KEY --command CMD [options]

Leases tasks of the API key's project (or of one run) from an evaluation service, runs CMD for
each through /bin/sh, and sends back what it printed. Progress goes to stderr: one live line on a
terminal, else a line every 10 s. SIGINT or SIGTERM stop it gracefully (a second one at once).

Options:
  --url <url>          the service's address (env OVERMIND_URL)
  --api-key <key>      an API key of the project (env OVERMIND_API_KEY; never passed to CMD)
  --run <id>           only this run's tasks; exits 0 once the run has ended
                       (default: every live run of the project, until stopped)
  --command <cmd>      the shell command run for each task
  --concurrency <n>    commands running at once (default 4, at most ${concurrencyMax})
  --batch <n>          tasks asked for in one lease (default: the concurrency, at most ${batchMax})
  --timeout <s>        seconds a command may run before its process group is killed
                       and its result is the error "timed out after <s> s" (default 600)
  --grace <s>          at a stop, seconds running commands get to finish (default 30)
  --name <name>        the worker's name as the service lists it (default: host and pid)
  -h, --help           print this help and exit

What CMD gets:
  stdin   the task as JSON: task_id, run_id, iteration_id, iteration_name, datapoint_id,
          order, input, persona, tags, attempt, try
  env     OVERMIND_TASK_ID, OVERMIND_RUN_ID, OVERMIND_ITERATION_ID, OVERMIND_DATAPOINT_ID,
          OVERMIND_DATAPOINT_ORDER, OVERMIND_ATTEMPT, OVERMIND_AGENT_CODE_FILE (a file holding
          the iteration's agent_code), TRACEPARENT (W3C, a fresh trace per task: the result
          links to it, so spans the agent sends to the service with it land there),
          OVERMIND_SPAN_TOKEN (good for span export only) and, unless the worker's env names
          an OTLP endpoint, OTEL_EXPORTER_OTLP_TRACES_ENDPOINT and _HEADERS with it, so an
          OpenTelemetry SDK in CMD exports its spans to the service as they are

What it answers:
  stdout  a JSON object with "output" gives the output and any of "score", "passed",
          "dimension_scores", "cost" it carries; anything else is the output, as text
  exit 0  a result; exit 75 (EX_TEMPFAIL): rate limited, tried again later without using a
          try; any other exit: an error result with the tail of stderr
`;

interface WorkerSettings {
  url: string;
  apiKey: string;
  run: string | null;
  command: string;
  concurrency: number;
  batch: number;
  timeoutS: number;
  graceS: number;
  name: string;
}

class UsageError extends Error {}

/** Runs the worker command with its arguments (after `worker`); resolves with the exit code. */
export async function workerCommand(argv: string[], env: NodeJS.ProcessEnv = process.env): Promise<number> {
  let settings: WorkerSettings | 'help';
  try {
    settings = settingsFrom(argv, env);
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    process.stderr.write(`overmind-eval-service worker: ${error.message}\nRun overmind-eval-service worker --help for usage.\n`);
    return 2;
  }
  if (settings === 'help') {
    process.stdout.write(usage);
    return 0;
  }
  return work(settings, env);
}

function settingsFrom(argv: string[], env: NodeJS.ProcessEnv): WorkerSettings | 'help' {
  let values;
  try {
    ({ values } = parseArgs({
      args: argv,
      options: {
        url: { type: 'string' },
        'api-key': { type: 'string' },
        run: { type: 'string' },
        command: { type: 'string' },
        concurrency: { type: 'string' },
        batch: { type: 'string' },
        timeout: { type: 'string' },
        grace: { type: 'string' },
        name: { type: 'string' },
        help: { type: 'boolean', short: 'h' },
      },
      strict: true,
      allowPositionals: false,
    }));
  } catch (error) {
    throw new UsageError(messageOf(error));
  }
  if (values.help) return 'help';
  const url = values.url ?? env.OVERMIND_URL;
  const apiKey = values['api-key'] ?? env.OVERMIND_API_KEY;
  if (!url) throw new UsageError('--url is required (or OVERMIND_URL)');
  if (!/^https?:\/\/[^/]/.test(url)) throw new UsageError(`--url must be an http or https address, not "${url}"`);
  if (!apiKey) throw new UsageError('--api-key is required (or OVERMIND_API_KEY)');
  if (values.command === undefined || values.command.trim() === '') throw new UsageError('--command is required');
  if (values.run !== undefined && !/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(values.run)) throw new UsageError(`--run must be a run's id (a UUID), not "${values.run}"`);
  const concurrency = integer('--concurrency', values.concurrency, 4, 1, concurrencyMax);
  return {
    url,
    apiKey,
    run: values.run ?? null,
    command: values.command,
    concurrency,
    batch: integer('--batch', values.batch, concurrency, 1, batchMax),
    timeoutS: seconds('--timeout', values.timeout, 600, false),
    graceS: seconds('--grace', values.grace, 30, true),
    name: values.name ?? `${hostname()}-${process.pid}`,
  };
}

function integer(flag: string, given: string | undefined, fallback: number, min: number, max: number): number {
  if (given === undefined) return fallback;
  const value = Number(given);
  if (!/^\d+$/.test(given) || value < min || value > max) throw new UsageError(`${flag} must be an integer from ${min} to ${max}, not "${given}"`);
  return value;
}

function seconds(flag: string, given: string | undefined, fallback: number, zeroAllowed: boolean): number {
  if (given === undefined) return fallback;
  const value = Number(given);
  if (given.trim() === '' || !Number.isFinite(value) || value < 0 || (value === 0 && !zeroAllowed) || value > 7 * 24 * 3600) {
    throw new UsageError(`${flag} must be a number of seconds${zeroAllowed ? '' : ' above 0'}, not "${given}"`);
  }
  return value;
}

async function work(settings: WorkerSettings, env: NodeJS.ProcessEnv): Promise<number> {
  let reporter: ProgressReporter | undefined;
  const note = (line: string) => (reporter ? reporter.note(line) : process.stderr.write(`${line}\n`));
  const protocol = new WorkerProtocol({ url: settings.url, apiKey: settings.apiKey, log: note });
  // The agent under test never gets the key: with it, it could read the datasets' expected outputs.
  const commandEnv = { ...env };
  delete commandEnv.OVERMIND_API_KEY;
  // Their spans go to the service with a span token instead (src/worker/span-export.ts).
  const spans = new SpanExport(protocol, hasOwnTracesEndpoint(env), note);
  const runner = new CommandRunner({ command: settings.command, timeoutS: settings.timeoutS, env: commandEnv, taskEnv: () => spans.env() });
  const loop = new WorkerLoop({
    protocol,
    execute: runner.execute,
    concurrency: settings.concurrency,
    batch: settings.batch,
    run: settings.run,
    graceMs: settings.graceS * 1000,
    // Not the command itself: it may carry secrets, and every member of the project sees a worker.
    identity: { name: settings.name, host: hostname(), metadata: { kind: 'command', concurrency: settings.concurrency, batch: settings.batch, timeout_seconds: settings.timeoutS } },
    log: note,
    ran: (task, outcome) => {
      const failure = errorLine(task, outcome);
      if (failure) note(failure);
    },
  });
  reporter = new ProgressReporter({ stream: process.stderr, counts: () => loop.counts, protocol, run: settings.run });
  const stopOnSignals = stopOn(loop, runner, settings.graceS, note);
  note(`working on ${settings.run ? `run ${settings.run}` : "every run of the key's project"}: ${settings.concurrency} at once, \`${settings.command}\``);
  reporter.start();
  try {
    const end = await loop.run();
    await reporter.stop();
    note(end === 'run ended' ? 'the run has ended: said goodbye' : 'stopped: said goodbye');
    return 0;
  } catch (error) {
    await reporter.stop();
    note(`the worker stopped: ${messageOf(error)}`);
    return 1;
  } finally {
    stopOnSignals();
    runner.close();
  }
}

/** The note for a task whose command failed (null for a result). */
function errorLine(task: LeasedTask, outcome: TaskOutcome): string | null {
  if (outcome.kind !== 'result' || outcome.fields.status !== 'error') return null;
  const first = (outcome.fields.error ?? '').split('\n', 1)[0];
  return `task ${task.id} (datapoint ${task.datapoint.order}, ${task.iteration.iteration_name || task.iteration.id}, try ${task.try}): ${first}`;
}

/**
 * SIGINT, SIGTERM and SIGHUP (a closed terminal: the commands run in groups of their own and would
 * not hear it): the first stops gracefully, a second at once. Returns what removes the listeners.
 */
function stopOn(loop: WorkerLoop, runner: CommandRunner, graceS: number, note: (line: string) => void): () => void {
  let signalled = false;
  const onSignal = (signal: NodeJS.Signals) => {
    if (signalled) {
      runner.killAll();
      runner.close();
      process.exit(128 + constants.signals[signal]);
    }
    signalled = true;
    note(`${signal}: leasing no more; running commands get ${graceS} s to finish (${signal} again to stop at once)`);
    runner.stoppingOn(signal);
    loop.stop();
  };
  const signals: NodeJS.Signals[] = ['SIGINT', 'SIGTERM', 'SIGHUP'];
  for (const signal of signals) process.on(signal, onSignal);
  return () => {
    for (const signal of signals) process.off(signal, onSignal);
  };
}
