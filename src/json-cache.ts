// JSON text of immutable values, made once and shared: records never change, so the text of one
// serves the journal and every response that sends it. The cache is bounded by the characters it
// holds (oldest entries go first), so large datasets cannot pile up in memory.

type Serializer = (value: never) => unknown;

/** The value itself, for values already in their wire shape (one function, so one cache key). */
const asIs = <T>(value: T): T => value;

export class JsonCache {
  private readonly texts = new Map<Serializer, Map<object, string>>();
  private entries: { serializer: Serializer; value: object; length: number }[] = [];
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
    let dropped = 0;
    while (this.held > this.charsMax && dropped < this.entries.length) {
      const oldest = this.entries[dropped++]!;
      this.texts.get(oldest.serializer)!.delete(oldest.value);
      this.held -= oldest.length;
    }
    if (dropped > 0) this.entries = this.entries.slice(dropped);
  }
}
