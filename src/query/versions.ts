// Versions of what lists read, so that an answer made from them can be kept until they change.
// Every version is drawn from one counter: a version names one state of one thing, so two equal
// versions always mean the same records, whichever things they were taken from.

let lastDrawn = 0;

export function nextVersion(): number {
  return ++lastDrawn;
}

const immutableVersions = new WeakMap<object, number>();

/** The version of a value that never changes (an immutable record): one for as long as it lives. */
export function versionOfImmutable(value: object): number {
  let version = immutableVersions.get(value);
  if (version === undefined) immutableVersions.set(value, (version = nextVersion()));
  return version;
}

/** A Map with a version that changes whenever its content does. */
export class VersionedMap<K, V> extends Map<K, V> {
  version = nextVersion();

  override set(key: K, value: V): this {
    super.set(key, value);
    this.version = nextVersion();
    return this;
  }

  override delete(key: K): boolean {
    const deleted = super.delete(key);
    if (deleted) this.version = nextVersion();
    return deleted;
  }

  override clear(): void {
    super.clear();
    this.version = nextVersion();
  }
}
