import { randomUUID } from 'node:crypto';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { ShardedMap } from '../../src/query/sharded-map.ts';

test('a sharded map gets, replaces, deletes, counts and iterates as a Map does', () => {
  const sharded = new ShardedMap<number>();
  const plain = new Map<string, number>();
  const keys = [...Array.from({ length: 3000 }, () => randomUUID()), 'a', 'ab', '', 'agent-7'];
  keys.forEach((key, i) => {
    sharded.set(key, i);
    plain.set(key, i);
  });
  sharded.set('a', -1);
  plain.set('a', -1);
  for (const key of keys.slice(0, 1000)) assert.is(sharded.delete(key), plain.delete(key));
  assert.not.ok(sharded.delete('never stored'));
  assert.is(sharded.size, plain.size);
  for (const key of keys) assert.is(sharded.get(key), plain.get(key), key);
  assert.equal([...sharded].sort(), [...plain].sort());
  assert.equal([...sharded.values()].sort(), [...plain.values()].sort());
  sharded.clear();
  assert.is(sharded.size, 0);
  assert.equal([...sharded], []);
});

// What the shards are for: no Map holding more than a small part of the records, so that no
// single insert rehashes them all (a plain Map's set at 2^20 entries took 361 ms).
test('ids spread over the shards: none holds more than twice its share', () => {
  const sharded = new ShardedMap<number>();
  for (let i = 0; i < 64_000; i++) sharded.set(i % 2 ? randomUUID() : `slug-${i}`, i);
  const sizes = (sharded as unknown as { shards: Map<string, number>[] }).shards.map((shard) => shard.size);
  assert.is(sizes.length, 64);
  assert.ok(Math.max(...sizes) <= 2 * (64_000 / 64), `largest shard ${Math.max(...sizes)}`);
});

test.run();
