// The committed records of one resource, indexed for lists. Records are partitioned by project
// (every list is limited to the caller's projects); inside a partition every record sits in a
// list sorted by the resource's default ordering, and again in one sorted list per value of each
// indexed field. A filtered page in default order is then a slice of one list, not a scan.
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
}

export interface Partition<T> {
  all: SortedList<T>;
  byField: Map<string, Map<unknown, SortedList<T>>>;
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
    if (previous) this.unindex(previous);
    this.records.set(record.id, record);
    this.index(record);
  }

  delete(id: string): T | undefined {
    const previous = this.records.get(id);
    if (!previous) return undefined;
    this.records.delete(id);
    this.unindex(previous);
    return previous;
  }

  /** Removes every record of one partition (a deleted project). */
  deletePartition(key: string): void {
    const partition = this.partitions.get(key);
    if (!partition) return;
    for (const record of partition.all.iterate()) this.records.delete(record.id);
    this.partitions.delete(key);
  }

  /** Replaces the whole content at once: one sort instead of n inserts (recovery). */
  load(records: Iterable<T>): void {
    this.records.clear();
    this.partitions.clear();
    const grouped = new Map<string, T[]>();
    for (const record of records) {
      this.records.set(record.id, record);
      const key = this.spec.partitionOf(record);
      let group = grouped.get(key);
      if (!group) grouped.set(key, (group = []));
      group.push(record);
    }
    for (const [key, group] of grouped) {
      group.sort(this.compare);
      const partition: Partition<T> = { all: SortedList.fromSorted(this.compare, group), byField: new Map() };
      for (const field of this.spec.indexedFields) {
        const byValue = new Map<unknown, T[]>();
        for (const record of group) {
          const value = record[field];
          let list = byValue.get(value);
          if (!list) byValue.set(value, (list = []));
          list.push(record);
        }
        const lists = new Map<unknown, SortedList<T>>();
        for (const [value, list] of byValue) lists.set(value, SortedList.fromSorted(this.compare, list));
        partition.byField.set(field, lists);
      }
      this.partitions.set(key, partition);
    }
  }

  private index(record: T): void {
    const key = this.spec.partitionOf(record);
    let partition = this.partitions.get(key);
    if (!partition) {
      partition = { all: new SortedList<T>(this.compare), byField: new Map() };
      for (const field of this.spec.indexedFields) partition.byField.set(field, new Map());
      this.partitions.set(key, partition);
    }
    partition.all.add(record);
    for (const field of this.spec.indexedFields) {
      const lists = partition.byField.get(field)!;
      const value = record[field];
      let list = lists.get(value);
      if (!list) lists.set(value, (list = new SortedList<T>(this.compare)));
      list.add(record);
    }
  }

  private unindex(record: T): void {
    const key = this.spec.partitionOf(record);
    const partition = this.partitions.get(key);
    if (!partition) return;
    partition.all.delete(record);
    for (const field of this.spec.indexedFields) {
      const lists = partition.byField.get(field)!;
      const value = record[field];
      const list = lists.get(value);
      if (!list) continue;
      list.delete(record);
      if (list.length === 0) lists.delete(value);
    }
    if (partition.all.length === 0) this.partitions.delete(key);
  }
}
