// The pipelined actor's rules, on a store whose commits the test holds and then commits or fails
// one by one, in order (FaultyKv.queueWrites). As with LMDB, a write's transaction begins once the
// write before it has settled: until then, its batch takes the messages the actor decides.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { Actor } from '../../src/actors/actor.ts';
import { Unavailable } from '../../src/unavailable.ts';
import { Journal } from '../../src/store/journal.ts';
import { committedValues, environment, listKind, type Command } from '../helpers/list-actor.ts';

const diskFull = () => new Error('MDB_MAP_FULL');
const turn = () => new Promise((resolve) => setImmediate(resolve));

/** An actor whose every commit waits for the test, and the answers its messages got so far. */
function pipelined(overrides: Parameters<typeof environment>[1] = {}) {
  const { env, kv, committed } = environment(undefined, overrides);
  kv.queueWrites();
  const actor = new Actor(listKind, 'a', env);
  const answers = new Map<number, string>();
  /** Sends `Append value` and records how it was answered: "ok", or the error's name. */
  const append = (value: number, command: Command = { type: 'Append', value }) =>
    actor.ask(command).then(
      () => void answers.set(value, 'ok'),
      (error: unknown) => void answers.set(value, error instanceof Unavailable ? error.reason : (error as Error).name),
    );
  /** What the store holds, recovered as a restart would. */
  const recovered = () => new Actor(listKind, 'a', { ...env, journal: new Journal(kv.inner) }, [...env.journal.streams()][0]).current;
  return { env, kv, committed, actor, answers, append, recovered };
}

test('a busy actor decides its next messages while the previous commit is in flight', async () => {
  const { kv, actor, append } = pipelined();
  const sent = [append(1)];
  await turn();
  assert.is(kv.queued, 1);
  sent.push(append(2), append(3));
  await turn();
  assert.is(kv.queued, 2, 'the second commit started behind the first');
  assert.equal(actor.current.values, [1, 2, 3]);
  await kv.settleAll();
  await Promise.all(sent);
});

test('a batch waiting for the store takes every message decided until its transaction begins', async () => {
  const { kv, append } = pipelined();
  const sent = [append(1)];
  await turn();
  for (let value = 2; value <= 5; value++) {
    sent.push(append(value));
    await turn();
  }
  assert.is(kv.queued, 2, 'four messages sent one by one, one commit behind the first');
  await kv.settleAll();
  await Promise.all(sent);
  assert.is(kv.writes, 2);
});

test('messages waiting together share one commit, behind the one in flight', async () => {
  const { kv, append } = pipelined();
  const sent = [append(0)];
  await turn();
  for (let value = 1; value <= 50; value++) sent.push(append(value));
  await turn();
  assert.is(kv.queued, 2, 'fifty messages, one commit');
  await kv.settleAll();
  await Promise.all(sent);
  assert.is(kv.writes, 2);
});

test('beyond commitBatchMax messages, a batch is full and the rest start the next once the store has begun it', async () => {
  const { kv, append } = pipelined({ commitBatchMax: 3 });
  const sent = [append(0)];
  await turn();
  for (let value = 1; value <= 5; value++) sent.push(append(value));
  await turn();
  sent.push(append(6), append(7));
  await turn();
  assert.is(kv.queued, 2, '[0], then [1, 2, 3], full: the rest wait until the store begins it');
  await kv.settleAll();
  await Promise.all(sent);
  assert.is(kv.writes, 4, '[0], [1, 2, 3], [4, 5, 6], [7]');
});

test('a full batch waiting for the store is written from the state as it is then: its snapshot holds nothing decided after it, and recovery gives what was acknowledged', async () => {
  const { env, kv } = environment(undefined, { commitBatchMax: 3, commitsInFlightMax: 2, snapshotEvery: 3 });
  kv.queueWrites();
  const other = new Actor(listKind, 'other', env);
  const actor = new Actor(listKind, 'a', env);
  // Another stream's write holds the store while five messages come: [1, 2, 3] fills up (a snapshot) unbegun.
  const sent: Promise<unknown>[] = [other.ask({ type: 'Append', value: 100 })];
  await turn();
  for (let value = 1; value <= 5; value++) sent.push(actor.ask({ type: 'Append', value }));
  await turn();
  await kv.settleAll();
  await Promise.all(sent);
  const stream = [...env.journal.streams()].find((one) => one.id === 'a')!;
  assert.equal([stream.snapshot!.seq, (stream.snapshot!.state as { values: number[] }).values], [3, [1, 2, 3]]);
  const recovered = new Actor(listKind, 'a', { ...env, journal: new Journal(kv.inner) }, stream).current;
  assert.equal(recovered.values, [1, 2, 3, 4, 5]);
});

test('a full snapshot batch that fails: nothing decided behind it lands (no journal gap), and the store recovers', async () => {
  const { env, kv } = environment(undefined, { commitBatchMax: 3, commitsInFlightMax: 2, snapshotEvery: 3 });
  kv.queueWrites();
  const other = new Actor(listKind, 'other', env);
  const actor = new Actor(listKind, 'a', env);
  const answers = new Map<number, string>();
  const sent: Promise<unknown>[] = [other.ask({ type: 'Append', value: 100 })];
  await turn();
  for (let value = 1; value <= 5; value++) sent.push(actor.ask({ type: 'Append', value }).then(() => answers.set(value, 'ok'), (error: Error) => answers.set(value, error.name)));
  await turn();
  await kv.settleNext();
  await kv.settleNext(diskFull());
  await kv.settleAll();
  await Promise.all(sent);
  assert.equal([1, 2, 3].map((value) => answers.get(value)), ['Unavailable', 'Unavailable', 'Unavailable']);
  const streams = [...new Journal(kv.inner).streams()];
  const stored = streams.find((one) => one.id === 'a');
  const recovered = new Actor(listKind, 'a', { ...env, journal: new Journal(kv.inner) }, stored).current;
  assert.equal(recovered.values, [4, 5].filter((value) => answers.get(value) === 'ok'), 'exactly what was acknowledged');
  assert.equal(actor.current.values, recovered.values);
});

test('each message is answered only after its own commit is durable', async () => {
  const { kv, answers, append } = pipelined();
  const sent = [append(1)];
  await turn();
  sent.push(append(2));
  await turn();
  assert.equal([...answers], []);
  await kv.settleNext();
  assert.equal([...answers], [[1, 'ok']], 'the first commit answers its message only');
  await kv.settleNext();
  assert.equal([...answers], [[1, 'ok'], [2, 'ok']]);
  await Promise.all(sent);
});

test('readers see only committed state, in commit order', async () => {
  const { kv, committed, append } = pipelined();
  const sent = [append(1)];
  await turn();
  sent.push(append(2), append(3));
  await turn();
  assert.equal(committedValues(committed), [], 'decided is not committed');
  await kv.settleNext();
  assert.equal(committedValues(committed), [1]);
  await kv.settleNext();
  assert.equal(committedValues(committed), [1, 2, 3]);
  await Promise.all(sent);
});

test('every message decided after a failed commit fails with it, and the state reloads from the store', async () => {
  const { kv, actor, answers, append, committed } = pipelined();
  const first = append(1);
  await turn();
  await kv.settleNext();
  await first;
  const sent = [append(2)];
  await turn();
  sent.push(append(3), append(4));
  await turn();
  sent.push(append(5));
  await turn();
  assert.is(kv.queued, 2);
  await kv.settleNext(diskFull());
  await kv.settleNext(); // reaches the store, which refuses it: the entry it builds on is missing
  await Promise.all(sent);
  assert.equal([...answers], [[1, 'ok'], [2, 'store_failed'], [3, 'store_failed'], [4, 'store_failed'], [5, 'store_failed']]);
  assert.equal(actor.current.values, [1]);
  assert.equal(committedValues(committed), [1]);
  const later = append(6);
  await turn();
  await kv.settleNext();
  await later;
  assert.equal(actor.current.values, [1, 6]);
});

test('nothing acknowledged is lost and nothing unacknowledged is visible after a failed commit', async () => {
  // The fourth entry is a snapshot: the commit in flight behind the failed one rewrites the stream.
  const { kv, append, recovered } = pipelined({ snapshotEvery: 4 });
  const acknowledged = [append(1), append(2)];
  await turn();
  await kv.settleNext();
  await Promise.all(acknowledged);
  const lost = [append(3)];
  await turn();
  lost.push(append(4));
  await turn();
  assert.is(kv.queued, 2);
  await kv.settleNext(diskFull());
  await kv.settleNext(); // the snapshot reaches the store, which refuses it
  await Promise.all(lost);
  assert.equal(recovered().values, [1, 2], 'the store holds what was acknowledged, nothing more');
  const later = append(7);
  await turn();
  await kv.settleNext();
  await later;
  assert.equal(recovered().values, [1, 2, 7], 'the journal continues without a gap');
});

test('a message sent once a commit has failed waits for the reload and is decided on what is durable', async () => {
  const { kv, actor, answers, append } = pipelined();
  const sent = [append(1)];
  await turn();
  sent.push(append(2));
  await turn();
  await kv.settleNext(diskFull());
  sent.push(append(3));
  await turn();
  assert.is(actor.depth, 1, 'it does not join the batch behind the failure');
  await kv.settleNext();
  await kv.settleAll();
  await Promise.all(sent);
  assert.equal([...answers], [[1, 'store_failed'], [2, 'store_failed'], [3, 'ok']]);
  assert.equal(actor.current.values, [3]);
});

test('a refusal decided after a failed commit fails with it too', async () => {
  const { kv, answers, append } = pipelined();
  const sent = [append(1)];
  await turn();
  sent.push(append(2, { type: 'Refuse' }));
  await turn();
  await kv.settleNext(diskFull());
  await kv.settleNext();
  await Promise.all(sent);
  assert.equal([...answers], [[1, 'store_failed'], [2, 'store_failed']]);
  const refused = append(3, { type: 'Refuse' });
  await refused;
  assert.is(answers.get(3), 'Rejected', 'with nothing in flight, a refusal is answered at once');
});

test('exclusive work waits until every commit in flight has settled', async () => {
  const { kv, actor, append } = pipelined();
  const sent = [append(1)];
  await turn();
  sent.push(append(2));
  await turn();
  let ran = false;
  const exclusive = actor.exclusive(async () => {
    ran = true;
  });
  await kv.settleNext();
  assert.not.ok(ran, 'one commit is still in flight');
  await kv.settleNext();
  await exclusive;
  assert.ok(ran);
  await Promise.all(sent);
});

test('beyond commitsInFlightMax commits in flight, messages wait in the mailbox', async () => {
  const { kv, actor, append } = pipelined({ commitsInFlightMax: 1 });
  const sent = [append(1)];
  await turn();
  sent.push(append(2), append(3));
  await turn();
  assert.is(kv.queued, 1);
  assert.is(actor.depth, 2, 'the second batch waits to be decided');
  assert.equal(actor.current.values, [1]);
  await kv.settleNext();
  assert.is(kv.queued, 1, 'the commit settled, so the next one started');
  assert.is(actor.depth, 0);
  await kv.settleAll();
  await Promise.all(sent);
  assert.equal(actor.current.values, [1, 2, 3]);
});

test('nothing starts behind a snapshot in flight', async () => {
  const { kv, actor, append, recovered } = pipelined({ snapshotEvery: 2 });
  const sent = [append(1)];
  await turn();
  sent.push(append(2));
  await turn();
  await kv.settleNext(); // the second commit begins: it writes the snapshot
  sent.push(append(3));
  await turn();
  assert.is(kv.queued, 1);
  assert.is(actor.depth, 1, 'the third message waits for the snapshot');
  await kv.settleNext();
  assert.is(kv.queued, 1, 'the snapshot is durable: the next commit starts');
  assert.is(actor.depth, 0);
  await kv.settleAll();
  await Promise.all(sent);
  assert.equal(recovered().values, [1, 2, 3]);
});

test('a claim stays held by every state that may still become durable', async () => {
  const { env, kv, append } = pipelined();
  const named = (value: number, name: string) => append(value, { type: 'Name', name });
  const sent = [named(1, 'x')];
  await turn();
  sent.push(named(2, 'y'));
  await turn();
  await kv.settleNext(); // x is durable; the rename to y begins
  sent.push(named(3, 'x'));
  await turn();
  await kv.settleNext();
  assert.is(env.claims.ownerOf('name:x'), 'list:a', 'renamed away and back: still held');
  await kv.settleNext(diskFull());
  await Promise.all(sent);
  assert.is(env.claims.ownerOf('name:y'), 'list:a', 'the durable state is named y');
  assert.is(env.claims.ownerOf('name:x'), undefined, 'the failed rename back released x');
});

test('an event that cannot be applied fails its message, fails its batch, and the state reloads', async () => {
  const { kv, actor, answers, append } = pipelined();
  const sent = [append(1)];
  await turn();
  sent.push(append(2), append(3, { type: 'Poison' }), append(4));
  await turn();
  await kv.settleNext();
  await Promise.all(sent);
  assert.equal([...answers].sort(), [[1, 'ok'], [2, 'store_failed'], [3, 'Error'], [4, 'store_failed']]);
  assert.equal(actor.current.values, [1]);
});

test('an event that cannot be applied fails the open batch it joins, which writes nothing', async () => {
  const { kv, answers, append, recovered } = pipelined();
  const sent = [append(1)];
  await turn();
  sent.push(append(2));
  await turn();
  sent.push(append(3, { type: 'Poison' }));
  await turn();
  await kv.settleAll();
  await Promise.all(sent);
  assert.equal([...answers], [[3, 'Error'], [1, 'ok'], [2, 'store_failed']]);
  assert.equal(recovered().values, [1]);
});

test('a refused message in a batch is answered with its refusal once the batch is durable', async () => {
  const { kv, answers, append } = pipelined();
  const sent = [append(1)];
  await turn();
  sent.push(append(2, { type: 'Refuse' }), append(3));
  await turn();
  await kv.settleAll();
  await Promise.all(sent);
  assert.equal([...answers], [[1, 'ok'], [2, 'Rejected'], [3, 'ok']]);
});

test('stopping waits for the commits in flight', async () => {
  const { kv, actor, append } = pipelined();
  const sent = [append(1)];
  await turn();
  let stopped = false;
  const stopping = actor.stop().then(() => (stopped = true));
  await turn();
  assert.not.ok(stopped);
  await kv.settleAll();
  await stopping;
  await Promise.all(sent);
});

test.run();
