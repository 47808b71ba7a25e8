// Which process has a store directory open, told without opening the store. LMDB as lmdb-js 3.5
// ships it resets the shared count of committed transactions whenever another process opens the
// environment (upstream's ITS#9496, fixed there and not in that copy): a commit the service made
// meanwhile can then be written over, acknowledged writes lost, or the writer crash. So one
// process at a time opens a store: the service while it serves it, or the backup or restore
// command while the service is stopped; the backup command finding the service there asks it for
// the copy instead (src/cli/backup-requests.ts).
//
// The claim is a lock the kernel keeps: a Unix socket bound to an address named for the store.
// Only one process can bind an address, and the kernel lets it go when that process ends, however
// it ends, so a claim is never left behind by a killed process and never has to be taken over (a
// file claimed exclusively does, and two processes taking one over at once can both end up holding
// it, whatever order of checks they follow). On Linux the address is in the abstract namespace,
// named for the directory (nothing is left on disk); elsewhere it is a socket file in the
// directory, removed when nothing listens on it. Beside it `store.pid` says who holds the store
// (pid, role, start time), for the messages and for the backup command to signal, written by the
// holder once it has the lock. Abstract addresses are per network namespace, so a holder also
// refuses the store when `store.pid` names another live process (one in another namespace).
import { readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { connect, createServer, type Server } from 'node:net';
import { join } from 'node:path';

const infoName = 'store.pid';
/** How long a claimer that found the lock taken waits for its holder to name itself in `store.pid`. */
const holderNamedWithinMs = 3000;

/** Who holds a store: the process, what it is, and when it started (so that a reused pid is not taken for it). */
export interface Holder {
  pid: number;
  role: 'service' | 'backup' | 'restore';
  started: string | null;
  /** The directory it holds (device and inode): a store.pid copied with the directory names another. */
  dir?: string;
}

/** JSON written whole beside `path` and renamed into place: another process reading it never finds half of it. */
export function writeJsonWhole(path: string, value: unknown): void {
  const scratch = `${path}.${process.pid}.new`;
  writeFileSync(scratch, JSON.stringify(value));
  renameSync(scratch, path);
}

/** A directory as the kernel knows it: the same whatever path reaches it, another for a copy. */
function directoryOf(dataDir: string): string {
  const { dev, ino } = statSync(dataDir);
  return `${dev}-${ino}`;
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

/** The live process that `store.pid` under `dataDir` names, if any: what it names of a process that is gone, or of the directory it was copied from, is ignored. */
export function storeHolder(dataDir: string): Holder | undefined {
  let holder: Holder;
  try {
    holder = JSON.parse(readFileSync(join(dataDir, infoName), 'utf8')) as Holder;
  } catch {
    return undefined;
  }
  if (!Number.isInteger(holder.pid) || !isAlive(holder.pid)) return undefined;
  if (holder.dir !== undefined && holder.dir !== directoryOf(dataDir)) return undefined;
  const started = startOf(holder.pid);
  if (holder.started !== null && started !== null && started !== holder.started) return undefined;
  return holder;
}

/**
 * The address of the store's lock: in Linux's abstract namespace, named for the directory itself
 * (its device and inode, whatever path reaches it; a copy of the directory is another store); on
 * other systems a socket file inside it.
 */
export function lockAddress(dataDir: string, platform: NodeJS.Platform = process.platform): string {
  if (platform !== 'linux') return join(dataDir, 'store.lock');
  return `\0overmind-store-${directoryOf(dataDir)}`;
}

/**
 * Claims the store for this process as `role`: answers what gives it up, or the live process that
 * holds it. `address`: the lock's, lockAddress's by default. A lock found taken is tried again
 * while its holder has not named itself yet (it may be giving the store up this moment).
 */
export async function claimStore(dataDir: string, role: Holder['role'], address = lockAddress(dataDir)): Promise<{ release: () => void } | { heldBy: Holder }> {
  const until = Date.now() + holderNamedWithinMs;
  for (;;) {
    const lock = await bindLock(address);
    if (lock) return holding(dataDir, role, lock);
    const holder = storeHolder(dataDir);
    if (holder) return { heldBy: holder };
    if (Date.now() >= until) {
      throw new Error(`the store under ${dataDir} is claimed by a process that has not said which it is (in ${join(dataDir, infoName)}); try again in a moment`);
    }
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/**
 * The lock is this process's: it holds the store unless `store.pid` names another live process,
 * which then holds it without this lock (from another network namespace): the lock is let go.
 */
function holding(dataDir: string, role: Holder['role'], lock: Server): { release: () => void } | { heldBy: Holder } {
  const other = storeHolder(dataDir);
  if (other && other.pid !== process.pid) {
    lock.close();
    return { heldBy: other };
  }
  const info = join(dataDir, infoName);
  writeJsonWhole(info, { pid: process.pid, role, started: startOf(process.pid), dir: directoryOf(dataDir) } satisfies Holder);
  return {
    release: () => {
      rmSync(info, { force: true });
      lock.close();
    },
  };
}

/** Binds the lock, or finds it held (undefined). A socket file nothing listens on is left by a process that ended: removed, and bound again. */
async function bindLock(address: string): Promise<Server | undefined> {
  const bound = await listenOn(address);
  if (bound !== 'in use') return bound;
  if (address.startsWith('\0') || (await someoneListens(address))) return undefined;
  rmSync(address, { force: true });
  const again = await listenOn(address);
  return again === 'in use' ? undefined : again;
}

function listenOn(address: string): Promise<Server | 'in use'> {
  return new Promise((resolve, reject) => {
    // A connection to the lock is only ever a look at whether someone holds it: closed at once.
    const server = createServer((socket) => socket.destroy());
    server.once('error', (error: NodeJS.ErrnoException) => (error.code === 'EADDRINUSE' ? resolve('in use') : reject(error)));
    server.listen({ path: address, exclusive: true }, () => {
      // The lock does not keep the process alive by itself.
      server.unref();
      resolve(server);
    });
  });
}

function someoneListens(path: string): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ path });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}
