// Which process has a store directory open, told without opening the store. LMDB as lmdb-js 3.5
// ships it resets the shared count of committed transactions whenever another process opens the
// environment (upstream's ITS#9496, fixed there and not in that copy): a commit the service made
// meanwhile can then be written over, acknowledged writes lost, or the writer crash. So one
// process at a time opens a store: the service while it serves it, or the backup or restore
// command while the service is stopped. Each claims the directory first with `store.pid`
// (created exclusively, so two cannot both claim it); the backup command finding the service
// there asks it for the copy instead (src/cli/backup-requests.ts).
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const fileName = 'store.pid';

/** Who holds a store: the process, what it is, and when it started (so that a reused pid is not taken for it). */
export interface Holder {
  pid: number;
  role: 'service' | 'backup' | 'restore';
  started: string | null;
}

/** When a process started, as Linux counts it (/proc/<pid>/stat's 22nd field), or null where that cannot be read. */
function startOf(pid: number): string | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19] ?? null;
  } catch {
    return null;
  }
}

export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function read(path: string): Holder | 'unreadable' | undefined {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch {
    return undefined;
  }
  try {
    return JSON.parse(text) as Holder;
  } catch {
    return 'unreadable';
  }
}

/** The live process (not this one) holding the store under `dataDir`, if any; a claim left by a process that is gone is ignored. */
export function storeHolder(dataDir: string): Holder | undefined {
  const holder = read(join(dataDir, fileName));
  if (holder === undefined || holder === 'unreadable') return undefined;
  if (!Number.isInteger(holder.pid) || holder.pid === process.pid || !isAlive(holder.pid)) return undefined;
  const started = startOf(holder.pid);
  if (holder.started !== null && started !== null && started !== holder.started) return undefined;
  return holder;
}

/** Whether the claim at `path` is this process's own. */
function holdsIt(path: string): boolean {
  const holder = read(path);
  return holder !== undefined && holder !== 'unreadable' && holder.pid === process.pid;
}

/** A little wait, without the event loop (a claim is made before anything else runs). */
function pause(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

/**
 * Claims the store for this process as `role`: answers what gives it up, or the live process that
 * holds it. A claim left by a process that is gone is taken over.
 */
export function claimStore(dataDir: string, role: Holder['role']): { release: () => void } | { heldBy: Holder } {
  const path = join(dataDir, fileName);
  const mine: Holder = { pid: process.pid, role, started: startOf(process.pid) };
  for (let attempt = 0; attempt < 5; attempt++) {
    try {
      writeFileSync(path, JSON.stringify(mine), { flag: 'wx' });
      return { release: () => holdsIt(path) && rmSync(path, { force: true }) };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
    // Being written by another claimer: read it again in a moment.
    if (read(path) === 'unreadable') pause(50);
    const holder = storeHolder(dataDir);
    if (holder) return { heldBy: holder };
    if (read(path) !== 'unreadable') rmSync(path, { force: true }); // its process is gone
  }
  throw new Error(`${path} could not be claimed; remove it if no service, backup or restore runs`);
}
