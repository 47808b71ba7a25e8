// The worker command as a child process, run from the compiled package (dist/, which `npm test`
// builds first) exactly as a user runs it: `overmind-eval-service worker ...`.
import { spawn, type ChildProcess } from 'node:child_process';
import { root } from '../../scripts/service-process.ts';

/** Children still running when the test process ends (a test failed midway) are killed with it. */
const live = new Set<ChildProcess>();
process.on('exit', () => {
  for (const child of live) child.kill('SIGKILL');
});

export interface WorkerProcess {
  child: ChildProcess;
  /** Resolves with the exit code (or the signal that ended it). */
  exited: Promise<number | NodeJS.Signals>;
  stdout(): string;
  stderr(): string;
}

export const startCommand = `${root}/dist/src/cli/start.js`;

/** Starts `overmind-eval-service worker` with `args`, in `env` (over the test's own). */
export function spawnWorker(args: string[], env: Record<string, string> = {}): WorkerProcess {
  const child = spawn(process.execPath, [startCommand, 'worker', ...args], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  live.add(child);
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (chunk) => (stdout += chunk));
  child.stderr!.on('data', (chunk) => (stderr += chunk));
  const exited = new Promise<number | NodeJS.Signals>((resolve) =>
    child.once('close', (code, signal) => {
      live.delete(child);
      resolve(code ?? signal!);
    }),
  );
  return { child, exited, stdout: () => stdout, stderr: () => stderr };
}

/** Resolves with the exit code, or kills the worker and fails after `timeoutMs`. */
export async function exitOf(worker: WorkerProcess, timeoutMs = 20_000): Promise<number | NodeJS.Signals> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      worker.child.kill('SIGKILL');
      reject(new Error(`the worker did not exit within ${timeoutMs} ms; its stderr:\n${worker.stderr()}`));
    }, timeoutMs);
  });
  try {
    return await Promise.race([worker.exited, late]);
  } finally {
    clearTimeout(timer);
  }
}
