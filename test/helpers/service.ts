// Test fixtures: a whole service per test, in memory or on a temporary LMDB directory, reached
// over real HTTP on a free port. Everything started here is closed by `stop()`.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { createService, type Service, type ServiceOptions } from '../../src/service.ts';
import { Client } from './client.ts';

export interface Running {
  service: Service;
  url: string;
  /** An unauthenticated client. */
  client: Client;
  /** The LMDB directory (lmdb mode only). */
  dataDir: string | undefined;
  /** Closes the service; removes the data directory unless `keepData`. */
  stop(options?: { keepData?: boolean }): Promise<void>;
}

export interface StartOptions extends ServiceOptions {
  /** Use LMDB in a fresh temporary directory (or in `dataDir`, when given). */
  lmdb?: boolean;
}

/** scrypt at a low cost keeps registration fast in tests; production uses the default. */
const testPasswordHashCost = 1024;

/**
 * TEST_CLOCK_TICK_MS=25 runs every service on a clock that moves in 25 ms steps, so that records
 * created one after another often share a created_at, as they sometimes do within a millisecond
 * on a fast machine: a test that expects creation order where the documented order is
 * (created_at, then id) fails then every few runs instead of once in a while in CI.
 */
const clockTickMs = Number(process.env.TEST_CLOCK_TICK_MS ?? 0);
const tickingClock = clockTickMs > 0 ? { clock: { nowMs: () => Math.floor(Date.now() / clockTickMs) * clockTickMs } } : {};

export function tempDataDir(): string {
  return mkdtempSync(join(tmpdir(), 'overmind-test-'));
}

export async function start(options: StartOptions = {}): Promise<Running> {
  const { lmdb, ...rest } = options;
  const dataDir = lmdb ? (rest.dataDir ?? tempDataDir()) : undefined;
  const service = await createService({
    storage: lmdb ? 'lmdb' : 'memory',
    passwordHashCost: testPasswordHashCost,
    logger: pino({ level: 'silent' }),
    debugChecks: true,
    ...tickingClock,
    ...rest,
    ...(dataDir ? { dataDir } : {}),
  });
  const address = await service.listen(0, '127.0.0.1');
  const url = `http://127.0.0.1:${address.port}`;
  return {
    service,
    url,
    client: new Client(url),
    dataDir,
    async stop({ keepData = false } = {}) {
      await service.close();
      if (dataDir && !keepData) rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** Runs `body` with a fresh service and always stops it. */
export async function withService<T>(body: (running: Running) => Promise<T>, options: StartOptions = {}): Promise<T> {
  const running = await start(options);
  try {
    return await body(running);
  } finally {
    await running.stop();
  }
}
