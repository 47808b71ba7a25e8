// The service as a child process, started exactly as `npm start` starts it, for the tests that
// kill it for real and for the benchmarks. One place knows the start command and how to wait for
// the child to become healthy.
import type { ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { fileURLToPath } from 'node:url';

export const root = fileURLToPath(new URL('..', import.meta.url));

/**
 * Node's arguments in package.json's start script (the compiled service under dist/, which
 * `npm test` and `npm run bench` build first), with its paths absolute, so the child runs from any
 * working directory.
 */
export function npmStartArgs(): string[] {
  const { scripts } = JSON.parse(readFileSync(`${root}/package.json`, 'utf8')) as { scripts: { start: string } };
  const [command, ...args] = scripts.start.split(/\s+/);
  if (command !== 'node') throw new Error(`the start script should run node, not ${command}`);
  return args.map((arg) => (/\.[jt]s$/.test(arg) ? `${root}/${arg}` : arg));
}

export function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const server = createServer();
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => resolve(typeof address === 'object' && address ? address.port : 0));
    });
  });
}

/** True once the child has ended, by exit or by signal. */
export function hasEnded(child: ChildProcess): boolean {
  return child.exitCode !== null || child.signalCode !== null;
}

/**
 * Polls `url`/health until it answers 200. A child that ends first, or stays unhealthy past
 * `timeoutMs`, is an error (the child is killed in the second case).
 */
export async function waitForHealth(url: string, child: ChildProcess, timeoutMs: number, output: () => string = () => ''): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  for (;;) {
    if (hasEnded(child)) throw new Error(`the service ended (${child.exitCode ?? child.signalCode}) before it was healthy:\n${output()}`);
    if (performance.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`the service was not healthy within ${timeoutMs} ms:\n${output()}`);
    }
    try {
      if ((await fetch(`${url}/health`)).ok) return;
    } catch {
      // not listening yet
    }
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

/** Stops the child with `signal` and resolves once it has ended (at once if it already has). */
export function stopChild(child: ChildProcess, signal: NodeJS.Signals = 'SIGTERM'): Promise<void> {
  return new Promise((resolve) => {
    if (hasEnded(child)) return resolve();
    child.once('exit', () => resolve());
    child.kill(signal);
  });
}
