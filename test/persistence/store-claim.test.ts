// The store's claim (src/store/store-claim.ts): one process at a time, whatever happens to the
// others, on Linux's abstract lock and on the socket file other systems use.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { claimStore, lockAddress, storeHolder } from '../../src/store/store-claim.ts';
import { tempDataDir } from '../helpers/service.ts';

const claimers = 8;
const rounds = 3;

/** What `store.pid` says when a process that is gone held the store (a pid no process has: above Linux's largest). */
function leaveStaleHolder(dataDir: string): void {
  writeFileSync(join(dataDir, 'store.pid'), JSON.stringify({ pid: 4_194_305, role: 'service', started: '1' }));
}

/** What a claim left in the store's directory. */
function leftBeside(dataDir: string): string[] {
  return readdirSync(dataDir);
}

/** A live process and its start time as /proc says it (what store.pid names), ended by `end`. */
async function liveProcess(): Promise<{ pid: number; started: string; end: () => Promise<void> }> {
  const child = spawn('sleep', ['30'], { stdio: 'ignore' });
  await new Promise((resolve) => child.once('spawn', resolve));
  const stat = readFileSync(`/proc/${child.pid}/stat`, 'utf8');
  const started = stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19]!;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  return { pid: child.pid!, started, end: async () => { child.kill('SIGKILL'); await exited; } };
}

/** A claimer process (test/helpers/claim-child.ts) and its first line: `held` or `refused <pid>`. */
function claimer(dataDir: string, at: number, platform: NodeJS.Platform): { child: ChildProcess; answer: Promise<string> } {
  const child = spawn(process.execPath, ['--import', 'tsx', 'test/helpers/claim-child.ts', dataDir, String(at), platform], { stdio: ['pipe', 'pipe', 'inherit'] });
  const answer = new Promise<string>((resolve, reject) => {
    let output = '';
    child.stdout!.on('data', (chunk) => {
      output += chunk;
      if (output.includes('\n')) resolve(output.trim());
    });
    child.once('exit', (code) => reject(new Error(`a claimer exited (${code}) before answering: ${output}`)));
  });
  return { child, answer };
}

async function ended(children: ChildProcess[], how: 'stdin' | 'SIGKILL'): Promise<void> {
  await Promise.all(
    children.map((child) => {
      if (child.exitCode !== null || child.signalCode !== null) return undefined;
      const exited = new Promise((resolve) => child.once('exit', resolve));
      if (how === 'stdin') child.stdin!.end();
      else child.kill('SIGKILL');
      return exited;
    }),
  );
}

/** `claimers` processes claiming the store at the same moment: their answers, each with its pid. */
async function claimAtOnce(dataDir: string, platform: NodeJS.Platform): Promise<{ answer: string; pid: number }[]> {
  const at = Date.now() + 1200;
  const started = Array.from({ length: claimers }, () => claimer(dataDir, at, platform));
  try {
    return await Promise.all(started.map(async ({ child, answer }) => ({ answer: await answer, pid: child.pid! })));
  } finally {
    await ended(started.map(({ child }) => child), 'stdin');
  }
}

for (const [name, platform] of [
  ['Linux: an abstract address', 'linux'],
  ['elsewhere: a socket file', 'darwin'],
] as const) {
  test(`${name}: of the processes claiming a store at once, exactly one holds it; the others are told which`, async () => {
    const dataDir = tempDataDir();
    try {
      for (let round = 0; round < rounds; round++) {
        leaveStaleHolder(dataDir);
        const answers = await claimAtOnce(dataDir, platform);
        const holders = answers.filter(({ answer }) => answer === 'held');
        assert.is(holders.length, 1, `round ${round}: ${answers.map(({ answer }) => answer).join(', ')}`);
        for (const { answer } of answers.filter((one) => one !== holders[0])) assert.is(answer, `refused ${holders[0]!.pid}`);
        assert.is(storeHolder(dataDir), undefined, 'the holder gave its claim up when it ended');
        assert.equal(leftBeside(dataDir), [], 'nothing is left beside the store');
      }
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });

  test(`${name}: a holder killed with SIGKILL takes its claim with it: the next claimer holds the store`, async () => {
    const dataDir = tempDataDir();
    const address = lockAddress(dataDir, platform);
    const holder = claimer(dataDir, Date.now(), platform);
    try {
      assert.is(await holder.answer, 'held');
      assert.is(storeHolder(dataDir)?.pid, holder.child.pid);
      const refused = await claimStore(dataDir, 'restore', address);
      assert.equal(refused, { heldBy: storeHolder(dataDir)! });
      await ended([holder.child], 'SIGKILL');
      assert.is(storeHolder(dataDir), undefined, 'what store.pid says of a process that is gone is ignored');
      const next = await claimStore(dataDir, 'restore', address);
      assert.ok('release' in next);
      assert.equal(storeHolder(dataDir), { pid: process.pid, role: 'restore', started: storeHolder(dataDir)!.started, dir: `${statSync(dataDir).dev}-${statSync(dataDir).ino}` });
      next.release();
      assert.equal(leftBeside(dataDir), []);
    } finally {
      await ended([holder.child], 'SIGKILL');
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
}

test('a claim held by this process refuses another of its own; given up, the store is free again', async () => {
  const dataDir = tempDataDir();
  try {
    const first = await claimStore(dataDir, 'restore');
    assert.ok('release' in first);
    assert.is(storeHolder(dataDir)?.pid, process.pid);
    const second = await claimStore(dataDir, 'backup');
    assert.ok('heldBy' in second && second.heldBy.pid === process.pid);
    first.release();
    assert.not.ok(existsSync(join(dataDir, 'store.pid')));
    const again = await claimStore(dataDir, 'backup');
    assert.ok('release' in again);
    again.release();
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
});

test('on Linux the lock is named for the directory itself: the same whatever path reaches it, another for a copy', async () => {
  const dataDir = tempDataDir();
  const copy = tempDataDir();
  try {
    const { dev, ino } = statSync(dataDir);
    assert.is(lockAddress(dataDir), `\0overmind-store-${dev}-${ino}`);
    assert.is(lockAddress(`${dataDir}/./`), lockAddress(dataDir));
    assert.is.not(lockAddress(copy), lockAddress(dataDir));
    const held = await claimStore(dataDir, 'backup');
    const other = await claimStore(copy, 'backup');
    assert.ok('release' in held && 'release' in other, 'a copy of a store is claimed on its own');
    held.release();
    other.release();
    assert.equal([readdirSync(dataDir), readdirSync(copy)], [[], []], 'nothing is left on disk');
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
    rmSync(copy, { recursive: true, force: true });
  }
});

test('a live process that store.pid names holds the store even where this lock cannot see it (another network namespace): the claim is refused and the lock let go', async () => {
  const dataDir = tempDataDir();
  const other = await liveProcess();
  try {
    writeFileSync(join(dataDir, 'store.pid'), JSON.stringify({ pid: other.pid, role: 'service', started: other.started }));
    assert.equal(await claimStore(dataDir, 'restore'), { heldBy: { pid: other.pid, role: 'service', started: other.started } });
    await other.end();
    const claim = await claimStore(dataDir, 'restore');
    assert.ok('release' in claim, 'the lock was let go, and the holder named is gone');
    claim.release();
  } finally {
    await other.end();
    rmSync(dataDir, { recursive: true, force: true });
  }
});

test('a store.pid copied with its directory (naming a live holder of the original) does not hold the copy', async () => {
  const dataDir = tempDataDir();
  const other = await liveProcess();
  try {
    writeFileSync(join(dataDir, 'store.pid'), JSON.stringify({ pid: other.pid, role: 'service', started: other.started, dir: '1-2' }));
    assert.is(storeHolder(dataDir), undefined);
    const claim = await claimStore(dataDir, 'backup');
    assert.ok('release' in claim, JSON.stringify(claim));
    claim.release();
  } finally {
    await other.end();
    rmSync(dataDir, { recursive: true, force: true });
  }
});

test('a claimer that finds the lock taken by a holder giving the store up tries again and holds it', async () => {
  const dataDir = tempDataDir();
  try {
    const first = await claimStore(dataDir, 'backup');
    assert.ok('release' in first);
    rmSync(join(dataDir, 'store.pid')); // as a holder's release does first, before it lets the lock go
    const second = claimStore(dataDir, 'restore');
    await new Promise((resolve) => setTimeout(resolve, 100));
    first.release();
    const claim = await second;
    assert.ok('release' in claim, JSON.stringify(claim));
    claim.release();
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
});

test('a lock held by a process that never names itself is reported, not guessed at', async () => {
  const dataDir = tempDataDir();
  try {
    const held = await claimStore(dataDir, 'backup');
    assert.ok('release' in held);
    leaveStaleHolder(dataDir); // as if store.pid named a process that is gone
    const started = Date.now();
    const error = await claimStore(dataDir, 'restore').then(() => undefined, (thrown: Error) => thrown);
    assert.match(error?.message ?? '', /is claimed by a process that has not said which it is/);
    assert.ok(Date.now() - started >= 2900, 'after waiting for it to say');
    held.release();
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
});

test.run();
