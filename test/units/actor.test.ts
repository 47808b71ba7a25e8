import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { Actor } from '../../src/actors/actor.ts';
import { Unavailable } from '../../src/unavailable.ts';
import { Rejected } from '../../src/domain/rejection.ts';
import { Journal, StoreCorruptError } from '../../src/store/journal.ts';
import { committedValues, environment, listKind } from '../helpers/list-actor.ts';

test('messages are decided one at a time, in the order they were sent', async () => {
  const { env } = environment();
  const actor = new Actor(listKind, 'a', env);
  const replies = await Promise.all(Array.from({ length: 100 }, (_, value) => actor.ask({ type: 'Append', value })));
  assert.equal(replies.map((events) => (events[0] as { value: number }).value), Array.from({ length: 100 }, (_, i) => i));
  assert.equal(actor.current.values, Array.from({ length: 100 }, (_, i) => i));
});

test('messages waiting together share one commit', async () => {
  const { env, kv } = environment();
  const actor = new Actor(listKind, 'a', env);
  await Promise.all(Array.from({ length: 100 }, (_, value) => actor.ask({ type: 'Append', value })));
  assert.ok(kv.writes < 10, `${kv.writes} commits for 100 messages`);
});

test('a refused or failing message never affects the others', async () => {
  const { env, committed } = environment();
  const actor = new Actor(listKind, 'a', env);
  const outcomes = await Promise.allSettled([
    actor.ask({ type: 'Append', value: 1 }),
    actor.ask({ type: 'Refuse' }),
    actor.ask({ type: 'Crash' }),
    actor.ask({ type: 'Append', value: 2 }),
  ]);
  assert.equal(outcomes.map((outcome) => outcome.status), ['fulfilled', 'rejected', 'rejected', 'fulfilled']);
  assert.instance((outcomes[1] as PromiseRejectedResult).reason, Rejected);
  assert.is(((outcomes[2] as PromiseRejectedResult).reason as Error).message, 'a bug');
  assert.equal(actor.current.values, [1, 2]);
  assert.equal(committedValues(committed), [1, 2]);
});

test('a full mailbox answers unavailable at once instead of queueing', async () => {
  const { env, kv } = environment(undefined, { mailboxDepthMax: 3 });
  const actor = new Actor(listKind, 'a', env);
  const release = kv.holdWrites();
  const first = actor.ask({ type: 'Append', value: 0 });
  await new Promise((resolve) => setImmediate(resolve)); // the first batch is now committing
  const queued = [1, 2, 3].map((value) => actor.ask({ type: 'Append', value }));
  const overflow = actor.ask({ type: 'Append', value: 4 });
  const refusal = await overflow.then(() => null, (error: unknown) => error);
  assert.instance(refusal, Unavailable);
  assert.is((refusal as Unavailable).reason, 'queue_full');
  release();
  await Promise.all([first, ...queued]);
  assert.equal(actor.current.values, [0, 1, 2, 3]);
});

test('replies wait for the commit, and nothing is committed twice', async () => {
  const { env, kv, committed } = environment();
  const actor = new Actor(listKind, 'a', env);
  const release = kv.holdWrites();
  let answered = false;
  const reply = actor.ask({ type: 'Append', value: 7 }).then(() => (answered = true));
  await new Promise((resolve) => setTimeout(resolve, 10));
  assert.not.ok(answered);
  assert.is(committed.length, 0);
  release();
  await reply;
  assert.is(committed.length, 1);
});

test('a failed commit fails every message in it and the state returns to what is durable', async () => {
  const { env, kv, committed } = environment();
  const actor = new Actor(listKind, 'a', env);
  await actor.ask({ type: 'Append', value: 1 });
  kv.failWith = new Error('MDB_MAP_FULL');
  const failed = await Promise.allSettled([actor.ask({ type: 'Append', value: 2 }), actor.ask({ type: 'Name', name: 'n' })]);
  for (const outcome of failed) {
    assert.is(outcome.status, 'rejected');
    assert.instance((outcome as PromiseRejectedResult).reason, Unavailable);
  }
  assert.equal(actor.current, { values: [1], name: null });
  assert.is(env.claims.ownerOf('name:n'), undefined);
  assert.is(committed.length, 1);
  kv.failWith = null;
  await actor.ask({ type: 'Append', value: 3 });
  assert.equal(actor.current.values, [1, 3]);
});

test('a unique claim held by one actor is refused to another until it is released', async () => {
  const { env } = environment();
  const first = new Actor(listKind, 'a', env);
  const second = new Actor(listKind, 'b', env);
  const outcomes = await Promise.allSettled([first.ask({ type: 'Name', name: 'x' }), second.ask({ type: 'Name', name: 'x' })]);
  assert.equal(outcomes.map((outcome) => outcome.status), ['fulfilled', 'rejected']);
  await first.ask({ type: 'Name', name: 'y' });
  await second.ask({ type: 'Name', name: 'x' });
  assert.is(second.current.name, 'x');
});

test('a snapshot replaces the journal entries it covers, and recovery reproduces the state', async () => {
  const { env, kv } = environment(undefined, { snapshotEvery: 10 });
  const actor = new Actor(listKind, 'a', env);
  for (let value = 0; value < 25; value++) await actor.ask({ type: 'Append', value });
  const journal = env.journal;
  assert.equal([...journal.snapshots.keys({})], [['list', 'a']]);
  assert.is([...journal.entries.keys({})].length, 5);
  const [stream] = [...journal.streams()];
  const recovered = new Actor(listKind, 'a', { ...env, journal: new Journal(kv) }, stream);
  assert.equal(recovered.current.values, actor.current.values);
});

test('a growing state is snapshotted once the journal holds half as many entries as it holds items', async () => {
  const { env } = environment(undefined, { snapshotEvery: 4 });
  const actor = new Actor(listKind, 'a', env);
  const snapshotAt = new Set<number>();
  for (let value = 1; value <= 40; value++) {
    await actor.ask({ type: 'Append', value });
    snapshotAt.add(env.journal.snapshots.get<{ seq: number }>(['list', 'a'])?.seq ?? 0);
  }
  assert.equal([...snapshotAt], [0, 4, 8, 16, 32], 'each snapshot encodes at most twice the entries since the last');
  assert.is([...env.journal.entries.keys({})].length, 8);
});

test('the entries a snapshot covers are removed journalRemovalsPerCommitMax per commit, and a restart carries on', async () => {
  const { env, kv } = environment(undefined, { snapshotEvery: 10, journalRemovalsPerCommitMax: 3 });
  const actor = new Actor(listKind, 'a', env);
  const entrySeqs = (journal: Journal) => [...journal.entries.keys({})].map((key) => key[2]);
  for (let value = 1; value <= 10; value++) await actor.ask({ type: 'Append', value });
  // The tenth message is the snapshot (seq 10); it covers entries 1-9 and removes the first three.
  assert.is(env.journal.snapshots.get<{ seq: number }>(['list', 'a'])?.seq, 10);
  assert.equal(entrySeqs(env.journal), [4, 5, 6, 7, 8, 9]);
  await actor.ask({ type: 'Append', value: 11 });
  assert.equal(entrySeqs(env.journal), [7, 8, 9, 11]);
  // Recovery skips the covered entries still stored and says where they lie.
  const journal = new Journal(kv);
  const [stream] = [...journal.streams()];
  assert.equal(stream!.covered, { from: 7, through: 9 });
  assert.equal(stream!.entries.map((entry) => entry.seq), [11]);
  const recovered = new Actor(listKind, 'a', { ...env, journal }, stream);
  assert.equal(recovered.current.values, actor.current.values);
  await recovered.ask({ type: 'Append', value: 12 });
  assert.equal(entrySeqs(journal), [11, 12]);
  await recovered.ask({ type: 'Append', value: 13 });
  assert.equal(entrySeqs(journal), [11, 12, 13], 'nothing covered is left to remove');
  assert.equal([...journal.streams()][0]!.covered, undefined);
});

test('a stopping actor\'s snapshot, and the end of a stream, remove every covered entry still stored', async () => {
  const { env } = environment(undefined, { snapshotEvery: 10, journalRemovalsPerCommitMax: 2 });
  const actor = new Actor(listKind, 'a', env);
  for (let value = 1; value <= 12; value++) await actor.ask({ type: 'Append', value });
  assert.equal([...env.journal.entries.keys({})].map((key) => key[2]), [7, 8, 9, 11, 12]);
  const stopping = actor.snapshotNow()!;
  await env.journal.kv.write(stopping.ops);
  stopping.finish();
  assert.equal([...env.journal.entries.keys({})], []);
  assert.is(env.journal.snapshots.get<{ seq: number }>(['list', 'a'])?.seq, 12);

  const other = new Actor(listKind, 'b', env);
  for (let value = 1; value <= 11; value++) await other.ask({ type: 'Append', value });
  assert.equal([...env.journal.entries.keys({})].map((key) => key[2]), [5, 6, 7, 8, 9, 11]);
  const ending = await other.exclusive(async () => other.end());
  await env.journal.kv.write(ending.ops);
  ending.finish();
  assert.equal([...env.journal.entries.keys({})], []);
  assert.equal([...env.journal.snapshots.keys({})], [['list', 'a']]);
});

test('exclusive work runs after earlier messages and before later ones', async () => {
  const { env } = environment();
  const actor = new Actor(listKind, 'a', env);
  const seen: number[][] = [];
  const before = actor.ask({ type: 'Append', value: 1 });
  const exclusive = actor.exclusive(async () => {
    seen.push([...actor.current.values]);
  });
  const after = actor.ask({ type: 'Append', value: 2 });
  await Promise.all([before, exclusive, after]);
  assert.equal(seen, [[1]]);
  assert.equal(actor.current.values, [1, 2]);
});

test('a stopped actor refuses new messages after finishing queued ones', async () => {
  const { env } = environment();
  const actor = new Actor(listKind, 'a', env);
  const queued = actor.ask({ type: 'Append', value: 1 });
  await actor.stop();
  await queued;
  const refusal = await actor.ask({ type: 'Append', value: 2 }).then(() => null, (error: unknown) => error);
  assert.instance(refusal, Unavailable);
});

test('an event of a type its kind does not have is never written, and one found in the store stops recovery', async () => {
  const { env, kv, committed } = environment();
  const actor = new Actor(listKind, 'a', env);
  await actor.ask({ type: 'Append', value: 1 });
  const stray = await actor.ask({ type: 'Stray' }).then(() => null, (error: unknown) => error as Error);
  assert.match(stray?.message ?? '', 'list decided an event of no known type');
  await actor.ask({ type: 'Append', value: 2 });
  assert.equal(committedValues(committed), [1, 2]);
  const stored = [...env.journal.streams()][0]!;
  assert.equal(new Actor(listKind, 'a', { ...env, journal: new Journal(kv) }, stored).current.values, [1, 2]);
  const corrupt = { ...stored, entries: [...stored.entries, { seq: 3, events: [{ type: 'Strayed' }] }] };
  assert.throws(() => new Actor(listKind, 'a', env, corrupt), (error: unknown) => error instanceof StoreCorruptError);
});

test.run();
