// A map of at most `entriesMax` entries that forgets the least recently used one first. A Map
// iterates in insertion order, so re-inserting an entry on use keeps the oldest one first.

export class LruCache<K, V> {
  private readonly entries = new Map<K, V>();

  constructor(private readonly entriesMax: number) {}

  /** The value cached for `key`, or `compute()`'s, which is cached. */
  get(key: K, compute: () => V): V {
    const value = this.entries.has(key) ? this.entries.get(key)! : compute();
    this.entries.delete(key);
    this.entries.set(key, value);
    if (this.entries.size > this.entriesMax) this.entries.delete(this.entries.keys().next().value!);
    return value;
  }

  /** Whether `key` is kept (without counting as a use). */
  has(key: K): boolean {
    return this.entries.has(key);
  }

  /** Forgets `key` (a computed answer that failed must not be kept). */
  delete(key: K): void {
    this.entries.delete(key);
  }

  get size(): number {
    return this.entries.size;
  }
}

/**
 * An answer computed at most once while it is kept: concurrent requests for the same key share
 * one computation, and a computation that fails is forgotten, to be tried again.
 */
export function keptAnswer<T>(cache: LruCache<string, Promise<T>>, key: string, compute: () => Promise<T>): Promise<T> {
  return cache.get(key, () => {
    const answer = compute();
    answer.catch(() => cache.delete(key));
    return answer;
  });
}
