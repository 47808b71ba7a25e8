// Comparing two iterations: score deltas, the union of numeric dimensions, the code diff.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { codeDiff, compareDimensions, compareNumbers } from '../../src/views/iteration-compare.ts';

const limits = { codeDiffCharsMax: 1000, codeDiffEditsMax: 100 };

test('a delta is to - from, and null unless both sides are numbers', () => {
  assert.equal(compareNumbers(0.5, 0.75), { from: 0.5, to: 0.75, delta: 0.25 });
  assert.equal(compareNumbers(0.75, 0.5), { from: 0.75, to: 0.5, delta: -0.25 });
  assert.equal(compareNumbers(null, 0.5), { from: null, to: 0.5, delta: null });
  assert.equal(compareNumbers(0.5, null), { from: 0.5, to: null, delta: null });
  assert.equal(compareNumbers(0, 0), { from: 0, to: 0, delta: 0 });
});

test('dimensions: the numeric keys of either side, sorted by name, null where a side has no number', () => {
  const from = { tone: 0.5, accuracy: 0.25, label: 'good', nested: { x: 1 }, flag: true, list: [1], only_from: 1, none: null };
  const to = { accuracy: 0.75, tone: 'n/a', only_to: 2, label: 3, flag: false };
  assert.equal(compareDimensions(from, to), [
    { name: 'accuracy', from: 0.25, to: 0.75, delta: 0.5 },
    { name: 'label', from: null, to: 3, delta: null },
    { name: 'only_from', from: 1, to: null, delta: null },
    { name: 'only_to', from: null, to: 2, delta: null },
    { name: 'tone', from: 0.5, to: null, delta: null },
  ]);
});

test('dimension_scores that are not objects contribute nothing', () => {
  for (const other of [null, [0.5, 0.25], 'text', 3, true]) {
    assert.equal(compareDimensions(other, { a: 1 }), [{ name: 'a', from: null, to: 1, delta: null }], JSON.stringify(other));
    assert.equal(compareDimensions({ a: 1 }, other), [{ name: 'a', from: 1, to: null, delta: null }], JSON.stringify(other));
    assert.equal(compareDimensions(other, other), []);
  }
  assert.equal(compareDimensions({}, {}), []);
});

test('names sort by code point', () => {
  const names = compareDimensions({ b: 1, B: 1, '\u{1F600}': 1, '\uFFFD': 1, a: 1 }, {}).map((dimension) => dimension.name);
  assert.equal(names, ['B', 'a', 'b', '\uFFFD', '\u{1F600}']);
});

test('the code diff is unified, from a/<from name> to b/<to name>, with three lines of context', () => {
  const before = ['def run(q):', '    a = 1', '    b = 2', '    c = 3', '    d = 4', '    e = 5', '    return model(q)', ''].join('\n');
  const after = before.replace('return model(q)', 'return model(q, temperature=0)');
  assert.is(
    codeDiff({ name: 'first', code: before }, { name: 'second', code: after }, limits),
    ['--- a/first', '+++ b/second', '@@ -4,4 +4,4 @@', '     c = 3', '     d = 4', '     e = 5', '-    return model(q)', '+    return model(q, temperature=0)', ''].join('\n'),
  );
});

test('equal codes diff to "", a null code counts as empty', () => {
  assert.is(codeDiff({ name: 'a', code: 'same' }, { name: 'b', code: 'same' }, limits), '');
  assert.is(codeDiff({ name: 'a', code: null }, { name: 'b', code: '' }, limits), '');
  assert.is(codeDiff({ name: 'a', code: null }, { name: 'b', code: 'x\n' }, limits), '--- a/a\n+++ b/b\n@@ -0,0 +1,1 @@\n+x\n');
  assert.is(codeDiff({ name: 'a', code: 'x\n' }, { name: 'b', code: null }, limits), '--- a/a\n+++ b/b\n@@ -1,1 +0,0 @@\n-x\n');
});

test('codeDiffCharsMax: no diff when either code is longer', () => {
  const long = 'x'.repeat(11);
  const small = { codeDiffCharsMax: 10, codeDiffEditsMax: 100 };
  assert.is(codeDiff({ name: 'a', code: long }, { name: 'b', code: 'y' }, small), null);
  assert.is(codeDiff({ name: 'a', code: 'y' }, { name: 'b', code: long }, small), null);
  assert.is(codeDiff({ name: 'a', code: long }, { name: 'b', code: long }, small), null);
  assert.type(codeDiff({ name: 'a', code: long.slice(1) }, { name: 'b', code: 'y' }, small), 'string');
});

test('codeDiffEditsMax: no diff when more lines are added and removed than that', () => {
  const lines = (prefix: string, count: number) => Array.from({ length: count }, (_, i) => `${prefix}${i}\n`).join('');
  const edits = { codeDiffCharsMax: 10_000, codeDiffEditsMax: 6 };
  assert.type(codeDiff({ name: 'a', code: lines('a', 3) }, { name: 'b', code: lines('b', 3) }, edits), 'string', '3 removed + 3 added');
  assert.is(codeDiff({ name: 'a', code: lines('a', 4) }, { name: 'b', code: lines('b', 3) }, edits), null, '4 removed + 3 added');
  // A few changed lines in a long file stay well within it.
  const long = lines('line ', 500);
  assert.type(codeDiff({ name: 'a', code: long }, { name: 'b', code: long.replace('line 7\n', 'line seven\n') }, edits), 'string');
});

test.run();
