// `npm run backup -- <file>`: a consistent copy of the store under DATA_DIR, taken while the
// service runs (by the service itself) or not (LMDB copies from one read transaction, so the copy
// is a single point in time).
import { existsSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { loadConfig } from '../config.ts';
import { LmdbKv } from '../store/lmdb-kv.ts';
import { claimStoreOrExit } from './store-claim-or-exit.ts';
import { requestBackup } from './backup-requests.ts';

const target = process.argv[2];
if (!target) {
  console.error('usage: npm run backup -- <backup file>');
  process.exit(2);
}
const dataDir = resolve(loadConfig().dataDir);
if (!existsSync(join(dataDir, 'data.mdb'))) {
  console.error(`No store under ${dataDir} (DATA_DIR): nothing to back up.`);
  process.exit(1);
}
if (existsSync(target)) {
  console.error(`${target} already exists; choose a new file name.`);
  process.exit(1);
}
// One process at a time opens the store (src/store/store-claim.ts): a store the service
// serves is copied by the service; else this command claims it while it copies.
const claim = await claimStoreOrExit(dataDir, 'backup', console.error);
if ('heldBy' in claim) {
  const { pid, role } = claim.heldBy;
  if (role !== 'service') {
    console.error(`The store under ${dataDir} is open in process ${pid} (a ${role}); try again once it is done.`);
    process.exit(1);
  }
  try {
    const bytes = await requestBackup(dataDir, pid, resolve(target));
    console.log(`Backed up ${dataDir} to ${target} (${bytes} bytes), taken by the service (process ${pid}).`);
  } catch (error) {
    console.error(`The backup failed: ${(error as Error).message}`);
    process.exit(1);
  }
} else {
  const kv = new LmdbKv(dataDir);
  try {
    await kv.backup(resolve(target));
  } finally {
    await kv.close();
    claim.release();
  }
  console.log(`Backed up ${dataDir} to ${target} (${statSync(target).size} bytes).`);
}
