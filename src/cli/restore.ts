// `npm run restore -- <file>` (with the service stopped): checks that the backup recovers
// cleanly, keeps the current store beside it, and puts the backup in its place under DATA_DIR.
import { closeSync, copyFileSync, existsSync, mkdirSync, mkdtempSync, openSync, readSync, renameSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { Registry } from '../actors/registry.ts';
import { defaultLimits, loadConfig } from '../config.ts';
import { ReadModel } from '../read-model.ts';
import { Journal } from '../store/journal.ts';
import { LmdbKv } from '../store/lmdb-kv.ts';
import { claimStoreOrExit } from './store-claim-or-exit.ts';
import { storeUpgrades } from '../store-upgrades.ts';

const source = process.argv[2];
if (!source || !existsSync(source)) {
  console.error('usage: npm run restore -- <backup file made by npm run backup>');
  process.exit(2);
}
const dataDir = resolve(loadConfig().dataDir);

const summary = await verify(resolve(source));
const release = await claimOrRefuse(dataDir);
const kept = moveCurrentAside(dataDir);
copyFileSync(source, join(dataDir, 'data.mdb'));
release();
console.log(`Restored ${source} into ${dataDir}: ${summary}.`);
if (kept) console.log(`The previous store is kept as ${kept}.`);

/** Opens a copy of the backup and recovers every stream from it, as startup would. */
async function verify(file: string): Promise<string> {
  if (!looksLikeLmdb(file)) {
    console.error(`The backup cannot be restored: ${file} is not an LMDB data file.`);
    process.exit(1);
  }
  const scratch = mkdtempSync(join(tmpdir(), 'overmind-restore-'));
  copyFileSync(file, join(scratch, 'data.mdb'));
  const kv = new LmdbKv(scratch);
  try {
    const journal = new Journal(kv);
    if (journal.meta.get(['format']) === undefined) throw new Error(`${file} is not a backup of this service's store`);
    await journal.checkFormat(storeUpgrades);
    const readModel = new ReadModel();
    const registry = Registry.recover({
      journal,
      readModel,
      // Nothing is written: recovering is all a restore check does.
      limits: { ...defaultLimits, snapshotEvery: Number.MAX_SAFE_INTEGER },
      storeOutcome: () => {},
      jsonText: (value) => JSON.stringify(value),
    });
    const counts = registry.counts();
    return `${readModel.users.size} users, ${counts.project} projects, ${counts.agent} agents, ${counts.job} jobs`;
  } catch (error) {
    console.error(`The backup cannot be restored: ${(error as Error).message}`);
    process.exit(1);
  } finally {
    await kv.close();
    rmSync(scratch, { recursive: true, force: true });
  }
}

/**
 * LMDB's meta page carries the magic 0xBEEFC0DE. Checking it first matters: the native binding
 * crashes outright on a file that is not LMDB instead of reporting an error.
 */
function looksLikeLmdb(file: string): boolean {
  const header = Buffer.alloc(28);
  const fd = openSync(file, 'r');
  try {
    return readSync(fd, header, 0, 28, 0) === 28 && header.readUInt32LE(24) === 0xbeefc0de;
  } finally {
    closeSync(fd);
  }
}

/** The store claimed for this command, told without opening it: opening a store the service serves can lose its writes (src/store/store-claim.ts). */
async function claimOrRefuse(dir: string): Promise<() => void> {
  mkdirSync(dir, { recursive: true });
  const claim = await claimStoreOrExit(dir, 'restore', console.error);
  if ('heldBy' in claim) {
    console.error(`The store under ${dir} is open in process ${claim.heldBy.pid}: stop the service before restoring.`);
    process.exit(1);
  }
  return claim.release;
}

function moveCurrentAside(dir: string): string | null {
  rmSync(join(dir, 'lock.mdb'), { force: true });
  const current = join(dir, 'data.mdb');
  if (!existsSync(current)) return null;
  const kept = `${current}.before-restore-${new Date().toISOString().replace(/[:.]/g, '-')}`;
  renameSync(current, kept);
  return kept;
}
