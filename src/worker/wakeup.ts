// A wake-up call for loops that wait for the worker's state to change: each change calls
// notify(), each waiting loop looks again at what it waits for. Nothing is queued: a loop checks
// its condition before it waits, so a notify with nobody waiting is not lost.
export class Wakeup {
  private waiting: (() => void)[] = [];

  /** Resolves at the next notify(). */
  next(): Promise<void> {
    return new Promise((resolve) => this.waiting.push(resolve));
  }

  /** Resolves at the next notify() or after `ms`, whichever comes first (a timer it leaves nowhere). */
  nextWithin(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const woken = () => {
        clearTimeout(timer);
        resolve();
      };
      const timer = setTimeout(() => {
        const at = this.waiting.indexOf(woken);
        if (at >= 0) this.waiting.splice(at, 1);
        resolve();
      }, ms);
      this.waiting.push(woken);
    });
  }

  notify(): void {
    const waiting = this.waiting;
    this.waiting = [];
    for (const resolve of waiting) resolve();
  }
}
