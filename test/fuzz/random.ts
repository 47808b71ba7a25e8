// A seeded pseudo-random source (mulberry32) for tests that generate their input: the same seed
// gives the same sequence, so a failure reproduces with `FUZZ_SEED=<seed>`.

export class Random {
  private state: number;

  constructor(readonly seed: number) {
    this.state = seed >>> 0;
  }

  /** A float in [0, 1). */
  next(): number {
    this.state = (this.state + 0x6d2b79f5) >>> 0;
    let t = this.state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }

  /** An integer in [min, max]. */
  int(min: number, max: number): number {
    return min + Math.floor(this.next() * (max - min + 1));
  }

  chance(probability: number): boolean {
    return this.next() < probability;
  }

  pick<T>(items: readonly T[]): T {
    if (items.length === 0) throw new Error('pick from an empty list');
    return items[Math.floor(this.next() * items.length)]!;
  }

  /** `length` characters (code points) drawn from `alphabet`. */
  text(length: number, alphabet = 'abcdefghijklmnopqrstuvwxyz0123456789'): string {
    const characters = Array.from(alphabet);
    let text = '';
    for (let i = 0; i < length; i++) text += characters[Math.floor(this.next() * characters.length)];
    return text;
  }

  /** Lower-case hex of `bytes` random bytes. */
  hex(bytes: number): string {
    return this.text(bytes * 2, '0123456789abcdef');
  }

  uuid(): string {
    const hex = this.hex(16);
    return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-4${hex.slice(13, 16)}-a${hex.slice(17, 20)}-${hex.slice(20)}`;
  }
}

/** The seed from `FUZZ_SEED` when set (to replay a failure), else a fresh one. */
export function testSeed(): number {
  const given = process.env.FUZZ_SEED;
  if (given !== undefined && given !== '') {
    const seed = Number(given);
    if (!Number.isSafeInteger(seed)) throw new Error(`FUZZ_SEED must be an integer, not "${given}"`);
    return seed;
  }
  return Math.floor(Math.random() * 2 ** 31);
}
