// Which process serves a store directory, told without opening the store. LMDB as lmdb-js 3.5
// ships it resets the shared count of committed transactions whenever another process opens the
// environment (upstream's ITS#9496, fixed there and not in that copy): a commit the service made
// meanwhile can then be written over, acknowledged writes lost, or the writer crash. So nothing
// but the service opens a store it serves: it names itself in `service.pid` under DATA_DIR, and
// the backup and restore commands read that file instead of opening the store (a backup is then
// taken by the service itself, src/cli/backup-requests.ts).
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const fileName = 'service.pid';

/** What the file says: the process, and when it started (so that a reused pid is not taken for it). */
interface Marker {
  pid: number;
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

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** The live process (not this one) serving the store under `dataDir`, if any; a marker left by a process that is gone is ignored. */
export function servingProcess(dataDir: string): number | undefined {
  const path = join(dataDir, fileName);
  if (!existsSync(path)) return undefined;
  let marker: Marker;
  try {
    marker = JSON.parse(readFileSync(path, 'utf8')) as Marker;
  } catch {
    return undefined; // being written, or not ours: nothing serves from it yet
  }
  if (!Number.isInteger(marker.pid) || marker.pid === process.pid || !isAlive(marker.pid)) return undefined;
  if (marker.started !== null && startOf(marker.pid) !== null && startOf(marker.pid) !== marker.started) return undefined;
  return marker.pid;
}

/** Names this process as the store's; answers what takes the name back (at a clean stop). */
export function markServing(dataDir: string): () => void {
  const path = join(dataDir, fileName);
  writeFileSync(path, JSON.stringify({ pid: process.pid, started: startOf(process.pid) } satisfies Marker));
  return () => {
    if (servingProcessOf(path) === process.pid) rmSync(path, { force: true });
  };
}

function servingProcessOf(path: string): number | undefined {
  try {
    return (JSON.parse(readFileSync(path, 'utf8')) as Marker).pid;
  } catch {
    return undefined;
  }
}
