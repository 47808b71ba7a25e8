// The change feed: every committed change, numbered in commit order and kept in a bounded log so
// that a stream that dropped can resume after its last event (Last-Event-ID). Nothing enters it
// before its write is durable: the registry publishes only from a commit's completion, and the
// span writer only once the spans are stored. Delivery to the open streams happens once per turn
// of the event loop, in one batch, so a burst of commits costs each stream one socket write.
import type { ChangeType } from './changes.ts';

/** A change as the feed keeps it, ready to send. */
export interface FeedEvent {
  readonly seq: number;
  readonly type: ChangeType;
  readonly project: string;
  /** The agent and job the change concerns, for the stream's filters. */
  readonly agent: string | null;
  readonly job: string | null;
  /**
   * Who may see the change when the project can no longer be asked (its deletion): its members
   * just before. Null for every other change, whose visibility is the caller's at delivery.
   */
  readonly audience: readonly number[] | null;
  /** The server-sent event: `id:`, `event:` and `data:` lines and the blank line that ends it. */
  readonly frame: string;
}

export type Published = Omit<FeedEvent, 'seq' | 'frame'> & { data: string };

/** An open stream. */
export interface Subscriber {
  /** Events published since the last delivery, in sequence order. */
  deliver(events: readonly FeedEvent[]): void;
  /** The service is stopping: end the stream. */
  close(): void;
}

export interface ChangeFeedLimits {
  eventLogEventsMax: number;
  eventLogCharsMax: number;
}

export class ChangeFeed {
  /** The log, oldest first; entries before `head` are evicted. */
  private log: FeedEvent[] = [];
  private head = 0;
  private chars = 0;
  private nextSeq: number;
  private undelivered: FeedEvent[] = [];
  private deliveryScheduled = false;
  private closed = false;
  private readonly subscribers = new Set<Subscriber>();

  /**
   * `firstSeq` should exceed every id an earlier process gave out (the service starts it at the
   * clock's microseconds), so a client resuming across a restart is told to reload.
   */
  constructor(private readonly limits: ChangeFeedLimits, firstSeq: number) {
    this.nextSeq = firstSeq;
  }

  /** The id of the latest event (one less than the first when there is none yet). */
  get lastSeq(): number {
    return this.nextSeq - 1;
  }

  get subscriberCount(): number {
    return this.subscribers.size;
  }

  publish(changes: readonly Published[]): void {
    for (const change of changes) {
      const seq = this.nextSeq++;
      // Spelled out rather than spread: every commit publishes, and one object shape stays fast.
      const event: FeedEvent = {
        seq,
        type: change.type,
        project: change.project,
        agent: change.agent,
        job: change.job,
        audience: change.audience,
        frame: `id: ${seq}\nevent: ${change.type}\ndata: ${change.data}\n\n`,
      };
      this.log.push(event);
      this.chars += event.frame.length;
      this.undelivered.push(event);
    }
    this.evict();
    if (changes.length > 0 && !this.deliveryScheduled) {
      this.deliveryScheduled = true;
      setImmediate(() => this.deliver());
    }
  }

  /** The events after `seq`, or null when the log no longer holds all of them (or never did). */
  since(seq: number): FeedEvent[] | null {
    if (!Number.isSafeInteger(seq) || seq > this.lastSeq) return null;
    const oldest = this.head < this.log.length ? this.log[this.head]!.seq : this.nextSeq;
    if (seq < oldest - 1) return null;
    return this.log.slice(this.head + (seq + 1 - oldest));
  }

  /** Adds a stream; once the feed is closed, a stream is ended as soon as it subscribes. */
  subscribe(subscriber: Subscriber): () => void {
    if (this.closed) {
      subscriber.close();
      return () => {};
    }
    this.subscribers.add(subscriber);
    return () => this.subscribers.delete(subscriber);
  }

  /** Ends every stream, and any opened later (graceful shutdown). */
  close(): void {
    this.closed = true;
    for (const subscriber of [...this.subscribers]) subscriber.close();
    this.subscribers.clear();
  }

  private deliver(): void {
    this.deliveryScheduled = false;
    const events = this.undelivered;
    this.undelivered = [];
    for (const subscriber of this.subscribers) subscriber.deliver(events);
  }

  private evict(): void {
    const { eventLogEventsMax, eventLogCharsMax } = this.limits;
    while (this.log.length - this.head > eventLogEventsMax || (this.chars > eventLogCharsMax && this.head < this.log.length)) {
      this.chars -= this.log[this.head++]!.frame.length;
    }
    // Drop the evicted prefix once it is most of the array: each event is copied O(1) times.
    if (this.head > 1024 && this.head * 2 > this.log.length) {
      this.log = this.log.slice(this.head);
      this.head = 0;
    }
  }
}
