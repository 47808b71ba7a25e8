// An actor: one stream's state, a bounded mailbox, and the loop that decides messages one at a
// time, in order. Messages waiting together are decided one after another against the evolving
// working state and written in one commit (group commit).
//
// The actor is pipelined: while a commit is in flight it goes on deciding the messages that
// arrive. They join one open batch, whose write waits behind the commit in flight (the store
// applies writes in order) and takes every message decided until the store begins its
// transaction: as many messages share a commit as without pipelining, and the store never waits
// for the actor. Each message is answered only once its own commit and every one before it are
// durable and the read model has their events, so readers see committed state only. When a
// commit fails, every batch decided after it fails too (its write requires the entry of the one
// it builds on, so it cannot land either) and, once they have all settled, the working state is
// reloaded from the store: nothing acknowledged is lost, nothing unacknowledged visible.
import assert from 'node:assert/strict';
import type { Limits } from '../config.ts';
import { Rejected } from '../domain/rejection.ts';
import { RequiredKeyMissing, type KvOp, type KvRef, type LateWrite } from '../store/kv.ts';
import { StoreCorruptError, type Journal, type RecoveredStream, type StreamRef } from '../store/journal.ts';
import { Unavailable } from '../unavailable.ts';
import type { ActorKind, JsonText } from './actor-kind.ts';
import { SerialQueue } from './serial-queue.ts';
import { StreamCursor } from './stream-cursor.ts';
import type { UniqueClaims } from './unique-claims.ts';


export interface ActorEnvironment {
  journal: Journal;
  claims: UniqueClaims;
  /**
   * The configured limits: the actor reads mailboxDepthMax, commitBatchMax, commitsInFlightMax and
   * snapshotEvery; its decider reads those of its kind.
   */
  limits: Readonly<Limits>;
  /** Committed events of one message, in commit order, for the read model. */
  committed(kind: string, id: string, events: readonly unknown[]): void;
  /**
   * Ops of other stores that these events write in their own commit (a run's completed tasks
   * write their result rows there): made when the commit's transaction begins.
   */
  alongside?(kind: string, id: string, events: readonly unknown[]): KvOp[];
  /**
   * Events just decided for one message, not yet durable (the runs' dispatch queues the leases a
   * new run's tasks can go to, so that they join its commit while it is still open). Work it
   * queues on this actor lands behind the message, and fails with it if its commit fails.
   */
  decided?(kind: string, id: string, events: readonly unknown[]): void;
  /** The stream ended (its record was deleted) and its actor must be forgotten. */
  ended(kind: string, id: string): void;
  /** Every commit's outcome, for health reporting. */
  storeOutcome(ok: boolean, error?: unknown): void;
  /** A commit of this kind's messages begins, carrying `messages` of them (how well commits batch: metrics). */
  commitBegun?(kind: string, messages: number): void;
  /** JSON text of immutable values, shared with the responses that send them. */
  jsonText: JsonText;
}

type Ask<Command, Event> = {
  tag: 'ask';
  command: Command;
  resolve: (events: readonly Event[]) => void;
  reject: (error: unknown) => void;
};
type Exclusive = { tag: 'exclusive'; run: () => Promise<void> };
/** What the mailbox holds: a command to decide, or work to run alone. */
type Message<Command, Event> = Ask<Command, Event> | Exclusive;

/**
 * One message of a batch: applied to the working state (its events, maybe none, and the claim
 * keys its state holds, one hold each), or refused (answered once everything before it is durable).
 */
type Decided<Command, Event> =
  | { ask: Ask<Command, Event> | undefined; events: readonly Event[]; claims: readonly string[] }
  | { ask: Ask<Command, Event>; refusal: unknown };

/** Messages decided together and written in one commit. */
interface Batch<Command, Event> {
  messages: Decided<Command, Event>[];
  /** The stream's seq once this batch is durable (known once sealed). */
  seq: number;
  /** The stream ends with this batch (its record was deleted). */
  gone: boolean;
  /** Applying an event failed while deciding for this batch: it writes nothing and fails. */
  corrupted?: unknown;
  /** Resolves once the store has begun its transaction (or it failed before): a full batch is waited for so. */
  sealed?: { promise: Promise<void>; resolve: () => void };
}

type Outcome = { ok: true } | { ok: false; error: unknown };

/** What one actor contributes to a commit, and what to do once the commit is durable or failed. */
export interface StagedWrite {
  ops: KvOp[];
  finish(): void;
  abandon(error: unknown): void;
}

/** What the registry needs of any actor, whatever its kind. */
export interface StreamActor {
  readonly id: string;
  readonly stream: StreamRef;
  readonly depth: number;
  exclusive<T>(work: () => Promise<T>): Promise<T>;
  end(): StagedWrite;
  snapshotNow(): StagedWrite | undefined;
  stop(): Promise<void>;
  takeClaims(): void;
}

export class Actor<State, Command, Event> implements StreamActor {
  readonly stream: StreamRef;
  /** The working state, with every decided batch applied (committed or not). */
  private state: State;
  /** The seq, snapshot, covered entries and stored parts of the working state, as the commits started make them. */
  private cursor: StreamCursor;
  /** The seq the store holds: that of the last commit that was durable. */
  private durableSeq: number;
  /** Claim keys of the durable state, one hold each. */
  private durableClaims: readonly string[] = [];
  /** Settlements of the batches started and not yet settled, oldest first. */
  private readonly inFlight: Promise<void>[] = [];
  /** The newest batch, until the store begins its transaction: newly decided messages join it. */
  private open: Batch<Command, Event> | undefined;
  /** The journal entry the newest sealed batch in flight appends: the next one requires it. */
  private newestEntry: KvRef | undefined;
  /** A commit in flight rewrites the stream (a snapshot, or its end): nothing starts behind it. */
  private rewriting = false;
  /** A batch in flight failed: those behind it fail too, then the state reloads. */
  private failed = false;
  private readonly mailbox = new SerialQueue<Message<Command, Event>>((waiting) => this.handleNext(waiting));

  constructor(
    readonly kind: ActorKind<State, Command, Event>,
    readonly id: string,
    private readonly env: ActorEnvironment,
    recovered?: RecoveredStream,
  ) {
    this.stream = { kind: kind.name, id };
    const loaded = this.load(recovered);
    this.state = loaded.state;
    this.cursor = loaded.cursor;
    this.durableSeq = loaded.cursor.seq;
  }

  /** The working state: for the actor itself, its joint operations, and recovery only. */
  get current(): State {
    return this.state;
  }

  /** Messages waiting to be decided. */
  get depth(): number {
    return this.mailbox.items.length;
  }

  /** True while nothing was ever committed for this stream (a create that was refused). */
  get isEmpty(): boolean {
    return this.durableSeq === 0;
  }

  /** Sends a command; resolves with its events once they are durable and readable. */
  ask(command: Command): Promise<readonly Event[]> {
    return new Promise((resolve, reject) => {
      this.enqueue({ tag: 'ask', command, resolve, reject });
    });
  }

  /**
   * Runs `work` once every earlier message is committed, holding later ones until it settles.
   * Joint operations over several actors nest these in one global order, so they cannot deadlock.
   */
  exclusive<T>(work: () => Promise<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.enqueue({ tag: 'exclusive', run: () => work().then(resolve, reject) });
    });
  }

  /** Decides without applying (inside `exclusive` only). */
  decide(command: Command): readonly Event[] {
    return this.kind.decider.decide(this.state, command, this.env.limits);
  }

  /**
   * Applies decided events in memory (inside `exclusive` only) and returns the ops that make
   * them durable; the caller commits them and then calls finish(), or abandon() on failure.
   */
  stage(events: readonly Event[]): StagedWrite {
    const batch: Batch<Command, Event> = { messages: [this.apply(undefined, events)], seq: this.cursor.seq, gone: false };
    const { ops } = this.commitOf(batch);
    return {
      ops,
      finish: () => this.finish(batch),
      abandon: (error) => {
        this.fail(batch, error);
        this.reload();
      },
    };
  }

  /**
   * Snapshot ops for this actor if anything was journaled since its last snapshot (once stopped),
   * removing every entry it covers: a stopped store is left as compact as it can be.
   */
  snapshotNow(): StagedWrite | undefined {
    if (this.cursor.sinceSnapshot === 0 || this.kind.decider.isGone(this.state)) return undefined;
    const { seq } = this.cursor;
    const snapshot = this.snapshotOps(seq, seq, Infinity);
    return { ops: snapshot.ops, finish: snapshot.done, abandon: () => {} };
  }

  /**
   * Ops removing this whole stream (inside `exclusive` only): a project deletion ends every stream
   * in the project in the same commit as the project's own.
   */
  end(): StagedWrite {
    const { removedThrough, seq, storedParts } = this.cursor;
    const ops = this.env.journal.dropOps(this.stream, removedThrough, seq, storedParts);
    return {
      ops,
      finish: () => {
        this.mailbox.refuse();
        this.releaseHolds(this.durableClaims);
        this.durableClaims = [];
        this.env.ended(this.kind.name, this.id);
      },
      abandon: () => {},
    };
  }

  /** Takes the unique claims of the recovered state. */
  takeClaims(): void {
    this.durableClaims = this.kind.claimsOf(this.state).map((claim) => claim.key);
    for (const key of this.durableClaims) this.env.claims.take(key, this.claimOwner);
  }

  /** Refuses new messages and resolves once the queued ones are done and durable (graceful shutdown). */
  async stop(): Promise<void> {
    await this.mailbox.stop();
    await this.settled();
  }

  private enqueue(message: Message<Command, Event>): void {
    if (!this.mailbox.isStopped && this.mailbox.items.length >= this.env.limits.mailboxDepthMax) throw new Unavailable('queue_full', 1);
    this.mailbox.push(message);
  }

  /**
   * An exclusive operation runs alone, once every commit in flight has settled. Asks waiting
   * together are decided and join the open batch while it has room, or start one behind those in
   * flight.
   */
  private async handleNext(waiting: Message<Command, Event>[]): Promise<void> {
    const head = waiting[0]!;
    if (head.tag === 'exclusive') {
      waiting.shift();
      await this.settled();
      await head.run();
      return;
    }
    const open = this.open && this.open.messages.length < this.env.limits.commitBatchMax ? this.open : undefined;
    if (!open) await this.roomToCommit();
    const { messages, corrupted } = this.decideBatch(this.takeBatch(this.env.limits.commitBatchMax - (open?.messages.length ?? 0)));
    if (open) {
      open.messages.push(...messages);
      open.corrupted ??= corrupted;
    } else {
      this.start({ messages, seq: this.cursor.seq, gone: false, corrupted });
    }
    // Applying an event failed: the working state can no longer be trusted. Its batch writes
    // nothing and fails behind the commits in flight; nothing more is decided until the reload.
    if (corrupted !== undefined) await this.settled();
  }

  private takeBatch(count: number): Ask<Command, Event>[] {
    const batch: Ask<Command, Event>[] = [];
    const waiting = this.mailbox.items;
    while (batch.length < count && waiting[0]?.tag === 'ask') {
      batch.push(waiting.shift() as Ask<Command, Event>);
    }
    return batch;
  }

  /** Waits until a batch may start: fewer than the bound in flight, none rewriting or failed. */
  private async roomToCommit(): Promise<void> {
    for (;;) {
      // A full batch the store has not begun: it is written from the state as it is when it
      // begins (its snapshot, whether the stream ends), so nothing more may be decided before.
      if (this.open) await this.open.sealed!.promise;
      else if (this.inFlight.length > 0 && (this.inFlight.length >= this.env.limits.commitsInFlightMax || this.rewriting || this.failed)) await this.inFlight[0];
      else return;
    }
  }

  /** Resolves once every batch started so far has settled (and the state has reloaded if one failed). */
  private async settled(): Promise<void> {
    while (this.inFlight.length > 0) await this.inFlight.at(-1);
  }

  /**
   * Decides each message against the working state, applying what it causes. A refused message
   * never affects the others; a failure to apply an event stops the batch (`corrupted`), its
   * message answered with that error and the rest to fail with the batch.
   */
  private decideBatch(asks: Ask<Command, Event>[]): { messages: Decided<Command, Event>[]; corrupted?: unknown } {
    const messages: Decided<Command, Event>[] = [];
    for (const [index, ask] of asks.entries()) {
      let events: readonly Event[];
      try {
        events = this.kind.decider.decide(this.state, ask.command, this.env.limits);
      } catch (refusal) {
        messages.push({ ask, refusal });
        continue;
      }
      try {
        messages.push(this.apply(ask, events));
      } catch (error) {
        if (error instanceof Rejected) {
          messages.push({ ask, refusal: error });
          continue;
        }
        ask.reject(error);
        const unanswered = asks.slice(index + 1).map((later) => ({ ask: later, refusal: undefined }));
        return { messages: [...messages, ...unanswered], corrupted: error };
      }
      if (events.length > 0) this.env.decided?.(this.kind.name, this.id, events);
    }
    return { messages };
  }

  /**
   * Takes a hold on every unique claim the state will hold after `events` (refusing, with nothing
   * changed, on a clash), then evolves the working state.
   */
  private apply(ask: Ask<Command, Event> | undefined, events: readonly Event[]): Decided<Command, Event> {
    const claims = this.kind.claimsAfter(this.state, events);
    const held: string[] = [];
    for (const claim of claims) {
      if (!this.env.claims.take(claim.key, this.claimOwner)) {
        this.releaseHolds(held);
        throw claim.refusal();
      }
      held.push(claim.key);
    }
    try {
      for (const event of events) {
        if (!this.isEvent(event)) assert.fail(`${this.kind.name} decided an event of no known type`);
        this.state = this.kind.decider.evolve(this.state, event);
      }
    } catch (error) {
      this.releaseHolds(held);
      throw error;
    }
    return { ask, events, claims: held };
  }

  /**
   * Puts a batch in flight: it settles once its write has and every batch before it has settled.
   * Its write is made when the store begins it (`seal`), so it stays open until then; a batch with
   * nothing to write and nothing before it in flight settles at once.
   */
  private start(batch: Batch<Command, Event>): void {
    const eventful = batch.messages.some((message) => 'events' in message && message.events.length > 0);
    const stored = batch.corrupted === undefined && (eventful || this.inFlight.length > 0);
    if (stored) {
      let resolve!: () => void;
      batch.sealed = { promise: new Promise<void>((done) => (resolve = done)), resolve };
      this.open = batch;
    }
    const written = stored ? this.write(() => this.seal(batch)) : Promise.resolve<Outcome>({ ok: true });
    const previous = this.inFlight.at(-1);
    const outcome = previous ? previous.then(() => written) : written;
    this.inFlight.push(outcome.then((settled) => this.settle(batch, settled)));
  }

  /**
   * The store begins the batch's transaction: no message joins it any more, and its ops are made.
   * It requires the entry the newest batch before it appends; nothing starts behind a rewrite.
   */
  private seal(batch: Batch<Command, Event>): LateWrite {
    this.closeOpen(batch);
    if (batch.corrupted !== undefined) return { ops: [] };
    const requires = this.newestEntry;
    const { ops, appended } = this.commitOf(batch);
    if (ops.length > 0) this.env.commitBegun?.(this.kind.name, batch.messages.length);
    if (appended) this.newestEntry = appended;
    else if (ops.length > 0) this.rewriting = true;
    return { ops, requires };
  }

  private write(late: () => LateWrite): Promise<Outcome> {
    return this.env.journal.kv.write(late).then(
      (): Outcome => {
        this.env.storeOutcome(true);
        return { ok: true };
      },
      (error: unknown): Outcome => {
        // A missing requirement is the consequence of an earlier failure, already reported.
        if (!(error instanceof RequiredKeyMissing)) this.env.storeOutcome(false, error);
        return { ok: false, error };
      },
    );
  }

  /** The batch takes no more messages: the store began it, or it failed first. */
  private closeOpen(batch: Batch<Command, Event>): void {
    if (this.open !== batch) return;
    this.open = undefined;
    batch.sealed!.resolve();
  }

  /** The oldest batch in flight has its outcome: answer it, and reload once a failure has drained. */
  private settle(batch: Batch<Command, Event>, outcome: Outcome): void {
    this.inFlight.shift();
    this.closeOpen(batch); // it failed before the store began it
    if (outcome.ok && !this.failed && batch.corrupted === undefined) {
      this.finish(batch);
    } else {
      this.failed = true;
      this.fail(batch, batch.corrupted ?? (outcome.ok ? undefined : outcome.error));
    }
    if (this.inFlight.length > 0) return;
    this.newestEntry = undefined;
    this.rewriting = false;
    if (this.failed) {
      this.failed = false;
      this.reload();
    }
  }

  /** The batch is durable: the read model takes its events, claims follow, then the replies. */
  private finish(batch: Batch<Command, Event>): void {
    const eventful = batch.messages.filter((message) => 'events' in message && message.events.length > 0).length;
    assert.equal(batch.seq, this.durableSeq + eventful, 'a commit advances the stream by its eventful messages');
    this.durableSeq = batch.seq;
    for (const message of batch.messages) {
      if (!('events' in message)) continue;
      this.releaseHolds(this.durableClaims);
      this.durableClaims = message.claims;
      if (message.events.length > 0) this.env.committed(this.kind.name, this.id, message.events);
    }
    if (batch.gone) {
      this.mailbox.refuse();
      this.env.ended(this.kind.name, this.id);
    }
    for (const message of batch.messages) {
      if ('events' in message) message.ask?.resolve(message.events);
      else message.ask.reject(message.refusal);
    }
  }

  /** The batch failed, or follows one that did: its holds are released and every message fails. */
  private fail(batch: Batch<Command, Event>, error: unknown): void {
    const unavailable = error instanceof Unavailable ? error : new Unavailable('store_failed', 1);
    for (const message of batch.messages) {
      if ('claims' in message) this.releaseHolds(message.claims);
      message.ask?.reject(unavailable);
    }
  }

  /**
   * The ops that make a batch durable (its seq and whether the stream ends with it are set), and
   * the working seq, snapshot and parts they lead to: journal entries, or a snapshot (after
   * `snapshotEvery` entries, or half as many as the state holds items when that is more), or the
   * stream's removal. `appended` is the last entry written, if the ops append. Entries a snapshot
   * covers go at most `journalRemovalsPerCommitMax` per commit, from the snapshot's own on.
   */
  private commitOf(batch: Batch<Command, Event>): { ops: KvOp[]; appended?: KvRef } {
    const eventful = batch.messages.flatMap((message) => ('events' in message && message.events.length > 0 ? [message.events] : []));
    const { cursor } = this;
    const previousSeq = cursor.advance(eventful.length);
    batch.seq = cursor.seq;
    batch.gone = eventful.length > 0 && this.kind.decider.isGone(this.state);
    if (eventful.length === 0) return { ops: [] };
    if (batch.gone) return { ops: this.env.journal.dropOps(this.stream, cursor.removedThrough, previousSeq, cursor.storedParts) };
    const removalsMax = this.env.limits.journalRemovalsPerCommitMax;
    if (cursor.sinceSnapshot >= Math.max(this.env.limits.snapshotEvery, this.kind.snapshotItems(this.state) / 2)) {
      const snapshot = this.snapshotOps(cursor.seq, previousSeq, removalsMax);
      snapshot.done();
      return { ops: [...snapshot.ops, ...this.alongside(eventful)] };
    }
    const { eventCodec } = this.kind;
    const ops = eventful.map((events, index) =>
      this.env.journal.appendOp(
        this.stream,
        previousSeq + index + 1,
        eventCodec ? events.map((event) => eventCodec.encode(event, this.env.jsonText)) : events,
      ),
    );
    const appended = ops.at(-1);
    ops.push(...this.coveredRemovalOps(removalsMax));
    ops.push(...this.alongside(eventful));
    return { ops, appended };
  }

  /** What other stores write with these messages' events, in the same commit. */
  private alongside(eventful: readonly (readonly Event[])[]): KvOp[] {
    const { alongside } = this.env;
    if (!alongside) return [];
    return eventful.flatMap((events) => alongside(this.kind.name, this.id, events));
  }

  /** Ops removing up to `removalsMax` of the covered entries still stored, oldest first. */
  private coveredRemovalOps(removalsMax: number): KvOp[] {
    const removal = this.cursor.removeCovered(removalsMax);
    return removal ? this.env.journal.removalOps(this.stream, removal.after, removal.through) : [];
  }

  /**
   * Ops writing a snapshot at `seq` of the working state, which covers the entries journaled
   * through `journaledSeq`, with its parts and the removal of up to `removalsMax` covered entries;
   * `done` records them as written.
   */
  private snapshotOps(seq: number, journaledSeq: number, removalsMax: number): { ops: KvOp[]; done: () => void } {
    const removal = this.cursor.snapshotRemoval(seq, journaledSeq, removalsMax);
    const encoded = this.kind.codec.encode(this.state, this.cursor.storedParts, this.env.jsonText);
    const ops = [this.env.journal.snapshotOp(this.stream, seq, encoded.value)];
    for (const [part, value] of encoded.newParts) ops.push(this.env.journal.partOp(this.stream, part, value));
    for (const part of encoded.staleParts) ops.push(this.env.journal.partOp(this.stream, part, undefined));
    ops.push(...this.env.journal.removalOps(this.stream, removal.after, removal.through));
    return { ops, done: () => this.cursor.snapshotWritten(seq, journaledSeq, removal.through, encoded) };
  }

  private isEvent(event: unknown): boolean {
    const type = (event as { type?: unknown } | null)?.type;
    return typeof type === 'string' && Object.hasOwn(this.kind.eventTypes, type);
  }

  private get claimOwner(): string {
    return `${this.kind.name}:${this.id}`;
  }

  private releaseHolds(keys: readonly string[]): void {
    for (const key of keys) this.env.claims.release(key, this.claimOwner);
  }

  /**
   * Rebuilds the working state from the store once nothing is in flight: exactly what was
   * acknowledged, nothing more (the claims of the durable state are still held).
   */
  private reload(): void {
    const loaded = this.load(this.env.journal.loadStream(this.stream));
    assert.equal(loaded.cursor.seq, this.durableSeq, 'the store holds exactly the commits acknowledged');
    this.state = loaded.state;
    this.cursor = loaded.cursor;
    assert.deepEqual(this.kind.claimsOf(this.state).map((claim) => claim.key), this.durableClaims, 'the durable state holds its claims');
  }

  private load(stream: RecoveredStream | undefined): { state: State; cursor: StreamCursor } {
    const { decider, codec } = this.kind;
    let state = decider.initialState();
    let storedParts = new Set<string>();
    if (stream?.snapshot) {
      const decoded = codec.decode(stream.snapshot.state, (part) => this.env.journal.readPart(this.stream, part));
      state = decoded.state;
      storedParts = decoded.storedParts;
    }
    for (const entry of stream?.entries ?? []) {
      for (const stored of entry.events) {
        const event = this.kind.eventCodec ? this.kind.eventCodec.decode(stored) : (stored as Event);
        if (!this.isEvent(event)) throw new StoreCorruptError(`${this.kind.name} ${this.id} holds an event of no known type at ${entry.seq}`);
        state = decider.evolve(state, event);
      }
    }
    return { state, cursor: StreamCursor.loaded(stream, storedParts) };
  }
}
