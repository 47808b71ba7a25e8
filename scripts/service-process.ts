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
  // `exec` makes the shell npm runs the script in become node, so that npm's signals reach it.
  const [command, ...args] = scripts.start.replace(/^exec\s+/, '').split(/\s+/);
  if (command !== 'node') throw new Error(`the start script should run node, not ${command}`);
  return args.map((arg) => (/\.[jt]s$/.test(arg) ? `${root}/${arg}` : arg));
}

/**
 * A port for a server that starts later (a child, or a test's server brought up after a client
 * starts trying). It is picked outside Linux's ephemeral range (32768-60999), where `listen(0)` and
 * outgoing connections take theirs, so only another freePort could take it before it is used;
 * `npm test`'s shards each get their own range (PORT_RANGE, "first-last") and walk it in order, so
 * two shards never pick the same port. A port picked from the OS and released (the usual trick)
 * was seen taken by another shard's connection before the child bound it.
 */
export async function freePort(): Promise<number> {
  for (let tries = 0; tries < portRange.size; tries += 1) {
    const port = portRange.first + (portRange.next++ % portRange.size);
    if (await canListen(port)) return port;
  }
  throw new Error(`no free port in ${portRange.first}-${portRange.first + portRange.size - 1}`);
}

const portRange = (() => {
  const [first, last] = (process.env.PORT_RANGE ?? '20000-32767').split('-').map(Number);
  const size = last - first + 1;
  // A random start, so that processes outside npm test (benchmarks, a second run) rarely meet.
  return { first, size, next: Math.floor(Math.random() * size) };
})();

function canListen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
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
