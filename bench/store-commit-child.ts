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
//   (the event loop is held through the fdatasync, so the service never writes this way);
// - `thread`: a synchronous transaction on a worker thread of its own (the same environment
//   opened there), told by a message and answering by one: two hand-offs a commit instead of the
//   callback's four, the event loop free through the sync.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { Worker } from 'node:worker_threads';
import type { Database, RootDatabase } from 'lmdb';
import { LmdbKv, openEnvironment } from '../src/store/lmdb-kv.ts';
import type { KvOp } from '../src/store/kv.ts';

const putsPerCommit = 21;
/** Covered entries are removed this far behind the newest. */
const removalLag = 1000;
const entry = { type: 'TaskCompleted', task: 123_456, lease: 'k4Jx0aQ2', score: 0.5, attempt: 0, at: 1_733_400_000_000 };

type Way = 'service' | 'callback' | 'puts' | 'blocking' | 'thread';

/** Each way's commits on its own environment; answers CPU (every thread) and time per commit. */
async function measure(way: Way, commits: number): Promise<{ way: Way; cpuMicros: number; wallMicros: number }> {
  const dir = mkdtempSync(join(tmpdir(), 'overmind-commits-'));
  const kv = new LmdbKv(dir);
  const env = way === 'service' ? undefined : openEnvironment(join(dir, 'raw'));
  const journal = env ? env.openDB('journal', { encoding: 'msgpack' }) : undefined;
  const kvJournal = kv.db('journal');
  let seq = 0;
  const writer = way === 'thread' ? new Worker(writerSource, { eval: true, workerData: { path: join(dir, 'raw'), lmdbKv: compiledLmdbKv, entry, putsPerCommit, removalLag } }) : undefined;
  const commit = writer ? commitOnThread(writer) : commitOf(way, kv, kvJournal, env, journal);
  try {
    for (let i = 0; i < 100; i++) await commit((seq += putsPerCommit));
    const cpu = process.cpuUsage();
    const started = performance.now();
    for (let i = 0; i < commits; i++) await commit((seq += putsPerCommit));
    const used = process.cpuUsage(cpu);
    return { way, cpuMicros: (used.user + used.system) / commits, wallMicros: ((performance.now() - started) * 1000) / commits };
  } finally {
    await writer?.terminate();
    await kv.close();
    await env?.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The puts and removals of one commit ending at `last`, on `journal`; answers the promise of the last (lmdb-js resolves it once its commit is synced). */
function applyTo(journal: Database, last: number): Promise<unknown> {
  let written: Promise<unknown> = Promise.resolve();
  for (let seq = last - putsPerCommit + 1; seq <= last; seq++) {
    written = journal.put(['job', 'bench', seq], entry);
    if (seq > removalLag) written = journal.remove(['job', 'bench', seq - removalLag]) ?? written;
  }
  return written;
}

/** The compiled store module (`npm run bench` builds first): a worker thread does not load TypeScript under tsx. */
const compiledLmdbKv = new URL('../dist/src/store/lmdb-kv.js', import.meta.url).href;

/** The `thread` way's writer: each message a synchronous transaction (applyTo's ops), synced before it returns. */
const writerSource = `
const { parentPort, workerData } = require('node:worker_threads');
const { path, lmdbKv, entry, putsPerCommit, removalLag } = workerData;
import(lmdbKv).then(({ openEnvironment }) => {
  const env = openEnvironment(path);
  const journal = env.openDB('journal', { encoding: 'msgpack' });
  parentPort.on('message', (last) => {
    env.transactionSync(() => {
      for (let seq = last - putsPerCommit + 1; seq <= last; seq++) {
        journal.put(['job', 'bench', seq], entry);
        if (seq > removalLag) journal.remove(['job', 'bench', seq - removalLag]);
      }
    });
    parentPort.postMessage(last);
  });
});
`;

/** Commits made by the writer thread: each a message, answered once its transaction (and sync) is done. */
function commitOnThread(writer: Worker): (last: number) => Promise<unknown> {
  const waiting = new Map<number, () => void>();
  writer.on('message', (last: number) => {
    waiting.get(last)!();
    waiting.delete(last);
  });
  return (last) => new Promise<void>((resolve) => {
    waiting.set(last, resolve);
    writer.postMessage(last);
  });
}

/** One commit of `putsPerCommit` entries ending at `last`, and the removal of those `removalLag` older. */
function commitOf(way: Way, kv: LmdbKv, kvJournal: ReturnType<LmdbKv['db']>, env: RootDatabase | undefined, journal: Database | undefined): (last: number) => Promise<unknown> {
  const keysOf = (last: number) => Array.from({ length: putsPerCommit }, (_, i) => last - putsPerCommit + 1 + i);
  const apply = (last: number) => applyTo(journal!, last);
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
    case 'thread':
      throw new Error('the thread way commits on its writer thread (commitOnThread)');
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
