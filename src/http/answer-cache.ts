// Answers kept as the bytes sent, for as long as what they were made from is unchanged. Each is
// stored under the request it answers with the version of what it read, and made again once that
// version moves on.
//
// An answer is kept from the second time it is asked for at one version: the first time only
// its key is noted. Many requests are never repeated (a client walking through the pages of a
// list), and keeping their bytes, which live outside the JavaScript heap, made the collector run
// full collections (+37% instructions per request when every request was new).
//
// Bounded by the bytes held (answers and their keys); the oldest entry goes first (a Map keeps
// insertion order; refreshing an entry on every use measured about as much as the lookup itself,
// and a hot answer pushed out is only made once more).

interface Entry {
  version: string;
  /** The answer's bytes, once it was asked for again at this version. */
  bytes: Buffer | null;
  /** What it counts against the bound: its bytes and its key's characters. */
  size: number;
}

export class AnswerCache {
  /** Oldest first. */
  private readonly entries = new Map<string, Entry>();
  private held = 0;

  constructor(private readonly bytesMax: number) {}

  /** The answer kept for `key` at `version`, or `make()`'s text (its bytes kept if asked before). */
  get(key: string, version: string, make: () => string): Buffer | string {
    const entry = this.entries.get(key);
    if (entry?.version === version && entry.bytes) return entry.bytes;
    const text = make();
    const bytes = entry?.version === version ? unpooledBytes(text) : null;
    if (entry) this.forget(key, entry);
    const size = key.length + (bytes?.length ?? 0);
    if (size <= this.bytesMax) {
      this.entries.set(key, { version, bytes, size });
      this.held += size;
      this.evict();
    }
    return bytes ?? text;
  }

  private evict(): void {
    for (const [key, entry] of this.entries) {
      if (this.held <= this.bytesMax) return;
      this.forget(key, entry);
    }
  }

  private forget(key: string, entry: Entry): void {
    this.entries.delete(key);
    this.held -= entry.size;
  }
}

/** UTF-8 bytes in memory of their own: a small pooled Buffer would keep its 8 KiB pool slab alive. */
function unpooledBytes(text: string): Buffer {
  const bytes = Buffer.allocUnsafeSlow(Buffer.byteLength(text));
  bytes.write(text);
  return bytes;
}
