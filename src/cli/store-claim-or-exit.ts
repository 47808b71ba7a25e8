// The commands' one way to claim a store (src/store/store-claim.ts): a claim that fails (the lock
// taken by a process that never names itself, a directory it cannot read) is told plainly and the
// process exits 1, rather than ending in a stack trace.
import { claimStore, type Holder } from '../store/store-claim.ts';

/** The claim, or the holder that has the store; on failure `report` is told why and the process exits 1. */
export function claimStoreOrExit(dataDir: string, role: Holder['role'], report: (message: string) => void): ReturnType<typeof claimStore> {
  return claimStore(dataDir, role).catch((error: Error) => {
    report(`The store under ${dataDir} could not be claimed: ${error.message}`);
    process.exit(1);
  });
}
