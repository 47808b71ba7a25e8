// A Kv that delegates to a real one but can be told to fail writes (disk full, I/O error), to
// hold them (a slow disk) or to lose them silently (a crash: only what was durable before
// remains), for testing what the service does when the store misbehaves. With queueWrites() each
// write waits until the test commits or fails it, oldest first, as LMDB orders its commits.
import type { Kv, KvDb, KvOp, KvRef } from '../../src/store/kv.ts';

interface QueuedWrite {
  ops: readonly KvOp[];
  requires: KvRef | undefined;
  resolve: () => void;
  reject: (error: unknown) => void;
}

export class FaultyKv implements Kv {
  /** Writes fail with this error while it is set. */
  failWith: Error | null = null;
  /** Writes wait for this promise while it is set. */
  hold: Promise<void> | null = null;
  /** Writes "succeed" without reaching the store while this is set. */
  discardWrites = false;
  writes = 0;
  private queue: QueuedWrite[] | null = null;

  constructor(readonly inner: Kv) {}

  get kind() {
    return this.inner.kind;
  }

  db(name: string): KvDb {
    return this.inner.db(name);
  }

  async write(ops: readonly KvOp[], requires?: KvRef): Promise<void> {
    this.writes++;
    if (this.queue) return new Promise((resolve, reject) => this.queue!.push({ ops, requires, resolve, reject }));
    if (this.hold) await this.hold;
    if (this.failWith) throw this.failWith;
    if (!this.discardWrites) await this.inner.write(ops, requires);
  }

  /** From now on every write waits in a queue until settleNext() commits or fails it. */
  queueWrites(): void {
    this.queue ??= [];
  }

  /** Writes waiting in the queue. */
  get queued(): number {
    return this.queue?.length ?? 0;
  }

  /**
   * Commits the oldest queued write to the inner store (which checks what it requires), or fails
   * it with `error`; resolves once the writer has seen the outcome.
   */
  async settleNext(error?: Error): Promise<void> {
    const next = this.queue?.shift();
    if (!next) throw new Error('no write is queued');
    const outcome = error ? Promise.reject(error) : this.inner.write(next.ops, next.requires);
    outcome.then(next.resolve, next.reject);
    await outcome.catch(() => {});
    await new Promise((resolve) => setImmediate(resolve));
  }

  /** Commits every queued write, oldest first, and stops queueing. */
  async settleAll(): Promise<void> {
    while (this.queued > 0) await this.settleNext();
    this.queue = null;
  }

  /** Holds writes until the returned function is called. */
  holdWrites(): () => void {
    let release!: () => void;
    this.hold = new Promise((resolve) => (release = resolve));
    return () => {
      this.hold = null;
      release();
    };
  }

  stats() {
    return this.inner.stats();
  }

  releaseRecoveryPages(): Promise<void> {
    return this.inner.releaseRecoveryPages();
  }

  backup(path: string): Promise<void> {
    return this.inner.backup(path);
  }

  close(): Promise<void> {
    return this.inner.close();
  }
}
