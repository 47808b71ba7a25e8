// An actor's stream cursor: where a recovered stream stands, and what a commit, a snapshot and the
// removal of covered entries do to it together.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { StreamCursor } from '../../src/actors/stream-cursor.ts';

const stream = { kind: 'list', id: 'a' };

test('a recovered stream stands at its last entry, its covered entries still stored from the first', () => {
  const none = StreamCursor.loaded(undefined, new Set());
  assert.equal([none.seq, none.snapshotSeq, none.removedThrough, none.sinceSnapshot], [0, 0, 0, 0]);
  const recovered = StreamCursor.loaded(
    { ...stream, snapshot: { seq: 10, state: null }, entries: [{ seq: 11, events: [] }, { seq: 12, events: [] }], covered: { from: 4, through: 10 } },
    new Set(['p1']),
  );
  assert.equal([recovered.seq, recovered.snapshotSeq, recovered.removedThrough, recovered.sinceSnapshot], [12, 10, 3, 2]);
  assert.equal(recovered.removeCovered(5), { after: 3, through: 8 });
  assert.equal(recovered.removeCovered(5), { after: 8, through: 10 });
  assert.is(recovered.removeCovered(5), undefined);
  assert.equal([...recovered.storedParts], ['p1']);
});

test('a commit advances the seq; a snapshot covers what was journaled, removes some of it, and keeps its parts', () => {
  const cursor = StreamCursor.loaded({ ...stream, snapshot: undefined, entries: [{ seq: 1, events: [] }], covered: undefined }, new Set(['old']));
  assert.is(cursor.advance(3), 1);
  assert.is(cursor.seq, 4);
  const removal = cursor.snapshotRemoval(5, 4, 2);
  assert.equal(removal, { after: 0, through: 2 });
  cursor.advance(1);
  cursor.snapshotWritten(5, 4, removal.through, { newParts: [['new', {}]], staleParts: ['old'] });
  assert.equal([cursor.seq, cursor.snapshotSeq, cursor.removedThrough, cursor.sinceSnapshot], [5, 5, 2, 0]);
  assert.equal([...cursor.storedParts], ['new']);
  assert.equal(cursor.removeCovered(10), { after: 2, through: 4 });
  assert.throws(() => cursor.snapshotRemoval(5, 3, 1), /no earlier snapshot is ahead of it/);
});

test.run();
