// Running the service as a process, shared by `npm start` (src/main.ts) and the package's start
// command (src/cli/start.ts): create it from a configuration, listen, and on SIGTERM or SIGINT stop
// accepting, finish in-flight requests, snapshot and close the store, then exit 0.
import { mkdirSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { resolve } from 'node:path';
import type { Config } from '../config.ts';
import { createLogger } from '../log.ts';
import { createService } from '../service.ts';
import { StoreCorruptError } from '../store/journal.ts';
import type { LmdbKv } from '../store/lmdb-kv.ts';
import { claimStoreOrExit } from './store-claim-or-exit.ts';
import { backupTaker, type BackupTaker } from './backup-requests.ts';

export interface ServeOptions {
  /** File descriptor the logs go to: 1 (stdout, npm start) or 2 (stderr). */
  logFd?: number;
  /** Called once listening, before anything else is logged: the start command prints the address. */
  listening?: (url: string) => void;
}

/** The URL of a listening address (IPv6 hosts in brackets). */
function urlOf(address: AddressInfo): string {
  const host = address.family === 'IPv6' || address.address.includes(':') ? `[${address.address}]` : address.address;
  return `http://${host}:${address.port}`;
}

export async function serve(config: Config, options: ServeOptions = {}): Promise<void> {
  const logger = createLogger(config.logLevel, options.logFd);
  // Listened for from the first moment: a signal while the store opens or the port is bound is
  // kept, and honoured once that step is done (without these, Node would end the process with 143).
  let requested: string | undefined;
  let stop: ((signal: string) => Promise<void>) | undefined;
  const onSignal = (signal: string) => (stop ? void stop(signal) : (requested ??= signal));
  process.on('SIGTERM', onSignal);
  process.on('SIGINT', onSignal);
  // Backups are asked for with SIGUSR2 (src/cli/backup-requests.ts); listened for before the
  // store names this process as its own, so that one asked early waits instead of ending it.
  let backups: BackupTaker | undefined;
  let backupAsked = false;
  process.on('SIGUSR2', () => (backups ? backups.take() : (backupAsked = true)));

  // Only this process may open a store it serves (src/store/store-claim.ts).
  const dataDir = resolve(config.dataDir);
  let released = () => {};
  if (config.storage === 'lmdb') {
    mkdirSync(dataDir, { recursive: true });
    const claim = await claimStoreOrExit(dataDir, 'service', (message) => logger.fatal(message));
    if ('heldBy' in claim) {
      const { pid, role } = claim.heldBy;
      logger.fatal({ pid, role, dataDir }, `the store under ${dataDir} is open in process ${pid} (${role === 'service' ? 'a service' : `a ${role}`}): stop it first`);
      process.exit(1);
    }
    released = claim.release;
  }

  let service;
  try {
    service = await createService({ ...config, logger });
  } catch (error) {
    released();
    if (error instanceof StoreCorruptError) {
      logger.fatal({ err: error }, error.message);
      process.exit(3);
    }
    throw error;
  }
  if (config.storage === 'lmdb') {
    backups = backupTaker(dataDir, service.deps.kv as LmdbKv, logger);
    if (backupAsked) backups.take();
  }
  let stopping = false;
  const closeAndExit = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'stopping: finishing in-flight requests and writing snapshots');
    try {
      // A backup being taken is finished before the store closes; later requests are refused.
      await backups?.drain();
      await service.close();
      released();
      logger.info('stopped cleanly');
      process.exit(0);
    } catch (error) {
      logger.error({ err: error }, 'stop failed');
      process.exit(1);
    }
  };
  if (requested) return closeAndExit(requested); // asked to stop while starting: never listens

  let address: AddressInfo;
  try {
    address = await service.listen(config.port, config.host);
  } catch (error) {
    logger.fatal({ err: error, host: config.host, port: config.port }, `cannot listen on ${config.host}:${config.port}`);
    await service.close();
    released();
    process.exit(1);
  }
  if (requested) return closeAndExit(requested);
  stop = closeAndExit;
  const url = urlOf(address);
  options.listening?.(url);
  logger.info({ url, storage: config.storage, dataDir: config.dataDir }, 'listening');
}
