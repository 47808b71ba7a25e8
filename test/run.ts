// `npm test`'s runner: uvu over every test file (or those matching the pattern given), then a
// check that nothing was left running. uvu lets the process end by itself, so a server, child
// process or timer a test forgot to close would keep CI waiting after the results are printed;
// here leftovers are named, fail the run, and the process ends.
//
// With no pattern, the files run in child processes of this one: the files outside browser/ in
// two shards side by side (the suite takes minutes; CI has two cores), then the browser files on
// their own, since some of them time what a person waits for and must not share the machine.
// Each child's output is printed whole when it ends, and the last lines are the sums of all of
// them, in uvu's words (Total, Passed, Skipped, Duration), which .ci/run reads. With a pattern
// (`node --import tsx test/run.ts browser/console`) the matching files run here, in one process.
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { parse } from 'uvu/parse';
import { run } from 'uvu/run';

/** Resources that keep the event loop alive on purpose: the process's own stdio. */
const stdio = new Set(['TTYWrap', 'PipeWrap']);
const settleMs = 3000;
/** Shards run side by side for the files outside browser/. */
const shards = 2;
/** A child told which files to run (one name a line, as uvu names them). */
const filesVariable = 'TEST_RUN_FILES';

process.env.FORCE_COLOR ??= '1';
const pattern = process.argv[2];
const { suites } = await parse('test', pattern ?? '\\.test\\.ts$');
const assigned = process.env[filesVariable];

if (pattern !== undefined || assigned !== undefined) {
  const names = assigned === undefined ? null : new Set(assigned.split('\n'));
  await runHere(names ? suites.filter((suite) => names.has(suite.name)) : suites);
} else {
  await runInChildren(suites.map((suite) => suite.name));
}

/** Runs suites in this process, then fails the run if anything was left running. */
async function runHere(chosen: typeof suites): Promise<void> {
  await run(chosen, { bail: false });
  // Closing sockets and exiting children need a moment; anything still there after it leaked.
  const deadline = performance.now() + settleMs;
  let leftovers: string[] = [];
  do {
    await new Promise((resolve) => setTimeout(resolve, 50));
    leftovers = process.getActiveResourcesInfo().filter((resource) => !stdio.has(resource));
  } while (leftovers.length > 0 && performance.now() < deadline);
  if (leftovers.length > 0) {
    console.error(`\nThe tests left these running: ${leftovers.join(', ')}`);
    process.exitCode = 1;
  }
  process.exit();
}

interface ChildResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  /** The last test file the child named in its output. */
  lastFile: string;
  total: number;
  passed: number;
  skipped: number;
}

/** The shards side by side, then the browser files alone; the sums printed last. */
async function runInChildren(names: string[]): Promise<void> {
  const started = performance.now();
  const browser = names.filter((name) => name.startsWith('browser/'));
  const rest = names.filter((name) => !name.startsWith('browser/'));
  // Round robin over the sorted names spreads each folder's heavy files over the shards.
  const groups = Array.from({ length: shards }, (_, k) => rest.filter((_, i) => i % shards === k));
  const results = await Promise.all(groups.map((group, k) => runChild(group, portRangeOf(k))));
  if (browser.length > 0) results.push(await runChild(browser, portRangeOf(0)));
  const sum = (key: 'total' | 'passed' | 'skipped') => results.reduce((all, one) => all + one[key], 0);
  const failed = results.some((one) => one.code !== 0);
  console.log(`\n== every file: ${shards} shards side by side, then browser/ alone ==`);
  console.log(`  Total:     ${sum('total')}`);
  console.log(`  Passed:    ${sum('passed')}`);
  console.log(`  Skipped:   ${sum('skipped')}`);
  console.log(`  Duration:  ${(performance.now() - started).toFixed(2)}ms`);
  // A child that died before uvu printed its sums (a crash, not a failed test) is named last, where
  // a reader of CI's tail sees it; its output above ends with why.
  for (const [k, one] of results.entries()) {
    if (one.code !== 0 && one.total === 0) console.log(`  Child ${k + 1} ended with ${one.code ?? one.signal} before printing its sums; its last file: ${one.lastFile}`);
  }
  process.exit(failed ? 1 : 0);
}

/** Shard k's ports for servers started later (scripts/service-process.ts's freePort): its own. */
function portRangeOf(k: number): string {
  const size = Math.floor((32767 - 20000 + 1) / shards);
  return `${20000 + k * size}-${20000 + (k + 1) * size - 1}`;
}

/** One child running `files`; its output printed whole once it ends, with its counts read from it. */
function runChild(files: string[], portRange: string): Promise<ChildResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', fileURLToPath(import.meta.url)], {
      env: { ...process.env, [filesVariable]: files.join('\n'), PORT_RANGE: portRange },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const chunks: Buffer[] = [];
    child.stdout.on('data', (chunk: Buffer) => chunks.push(chunk));
    child.stderr.on('data', (chunk: Buffer) => chunks.push(chunk));
    child.once('error', reject);
    child.once('close', (code, signal) => {
      const output = Buffer.concat(chunks).toString();
      process.stdout.write(output);
      const plain = output.replace(/\x1b\[[0-9;]*m/g, '');
      // uvu's last "Total:", "Passed:" and "Skipped:" lines are the child's counts.
      const count = (label: string) => {
        const lines = plain.split('\n').filter((line) => new RegExp(`^\\s*${label}:\\s+\\d+`).test(line));
        return Number(/\d+/.exec(lines.at(-1) ?? '0')![0]);
      };
      const lastFile = files.filter((file) => plain.includes(file)).at(-1) ?? '(none started)';
      resolve({ code, signal, lastFile, total: count('Total'), passed: count('Passed'), skipped: count('Skipped') });
    });
  });
}
