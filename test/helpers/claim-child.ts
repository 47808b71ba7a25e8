// A process that claims a store directory at a given moment (test/persistence/store-claim.test.ts):
// argv is the directory, the epoch ms to claim at, and optionally the platform whose lock address
// to use (`darwin`: a socket file, as on systems other than Linux). It prints `held` or `refused <pid of the holder>`,
// then keeps its claim until stdin ends, so that every claimer answers while the others still run.
import { claimStore, lockAddress } from '../../src/store/store-claim.ts';

const [dataDir, at, platform] = process.argv.slice(2) as [string, string, NodeJS.Platform | undefined];
while (Date.now() < Number(at)); // every claimer starts in the same millisecond
const claim = await claimStore(dataDir, 'backup', lockAddress(dataDir, platform));
process.stdout.write(`${'release' in claim ? 'held' : `refused ${claim.heldBy.pid}`}\n`);
process.stdin.resume();
process.stdin.on('end', () => {
  if ('release' in claim) claim.release();
  process.exit(0);
});
