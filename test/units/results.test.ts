// The pure parts of results (rows resolved against a version, what a batch decides), the columns
// an iteration's results are kept in, their reduction to one value per datapoint, and the writer
// that decides batches ahead of their commits.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { Rejected } from '../../src/domain/rejection.ts';
import { decideResults, resolveRows, type Roster } from '../../src/domain/result-batch.ts';
import { resultIdOf, resultKeyOf, resultStatuses, storedRowOf, type StoredRow } from '../../src/domain/result-row.ts';
import type { ComputePool } from '../../src/compute/compute-pool.ts';
import { ResultAnswers } from '../../src/results/result-answers.ts';
import { ResultStore } from '../../src/results/result-store.ts';
import { ResultTable } from '../../src/results/result-table.ts';
import { ResultWriter, type ResultsWrite } from '../../src/results/result-writer.ts';
import { MemoryKv } from '../../src/store/memory-kv.ts';
import { sharedValidator } from '../../src/validation/validator.ts';
import { datapointScores, verdictFailed, verdictNone, verdictPassed } from '../../src/views/datapoint-scores.ts';
import { summarize } from '../../src/views/result-summary.ts';
import { FaultyKv } from '../helpers/faulty-kv.ts';
import { Unavailable } from '../../src/unavailable.ts';

const uuid = (n: number) => `00000000-0000-4000-8000-${n.toString(16).padStart(12, '0')}`;
const roster = (orders: number[]): Roster => ({ dataset: uuid(9999), agent: uuid(9998), version: 3, ids: orders.map((_, i) => uuid(i)), orders });
const limits = { attemptsPerDatapointMax: 10, resultOutputCharsMax: 100, resultDimensionsMax: 4 };
const indexOf = (version: Roster) => (id: string) => {
  const index = version.ids.indexOf(id);
  return index < 0 ? undefined : index;
};
const now = '2026-11-28T00:00:00.000Z';
const nowMs = Date.parse(now);

/** A row as stored: every field with its default unless given. */
function stored(fields: Partial<StoredRow> = {}): StoredRow {
  return storedRowOf({ score: 1, created_at: nowMs, updated_at: nowMs, ...fields });
}

test('the domain statuses are the schema\'s', () => {
  assert.equal([...resultStatuses], sharedValidator().documents.get('results.fields')!.$defs.status.enum);
});

test('a row is resolved by id or by an order that names exactly one datapoint; every row\'s errors come back in place', () => {
  const version = roster([0, 4, 4, 7]);
  const { rows, errors } = resolveRows(version, indexOf(version), [
    { datapoint: uuid(3), score: 0.5, attempt: 2 },
    { datapoint_order: 7, attempt: 1, score: 1 },
    { datapoint_order: 4, score: 1 },
    { datapoint_order: 0, status: 'error' },
    { datapoint_order: 0, score: 1, attempt: 10, output: 'x'.repeat(100), dimension_scores: { a: 1, b: 1, c: 1, d: 1, e: 1 } },
    { datapoint: uuid(3), datapoint_order: 7, attempt: 2, score: 0 },
  ], limits);
  assert.equal(rows.map((row) => [row.index, row.attempt, row.fields.status, row.fields.error, row.output]), [
    [3, 2, 'ok', '', 'null'], [3, 1, 'ok', '', 'null'], [0, 0, 'error', '', 'null'],
  ]);
  assert.equal(errors, [
    {},
    {},
    { datapoint_order: ['2 datapoints have order 4 in dataset version 3: name one by its id (datapoint).'] },
    {},
    {
      attempt: ['Ensure this value is less than or equal to 9.'],
      dimension_scores: ['Ensure this field has no more than 4 elements.'],
      output: ['Ensure this value has at most 100 characters as JSON (it has 102).'],
    },
    { non_field_errors: ['Another row of this batch has the same datapoint and attempt.'] },
  ]);
  assert.equal(resolveRows(version, indexOf(version), [{ datapoint_order: 7, score: 1 }], limits).errors, null);
});

test('a batch pins an unpinned iteration; a row already there keeps its id and created_at; bounds hold per iteration', () => {
  const version = roster([0, 1, 2]);
  const { rows } = resolveRows(version, indexOf(version), [{ datapoint_order: 0, score: 1 }, { datapoint_order: 1, score: 0, dimension_scores: { b: 1 } }], limits);
  const batch = { roster: version, rows, nowMs };
  const empty = { pinned: undefined, rows: 0, dimensions: new Set<string>(), existing: () => undefined };
  const first = decideResults(empty, batch, { resultsPerIterationMax: 10, resultDimensionsPerIterationMax: 4 });
  assert.equal([first.pins, first.created, first.replaced, first.rowsAfter], [true, 2, 0, 2]);
  const again = decideResults(
    { pinned: version, rows: 2, dimensions: new Set(['a']), existing: (index) => (index === 0 ? { createdMs: Date.parse('2026-01-01T00:00:00.000Z') } : undefined) },
    { ...batch, nowMs: Date.parse('2026-12-01T00:00:00.000Z') },
    { resultsPerIterationMax: 3, resultDimensionsPerIterationMax: 2 },
  );
  assert.equal([again.pins, again.created, again.replaced, again.rowsAfter], [false, 1, 1, 3]);
  assert.equal([again.rows[0]!.createdMs, again.rows[0]!.replaced], [Date.parse('2026-01-01T00:00:00.000Z'), true]);
  assert.equal([again.rows[1]!.createdMs, again.rows[1]!.replaced], [Date.parse('2026-12-01T00:00:00.000Z'), false]);
  const refusal = (run: () => unknown) => {
    try {
      run();
    } catch (error) {
      return (error as Rejected).rejection;
    }
    return assert.unreachable('refused');
  };
  assert.equal(refusal(() => decideResults({ ...empty, rows: 9 }, batch, { resultsPerIterationMax: 10, resultDimensionsPerIterationMax: 4 })), {
    kind: 'invalid', fields: { non_field_errors: ['An iteration holds at most 10 results; this batch would make 11.'] },
  });
  assert.equal(refusal(() => decideResults({ ...empty, dimensions: new Set(['a', 'c']) }, batch, { resultsPerIterationMax: 10, resultDimensionsPerIterationMax: 2 })), {
    kind: 'invalid', fields: { non_field_errors: ["An iteration's results have at most 2 dimension names; this batch would make 3."] },
  });
  const other = { ...version, dataset: uuid(1234), version: 4 };
  assert.equal(refusal(() => decideResults({ ...empty, pinned: other }, batch, { resultsPerIterationMax: 10, resultDimensionsPerIterationMax: 4 })), {
    kind: 'invalid', fields: { dataset: [`This iteration's results are of dataset version 4 (${uuid(1234)}); results of another version need another iteration.`] },
  });
});

test("a result's id is made from its iteration, datapoint index and attempt, and names that row only in that iteration", () => {
  const iteration = '7c9e6679-7425-40de-944b-e07fc1f90ae7';
  const id = resultIdOf(iteration, 99_999, 7);
  assert.is(id, '7c9e6679-7425-8007-8000-00000001869f');
  assert.match(id, /^[0-9a-f]{8}-[0-9a-f]{4}-8[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  assert.equal(resultKeyOf(iteration, id), { index: 99_999, attempt: 7 });
  assert.equal(resultKeyOf(iteration, resultIdOf(iteration, 0, 4095)), { index: 0, attempt: 4095 });
  assert.is(resultKeyOf('11111111-2222-4333-8444-555555555555', id), undefined, 'another iteration');
  assert.is(resultKeyOf(iteration, '7c9e6679-7425-40de-944b-e07fc1f90ae7'), undefined, 'not a result id');
  assert.is(resultKeyOf(iteration, '7c9e6679-7425-800z-8000-00000001869f'), undefined);
});

test('a table keeps rows in columns, in datapoint then attempt order, replaced in place', () => {
  const table = new ResultTable(roster([0, 1, 2, 3]), 1000);
  const put = (index: number, attempt: number, fields: Partial<StoredRow> = {}) => table.put(index, attempt, stored(fields));
  put(2, 1, { score: 0.5, passed: true, dimension_scores: { accuracy: 0.25 } });
  put(2, 0, { status: 'error', score: null });
  put(0, 3);
  for (let i = 0; i < 100; i++) put(3, i + 1, { score: i, dimension_scores: i === 99 ? { tone: 1 } : null });
  const versionBefore = table.version;
  put(2, 0, { status: 'ok', score: 1, passed: false });
  assert.ok(table.version !== versionBefore, 'a put changes the version');
  assert.equal([table.rows, table.errorRows], [103, 0]);
  const order = [...table.slotsInOrder()].map((slot) => [table.indexAt(slot), table.attemptAt(slot)]);
  assert.equal(order.slice(0, 4), [[0, 3], [2, 0], [2, 1], [3, 1]]);
  assert.equal([...table.slotsInOrder(true)].map((slot) => [table.indexAt(slot), table.attemptAt(slot)]), [...order].reverse());
  const slot = table.slotOf(2, 1);
  const { dimensions } = table.columns();
  assert.equal([table.valueAt('score', slot), table.passedAt(slot), table.isError(slot), dimensions.accuracy![slot]], [0.5, true, false, 0.25]);
  assert.ok(Number.isNaN(dimensions.tone![slot]!), 'a dimension column added later reads NaN for earlier rows');
  assert.is(dimensions.tone![table.slotOf(3, 100)], 1);
  assert.equal(table.dimensionNames(), ['accuracy', 'tone']);
  assert.is(table.valueAt('created_at', slot), nowMs);
  assert.is(table.slotOf(1, 0), -1);
});

test('a datapoint counts once: its ok attempts averaged in attempt order; it passes when most of its judged attempts passed, a tie not', () => {
  const table = new ResultTable(roster([0, 1, 2, 3]), 10);
  const put = (index: number, attempt: number, fields: Partial<StoredRow>) => table.put(index, attempt, stored(fields));
  put(0, 0, { score: 1, passed: true });
  put(0, 1, { score: 0, passed: false });
  put(0, 2, { status: 'error', score: 0.3, passed: true });
  put(1, 0, { score: 0.1, passed: true });
  put(1, 2, { score: 0.2, passed: null });
  put(1, 1, { score: 0.4, passed: true });
  put(2, 0, { status: 'error', score: null });
  const scores = datapointScores(table.columns());
  assert.equal([...scores.mean].slice(0, 2), [0.5, (0.1 + 0.4 + 0.2) / 3]);
  assert.ok(Number.isNaN(scores.mean[2]!) && Number.isNaN(scores.mean[3]!));
  assert.equal([...scores.verdict], [verdictFailed, verdictPassed, verdictNone, verdictNone]);
  assert.equal([...scores.results], [3, 3, 1, 0]);
  assert.equal([...scores.ok], [2, 3, 0, 0]);
});

function writerWith(kv: FaultyKv, live: { value: boolean } = { value: true }, bounds = { queueRowsMax: 100, commitRowsMax: 100 }, writing: { run?: string } = {}) {
  const store = new ResultStore(kv, { attemptsPerDatapointMax: 10, checkCodec: true });
  const orphans: string[] = [];
  const writer = new ResultWriter(store, {
    ...bounds,
    limits: { resultsPerIterationMax: 100, resultDimensionsPerIterationMax: 8, attemptsPerDatapointMax: 10 },
    isLive: () => live.value,
    writingRun: () => writing.run,
    orphaned: (iteration) => orphans.push(iteration),
    outcome: () => {},
  });
  return { store, writer, orphans };
}

function batch(version: Roster, orders: number[], idBase: number): ResultsWrite {
  const { rows } = resolveRows(version, indexOf(version), orders.map((order) => ({ datapoint_order: order, score: order })), limits);
  return { iteration: 'iteration-1', roster: version, rows, nowMs: Date.parse(`2026-11-28T00:00:00.${String(idBase).padStart(3, '0')}Z`) };
}

test('batches decided while earlier ones are in flight see their rows: a row written twice is created once', async () => {
  const kv = new FaultyKv(new MemoryKv());
  kv.queueWrites();
  const { store, writer } = writerWith(kv);
  const version = roster([0, 1, 2]);
  const first = writer.write(batch(version, [0, 1], 100));
  const second = writer.write(batch(version, [1, 2], 200));
  assert.is(store.table('iteration-1'), undefined, 'readers see nothing before the commit');
  await kv.settleAll();
  assert.equal([(await first).created, (await first).replaced], [2, 0]);
  assert.equal([(await second).created, (await second).replaced, (await second).results], [1, 1, 3]);
  const table = store.table('iteration-1')!;
  assert.equal([table.rows, table.valueAt('created_at', table.slotOf(1, 0))], [3, Date.parse('2026-11-28T00:00:00.100Z')], 'the row replaced kept its creation');
  assert.is([...store.rows.keys({})].length, 3);
  await writer.stop();
});

test('a failed commit leaves nothing pending: the next batch pins again and counts its rows as new', async () => {
  const kv = new FaultyKv(new MemoryKv());
  const { store, writer } = writerWith(kv);
  const version = roster([0, 1, 2]);
  kv.failWith = new Error('disk full');
  await writer.write(batch(version, [0, 1], 100)).then(
    () => assert.unreachable('the commit failed'),
    (error: unknown) => assert.instance(error, Unavailable),
  );
  kv.failWith = null;
  assert.is(store.table('iteration-1'), undefined);
  const written = await writer.write(batch(version, [0], 200));
  assert.equal([written.created, written.replaced, written.results], [1, 0, 1]);
  assert.is(store.pins.get(['iteration-1']), version.dataset);
  assert.is(store.rosterDb.has([version.dataset]), true);
  await writer.stop();
});

test('rows are refused (409) when a run writes their iteration as their commit is decided, even if none did when they were sent; its own rows and pins are not', async () => {
  const kv = new FaultyKv(new MemoryKv());
  kv.queueWrites();
  const writing: { run?: string } = {};
  const { store, writer } = writerWith(kv, { value: true }, undefined, writing);
  const version = roster([0, 1, 2]);
  const first = writer.write(batch(version, [0], 100));
  await new Promise((resolve) => setImmediate(resolve));
  // Sent while no run wrote the iteration; decided once the first commit settles, by when one does.
  const late = writer.write(batch(version, [1], 200)).then(
    () => assert.unreachable('a run writes the iteration now'),
    (error: unknown) => assert.equal((error as Rejected).rejection, { kind: 'conflict', detail: "This iteration's results are being written by run run-1: they can be written again once it has ended." }),
  );
  const pin = writer.write({ ...batch(version, [], 250) });
  const ofTheRun = writer.write({ ...batch(version, [2], 300), run: 'run-1' });
  writing.run = 'run-1';
  await kv.settleAll();
  assert.is((await first).created, 1);
  await late;
  await pin;
  assert.equal([(await ofTheRun).created, (await ofTheRun).results], [1, 2]);
  const table = store.table('iteration-1')!;
  assert.equal([table.slotOf(1, 0), table.slotOf(2, 0) >= 0], [-1, true], 'nothing of the refused batch is stored');
  await writer.stop();
});

test('a batch whose iteration went while its commit was in flight is answered not found, and its rows are purged', async () => {
  const kv = new FaultyKv(new MemoryKv());
  kv.queueWrites();
  const live = { value: true };
  const { store, writer, orphans } = writerWith(kv, live);
  const written = writer.write(batch(roster([0, 1]), [0], 100)).then(
    () => assert.unreachable('gone'),
    (error: unknown) => assert.equal((error as Rejected).rejection, { kind: 'not_found' }),
  );
  await new Promise((resolve) => setImmediate(resolve));
  live.value = false;
  await kv.settleAll();
  await written;
  assert.equal(orphans, ['iteration-1']);
  assert.is(store.table('iteration-1'), undefined);
  assert.is(await writer.purge('iteration-1', 10), true);
  assert.equal([[...store.rows.keys({})].length, store.pins.has(['iteration-1']), store.rosterDb.has([uuid(9999)])], [0, false, false]);
  await writer.stop();
});

test('rows waiting are bounded (503 past LIMIT_RESULT_QUEUE_ROWS_MAX), and one commit takes at most LIMIT_RESULT_COMMIT_ROWS_MAX of them', async () => {
  const kv = new FaultyKv(new MemoryKv());
  const release = kv.holdWrites();
  const { writer } = writerWith(kv, { value: true }, { queueRowsMax: 3, commitRowsMax: 2 });
  const version = roster([0, 1, 2, 3, 4, 5]);
  const held = writer.write(batch(version, [0], 100));
  await new Promise((resolve) => setImmediate(resolve));
  const waiting = [writer.write(batch(version, [1, 2], 200)), writer.write(batch(version, [3], 300))];
  await writer.write(batch(version, [4], 400)).then(
    () => assert.unreachable('the queue is full'),
    (error: unknown) => assert.equal([(error as Unavailable).reason, (error as Unavailable).retryAfterSeconds], ['queue_full', 1]),
  );
  release();
  await Promise.all([held, ...waiting]);
  assert.is(kv.writes, 3, 'the first batch took one commit, the two waiting (three rows) two more');
  await writer.stop();
});

test("a job's summaries are admitted whole or not at all: when the compute queue cannot take every heavy one, none is computed", async () => {
  const kv = new MemoryKv();
  const store = new ResultStore(kv, { attemptsPerDatapointMax: 10 });
  const version = roster([0, 1, 2]);
  for (const iteration of ['a', 'b', 'c']) store.applyWritten(iteration, version, [{ index: 0, attempt: 0, stored: stored() }], true);
  const ran: string[] = [];
  let room = 2;
  const pool = {
    offloads: () => true,
    keepReady: () => {},
    admit: (count: number) => {
      if (count > room) throw new Unavailable('busy', 1);
    },
    run: () => Promise.reject(new Error('a job summary runs its admitted parts only')),
    runPart: (task: { kind: string; columns: { rows: number } }) => {
      ran.push(task.kind);
      return Promise.resolve(summarize(task.columns as never, { missingNamedMax: 100 }));
    },
  };
  const answers = new ResultAnswers(store, pool as unknown as ComputePool, { summaryCacheEntriesMax: 8, comparisonCacheEntriesMax: 8 });
  assert.throws(() => answers.summariesOf(['a', 'b', 'c']), (error: unknown) => (error as Unavailable).reason === 'busy');
  assert.equal(ran, [], 'nothing of a refused job summary ran');
  room = 3;
  const summaries = await answers.summariesOf(['a', 'b', 'c']);
  assert.equal([summaries.map((summary) => summary.results), ran], [[1, 1, 1], ['summary', 'summary', 'summary']]);
  room = 0;
  assert.is((await answers.summariesOf(['a', 'b', 'c'])).length, 3, 'summaries kept are not heavy work: nothing to admit');
});

test.run();
