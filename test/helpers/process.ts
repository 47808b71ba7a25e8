// The service as a separate process, started the way `npm start` starts it, so tests can kill it
// for real (SIGKILL) and start it again on the same data.
import { spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../..', import.meta.url));
/** tsx by URL, so the child can run from any working directory. */
const tsxLoader = import.meta.resolve('tsx');

export interface ServiceProcess {
  url: string;
  child: ChildProcess;
  /** Resolves with the exit code (or the signal that ended it). */
  exited: Promise<number | NodeJS.Signals>;
  output(): string;
}

export async function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const server = createServer();
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => resolve(typeof address === 'object' && address ? address.port : 0));
    });
  });
}

export async function spawnService(env: Record<string, string>, cwd = root): Promise<ServiceProcess> {
  const port = await freePort();
  const child = spawn(process.execPath, ['--import', tsxLoader, `${root}/src/main.ts`], {
    cwd,
    env: { ...process.env, HOST: '127.0.0.1', PORT: String(port), LOG_LEVEL: 'warn', PASSWORD_HASH_COST: '1024', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout!.on('data', (chunk) => (output += chunk));
  child.stderr!.on('data', (chunk) => (output += chunk));
  const exited = new Promise<number | NodeJS.Signals>((resolve) => child.once('exit', (code, signal) => resolve(code ?? signal!)));
  const url = `http://127.0.0.1:${port}`;
  for (;;) {
    if (child.exitCode !== null || child.signalCode !== null) throw new Error(`service exited before it was healthy:\n${output}`);
    try {
      if ((await fetch(`${url}/health`)).ok) break;
    } catch {
      // not listening yet
    }
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  return { url, child, exited, output: () => output };
}
