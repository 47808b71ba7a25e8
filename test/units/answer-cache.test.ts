import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { AnswerCache } from '../../src/http/answer-cache.ts';

const counting = () => {
  const made: string[] = [];
  return { made, make: (text: string) => () => (made.push(text), text) };
};
const text = (answer: Buffer | string) => (typeof answer === 'string' ? answer : answer.toString('utf8'));

test('an answer is kept from the second time it is asked for at one version, until the version moves on', () => {
  const cache = new AnswerCache(1000);
  const { made, make } = counting();
  assert.is(cache.get('page', 'v1', make('{"a":"é"}')), '{"a":"é"}', 'asked once: the text, nothing kept');
  const kept = cache.get('page', 'v1', make('{"a":"é"}'));
  assert.ok(Buffer.isBuffer(kept), 'asked again: its bytes, kept');
  assert.is(text(kept), '{"a":"é"}');
  assert.is(cache.get('page', 'v1', make('unused')), kept);
  assert.is(text(cache.get('page', 'v2', make('{"a":2}'))), '{"a":2}');
  assert.is(text(cache.get('other', 'v2', make('{"b":1}'))), '{"b":1}', 'each key has its own answer');
  assert.equal(made, ['{"a":"é"}', '{"a":"é"}', '{"a":2}', '{"b":1}']);
  cache.get('page', 'v2', make('{"a":2}'));
  assert.is(cache.get('page', 'v2', make('unused')).length, 7, 'kept as UTF-8 bytes');
});

test('the cache holds at most bytesMax bytes of answers and keys, dropping the oldest first', () => {
  const cache = new AnswerCache(30);
  const { made, make } = counting();
  const keep = (key: string, version = 'v') => {
    cache.get(key, version, make(key.repeat(9)));
    cache.get(key, version, make(key.repeat(9)));
  };
  keep('a'); // 10 with its key
  keep('b');
  keep('c');
  keep('a', 'w'); // made again at a new version: now the newest
  keep('d'); // 40 > 30: b goes
  assert.is(made.length, 10);
  for (const [key, version] of [['a', 'w'], ['c', 'v'], ['d', 'v']]) cache.get(key!, version!, make('unused'));
  assert.is(made.length, 10, 'a, c and d stayed');
  cache.get('b', 'v', make('bbbbbbbbb'));
  assert.is(made.length, 11, 'b was made again');
});

test('an answer larger than the whole bound is answered but not kept', () => {
  const cache = new AnswerCache(10);
  const { made, make } = counting();
  for (let i = 0; i < 3; i++) assert.is(text(cache.get('big', 'v', make('x'.repeat(20)))).length, 20);
  assert.is(made.length, 3);
});

test.run();
