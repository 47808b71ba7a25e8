// Backups of a store the service serves, taken by the service itself (no other process may open
// the store while it serves it: src/store/serving-process.ts). The backup command writes a request
// file under DATA_DIR naming its target and signals the service (SIGUSR2); the service takes each
// request it finds, copies the store (one read transaction: a single point in time, writers not
// paused) and writes the answer beside it, which the command waits for.
import { existsSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import type { Logger } from 'pino';
import type { LmdbKv } from '../store/lmdb-kv.ts';

const prefix = 'backup-request-';
/** How long the command waits for the service's answer. */
const answerTimeoutMs = 30 * 60 * 1000;

interface Answer {
  ok: boolean;
  bytes?: number;
  error?: string;
}

/**
 * The service's side: what takes every waiting request, one signal at a time (the service calls
 * it on each SIGUSR2, src/cli/serve.ts).
 */
export function backupTaker(dataDir: string, kv: LmdbKv, logger: Logger): () => void {
  let running: Promise<void> = Promise.resolve();
  return () => {
    running = running.then(() => takeWaiting(dataDir, kv, logger));
  };
}

async function takeWaiting(dataDir: string, kv: LmdbKv, logger: Logger): Promise<void> {
  for (const name of readdirSync(dataDir)) {
    if (!name.startsWith(prefix) || !name.endsWith('.json')) continue;
    const request = join(dataDir, name);
    let answer: Answer;
    try {
      const { target } = JSON.parse(readFileSync(request, 'utf8')) as { target: string };
      rmSync(request, { force: true });
      await kv.backup(target);
      answer = { ok: true, bytes: statSync(target).size };
      logger.info({ target }, 'backup taken');
    } catch (error) {
      rmSync(request, { force: true });
      answer = { ok: false, error: (error as Error).message };
      logger.error({ err: error }, 'backup failed');
    }
    // Written whole, then renamed: the command never reads half an answer.
    const answerPath = request.replace(/\.json$/, '.answer');
    writeFileSync(`${answerPath}.tmp`, JSON.stringify(answer));
    renameSync(`${answerPath}.tmp`, answerPath);
  }
}

/** The command's side: asks the service `pid` serving `dataDir` for a backup into `target`; resolves with its size. */
export async function requestBackup(dataDir: string, pid: number, target: string): Promise<number> {
  const request = join(dataDir, `${prefix}${randomUUID()}.json`);
  const answerPath = request.replace(/\.json$/, '.answer');
  writeFileSync(`${request}.tmp`, JSON.stringify({ target }));
  renameSync(`${request}.tmp`, request);
  process.kill(pid, 'SIGUSR2');
  const deadline = Date.now() + answerTimeoutMs;
  while (!existsSync(answerPath)) {
    if (Date.now() > deadline) {
      rmSync(request, { force: true });
      throw new Error(`the service (process ${pid}) did not answer the backup request`);
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  const answer = JSON.parse(readFileSync(answerPath, 'utf8')) as Answer;
  rmSync(answerPath, { force: true });
  if (!answer.ok) throw new Error(answer.error ?? 'the backup failed');
  return answer.bytes ?? 0;
}
