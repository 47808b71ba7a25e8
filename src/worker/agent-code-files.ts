// The file each command finds its iteration's agent_code in (OVERMIND_AGENT_CODE_FILE): one file
// per iteration, written once and shared by the tasks running it, in a private temporary folder
// (0700, files 0600: agent code can hold secrets) that close() removes. Files no task uses are
// kept for the next task of their iteration, up to `idleFilesMax`, the oldest removed first.
import { mkdtempSync, rmSync } from 'node:fs';
import { rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

interface CodeFile {
  path: string;
  /** Tasks using it now. */
  users: number;
  written: Promise<void>;
}

export class AgentCodeFiles {
  private dir: string | undefined;
  private readonly files = new Map<string, CodeFile>();
  /** Iterations whose file no task uses, oldest first. */
  private readonly idle = new Set<string>();
  private made = 0;

  constructor(private readonly idleFilesMax = 32) {}

  /** The path of the iteration's file, written if need be; release() it once the task is done. */
  async acquire(iteration: { id: string | null; agent_code: string | null }): Promise<string> {
    const key = iteration.id ?? '';
    let file = this.files.get(key);
    if (!file) {
      this.dir ??= mkdtempSync(join(tmpdir(), 'overmind-worker-'));
      const path = join(this.dir, `iteration-${++this.made}.code`);
      file = { path, users: 0, written: writeFile(path, iteration.agent_code ?? '', { mode: 0o600 }) };
      this.files.set(key, file);
    }
    file.users++;
    this.idle.delete(key);
    try {
      await file.written;
    } catch (error) {
      // Not written (a full disk, say): the next task of the iteration tries again.
      file.users--;
      if (this.files.get(key) === file) this.files.delete(key);
      throw error;
    }
    return file.path;
  }

  release(iteration: { id: string | null }): void {
    const key = iteration.id ?? '';
    const file = this.files.get(key);
    if (!file || --file.users > 0) return;
    this.idle.add(key);
    if (this.idle.size <= this.idleFilesMax) return;
    const [oldest] = this.idle;
    this.idle.delete(oldest!);
    const gone = this.files.get(oldest!)!;
    this.files.delete(oldest!);
    void gone.written.then(() => rm(gone.path, { force: true }));
  }

  /** Removes every file and the folder (at once: the worker is ending). */
  close(): void {
    if (this.dir) rmSync(this.dir, { recursive: true, force: true });
    this.dir = undefined;
    this.files.clear();
    this.idle.clear();
  }
}
