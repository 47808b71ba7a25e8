// The service as a separate process, started the way `npm start` starts it, so tests can kill it
// for real (SIGKILL) and start it again on the same data.
import { spawn, type ChildProcess } from 'node:child_process';
import { freePort, npmStartArgs, root, waitForHealth } from '../../scripts/service-process.ts';

/** A child that is not healthy by then is killed and the test fails. */
const healthTimeoutMs = 60_000;

/** Children still running when the test process ends (a test failed midway) are killed with it. */
const live = new Set<ChildProcess>();
process.on('exit', () => {
  for (const child of live) child.kill('SIGKILL');
});

export interface ServiceProcess {
  url: string;
  child: ChildProcess;
  /** Resolves with the exit code (or the signal that ended it). */
  exited: Promise<number | NodeJS.Signals>;
  output(): string;
}

export async function spawnService(env: Record<string, string>, cwd = root): Promise<ServiceProcess> {
  const port = await freePort();
  const child = spawn(process.execPath, npmStartArgs(), {
    cwd,
    env: { ...process.env, HOST: '127.0.0.1', PORT: String(port), LOG_LEVEL: 'warn', PASSWORD_HASH_COST: '1024', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  live.add(child);
  child.once('exit', () => live.delete(child));
  let output = '';
  child.stdout!.on('data', (chunk) => (output += chunk));
  child.stderr!.on('data', (chunk) => (output += chunk));
  const exited = new Promise<number | NodeJS.Signals>((resolve) => child.once('exit', (code, signal) => resolve(code ?? signal!)));
  // A child that dies on its own (not stopped by a test's signal) says why in the test's output.
  child.once('exit', (code, signal) => {
    if (signal === null && code !== 0) process.stderr.write(`\nThe service on port ${port} exited with code ${code}:\n${output}\n`);
  });
  const url = `http://127.0.0.1:${port}`;
  await waitForHealth(url, child, healthTimeoutMs, () => output);
  return { url, child, exited, output: () => output };
}
