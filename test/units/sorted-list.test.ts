import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { SortedList } from '../../src/query/sorted-list.ts';

const numeric = (a: number, b: number) => a - b;

/** A deterministic pseudo-random sequence, so failures reproduce. */
function sequence(seed: number, length: number, range: number): number[] {
  let state = seed;
  return Array.from({ length }, () => {
    state = (state * 1103515245 + 12345) % 2 ** 31;
    return state % range;
  });
}

test('stays sorted and indexable through thousands of inserts and deletes', () => {
  const list = new SortedList(numeric);
  const mirror: number[] = [];
  const values = sequence(7, 6000, 100_000);
  for (const value of values) {
    list.add(value);
    mirror.push(value);
  }
  mirror.sort(numeric);
  assert.equal(list.toArray(), mirror);
  for (const value of values.slice(0, 4000)) {
    assert.ok(list.delete(value));
    mirror.splice(mirror.indexOf(value), 1);
  }
  assert.equal(list.toArray(), mirror);
  assert.is(list.length, mirror.length);
  for (const index of [0, 1, 777, mirror.length - 1]) assert.is(list.at(index), mirror[index]);
  assert.is(list.at(mirror.length), undefined);
});

test('slices and iterates forwards and backwards from any position', () => {
  const values = Array.from({ length: 3000 }, (_, i) => i * 2);
  const list = SortedList.fromSorted(numeric, values);
  assert.equal(list.slice(1020, 1030), values.slice(1020, 1030));
  assert.equal([...list.iterate(2995)], values.slice(2995));
  const backwards = [...list.iterate(0, true)].slice(0, 3);
  assert.equal(backwards, [5998, 5996, 5994]);
  const fromThird = [...list.iterate(2, true)].slice(0, 2);
  assert.equal(fromThird, [5994, 5992]);
  assert.equal([...list.iterateFrom(11)].slice(0, 2), [12, 14]);
});

test('finds by comparison and bisects', () => {
  const list = SortedList.fromSorted(numeric, [10, 20, 30]);
  assert.is(list.find(20), 20);
  assert.is(list.find(25), undefined);
  assert.is(list.bisectLeft(25), 2);
  assert.is(list.bisectLeft(5), 0);
  assert.is(list.bisectLeft(99), 3);
  assert.not.ok(list.delete(25));
  assert.ok(list.has(30));
});

test('an empty list answers every question safely', () => {
  const list = new SortedList(numeric);
  assert.is(list.length, 0);
  assert.is(list.at(0), undefined);
  assert.equal(list.slice(0, 10), []);
  assert.equal([...list.iterate(0, true)], []);
  assert.not.ok(list.delete(1));
});

test.run();
