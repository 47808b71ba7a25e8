// The store's commits alone, for bench/store-commits.ts: a process on the servers' core that
// answers each line `<way> <commits>` with `{"way", "cpuMicros", "wallMicros"}` per commit, each
// commit the size of one task's lifecycle one at a time (about what a job's commit then holds:
// the journal entries of a few completions and leases, their result rows, and the removal of as
// many covered entries), each made and awaited before the next, on a fresh LMDB environment with
// the service's options. The ways:
// - `service`: LmdbKv.write, as the service writes (ops made when the transaction begins, each
//   write a child transaction);
// - `callback`: one transaction callback without a child transaction;
// - `puts`: the same puts made at once, without a callback (lmdb-js encodes them on the main
//   thread and its write thread only applies them);
// - `blocking`: a synchronous transaction on the main thread, which then waits for its sync
//   (the event loop is held through the fdatasync, so the service never writes this way).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import type { Database, RootDatabase } from 'lmdb';
import { LmdbKv, openEnvironment } from '../src/store/lmdb-kv.ts';
import type { KvOp } from '../src/store/kv.ts';

const putsPerCommit = 21;
/** Covered entries are removed this far behind the newest. */
const removalLag = 1000;
const entry = { type: 'TaskCompleted', task: 123_456, lease: 'k4Jx0aQ2', score: 0.5, attempt: 0, at: 1_733_400_000_000 };

type Way = 'service' | 'callback' | 'puts' | 'blocking';

/** Each way's commits on its own environment; answers CPU (every thread) and time per commit. */
async function measure(way: Way, commits: number): Promise<{ way: Way; cpuMicros: number; wallMicros: number }> {
  const dir = mkdtempSync(join(tmpdir(), 'overmind-commits-'));
  const kv = new LmdbKv(dir);
  const env = way === 'service' ? undefined : openEnvironment(join(dir, 'raw'));
  const journal = env ? env.openDB('journal', { encoding: 'msgpack' }) : undefined;
  const kvJournal = kv.db('journal');
  let seq = 0;
  const commit = commitOf(way, kv, kvJournal, env, journal);
  try {
    for (let i = 0; i < 100; i++) await commit((seq += putsPerCommit));
    const cpu = process.cpuUsage();
    const started = performance.now();
    for (let i = 0; i < commits; i++) await commit((seq += putsPerCommit));
    const used = process.cpuUsage(cpu);
    return { way, cpuMicros: (used.user + used.system) / commits, wallMicros: ((performance.now() - started) * 1000) / commits };
  } finally {
    await kv.close();
    await env?.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** One commit of `putsPerCommit` entries ending at `last`, and the removal of those `removalLag` older. */
function commitOf(way: Way, kv: LmdbKv, kvJournal: ReturnType<LmdbKv['db']>, env: RootDatabase | undefined, journal: Database | undefined): (last: number) => Promise<unknown> {
  const keysOf = (last: number) => Array.from({ length: putsPerCommit }, (_, i) => last - putsPerCommit + 1 + i);
  /** The puts and removals; answers the promise of the last (lmdb-js resolves it once its commit is synced). */
  const apply = (last: number) => {
    let written: Promise<unknown> = Promise.resolve();
    for (const seq of keysOf(last)) {
      written = journal!.put(['job', 'bench', seq], entry);
      if (seq > removalLag) written = journal!.remove(['job', 'bench', seq - removalLag]) ?? written;
    }
    return written;
  };
  switch (way) {
    case 'service':
      return (last) =>
        kv.write(() => ({
          ops: keysOf(last).flatMap((seq): KvOp[] => [
            { db: kvJournal, key: ['job', 'bench', seq], value: entry },
            ...(seq > removalLag ? [{ db: kvJournal, key: ['job', 'bench', seq - removalLag], value: undefined }] : []),
          ]),
        }));
    case 'callback':
      // lmdb-js's typings leave out that transactionAsync answers a promise.
      return (last) => (env as unknown as { transactionAsync(callback: () => void): Promise<void> }).transactionAsync(() => void apply(last));
    case 'puts':
      return apply;
    case 'blocking':
      return async (last) => {
        env!.transactionSync(() => apply(last));
        await env!.flushed;
      };
  }
}

const lines = createInterface({ input: process.stdin })[Symbol.asyncIterator]();
process.stdout.write(`${JSON.stringify({ ready: true })}\n`);
for (let line = await lines.next(); !line.done; line = await lines.next()) {
  const [way, commits] = (line.value as string).split(' ');
  process.stdout.write(`${JSON.stringify(await measure(way as Way, Number(commits)))}\n`);
}
