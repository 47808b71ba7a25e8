// Runs a task as a shell command (`/bin/sh -c COMMAND`) in a process group of its own: the task
// as JSON on its standard input, its ids in the environment (OVERMIND_*), a fresh TRACEPARENT, its
// iteration's agent_code in a file. Standard output is read to the end but only its first bytes
// kept, and standard error only its tail, so a command that floods either costs no memory. A
// timeout, an abort, and the end of the shell each kill the whole group, so nothing the command
// started outlives its task.
import { spawn, type ChildProcess } from 'node:child_process';
import { AgentCodeFiles } from './agent-code-files.ts';
import { commandOutcome, outputCharsMaxDefault, stderrTailBytes, stdoutCaptureBytes, type CommandEnd } from './task-output.ts';
import { freshTraceContext, type TraceContext } from './trace-context.ts';
import type { Executor } from './worker-loop.ts';
import { taskInputOf, type LeasedTask, type TaskOutcome } from './worker-task.ts';

export interface CommandOptions {
  command: string;
  /** Seconds a task may run before its group is killed; null: no limit. */
  timeoutS: number | null;
  /** Characters of a result's output as JSON (the service's resultOutputCharsMax). */
  outputCharsMax?: number;
  /** The environment every command starts from (default: the worker's). */
  env?: NodeJS.ProcessEnv;
  /** Variables added to each command's environment when it starts (the span export's). */
  taskEnv?: () => Promise<NodeJS.ProcessEnv>;
}

/** After the shell exits, how long its output may take to arrive before the group is killed and the task ends. */
const outputAfterExitMs = 1000;

export class CommandRunner {
  private readonly files = new AgentCodeFiles();
  /** Process groups (their leaders' pids) running now. */
  private readonly groups = new Set<number>();
  private readonly outputCharsMax: number;

  constructor(private readonly options: CommandOptions) {
    this.outputCharsMax = options.outputCharsMax ?? outputCharsMaxDefault;
  }

  readonly execute: Executor = async (task, { signal }) => {
    const trace = freshTraceContext();
    const added = (await this.options.taskEnv?.()) ?? {};
    const codeFile = await this.files.acquire(task.iteration);
    try {
      return withTrace(commandOutcome(await this.spawnFor(task, trace, codeFile, added, signal), this.outputCharsMax), trace);
    } finally {
      this.files.release(task.iteration);
    }
  };

  /** The signal the worker stops on: a command that dies of it is cut short by the stop, not failed. */
  private stopSignal: NodeJS.Signals | null = null;

  /** The worker stops on `signal` (see stopSignal). */
  stoppingOn(signal: NodeJS.Signals): void {
    this.stopSignal = signal;
  }

  /** Kills every command's group now (a second signal: the worker exits at once). */
  killAll(): void {
    for (const group of this.groups) killGroup(group);
  }

  /** Removes the agent code files. */
  close(): void {
    this.files.close();
  }

  private async spawnFor(task: LeasedTask, trace: TraceContext, codeFile: string, added: NodeJS.ProcessEnv, signal: AbortSignal): Promise<CommandEnd> {
    const started = performance.now();
    const child = spawn('/bin/sh', ['-c', this.options.command], { detached: true, stdio: ['pipe', 'pipe', 'pipe'], env: this.envFor(task, trace, codeFile, added) });
    const group = child.pid;
    if (group !== undefined) this.groups.add(group);
    const stdout = new Head(stdoutCaptureBytes(this.outputCharsMax));
    const stderr = new Tail(stderrTailBytes);
    child.stdout!.on('data', (chunk: Buffer) => stdout.add(chunk));
    child.stderr!.on('data', (chunk: Buffer) => stderr.add(chunk));
    // Listened for now: 'close' can come in the same turn as 'exit'.
    const closed = new Promise<void>((resolve) => child.once('close', () => resolve()));
    // A command that does not read its input closes the pipe early: that is its business.
    child.stdin!.on('error', () => {});
    child.stdin!.end(`${JSON.stringify(taskInputOf(task))}\n`);
    const { timeoutS } = this.options;
    let timedOutAfterS: number | null = null;
    const kill = () => group !== undefined && killGroup(group);
    const timer =
      timeoutS === null
        ? undefined
        : setTimeout(() => {
            timedOutAfterS = timeoutS;
            kill();
          }, timeoutS * 1000);
    signal.addEventListener('abort', kill, { once: true });
    // Stopped while its code file was written or the command started: the listener came too late.
    if (signal.aborted) kill();
    const { code, signal: exitSignal } = await exitOf(child, stderr);
    // The worker's handler for its stop signal may come a turn after the command's death from it.
    if (exitSignal !== null && this.stopSignal === null) await new Promise((resolve) => setImmediate(resolve));
    const latencyMs = performance.now() - started;
    clearTimeout(timer);
    signal.removeEventListener('abort', kill);
    if (group !== undefined) this.endGroup(group);
    await closedWithin(child, closed, outputAfterExitMs);
    return { code, signal: exitSignal, timedOutAfterS, stdout: stdout.text(), stdoutBytesDropped: stdout.dropped, stderrTail: stderr.text(), latencyMs, stopSignal: this.stopSignal };
  }

  /** The shell has exited: whatever it left running in its group goes with it. */
  private endGroup(group: number): void {
    this.groups.delete(group);
    killGroup(group);
  }

  private envFor(task: LeasedTask, trace: TraceContext, codeFile: string, added: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
    return {
      ...(this.options.env ?? process.env),
      ...added,
      OVERMIND_TASK_ID: task.id,
      OVERMIND_RUN_ID: task.run,
      OVERMIND_ITERATION_ID: task.iteration.id ?? '',
      OVERMIND_DATAPOINT_ID: task.datapoint.id ?? '',
      OVERMIND_DATAPOINT_ORDER: String(task.datapoint.order),
      OVERMIND_ATTEMPT: String(task.attempt),
      OVERMIND_AGENT_CODE_FILE: codeFile,
      TRACEPARENT: trace.traceparent,
    };
  }
}

function withTrace(outcome: TaskOutcome, trace: TraceContext): TaskOutcome {
  if (outcome.kind === 'result') outcome.fields = { ...outcome.fields, trace_id: trace.traceId, span_id: trace.spanId };
  return outcome;
}

/** The command's exit; a shell that could not be started exits 127, saying why on its standard error. */
function exitOf(child: ChildProcess, stderr: Tail): Promise<{ code: number | null; signal: string | null }> {
  return new Promise((resolve) => {
    child.once('exit', (code, signal) => resolve({ code, signal }));
    child.once('error', (error) => {
      stderr.add(Buffer.from(`could not run /bin/sh: ${error.message}`));
      resolve({ code: 127, signal: null });
    });
  });
}

/** Waits for the command's output to close, at most `ms` (a process outside its group may hold it open); then closes it. */
async function closedWithin(child: ChildProcess, closed: Promise<void>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([closed, new Promise<void>((resolve) => (timer = setTimeout(resolve, ms)))]);
  clearTimeout(timer);
  child.stdout!.destroy();
  child.stderr!.destroy();
}

function killGroup(group: number): void {
  try {
    process.kill(-group, 'SIGKILL');
  } catch {
    // The group has ended already.
  }
}

/** The first `bytesMax` bytes of a stream; the rest counted and dropped. */
class Head {
  private readonly chunks: Buffer[] = [];
  private kept = 0;
  dropped = 0;

  constructor(private readonly bytesMax: number) {}

  add(chunk: Buffer): void {
    const room = this.bytesMax - this.kept;
    if (room <= 0) {
      this.dropped += chunk.length;
      return;
    }
    const taken = chunk.length <= room ? chunk : chunk.subarray(0, room);
    this.chunks.push(taken);
    this.kept += taken.length;
    this.dropped += chunk.length - taken.length;
  }

  text(): string {
    return Buffer.concat(this.chunks).toString('utf8');
  }
}

/** The last `bytesMax` bytes of a stream. */
class Tail {
  private chunks: Buffer[] = [];
  private kept = 0;

  constructor(private readonly bytesMax: number) {}

  add(chunk: Buffer): void {
    this.chunks.push(chunk.length > this.bytesMax ? chunk.subarray(chunk.length - this.bytesMax) : chunk);
    this.kept += Math.min(chunk.length, this.bytesMax);
    while (this.kept - this.chunks[0]!.length >= this.bytesMax) this.kept -= this.chunks.shift()!.length;
  }

  text(): string {
    const all = Buffer.concat(this.chunks);
    return all.subarray(Math.max(0, all.length - this.bytesMax)).toString('utf8');
  }
}
