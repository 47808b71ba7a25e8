// Uniqueness that spans actors (a project slug across all projects, an agent slug across the
// agents of a project). A claim is taken synchronously when an actor decides, so two actors
// deciding at once cannot both win; it is released only after the change that frees it is durable.
//
// An owner may hold a key several times over: an actor holds it once for its durable state and
// once for each decided message whose state holds it and whose commit is still in flight (a slug
// renamed away and back while commits are in flight). The key is free once every hold is released.

export class UniqueClaims {
  private readonly holds = new Map<string, { owner: string; count: number }>();

  /** Takes one hold on `key` for `owner`; false when another owner holds it. */
  take(key: string, owner: string): boolean {
    const current = this.holds.get(key);
    if (current === undefined) {
      this.holds.set(key, { owner, count: 1 });
      return true;
    }
    if (current.owner !== owner) return false;
    current.count++;
    return true;
  }

  /** Releases one hold of `owner` on `key`. */
  release(key: string, owner: string): void {
    const current = this.holds.get(key);
    if (current?.owner !== owner) return;
    if (--current.count === 0) this.holds.delete(key);
  }

  ownerOf(key: string): string | undefined {
    return this.holds.get(key)?.owner;
  }
}
