// Whether a text holds a word as a substring, for many words at once: a suffix automaton of the
// text (Blumer et al.), built in time and space linear in the text (at most 2n states), after which
// each question costs the word's length. `text.includes(word)` for each of k words costs k times
// the text; the original's keyword coverage asks it for every keyword of an expected output of
// any size, against an output of up to 64 KiB. UTF-16 code units, as includes() compares them.
// Pure.

export class SubstringIndex {
  /** Each state's transitions by code unit. */
  private readonly next: Map<number, number>[] = [new Map()];
  /** Each state's suffix link (-1 for the first) and the length of its longest string. */
  private readonly link: number[] = [-1];
  private readonly length: number[] = [0];
  private last = 0;

  constructor(text: string) {
    for (let i = 0; i < text.length; i++) this.extend(text.charCodeAt(i));
  }

  /** Whether `word` occurs in the text. */
  has(word: string): boolean {
    let state = 0;
    for (let i = 0; i < word.length; i++) {
      const to = this.next[state]!.get(word.charCodeAt(i));
      if (to === undefined) return false;
      state = to;
    }
    return true;
  }

  private extend(unit: number): void {
    const current = this.state(this.length[this.last]! + 1, 0, new Map());
    let p = this.last;
    while (p !== -1 && !this.next[p]!.has(unit)) {
      this.next[p]!.set(unit, current);
      p = this.link[p]!;
    }
    if (p !== -1) {
      const q = this.next[p]!.get(unit)!;
      if (this.length[p]! + 1 === this.length[q]) {
        this.link[current] = q;
      } else {
        const clone = this.state(this.length[p]! + 1, this.link[q]!, new Map(this.next[q]!));
        while (p !== -1 && this.next[p]!.get(unit) === q) {
          this.next[p]!.set(unit, clone);
          p = this.link[p]!;
        }
        this.link[q] = clone;
        this.link[current] = clone;
      }
    }
    this.last = current;
  }

  private state(length: number, link: number, next: Map<number, number>): number {
    this.length.push(length);
    this.link.push(link);
    this.next.push(next);
    return this.length.length - 1;
  }
}
