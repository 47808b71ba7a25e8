// A Kv that delegates to a real one but can be told to fail writes (disk full, I/O error), to
// hold them (a slow disk) or to lose them silently (a crash: only what was durable before
// remains), for testing what the service does when the store misbehaves.
import type { Kv, KvDb, KvOp } from '../../src/store/kv.ts';

export class FaultyKv implements Kv {
  /** Writes fail with this error while it is set. */
  failWith: Error | null = null;
  /** Writes wait for this promise while it is set. */
  hold: Promise<void> | null = null;
  /** Writes "succeed" without reaching the store while this is set. */
  discardWrites = false;
  writes = 0;

  constructor(readonly inner: Kv) {}

  get kind() {
    return this.inner.kind;
  }

  db(name: string): KvDb {
    return this.inner.db(name);
  }

  async write(ops: readonly KvOp[]): Promise<void> {
    this.writes++;
    if (this.hold) await this.hold;
    if (this.failWith) throw this.failWith;
    if (!this.discardWrites) await this.inner.write(ops);
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
