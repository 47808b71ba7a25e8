// A queue worked through by one loop at a time, started by the first item and idle once empty:
// the engine under every actor's mailbox. `step` takes one or more items off the front and
// handles them; the loop never runs two steps at once, so whatever a step decides sees the
// committed outcome of the step before it.
import { Unavailable } from '../unavailable.ts';

export class SerialQueue<Item> {
  readonly items: Item[] = [];
  private running = false;
  private stopped = false;
  private idleWaiters: (() => void)[] = [];

  constructor(private readonly step: (items: Item[]) => Promise<void>) {}

  get isStopped(): boolean {
    return this.stopped;
  }

  /** Queues an item (Unavailable 'stopped' once stopped) and starts the loop if it is idle. */
  push(item: Item): void {
    if (this.stopped) throw new Unavailable('stopped', 5);
    this.items.push(item);
    if (!this.running) void this.run();
  }

  /** Refuses further items from now on; what is queued is still worked through. */
  refuse(): void {
    this.stopped = true;
  }

  /** Refuses further items and resolves once the queued ones are done (graceful shutdown). */
  stop(): Promise<void> {
    this.stopped = true;
    if (!this.running) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  private async run(): Promise<void> {
    this.running = true;
    try {
      while (this.items.length > 0) await this.step(this.items);
    } finally {
      this.running = false;
      const waiters = this.idleWaiters;
      this.idleWaiters = [];
      for (const wake of waiters) wake();
    }
  }
}
