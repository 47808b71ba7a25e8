// JSON text of immutable values, made once and shared: records never change, so the text of one
// serves the journal and every response that sends it. The cache is bounded by the characters it
// holds (oldest entries go first), so large datasets cannot pile up in memory.

type Serializer = (value: never) => unknown;

/** The value itself, for values already in their wire shape (one function, so one cache key). */
const asIs = <T>(value: T): T => value;

interface Entry {
  serializer: Serializer;
  value: object;
  length: number;
}

export class JsonCache {
  private readonly texts = new Map<Serializer, Map<object, string>>();
  /** Entries oldest first; those before `oldest` are already evicted. */
  private entries: Entry[] = [];
  private oldest = 0;
  private held = 0;

  constructor(private readonly charsMax: number) {}

  /** `JSON.stringify(serialize(value))`, computed at most once while it stays cached. */
  text<T extends object>(value: T, serialize: (value: T) => unknown = asIs): string {
    const key = serialize as unknown as Serializer;
    let byValue = this.texts.get(key);
    if (!byValue) this.texts.set(key, (byValue = new Map()));
    const cached = byValue.get(value);
    if (cached !== undefined) return cached;
    const text = JSON.stringify(serialize(value));
    if (text.length <= this.charsMax) {
      byValue.set(value, text);
      this.entries.push({ serializer: key, value, length: text.length });
      this.held += text.length;
      this.evict();
    }
    return text;
  }

  private evict(): void {
    while (this.held > this.charsMax) {
      const entry = this.entries[this.oldest++]!;
      this.texts.get(entry.serializer)!.delete(entry.value);
      this.held -= entry.length;
    }
    // Drop the evicted prefix only once it is most of the array: each entry is copied O(1) times.
    if (this.oldest > 1024 && this.oldest * 2 > this.entries.length) {
      this.entries = this.entries.slice(this.oldest);
      this.oldest = 0;
    }
  }
}
