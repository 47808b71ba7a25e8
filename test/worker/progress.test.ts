// What the worker command shows: on a terminal, one line redrawn in place with notes above it;
// elsewhere, lines with their time. The named run's counts come from the service.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { ProgressReporter } from '../../src/worker/progress.ts';
import type { WorkerCounts } from '../../src/worker/worker-loop.ts';
import type { WorkerProtocol } from '../../src/worker/worker-protocol.ts';
import { until } from '../helpers/wait.ts';

const counts: WorkerCounts = { leased: 3, running: 1, done: 2, errors: 1, rateLimited: 0, stale: 0, cancelled: 0, refused: 0, stopped: 0 };

function stream(isTTY: boolean) {
  const written: string[] = [];
  return { written, isTTY, columns: 200, write: (text: string) => (written.push(text), true) } as unknown as NodeJS.WritableStream & { written: string[]; isTTY: boolean };
}

test('not a terminal: notes and the last line are lines of their own, each with its time', async () => {
  const out = stream(false);
  const reporter = new ProgressReporter({ stream: out, counts: () => counts, run: null });
  reporter.start();
  reporter.note('working');
  await reporter.stop();
  assert.is(out.written.length, 2);
  assert.match(out.written[0]!, /^\d{4}-\d\d-\d\dT[\d:.]+Z working\n$/);
  assert.match(out.written[1]!, /Z 3 tasks done · 1 error · 1 running\n$/);
  assert.not.ok(out.written.join('').includes('\r'), 'no redrawing');
});

test('a terminal: the line is redrawn in place, a note clears it and goes above; the run\'s counts once read', async () => {
  const out = stream(true);
  let reads = 0;
  const protocol = {
    run: async () => (++reads, { id: 'r', status: 'running', counts: { total: 10, queued: 5, leased: 1, done: 4, dead: 0, skipped: 0, cancelled: 0 } }),
  } as unknown as WorkerProtocol;
  const reporter = new ProgressReporter({ stream: out, counts: () => counts, protocol, run: 'r' });
  reporter.start();
  await until(() => out.written.some((text) => text.includes('4 of 10 tasks (40%)')), 'the line drawn with the run\'s counts', 3000);
  const drawn = out.written.find((text) => text.includes('4 of 10'))!;
  assert.ok(drawn.startsWith('\r\x1b[2K') && !drawn.endsWith('\n'), JSON.stringify(drawn));
  reporter.note('a note');
  const [clear, note, redraw] = out.written.slice(-3);
  assert.equal([clear, note], ['\r\x1b[2K', 'a note\n']);
  assert.ok(redraw!.startsWith('\r\x1b[2K4 of 10 tasks'));
  assert.is(reads, 1, 'read once at the start (then every 2 s)');
  await reporter.stop();
  assert.ok(out.written.at(-1)!.endsWith('\n'), 'the last line stays');
  assert.is(reads, 2, 'and once more for the last line, which says the run as it ended');
});

test('not a terminal, a run named: each line says the run as read for that line, not as read for the line before', async () => {
  // The run's tasks get done one every 25 ms; lines are 400 ms apart. A line that showed the
  // counts read for the line before would be ~16 tasks behind.
  let done = 0;
  const working = setInterval(() => done++, 25);
  const doneAtLine: number[] = [];
  const out = stream(false);
  const write = out.write.bind(out);
  out.write = ((text: string) => (doneAtLine.push(done), write(text))) as typeof out.write;
  const protocol = {
    run: async () => ({ id: 'r', status: 'running', counts: { total: 1000, queued: 1000 - done, leased: 0, done, dead: 0, skipped: 0, cancelled: 0 } }),
  } as unknown as WorkerProtocol;
  const reporter = new ProgressReporter({ stream: out, counts: () => counts, protocol, run: 'r', lineEveryMs: 400 });
  try {
    reporter.start();
    await until(() => out.written.length >= 3, 'three lines', 5000);
  } finally {
    await reporter.stop();
    clearInterval(working);
  }
  out.written.slice(0, 3).forEach((line, i) => {
    const shown = Number(/(\d+) of 1000 tasks/.exec(line)?.[1]);
    assert.ok(doneAtLine[i]! - shown <= 4, `line ${i} shows ${shown} done with ${doneAtLine[i]} done: ${line}`);
  });
});

test('not a terminal, a slow service: a line waits for its read, and lines do not pile up behind one read', async () => {
  const out = stream(false);
  let reads = 0;
  const protocol = {
    run: async () => {
      reads++;
      await new Promise((resolve) => setTimeout(resolve, 450));
      return { id: 'r', status: 'running', counts: { total: 10, queued: 10 - reads, leased: 0, done: reads, dead: 0, skipped: 0, cancelled: 0 } };
    },
  } as unknown as WorkerProtocol;
  const reporter = new ProgressReporter({ stream: out, counts: () => counts, protocol, run: 'r', lineEveryMs: 100 });
  reporter.start();
  await new Promise((resolve) => setTimeout(resolve, 1500));
  const lines = out.written.length;
  await reporter.stop();
  assert.ok(lines >= 1 && lines <= 3, `${lines} lines in 1.5 s with reads of 0.45 s`);
  const shown = out.written.map((line) => /(\d+) of 10 tasks/.exec(line)?.[1]);
  assert.equal(new Set(shown.slice(0, lines)).size, lines, `each line a read of its own: ${shown.join(' ')}`);
});

test.run();
