#!/usr/bin/env node
// `overmind-eval-service`, the package's start command: `npm start`'s configuration, from the same
// environment variables (README), with flags that override them. Its first line on stdout is the
// address it listens on (`http://127.0.0.1:PORT`), so a test harness in any language can start it
// on port 0 and read where it is; logs go to stderr. SIGTERM and SIGINT stop it cleanly (exit 0).
// `overmind-eval-service worker ...` is the worker command instead (src/cli/worker.ts).
import { parseArgs } from 'node:util';
import { ConfigError, loadConfig, type Config } from '../config.ts';
import { serveOnceLoaded } from './early-signals.ts';

const usage = `Usage: overmind-eval-service [options]

Starts the evaluation service and prints the address it listens on as its first line of output
(logs go to stderr). SIGTERM or SIGINT stop it cleanly. Configuration comes from the same
environment variables as npm start (PORT, HOST, DATA_DIR, STORAGE, SECRET_KEY, LOG_LEVEL,
LIMIT_*, ...); flags override them.

Options:
  --port <n>          port to listen on; 0 picks a free one (env PORT, default 8000)
  --host <address>    address to listen on (env HOST, default 127.0.0.1)
  --data-dir <path>   LMDB data directory (env DATA_DIR, default ./data)
  --memory            keep everything in memory, nothing on disk (env STORAGE=memory)
  -h, --help          print this help and exit

overmind-eval-service worker --help: the worker command, which runs tasks of runs.
`;

/** Exits 2 with `message` and a pointer to --help. */
function usageError(message: string): never {
  process.stderr.write(`overmind-eval-service: ${message}\nRun overmind-eval-service --help for usage.\n`);
  process.exit(2);
}

/** The configuration: the environment's, with the flags' values over it. */
function configFrom(argv: string[], env: NodeJS.ProcessEnv): Config | 'help' {
  let values;
  try {
    ({ values } = parseArgs({
      args: argv,
      options: {
        port: { type: 'string' },
        host: { type: 'string' },
        'data-dir': { type: 'string' },
        memory: { type: 'boolean' },
        help: { type: 'boolean', short: 'h' },
      },
      strict: true,
      allowPositionals: false,
    }));
  } catch (error) {
    usageError((error as Error).message);
  }
  if (values.help) return 'help';
  if (values.memory && values['data-dir'] !== undefined) usageError('--memory and --data-dir cannot be used together');
  const overrides: NodeJS.ProcessEnv = {};
  if (values.port !== undefined) {
    if (!/^\d+$/.test(values.port) || Number(values.port) > 65535) usageError(`--port must be an integer from 0 to 65535, not "${values.port}"`);
    overrides.PORT = values.port;
  }
  if (values.host !== undefined) {
    if (values.host === '') usageError('--host must not be empty');
    overrides.HOST = values.host;
  }
  if (values['data-dir'] !== undefined) {
    if (values['data-dir'] === '') usageError('--data-dir must not be empty');
    overrides.DATA_DIR = values['data-dir'];
    overrides.STORAGE = 'lmdb';
  }
  if (values.memory) overrides.STORAGE = 'memory';
  try {
    return loadConfig({ ...env, ...overrides });
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`overmind-eval-service: configuration error: ${error.message}\n`);
      process.exit(2);
    }
    throw error;
  }
}

if (process.argv[2] === 'worker') {
  // Loaded only here: the service's modules are not the worker's.
  const { workerCommand } = await import('./worker.ts');
  process.exit(await workerCommand(process.argv.slice(3)));
}

const config = configFrom(process.argv.slice(2), process.env);
if (config === 'help') {
  process.stdout.write(usage);
  process.exit(0);
}
await serveOnceLoaded(config, { logFd: 2, listening: (url) => process.stdout.write(`${url}\n`) });
