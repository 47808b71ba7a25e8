// The committed records of one resource, indexed for lists. Records are partitioned by project
// (every list is limited to the caller's projects); inside a partition, a list sorted by the
// resource's default ordering and one sorted list per value of each indexed field let a filtered
// page be a slice of one list instead of a scan.
//
// Sorted lists are built when a query first needs them (from one scan of the records) and kept
// current from then on. Recovery therefore only files records by id: sorting a million records
// costs seconds, and an index nobody queries costs nothing. Fields marked eager (small groups read
// on hot paths, such as a job's iterations) are grouped during the load, which is linear.
import { comparatorFor, type OrderKey, type RecordComparator } from './ordering.ts';
import { SortedList } from './sorted-list.ts';
import { nextVersion } from './versions.ts';

export interface Identified {
  readonly id: string;
}

export interface CollectionSpec<T extends Identified> {
  /** The tenant a record belongs to (its project). */
  partitionOf(record: T): string;
  defaultOrdering: readonly OrderKey[];
  /** Fields filtered by exact value often enough to keep a sorted list per value. */
  indexedFields: readonly (keyof T & string)[];
  /** Indexed fields whose lists are built at load rather than on first use. */
  eagerFields?: readonly (keyof T & string)[];
}

type Lists<T> = Map<unknown, SortedList<T>>;

export class Partition<T extends Identified> {
  size = 0;
  private allList: SortedList<T> | undefined;
  private readonly fieldLists = new Map<string, Lists<T>>();
  /** A field's lists by value, built on first use (only indexed fields have them). */
  readonly byField: { get(field: string): Lists<T> | undefined };

  constructor(private readonly collection: Collection<T>, private readonly key: string) {
    this.byField = { get: (field) => this.listsFor(field) };
  }

  /** Every record of the partition in the default ordering. */
  get all(): SortedList<T> {
    this.allList ??= SortedList.fromSorted(this.collection.compare, this.collection.membersOf(this.key).sort(this.collection.compare));
    return this.allList;
  }

  add(record: T): void {
    this.size++;
    this.allList?.add(record);
    for (const [field, lists] of this.fieldLists) {
      const value = (record as Record<string, unknown>)[field];
      let list = lists.get(value);
      if (!list) lists.set(value, (list = new SortedList<T>(this.collection.compare)));
      list.add(record);
    }
  }

  remove(record: T): void {
    this.size--;
    this.allList?.delete(record);
    for (const [field, lists] of this.fieldLists) {
      const value = (record as Record<string, unknown>)[field];
      const list = lists.get(value);
      if (!list) continue;
      list.delete(record);
      if (list.length === 0) lists.delete(value);
    }
  }

  /** Installs lists built elsewhere (the eager grouping of a load). */
  adopt(field: string, groups: Map<unknown, T[]>): void {
    this.fieldLists.set(field, toLists(groups, this.collection.compare, false));
  }

  private listsFor(field: string): Lists<T> | undefined {
    const existing = this.fieldLists.get(field);
    if (existing) return existing;
    if (!(this.collection.spec.indexedFields as readonly string[]).includes(field)) return undefined;
    // Grouping the default-ordered list keeps each group in order; otherwise sort each group.
    const sorted = this.allList !== undefined;
    const groups = new Map<unknown, T[]>();
    for (const record of sorted ? this.allList!.iterate() : this.collection.membersOf(this.key)) {
      const value = (record as Record<string, unknown>)[field];
      let group = groups.get(value);
      if (!group) groups.set(value, (group = []));
      group.push(record);
    }
    const lists = toLists(groups, this.collection.compare, sorted);
    this.fieldLists.set(field, lists);
    return lists;
  }
}

function toLists<T extends object>(groups: Map<unknown, T[]>, compare: RecordComparator, sorted: boolean): Lists<T> {
  const lists: Lists<T> = new Map();
  for (const [value, group] of groups) {
    if (!sorted) group.sort(compare);
    lists.set(value, SortedList.fromSorted(compare, group));
  }
  return lists;
}

export class Collection<T extends Identified> {
  readonly compare: RecordComparator;
  /** Changes with every record added, replaced or removed (versions.ts): answers keep while it holds. */
  version = nextVersion();
  /**
   * One Map, whose insertion order is about each partition's default order, so that the first
   * build of an index sorts nearly sorted records (docs/PERFORMANCE.md, "A stall when a
   * collection doubles").
   */
  private readonly records = new Map<string, T>();
  private readonly partitions = new Map<string, Partition<T>>();

  constructor(readonly spec: CollectionSpec<T>) {
    this.compare = comparatorFor(spec.defaultOrdering);
  }

  get size(): number {
    return this.records.size;
  }

  get(id: string): T | undefined {
    return this.records.get(id);
  }

  partition(key: string): Partition<T> | undefined {
    return this.partitions.get(key);
  }

  values(): IterableIterator<T> {
    return this.records.values();
  }

  /** The records of one partition, in no order (one scan; builds an index on first use). */
  membersOf(key: string): T[] {
    const members: T[] = [];
    for (const record of this.records.values()) if (this.spec.partitionOf(record) === key) members.push(record);
    return members;
  }

  /** Adds a record, or replaces the record with its id. */
  put(record: T): void {
    const previous = this.records.get(record.id);
    if (previous) this.partitions.get(this.spec.partitionOf(previous))?.remove(previous);
    this.records.set(record.id, record);
    this.partitionFor(this.spec.partitionOf(record)).add(record);
    this.version = nextVersion();
  }

  delete(id: string): T | undefined {
    const previous = this.records.get(id);
    if (!previous) return undefined;
    this.records.delete(id);
    const key = this.spec.partitionOf(previous);
    const partition = this.partitions.get(key);
    partition?.remove(previous);
    if (partition?.size === 0) this.partitions.delete(key);
    this.version = nextVersion();
    return previous;
  }

  /** Removes every record of one partition (a deleted project). */
  deletePartition(key: string): void {
    if (!this.partitions.delete(key)) return;
    for (const [id, record] of this.records) if (this.spec.partitionOf(record) === key) this.records.delete(id);
    this.version = nextVersion();
  }

  /** Replaces the whole content at once (recovery): files records, groups only eager fields. */
  load(records: Iterable<T>): void {
    this.records.clear();
    this.partitions.clear();
    const eager = this.spec.eagerFields ?? [];
    const groups = new Map<string, Map<string, Map<unknown, T[]>>>();
    for (const record of records) {
      this.records.set(record.id, record);
      const key = this.spec.partitionOf(record);
      this.partitionFor(key).size++;
      for (const field of eager) {
        let byField = groups.get(key);
        if (!byField) groups.set(key, (byField = new Map()));
        let byValue = byField.get(field);
        if (!byValue) byField.set(field, (byValue = new Map()));
        const value = (record as Record<string, unknown>)[field];
        let group = byValue.get(value);
        if (!group) byValue.set(value, (group = []));
        group.push(record);
      }
    }
    for (const [key, byField] of groups) {
      for (const [field, byValue] of byField) this.partitions.get(key)!.adopt(field, byValue);
    }
    this.version = nextVersion();
  }

  private partitionFor(key: string): Partition<T> {
    let partition = this.partitions.get(key);
    if (!partition) this.partitions.set(key, (partition = new Partition(this, key)));
    return partition;
  }
}
