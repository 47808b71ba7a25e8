// An actor: one stream's state, a bounded mailbox, and the loop that decides messages one at a
// time, in order. Messages waiting together are decided one after another against the evolving
// state and written in one commit (group commit), so a hot actor is not capped at one fsync per
// message. Replies go out only after that commit is durable and the read model has the events;
// when the commit fails every message of it fails and the state is reloaded from the store, so
// memory never runs ahead of disk.
import { Rejected } from '../domain/rejection.ts';
import type { KvOp } from '../store/kv.ts';
import type { Journal, RecoveredStream, StreamRef } from '../store/journal.ts';
import { ActorUnavailable } from './actor-unavailable.ts';
import type { ActorKind, JsonText } from './kind.ts';
import { SerialQueue } from './serial-queue.ts';
import type { UniqueClaims } from './unique-claims.ts';

export { ActorUnavailable } from './actor-unavailable.ts';

export interface ActorEnvironment {
  journal: Journal;
  claims: UniqueClaims;
  mailboxDepthMax: number;
  commitBatchMax: number;
  snapshotEvery: number;
  /** Committed events of one message, in commit order, for the read model. */
  committed(kind: string, id: string, events: readonly unknown[]): void;
  /** The stream ended (its record was deleted) and its actor must be forgotten. */
  ended(kind: string, id: string): void;
  /** Every commit's outcome, for health reporting. */
  storeOutcome(ok: boolean, error?: unknown): void;
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
type Envelope<Command, Event> = Ask<Command, Event> | Exclusive;

/** A message decided and applied in memory, waiting for its commit. */
interface Applied<Command, Event> {
  ask: Ask<Command, Event> | undefined;
  events: readonly Event[];
  taken: string[];
  released: string[];
}

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
  private state: State;
  private seq: number;
  private snapshotSeq: number;
  private storedParts: Set<string>;
  private readonly mailbox = new SerialQueue<Envelope<Command, Event>>((waiting) => this.handleNext(waiting));

  constructor(
    readonly kind: ActorKind<State, Command, Event>,
    readonly id: string,
    private readonly env: ActorEnvironment,
    recovered?: RecoveredStream,
  ) {
    this.stream = { kind: kind.name, id };
    const loaded = this.load(recovered);
    this.state = loaded.state;
    this.seq = loaded.seq;
    this.snapshotSeq = loaded.snapshotSeq;
    this.storedParts = loaded.storedParts;
  }

  /** The working state: for the actor itself, its joint operations, and recovery only. */
  get current(): State {
    return this.state;
  }

  get depth(): number {
    return this.mailbox.items.length;
  }

  /** True while nothing was ever committed for this stream (a create that was refused). */
  get isEmpty(): boolean {
    return this.seq === 0 && this.snapshotSeq === 0;
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
    return this.kind.decider.decide(this.state, command);
  }

  /**
   * Applies decided events in memory (inside `exclusive` only) and returns the ops that make
   * them durable; the caller commits them and then calls finish(), or abandon() on failure.
   */
  stage(events: readonly Event[]): StagedWrite {
    return this.stageApplied([this.apply(undefined, events)]);
  }

  /** Snapshot ops for this actor if anything was journaled since its last snapshot. */
  snapshotNow(): StagedWrite | undefined {
    if (this.seq === this.snapshotSeq || this.kind.decider.isGone(this.state)) return undefined;
    const snapshot = this.snapshotOps(this.seq);
    return { ops: snapshot.ops, finish: snapshot.done, abandon: () => {} };
  }

  /**
   * Ops removing this whole stream (inside `exclusive` only): a project deletion ends every stream
   * in the project in the same commit as the project's own.
   */
  end(): StagedWrite {
    const ops = this.env.journal.dropOps(this.stream, this.snapshotSeq, this.seq, this.storedParts);
    return {
      ops,
      finish: () => {
        this.mailbox.refuse();
        for (const claim of this.kind.claimsOf(this.state)) this.env.claims.release(claim.key, this.claimOwner);
        this.env.ended(this.kind.name, this.id);
      },
      abandon: () => {},
    };
  }

  /** Takes the unique claims of the current state (after recovery or a reload). */
  takeClaims(): void {
    for (const claim of this.kind.claimsOf(this.state)) this.env.claims.take(claim.key, this.claimOwner);
  }

  /** Refuses new messages and resolves once the queued ones are done (graceful shutdown). */
  stop(): Promise<void> {
    return this.mailbox.stop();
  }

  private enqueue(envelope: Envelope<Command, Event>): void {
    if (!this.mailbox.isStopped && this.mailbox.items.length >= this.env.mailboxDepthMax) throw new ActorUnavailable('mailbox_full', 1);
    this.mailbox.push(envelope);
  }

  /** An exclusive operation runs alone; asks waiting together are decided and committed together. */
  private async handleNext(waiting: Envelope<Command, Event>[]): Promise<void> {
    const head = waiting[0]!;
    if (head.tag === 'exclusive') {
      waiting.shift();
      await head.run();
    } else {
      await this.processBatch(this.takeBatch());
    }
  }

  private takeBatch(): Ask<Command, Event>[] {
    const batch: Ask<Command, Event>[] = [];
    const waiting = this.mailbox.items;
    while (batch.length < this.env.commitBatchMax && waiting[0]?.tag === 'ask') {
      batch.push(waiting.shift() as Ask<Command, Event>);
    }
    return batch;
  }

  private async processBatch(batch: Ask<Command, Event>[]): Promise<void> {
    const applied: Applied<Command, Event>[] = [];
    for (const ask of batch) {
      let events: readonly Event[];
      try {
        events = this.kind.decider.decide(this.state, ask.command);
      } catch (error) {
        ask.reject(error); // a refused message never affects the others
        continue;
      }
      try {
        applied.push(this.apply(ask, events));
      } catch (error) {
        if (error instanceof Rejected) {
          ask.reject(error);
          continue;
        }
        // evolve itself failed: the working state can no longer be trusted.
        ask.reject(error);
        this.stageApplied(applied).abandon(error);
        return;
      }
    }
    if (applied.length === 0) return;
    const staged = this.stageApplied(applied);
    if (staged.ops.length > 0) {
      try {
        await this.env.journal.kv.write(staged.ops);
      } catch (error) {
        this.env.storeOutcome(false, error);
        staged.abandon(error);
        return;
      }
      this.env.storeOutcome(true);
    }
    staged.finish();
  }

  /**
   * Takes the unique claims the events need (refusing, with nothing changed, on a clash), then
   * evolves the working state.
   */
  private apply(ask: Ask<Command, Event> | undefined, events: readonly Event[]): Applied<Command, Event> {
    const before = new Set(this.kind.claimsOf(this.state).map((claim) => claim.key));
    const after = this.kind.claimsAfter(this.state, events);
    const taken: string[] = [];
    for (const claim of after) {
      if (before.has(claim.key)) continue;
      if (!this.env.claims.take(claim.key, this.claimOwner)) {
        for (const key of taken) this.env.claims.release(key, this.claimOwner);
        throw claim.refusal();
      }
      taken.push(claim.key);
    }
    const afterKeys = new Set(after.map((claim) => claim.key));
    const released = [...before].filter((key) => !afterKeys.has(key));
    try {
      for (const event of events) this.state = this.kind.decider.evolve(this.state, event);
    } catch (error) {
      for (const key of taken) this.env.claims.release(key, this.claimOwner);
      throw error;
    }
    return { ask, events, taken, released };
  }

  private get claimOwner(): string {
    return `${this.kind.name}:${this.id}`;
  }

  private stageApplied(applied: Applied<Command, Event>[]): StagedWrite {
    const eventful = applied.filter((message) => message.events.length > 0);
    const previousSeq = this.seq;
    const nextSeq = previousSeq + eventful.length;
    const gone = this.kind.decider.isGone(this.state);
    let ops: KvOp[] = [];
    let afterCommit = () => {};
    if (eventful.length > 0 && gone) {
      ops = this.env.journal.dropOps(this.stream, this.snapshotSeq, previousSeq, this.storedParts);
    } else if (eventful.length > 0 && nextSeq - this.snapshotSeq >= this.env.snapshotEvery) {
      const snapshot = this.snapshotOps(nextSeq);
      ops = snapshot.ops;
      afterCommit = snapshot.done;
    } else {
      const { eventCodec } = this.kind;
      ops = eventful.map((message, index) =>
        this.env.journal.appendOp(
          this.stream,
          previousSeq + index + 1,
          eventCodec ? message.events.map((event) => eventCodec.encode(event, this.env.jsonText)) : message.events,
        ),
      );
    }
    return {
      ops,
      finish: () => {
        this.seq = nextSeq;
        afterCommit();
        for (const message of applied) {
          for (const key of message.released) this.env.claims.release(key, this.claimOwner);
          if (message.events.length > 0) this.env.committed(this.kind.name, this.id, message.events);
        }
        if (gone) {
          this.mailbox.refuse();
          this.env.ended(this.kind.name, this.id);
        }
        for (const message of applied) message.ask?.resolve(message.events);
      },
      abandon: (error) => {
        for (const message of applied) {
          for (const key of message.taken) this.env.claims.release(key, this.claimOwner);
          message.ask?.reject(error instanceof ActorUnavailable ? error : new ActorUnavailable('store_failed', 1));
        }
        this.reload();
      },
    };
  }

  /** Ops writing a snapshot at `seq`, covering everything journaled before it, and its parts. */
  private snapshotOps(seq: number): { ops: KvOp[]; done: () => void } {
    const encoded = this.kind.codec.encode(this.state, this.storedParts, this.env.jsonText);
    const ops = this.env.journal.snapshotOps(this.stream, seq, encoded.value, this.snapshotSeq, this.seq);
    for (const [part, value] of encoded.newParts) ops.push(this.env.journal.partOp(this.stream, part, value));
    for (const part of encoded.staleParts) ops.push(this.env.journal.partOp(this.stream, part, undefined));
    return {
      ops,
      done: () => {
        this.snapshotSeq = seq;
        for (const [part] of encoded.newParts) this.storedParts.add(part);
        for (const part of encoded.staleParts) this.storedParts.delete(part);
      },
    };
  }

  /** Rebuilds the working state from the store: what was committed, nothing more. */
  private reload(): void {
    const loaded = this.load(this.env.journal.loadStream(this.stream));
    this.state = loaded.state;
    this.seq = loaded.seq;
    this.snapshotSeq = loaded.snapshotSeq;
    this.storedParts = loaded.storedParts;
    this.takeClaims();
  }

  private load(stream: RecoveredStream | undefined) {
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
        state = decider.evolve(state, this.kind.eventCodec ? this.kind.eventCodec.decode(stored) : (stored as Event));
      }
    }
    const snapshotSeq = stream?.snapshot?.seq ?? 0;
    const seq = stream?.entries.at(-1)?.seq ?? snapshotSeq;
    return { state, seq, snapshotSeq, storedParts };
  }
}
