// The committed records of one resource, indexed for lists. Records are partitioned by project
// (every list is limited to the caller's projects); inside a partition, a list sorted by the
// resource's default ordering and one sorted list per value of each indexed field let a filtered
// page be a slice of one list instead of a scan.
//
// Sorted lists are built when a query first needs them and kept current from then on. Recovery
// therefore only files records into partitions: sorting a million records costs seconds, and an
// index nobody queries costs nothing. Fields marked eager (small groups read on hot paths, such
// as a job's iterations) are grouped during the load, which is linear.
import { comparatorFor, type OrderKey, type RecordComparator } from './ordering.ts';
import { SortedList } from './sorted-list.ts';

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

export class Partition<T extends Identified> {
  readonly members = new Set<T>();
  private allList: SortedList<T> | undefined;
  private readonly fieldLists = new Map<string, Map<unknown, SortedList<T>>>();
  /** A field's lists by value, built on first use (only indexed fields have them). */
  readonly byField: { get(field: string): Map<unknown, SortedList<T>> | undefined };

  constructor(private readonly collection: Collection<T>) {
    this.byField = { get: (field) => this.listsFor(field) };
  }

  get size(): number {
    return this.members.size;
  }

  /** Every record of the partition in the default ordering. */
  get all(): SortedList<T> {
    this.allList ??= SortedList.fromSorted(this.collection.compare, [...this.members].sort(this.collection.compare));
    return this.allList;
  }

  add(record: T): void {
    this.members.add(record);
    this.allList?.add(record);
    for (const [field, lists] of this.fieldLists) {
      const value = (record as Record<string, unknown>)[field];
      let list = lists.get(value);
      if (!list) lists.set(value, (list = new SortedList<T>(this.collection.compare)));
      list.add(record);
    }
  }

  remove(record: T): void {
    this.members.delete(record);
    this.allList?.delete(record);
    for (const [field, lists] of this.fieldLists) {
      const value = (record as Record<string, unknown>)[field];
      const list = lists.get(value);
      if (!list) continue;
      list.delete(record);
      if (list.length === 0) lists.delete(value);
    }
  }

  private listsFor(field: string): Map<unknown, SortedList<T>> | undefined {
    const existing = this.fieldLists.get(field);
    if (existing) return existing;
    if (!(this.collection.spec.indexedFields as readonly string[]).includes(field)) return undefined;
    // Grouping the default-ordered list keeps each group in order; otherwise sort each group.
    const sorted = this.allList !== undefined;
    const groups = new Map<unknown, T[]>();
    for (const record of sorted ? this.allList!.iterate() : this.members) {
      const value = (record as Record<string, unknown>)[field];
      let group = groups.get(value);
      if (!group) groups.set(value, (group = []));
      group.push(record);
    }
    const lists = new Map<unknown, SortedList<T>>();
    for (const [value, group] of groups) {
      if (!sorted) group.sort(this.collection.compare);
      lists.set(value, SortedList.fromSorted(this.collection.compare, group));
    }
    this.fieldLists.set(field, lists);
    return lists;
  }
}

export class Collection<T extends Identified> {
  readonly compare: RecordComparator;
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

  /** Adds a record, or replaces the record with its id. */
  put(record: T): void {
    const previous = this.records.get(record.id);
    if (previous) this.partitions.get(this.spec.partitionOf(previous))?.remove(previous);
    this.records.set(record.id, record);
    const key = this.spec.partitionOf(record);
    let partition = this.partitions.get(key);
    if (!partition) this.partitions.set(key, (partition = new Partition(this)));
    partition.add(record);
  }

  delete(id: string): T | undefined {
    const previous = this.records.get(id);
    if (!previous) return undefined;
    this.records.delete(id);
    const key = this.spec.partitionOf(previous);
    const partition = this.partitions.get(key);
    partition?.remove(previous);
    if (partition?.size === 0) this.partitions.delete(key);
    return previous;
  }

  /** Removes every record of one partition (a deleted project). */
  deletePartition(key: string): void {
    const partition = this.partitions.get(key);
    if (!partition) return;
    for (const record of partition.members) this.records.delete(record.id);
    this.partitions.delete(key);
  }

  /** Replaces the whole content at once (recovery): files records, builds only eager lists. */
  load(records: Iterable<T>): void {
    this.records.clear();
    this.partitions.clear();
    for (const record of records) {
      this.records.set(record.id, record);
      const key = this.spec.partitionOf(record);
      let partition = this.partitions.get(key);
      if (!partition) this.partitions.set(key, (partition = new Partition(this)));
      partition.members.add(record);
    }
    for (const field of this.spec.eagerFields ?? []) {
      for (const partition of this.partitions.values()) partition.byField.get(field);
    }
  }
}
