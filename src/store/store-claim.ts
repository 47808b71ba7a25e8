// Which process has a store directory open, told without opening the store. LMDB as lmdb-js 3.5
// ships it resets the shared count of committed transactions whenever another process opens the
// environment (upstream's ITS#9496, fixed there and not in that copy): a commit the service made
// meanwhile can then be written over, acknowledged writes lost, or the writer crash. So one
// process at a time opens a store: the service while it serves it, or the backup or restore
// command while the service is stopped. Each claims the directory first with `store.pid`
// (created exclusively, so two cannot both claim it, and a claim left by a process that is gone
// is taken over by one claimer at a time); the backup command finding the service there asks it
// for the copy instead (src/cli/backup-requests.ts).
import { existsSync, linkSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const fileName = 'store.pid';
/** Held by the one claimer removing a claim whose process is gone (removeStaleClaim). */
const takeoverName = 'store.pid.takeover';

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
  return liveHolder(join(dataDir, fileName));
}

/** Whether the claim at `path` is this process's own. */
function holdsIt(path: string): boolean {
  const holder = read(path);
  return holder !== undefined && holder !== 'unreadable' && holder.pid === process.pid;
}

/**
 * Creates `path` holding `holder`, unless it exists: written whole beside it first and linked into
 * place, so that no reader ever finds it half written.
 */
function createOnly(path: string, holder: Holder): boolean {
  const scratch = `${path}.${process.pid}.new`;
  writeFileSync(scratch, JSON.stringify(holder));
  try {
    linkSync(scratch, path);
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    return false;
  } finally {
    rmSync(scratch, { force: true });
  }
}

/** The process named in a file, when it is alive and is the process that wrote it. */
function liveHolder(path: string): Holder | undefined {
  const holder = read(path);
  if (holder === undefined || holder === 'unreadable') return undefined;
  if (!Number.isInteger(holder.pid) || holder.pid === process.pid || !isAlive(holder.pid)) return undefined;
  const started = startOf(holder.pid);
  if (holder.started !== null && started !== null && started !== holder.started) return undefined;
  return holder;
}

/**
 * Removes a claim whose process is gone, one claimer at a time. Two claimers that both found it
 * stale would otherwise both remove it, the second removing the claim the first had just made,
 * and both would open the store. So a claimer first creates the takeover marker (exclusively),
 * then looks at the claim again and removes it only if it is still stale: while the marker is
 * held, nobody else removes the claim, and nobody creates one where it stands. Answers the live
 * process taking the store over instead, if another holds the marker.
 */
function removeStaleClaim(dataDir: string, me: Holder): Holder | undefined {
  const path = join(dataDir, fileName);
  const marker = join(dataDir, takeoverName);
  if (!createOnly(marker, me)) {
    const taker = liveHolder(marker);
    if (taker) return taker;
    // Its process stopped part way through a takeover. Which claim it saw is not known, so it is
    // not guessed at: it happens only if a process dies within the microseconds a takeover takes.
    if (existsSync(marker)) throw new Error(`${marker} was left by a process that stopped while it took the store over; remove it and ${path} if no service, backup or restore runs`);
    return undefined;
  }
  try {
    if (existsSync(path) && !liveHolder(path)) rmSync(path);
    return undefined;
  } finally {
    rmSync(marker, { force: true });
  }
}

/**
 * Claims the store for this process as `role`: answers what gives it up, or the live process that
 * holds it (or is taking it over). A claim left by a process that is gone is taken over.
 */
export function claimStore(dataDir: string, role: Holder['role']): { release: () => void } | { heldBy: Holder } {
  const path = join(dataDir, fileName);
  const me: Holder = { pid: process.pid, role, started: startOf(process.pid) };
  for (let attempt = 0; attempt < 5; attempt++) {
    if (createOnly(path, me)) return { release: () => holdsIt(path) && rmSync(path, { force: true }) };
    const holder = storeHolder(dataDir) ?? removeStaleClaim(dataDir, me);
    if (holder) return { heldBy: holder };
  }
  throw new Error(`${path} could not be claimed; remove it if no service, backup or restore runs`);
}
