// A process that claims a store directory at a given moment (test/persistence/store-claim.test.ts):
// argv is the directory and the epoch ms to claim at. It prints `held` or `refused`, then keeps
// its claim until stdin ends, so that every claimer's answer is given while the others still run.
import { claimStore } from '../../src/store/store-claim.ts';

const [dataDir, at] = process.argv.slice(2) as [string, string];
while (Date.now() < Number(at)); // every claimer starts in the same millisecond
const claim = claimStore(dataDir, 'backup');
process.stdout.write(`${'release' in claim ? 'held' : 'refused'}\n`);
process.stdin.resume();
process.stdin.on('end', () => {
  if ('release' in claim) claim.release();
  process.exit(0);
});
