// A run's tasks as columns (src/domain/run-tasks.ts): positions and the hand-out sequence
// (datapoint by datapoint, or a block of datapoints at a time, in the dataset's or a shuffled
// order), leases, the heap of tasks queued again (ready by when, earliest first, stale entries
// skipped), a silent worker's leases given back, ends, counts kept at every step, and a
// snapshot's plain form read back to the same tasks.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { pack, unpack } from 'msgpackr';
import { RunTasks, taskStates, type RunShape } from '../../src/domain/run-tasks.ts';

const shape = (datapointOrder: number[], iterations = 2, attempts = 2): RunShape => ({ iterations, datapoints: datapointOrder.length, attempts, datapointOrder });
const tokens = (count: number, tag = 't') => Array.from({ length: count }, (_, i) => `${tag}${i}`.padEnd(22, '_'));

/** The counts, checked against the state column: every task in exactly one state. */
function counts(tasks: RunTasks): Record<string, number> {
  const fromColumn: Record<string, number> = Object.fromEntries(taskStates.map((state) => [state, 0]));
  for (let position = 0; position < tasks.total; position++) fromColumn[tasks.stateOf(position)]++;
  const { total, ...kept } = tasks.counts;
  assert.equal(kept, fromColumn, 'the counts follow the column');
  assert.is(total, tasks.total);
  return kept;
}

/** Leases what is ready to a worker, as a decision and its event would. */
function leaseReady(tasks: RunTasks, count: number, nowMs: number, worker = 'w1', expiresAt = nowMs + 1000): number[] {
  const { positions, rankAfter } = tasks.ready(count, nowMs);
  tasks.lease(positions, tokens(positions.length, worker), worker, rankAfter, expiresAt);
  return positions;
}

const coordinates = (tasks: RunTasks, positions: readonly number[]) =>
  positions.map((position) => {
    const { iteration, datapoint, attempt } = tasks.taskAt(position);
    return `${iteration}/${datapoint}/${attempt}`;
  });

test('a position is (iteration, datapoint, attempt) and back, one each; the total is their product', () => {
  const tasks = new RunTasks(shape([0, 1, 2], 2, 2));
  assert.is(tasks.total, 12);
  const seen = new Set<number>();
  for (let position = 0; position < tasks.total; position++) {
    const at = tasks.taskAt(position);
    assert.is(tasks.positionOf(at), position);
    assert.ok(at.iteration < 2 && at.datapoint < 3 && at.attempt < 2);
    seen.add(tasks.positionOf(at));
  }
  assert.is(seen.size, 12);
  assert.equal(counts(tasks), { queued: 12, leased: 0, done: 0, dead: 0, skipped: 0, cancelled: 0 });
});

test('the hand-out sequence is datapoint-major: each datapoint\'s tasks (every iteration, every attempt) together, in the dataset\'s order or a shuffled one', () => {
  const inOrder = new RunTasks(shape([0, 1, 2]));
  assert.equal(coordinates(inOrder, inOrder.ready(12, 0).positions), [
    '0/0/0', '0/0/1', '1/0/0', '1/0/1', '0/1/0', '0/1/1', '1/1/0', '1/1/1', '0/2/0', '0/2/1', '1/2/0', '1/2/1',
  ]);
  const shuffled = new RunTasks(shape([2, 0, 1], 1, 1));
  assert.equal(coordinates(shuffled, shuffled.ready(3, 0).positions), ['0/2/0', '0/0/0', '0/1/0']);
  // Every rank names a different position: the sequence covers each task once.
  const ranks = new Set(Array.from({ length: inOrder.total }, (_, rank) => inOrder.positionAtRank(rank)));
  assert.is(ranks.size, inOrder.total);
});

test('in blocks: each iteration takes a block of datapoints in turn (the last block what is left), the blocks in the order given; every task once', () => {
  const blocks = new RunTasks({ ...shape([4, 0, 1, 3, 2], 2, 1), block: 2 });
  assert.equal(coordinates(blocks, blocks.ready(10, 0).positions), [
    '0/4/0', '0/0/0', '1/4/0', '1/0/0', '0/1/0', '0/3/0', '1/1/0', '1/3/0', '0/2/0', '1/2/0',
  ]);
  const withAttempts = new RunTasks({ ...shape([0, 1, 2], 2, 2), block: 2 });
  assert.equal(coordinates(withAttempts, withAttempts.ready(12, 0).positions), [
    '0/0/0', '0/0/1', '0/1/0', '0/1/1', '1/0/0', '1/0/1', '1/1/0', '1/1/1', '0/2/0', '0/2/1', '1/2/0', '1/2/1',
  ]);
  for (const [datapoints, block, iterations, attempts] of [[7, 3, 3, 2], [16, 16, 2, 1], [5, 16, 4, 3], [33, 16, 60, 1]] as const) {
    const order = Array.from({ length: datapoints }, (_, i) => (i + 3) % datapoints);
    const tasks = new RunTasks({ ...shape(order, iterations, attempts), block });
    const ranks = new Set(Array.from({ length: tasks.total }, (_, rank) => tasks.positionAtRank(rank)));
    assert.is(ranks.size, tasks.total, `${datapoints} datapoints in blocks of ${block}: every task once`);
  }
  // A snapshot keeps the block.
  const again = RunTasks.fromPlain(unpack(pack(blocks.toPlain())));
  assert.equal(coordinates(again, again.ready(10, 0).positions), coordinates(blocks, blocks.ready(10, 0).positions));
});

test('ready() only reads; a lease takes what it named, moves the sequence on and keeps the counts', () => {
  const tasks = new RunTasks(shape([0, 1, 2]));
  const first = tasks.ready(3, 0);
  assert.equal(tasks.ready(3, 0), first, 'reading twice, the same answer');
  assert.is(tasks.nextRank, 0);
  tasks.lease(first.positions, tokens(3), 'w1', first.rankAfter, 1000);
  assert.is(tasks.nextRank, 3);
  assert.equal(counts(tasks), { queued: 9, leased: 3, done: 0, dead: 0, skipped: 0, cancelled: 0 });
  assert.equal([...tasks.leases.keys()], first.positions);
  assert.equal(tasks.leases.get(first.positions[1]!), { worker: 'w1', token: tokens(3)[1] });
  assert.equal([...tasks.byWorker.get('w1')!], first.positions);
  assert.is(tasks.leaseExpiry.get('w1'), 1000);
  const next = leaseReady(tasks, 2, 0, 'w2');
  assert.equal(coordinates(tasks, next), ['1/0/1', '0/1/0'], 'from where the sequence stopped');
  assert.throws(() => tasks.lease(next, tokens(2), 'w3', 0, 1000), /when it becomes leased/, 'a task is leased once');
  assert.throws(() => tasks.lease([tasks.ready(1, 0).positions[0]!], [], 'w3', 0, 1000), /a token per task/);
});

test('tasks queued again wait in a heap until ready: earliest first, before the rest of the sequence; a failed try counts, a rate-limited one does not', () => {
  const tasks = new RunTasks(shape([0, 1, 2]));
  const [a, b, c, d] = leaseReady(tasks, 4, 0);
  tasks.requeue(a!, 300, true);
  tasks.requeue(b!, 100, false);
  tasks.requeue(c!, 200, true);
  assert.equal([tasks.tries[a!], tasks.tries[b!], tasks.tries[c!]], [1, 0, 1]);
  assert.equal(counts(tasks), { queued: 11, leased: 1, done: 0, dead: 0, skipped: 0, cancelled: 0 });
  assert.is(tasks.nextReadyAt(), 100);
  const sequenceNext = tasks.positionAtRank(4);
  assert.equal(tasks.ready(2, 99).positions, [sequenceNext, tasks.positionAtRank(5)], 'none ready yet: the sequence goes on');
  assert.equal(tasks.ready(2, 100).positions, [b, sequenceNext]);
  assert.equal(tasks.ready(4, 300).positions, [b, c, a, sequenceNext], 'earliest first');
  // Equal readiness: the lower position first, the same in every replay.
  tasks.requeue(d!, 100, false);
  assert.equal(tasks.ready(2, 100).positions, [b, d].sort((x, y) => x! - y!));
  const leased = leaseReady(tasks, 1, 150);
  assert.equal(leased, [Math.min(b!, d!)]);
  assert.is(tasks.nextRank, 4, 'a retry leased does not move the sequence');
  counts(tasks);
});

test('a task queued again, leased and queued again is in the heap once: an entry it was pushed with before is stale and skipped', () => {
  const tasks = new RunTasks(shape([0, 1], 1, 1));
  const [first, second] = leaseReady(tasks, 2, 0);
  tasks.requeue(first!, 10, true);
  tasks.requeue(second!, 50, true);
  // A lease event may name any queued task (a decision with another view of the heap): the second, under the first's entry.
  tasks.lease([second!], tokens(1), 'w2', tasks.nextRank, 1000);
  tasks.requeue(second!, 500, true);
  assert.is(tasks.nextReadyAt(), 10);
  assert.equal(tasks.ready(5, 100).positions, [first], 'its entry at 50 is stale');
  assert.equal(tasks.ready(5, 500).positions, [first, second], 'once, at 500');
  assert.equal(leaseReady(tasks, 1, 100), [first]);
  assert.is(tasks.nextReadyAt(), 500, 'the stale entry under it is skipped too');
  assert.ok(!tasks.hasReady(499) && tasks.hasReady(500));
  assert.is(tasks.tries[second!], 2);
});

test('a silent worker\'s leases go back to the queue (not a try), its expiry forgotten; extend moves only a holder\'s expiry', () => {
  const tasks = new RunTasks(shape([0, 1]));
  const mine = leaseReady(tasks, 3, 0, 'w1', 1000);
  const theirs = leaseReady(tasks, 2, 0, 'w2', 2000);
  tasks.extend('w1', 1500);
  tasks.extend('nobody', 9999);
  assert.equal([...tasks.leaseExpiry], [['w1', 1500], ['w2', 2000]]);
  assert.equal(tasks.releaseWorker('w1', 1500), mine);
  assert.ok(!tasks.byWorker.has('w1') && !tasks.leaseExpiry.has('w1'));
  assert.equal(mine.map((position) => tasks.stateOf(position)), ['queued', 'queued', 'queued']);
  assert.equal(mine.map((position) => tasks.tries[position]), [0, 0, 0]);
  assert.equal(counts(tasks), { queued: 6, leased: 2, done: 0, dead: 0, skipped: 0, cancelled: 0 });
  assert.equal(tasks.ready(3, 1500).positions, mine, 'ready again at once');
  assert.equal(tasks.releaseWorker('nobody', 0), []);
  // The last lease a worker holds ending forgets its expiry too.
  tasks.end(theirs[0]!, 'done');
  tasks.end(theirs[1]!, 'dead');
  assert.ok(!tasks.leaseExpiry.has('w2') && !tasks.byWorker.has('w2'));
  assert.equal([tasks.tries[theirs[0]!], tasks.tries[theirs[1]!]], [0, 1], 'a dead task\'s last try counts');
});

test('ends: only a leased task ends; the rest end skipped or cancelled at once; a retry queues ended tasks again, their tries starting over', () => {
  const tasks = new RunTasks(shape([0, 1, 2]));
  const [done, dead, held] = leaseReady(tasks, 3, 0);
  tasks.end(done!, 'done');
  tasks.requeue(dead!, 0, true);
  leaseReady(tasks, 1, 0);
  tasks.end(dead!, 'dead');
  assert.throws(() => tasks.end(tasks.positionAtRank(5), 'done'), /when it becomes done/);
  assert.throws(() => tasks.requeue(done!, 0, true), /when it becomes queued/);
  assert.equal(counts(tasks), { queued: 9, leased: 1, done: 1, dead: 1, skipped: 0, cancelled: 0 });
  assert.equal([tasks.tries[dead!], tasks.finished], [2, false]);
  tasks.queueAgain([dead!], 10);
  assert.equal([tasks.stateOf(dead!), tasks.tries[dead!]], ['queued', 0]);
  assert.equal(tasks.ready(1, 10).positions, [dead]);
  const revoked = tasks.endUnfinished('cancelled');
  assert.equal(revoked, [held]);
  assert.equal(counts(tasks), { queued: 0, leased: 0, done: 1, dead: 0, skipped: 0, cancelled: 11 });
  assert.ok(tasks.finished);
  assert.equal([tasks.leases.size, tasks.byWorker.size, tasks.leaseExpiry.size, tasks.nextReadyAt()], [0, 0, 0, undefined]);
  assert.equal(tasks.ready(5, Infinity).positions, []);
});

test('toPlain and fromPlain (also through msgpack, as the store writes it): the same columns, leases, expiries, errors and heap, decided on the same way', () => {
  const tasks = new RunTasks(shape([2, 0, 1, 3], 2, 3));
  const leased = leaseReady(tasks, 8, 0, 'w1', 5000);
  leaseReady(tasks, 2, 0, 'w2', 7000);
  tasks.end(leased[0]!, 'done');
  tasks.requeue(leased[1]!, 400, true);
  tasks.noteError(leased[1]!, 'boom');
  tasks.requeue(leased[2]!, 200, false);
  tasks.requeue(leased[3]!, 300, true);
  leaseReady(tasks, 1, 250, 'w2', 7000); // takes leased[2]: its heap entry goes stale
  const plain = tasks.toPlain();
  const copies = [RunTasks.fromPlain(plain), RunTasks.fromPlain(structuredClone(plain)), RunTasks.fromPlain(unpack(pack(plain)))];
  for (const copy of copies) {
    assert.equal(copy.shape, tasks.shape);
    assert.equal(copy.toPlain(), plain);
    assert.equal(copy.counts, tasks.counts);
    assert.equal([...copy.leases], [...tasks.leases]);
    assert.equal([...copy.byWorker], [...tasks.byWorker]);
    assert.equal([...copy.lastErrors], [[leased[1], 'boom']]);
    assert.is(copy.nextRank, tasks.nextRank);
    assert.is(copy.nextReadyAt(), tasks.nextReadyAt());
    for (const at of [0, 299, 300, 400, 10_000]) assert.equal(copy.ready(30, at), tasks.ready(30, at), `ready at ${at}`);
  }
  // A snapshot does not change with the tasks after it, and a copy goes on as the original does.
  const before = pack(plain);
  for (const one of [tasks, copies[2]!]) {
    one.end(leased[4]!, 'done');
    assert.equal(one.releaseWorker('w1', 600), leased.slice(5, 8));
    leaseReady(one, 4, 600, 'w3');
  }
  assert.equal(pack(plain), before);
  assert.equal(copies[2]!.toPlain(), tasks.toPlain());
});

test.run();
