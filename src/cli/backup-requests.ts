// Backups of a store the service serves, taken by the service itself (no other process may open
// the store while it serves it: src/store/store-claim.ts). The backup command writes a request
// file under DATA_DIR naming its target and signals the service (SIGUSR2); the service takes each
// request it finds, copies the store (one read transaction: a single point in time, writers not
// paused) and writes the answer beside it, which the command waits for while the service lives.
import { existsSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import type { Logger } from 'pino';
import type { LmdbKv } from '../store/lmdb-kv.ts';
import { isAlive, writeJsonWhole } from '../store/store-claim.ts';

const prefix = 'backup-request-';

interface Answer {
  ok: boolean;
  bytes?: number;
  error?: string;
}

export interface BackupTaker {
  /** Takes every waiting request (on each SIGUSR2), one after another. */
  take(): void;
  /** Stopping: requests from now on are refused; resolves once the backup being taken is done. */
  drain(): Promise<void>;
}

/** The service's side. Requests left by an earlier process (nobody waits for them) are removed first. */
export function backupTaker(dataDir: string, kv: LmdbKv, logger: Logger): BackupTaker {
  for (const name of readdirSync(dataDir)) if (name.startsWith(prefix)) rmSync(join(dataDir, name), { force: true });
  let running: Promise<void> = Promise.resolve();
  let stopping = false;
  return {
    take() {
      running = running.then(() => takeWaiting(dataDir, stopping ? undefined : kv, logger));
    },
    drain() {
      stopping = true;
      this.take();
      return running;
    },
  };
}

/** Answers every waiting request: a copy into its target, or (`kv` undefined: the service stops) a refusal. */
async function takeWaiting(dataDir: string, kv: LmdbKv | undefined, logger: Logger): Promise<void> {
  for (const name of readdirSync(dataDir)) {
    if (!name.startsWith(prefix) || !name.endsWith('.json')) continue;
    const request = join(dataDir, name);
    let answer: Answer;
    try {
      const { target } = JSON.parse(readFileSync(request, 'utf8')) as { target: string };
      rmSync(request, { force: true });
      if (!kv) throw new Error('the service is stopping: back up once it has stopped, or after it starts again');
      if (existsSync(target)) throw new Error(`${target} already exists; choose a new file name`);
      await kv.backup(target);
      answer = { ok: true, bytes: statSync(target).size };
      logger.info({ target }, 'backup taken');
    } catch (error) {
      rmSync(request, { force: true });
      answer = { ok: false, error: (error as Error).message };
      logger.warn({ err: error }, 'backup refused or failed');
    }
    writeJsonWhole(request.replace(/\.json$/, '.answer'), answer);
  }
}


/** The command's side: asks the service `pid` serving `dataDir` for a backup into `target`; resolves with its size. */
export async function requestBackup(dataDir: string, pid: number, target: string): Promise<number> {
  const request = join(dataDir, `${prefix}${randomUUID()}.json`);
  const answerPath = request.replace(/\.json$/, '.answer');
  writeJsonWhole(request, { target });
  process.kill(pid, 'SIGUSR2');
  while (!existsSync(answerPath)) {
    if (!isAlive(pid)) {
      rmSync(request, { force: true });
      throw new Error(`the service (process ${pid}) stopped before it answered`);
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  const answer = JSON.parse(readFileSync(answerPath, 'utf8')) as Answer;
  rmSync(answerPath, { force: true });
  if (!answer.ok) throw new Error(answer.error ?? 'the backup failed');
  return answer.bytes ?? 0;
}
