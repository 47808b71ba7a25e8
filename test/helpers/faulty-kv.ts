// A Kv that delegates to a real one but can be told to fail writes (disk full, I/O error), to
// hold them (a slow disk) or to lose them silently (a crash: only what was durable before
// remains), for testing what the service does when the store misbehaves. As LMDB does, it makes
// one write at a time, in order, and a write's late ops are made when its turn comes. With
// queueWrites(), each write then waits until the test commits or fails it (settleNext).
import type { Kv, KvDb, KvOp, LateWrite, ValueCodec } from '../../src/store/kv.ts';

export class FaultyKv implements Kv {
  /** Writes fail with this error while it is set. */
  failWith: Error | null = null;
  /** Writes wait for this promise while it is set. */
  hold: Promise<void> | null = null;
  /** Writes "succeed" without reaching the store while this is set. */
  discardWrites = false;
  writes = 0;
  /** Writes made and not settled yet. */
  private unsettled = 0;
  private previous: Promise<unknown> = Promise.resolve();
  /** While queueing: how the test decides the outcome of the write whose turn it is. */
  private outcomes: ((error?: Error) => void)[] | null = null;

  constructor(readonly inner: Kv) {}

  get kind() {
    return this.inner.kind;
  }

  db(name: string, codec?: ValueCodec): KvDb {
    return this.inner.db(name, codec);
  }

  write(late: readonly KvOp[] | (() => LateWrite)): Promise<void> {
    this.writes++;
    this.unsettled++;
    const written = this.previous.then(() => this.perform(late)).finally(() => this.unsettled--);
    this.previous = written.catch(() => {});
    return written;
  }

  /** From now on every write waits, once its turn has come, until settleNext() commits or fails it. */
  queueWrites(): void {
    this.outcomes ??= [];
  }

  /** Writes made and not settled yet (while queueing: waiting for settleNext). */
  get queued(): number {
    return this.unsettled;
  }

  /**
   * Commits the oldest unsettled write to the inner store (which checks what it requires), or
   * fails it with `error`; resolves once the writer has seen the outcome.
   */
  async settleNext(error?: Error): Promise<void> {
    if (!this.outcomes || this.unsettled === 0) throw new Error('no write is queued');
    while (this.outcomes.length === 0) await nextTurn();
    this.outcomes.shift()!(error);
    await nextTurn();
  }

  /** Commits every queued write, oldest first, and stops queueing. */
  async settleAll(): Promise<void> {
    while (this.unsettled > 0) await this.settleNext();
    this.outcomes = null;
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

  /** The write's turn: its transaction begins (late ops are made), then it commits or fails. */
  private async perform(late: readonly KvOp[] | (() => LateWrite)): Promise<void> {
    const write = typeof late === 'function' ? late() : { ops: late };
    if (this.outcomes) {
      const error = await new Promise<Error | undefined>((decide) => this.outcomes!.push(decide));
      if (error) throw error;
    }
    if (this.hold) await this.hold;
    if (this.failWith) throw this.failWith;
    if (!this.discardWrites) await this.inner.write(() => write);
  }
}

function nextTurn(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}
