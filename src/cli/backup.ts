// `npm run backup -- <file>`: a consistent copy of the store under DATA_DIR, taken while the
// service runs (by the service itself) or not (LMDB copies from one read transaction, so the copy
// is a single point in time).
import { existsSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { loadConfig } from '../config.ts';
import { LmdbKv } from '../store/lmdb-kv.ts';
import { servingProcess } from '../store/serving-process.ts';
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
// A store the service serves is copied by the service: no other process may open it
// (src/store/serving-process.ts).
const serving = servingProcess(dataDir);
if (serving !== undefined) {
  const bytes = await requestBackup(dataDir, serving, resolve(target));
  console.log(`Backed up ${dataDir} to ${target} (${bytes} bytes), taken by the service (process ${serving}).`);
} else {
  const kv = new LmdbKv(dataDir);
  try {
    await kv.backup(resolve(target));
  } finally {
    await kv.close();
  }
  console.log(`Backed up ${dataDir} to ${target} (${statSync(target).size} bytes).`);
}
