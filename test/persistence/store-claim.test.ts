import { spawn } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { claimStore, storeHolder } from '../../src/store/store-claim.ts';
import { tempDataDir } from '../helpers/service.ts';

const claimers = 8;
const rounds = 3;

/** A claim left by a process that is gone (a pid no process has: above Linux's largest). */
function leaveStaleClaim(dataDir: string): void {
  writeFileSync(join(dataDir, 'store.pid'), JSON.stringify({ pid: 4_194_305, role: 'service', started: '1' }));
}

/** `claimers` processes claiming the store at the same moment: what each answered. */
async function claimAtOnce(dataDir: string): Promise<string[]> {
  const at = Date.now() + 1200;
  const children = Array.from({ length: claimers }, () =>
    spawn(process.execPath, ['--import', 'tsx', 'test/helpers/claim-child.ts', dataDir, String(at)], { stdio: ['pipe', 'pipe', 'inherit'] }),
  );
  try {
    return await Promise.all(
      children.map(
        (child) =>
          new Promise<string>((resolve, reject) => {
            let output = '';
            child.stdout!.on('data', (chunk) => {
              output += chunk;
              if (output.includes('\n')) resolve(output.trim());
            });
            child.once('exit', (code) => reject(new Error(`a claimer exited (${code}) before answering: ${output}`)));
          }),
      ),
    );
  } finally {
    await Promise.all(
      children.map((child) => {
        const exited = new Promise((resolve) => child.once('exit', resolve));
        child.stdin!.end();
        return exited;
      }),
    );
  }
}

test('a claim left by a process that is gone is taken over by exactly one of the processes claiming it at once', async () => {
  const dataDir = tempDataDir();
  try {
    for (let round = 0; round < rounds; round++) {
      leaveStaleClaim(dataDir);
      const answers = await claimAtOnce(dataDir);
      assert.is(answers.filter((answer) => answer === 'held').length, 1, `round ${round}: ${answers.join(', ')}`);
      assert.is(answers.filter((answer) => answer === 'refused').length, claimers - 1);
      assert.is(storeHolder(dataDir), undefined, 'the holder gave its claim up when it ended');
      assert.equal(readdirSync(dataDir), [], 'nothing is left beside the store');
    }
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
});

test("a claim is this process's until it gives it up; another claim then finds it free", () => {
  const dataDir = tempDataDir();
  try {
    const first = claimStore(dataDir, 'restore');
    assert.ok('release' in first);
    // Its own claim is not another's hold.
    assert.is(storeHolder(dataDir), undefined);
    assert.ok(existsSync(join(dataDir, 'store.pid')));
    first.release();
    assert.not.ok(existsSync(join(dataDir, 'store.pid')));
    const again = claimStore(dataDir, 'backup');
    assert.ok('release' in again);
    again.release();
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
});

test('while another live process takes a stale claim over, a claimer leaves it alone and names that process', async () => {
  const dataDir = tempDataDir();
  const other = spawn('sleep', ['30'], { stdio: 'ignore' });
  try {
    leaveStaleClaim(dataDir);
    const stale = readFileSync(join(dataDir, 'store.pid'), 'utf8');
    const stat = readFileSync(`/proc/${other.pid}/stat`, 'utf8');
    const started = stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19];
    writeFileSync(join(dataDir, 'store.pid.takeover'), JSON.stringify({ pid: other.pid, role: 'service', started }));
    const claim = claimStore(dataDir, 'backup');
    assert.equal(claim, { heldBy: { pid: other.pid, role: 'service', started } });
    assert.is(readFileSync(join(dataDir, 'store.pid'), 'utf8'), stale, 'the claim being taken over is left to its taker');
  } finally {
    const exited = new Promise((resolve) => other.once('exit', resolve));
    other.kill('SIGKILL');
    await exited;
    rmSync(dataDir, { recursive: true, force: true });
  }
});

test('a takeover left half done by a process that stopped in it is named, not guessed at', () => {
  const dataDir = tempDataDir();
  try {
    leaveStaleClaim(dataDir);
    writeFileSync(join(dataDir, 'store.pid.takeover'), JSON.stringify({ pid: 4_194_306, role: 'backup', started: '1' }));
    assert.throws(() => claimStore(dataDir, 'backup'), /store\.pid\.takeover/);
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
});

test('an unreadable claim (not written by a claimer) is taken over', () => {
  const dataDir = tempDataDir();
  try {
    writeFileSync(join(dataDir, 'store.pid'), '{"pid": 12');
    const claim = claimStore(dataDir, 'backup');
    assert.ok('release' in claim);
    claim.release();
    assert.equal(readdirSync(dataDir), []);
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
});

test.run();
