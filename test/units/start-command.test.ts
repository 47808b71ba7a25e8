// The command `npm start` runs (and the benchmarks and process tests with it): its V8 options are
// part of how the service behaves under load, so they are pinned here with the reason.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { npmStartArgs } from '../../scripts/service-process.ts';

test('npm start runs the compiled service', () => {
  assert.ok(npmStartArgs().at(-1)!.endsWith('/dist/src/main.js'));
});

// A scavenge stops the event loop while it copies what survived the young generation, and under
// load that grows with the semi-space: with 64 MB, one job taking 50 connections' posts paused
// 17-23 ms every half second (about half of the posts slower than 20 ms); with 16 MB, 5-7 ms
// four times as often, for about the same total.
test('npm start keeps V8 scavenges short: a semi-space of at most 16 MB', () => {
  const option = npmStartArgs().find((arg) => arg.startsWith('--max-semi-space-size='));
  assert.ok(option, 'the semi-space size is chosen, not left to V8');
  const megabytes = Number(option.split('=')[1]);
  assert.ok(megabytes >= 1 && megabytes <= 16, `semi-space of ${megabytes} MB`);
});

test.run();
