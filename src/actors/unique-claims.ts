// Uniqueness that spans actors (a project slug across all projects, an agent slug across the
// agents of a project). A claim is taken synchronously when an actor decides, so two actors
// deciding at once cannot both win; it is released only after the change that frees it is durable.

export class UniqueClaims {
  private readonly owners = new Map<string, string>();

  /** Takes `key` for `owner`; false when another owner holds it. */
  take(key: string, owner: string): boolean {
    const current = this.owners.get(key);
    if (current !== undefined && current !== owner) return false;
    this.owners.set(key, owner);
    return true;
  }

  release(key: string, owner: string): void {
    if (this.owners.get(key) === owner) this.owners.delete(key);
  }

  ownerOf(key: string): string | undefined {
    return this.owners.get(key);
  }
}
