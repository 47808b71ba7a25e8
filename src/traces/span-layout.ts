// The span store's databases, and the migration of the layouts earlier builds wrote, run once
// when the store opens (a store upgrade: createService hands it to Journal.checkFormat, which runs
// it before anything reads the store and records it as done), so that the store's decisions only
// know the current layout.
//
// Earlier builds wrote, and stores written by them may still hold:
//   - trace entries keyed [trace_id, project] in the `traces` database, which now live in
//     `traces-by-start` under [project, at, trace_id], `at` being the trace's start when it was
//     first stored (before 97d2145, moved only when their trace changed);
//   - trace entries without `since` (the start their link entries are keyed by) and link entries
//     keyed [project, dim, id, trace_id] without it (before 54bda8b): each such trace now has its
//     `at` as its `since`, its link entries keyed by it, as a trace first stored now has;
//   - trace entries without `tokens` (before fcf7f3e): their spans carry no tokens, so 0.
// Entries and link entries are copied to their new keys first, a bounded number per commit, and
// the keys they leave are removed after. Nothing reads the store until the migration is done; one
// interrupted runs again in full when the store opens next: what it copied is copied again, the
// same, and what is of the current layout is left as it is.
import type { StoreUpgrade } from '../store/journal.ts';
import { compareKeys, type Key, type Kv, type KvDb, type KvOp } from '../store/kv.ts';

/** The databases of the span store (described in span-store.ts). */
export const spanDbNames = {
  spans: 'spans',
  traces: 'traces-by-start',
  order: 'trace-order',
  links: 'span-links',
  counts: 'span-counts',
} as const;

/** Trace entries of stores written before 97d2145, keyed [trace_id, project]: empty once migrated. */
const olderTracesDbName = 'traces';

/** A span as its trace lists it. */
export type SpanRef = readonly [spanId: string, start: string, root: boolean];
/** A span as a link lists it (the trace is in the key). */
export type LinkRef = readonly [start: string, spanId: string];

export interface TraceEntry {
  head: SpanRef;
  spans: SpanRef[];
  /** The sum of its spans' tokens. */
  tokens: number;
  /** The start its link entries are keyed by: its head's when it was first stored, which is also its `at`. */
  since: string;
}

/** A trace entry as earlier builds may have written it. */
type StoredTraceEntry = Omit<TraceEntry, 'tokens' | 'since'> & { tokens?: number; since?: string };

/** What a migration changed. */
export interface SpanLayoutMigration {
  /** Trace entries moved out of the `traces` database. */
  movedEntries: number;
  /** Trace entries given their `since` or `tokens` where they are. */
  completedEntries: number;
  /** Link entries keyed again with their trace's `since`. */
  rekeyedLinks: number;
}

/** Ops per commit of a migration: each commit is short, and what it holds in memory is bounded. */
const migrationOpsPerCommitMax = 10_000;

/**
 * Brings a span store written by an earlier build to the current layout. A store already in it
 * is read once (its trace entries, and its link keys) and left as it is. Keys are written in
 * their order wherever they can be, as ingest writes them, so that a commit's new keys land on
 * few pages: entries are copied in the order of their new keys, and a record's link entries
 * together in theirs; the keys they leave are removed afterwards, in their own order. Memory
 * holds, at most, the new key of each entry to move, every trace's `since` (as TracePlaces holds
 * every trace's place), one record's link keys and one commit's ops.
 */
export async function migrateSpanLayout(kv: Kv, opsPerCommitMax = migrationOpsPerCommitMax): Promise<SpanLayoutMigration> {
  const older = kv.db(olderTracesDbName);
  const traces = kv.db(spanDbNames.traces);
  const links = kv.db(spanDbNames.links);
  const migration: SpanLayoutMigration = { movedEntries: 0, completedEntries: 0, rekeyedLinks: 0 };

  // Entries keyed by trace id are copied, complete, to their start; then removed.
  const moves: [project: string, since: string, traceId: string][] = [];
  for (const { key, value } of older.range<StoredTraceEntry>({})) moves.push([key[1] as string, value.since ?? value.head[1], key[0] as string]);
  moves.sort(compareKeys);
  for (let first = 0; first < moves.length; first += opsPerCommitMax) {
    await kv.write(moves.slice(first, first + opsPerCommitMax).map(([project, since, traceId]) => {
      const value = older.get<StoredTraceEntry>([traceId, project])!;
      return { db: traces, key: [project, since, traceId], value: completed(value, since) };
    }));
  }
  migration.movedEntries = moves.length;
  moves.length = 0;
  await inChunks(kv, older, opsPerCommitMax, (key) => [{ db: older, key }]);

  // Entries keyed by start get what they lack where they are; every trace's since is noted.
  /** "trace_id\nproject" -> the trace's since: what its link entries are keyed by. */
  const sinceOf = new Map<string, string>();
  await inChunks(kv, traces, opsPerCommitMax, (key) => {
    const [project, at, traceId] = key as [string, string, string];
    const value = traces.get<StoredTraceEntry>(key)!;
    sinceOf.set(`${traceId}\n${project}`, value.since ?? at);
    if (value.since !== undefined && value.tokens !== undefined) return [];
    migration.completedEntries++;
    return [{ db: traces, key, value: completed(value, at) }];
  });

  // Link entries without `since` are copied under their trace's, a record's together and in the
  // order of their new keys; then the keys without it are removed. (A trace's link entries all
  // have `since` or none has: a copy already there was made by a migration that was interrupted,
  // from the same entry.)
  let record: string | undefined;
  let copies: Key[] = [];
  const copyRecord = (): KvOp[] => {
    copies.sort(compareKeys);
    const ops = copies.map((rekeyed): KvOp => {
      const [project, dim, id, , traceId] = rekeyed as string[];
      return { db: links, key: rekeyed, value: links.get<LinkRef[]>([project!, dim!, id!, traceId!]) };
    });
    migration.rekeyedLinks += copies.length;
    copies = [];
    return ops;
  };
  await inChunks(kv, links, opsPerCommitMax, (key) => {
    if (key.length !== 4) return [];
    const [project, dim, id, traceId] = key as [string, string, string, string];
    const of = `${project}\n${dim}\n${id}`;
    const ops = of !== record ? copyRecord() : [];
    record = of;
    // A link whose trace has no entry (none should) keeps its spans readable under their earliest start.
    const since = sinceOf.get(`${traceId}\n${project}`) ?? earliestStart(links.get<LinkRef[]>(key)!);
    copies.push([project, dim, id, since, traceId]);
    return ops;
  }, copyRecord);
  sinceOf.clear();
  await inChunks(kv, links, opsPerCommitMax, (key) => (key.length === 4 ? [{ db: links, key }] : []));
  return migration;
}

export const spanLayoutUpgrade: StoreUpgrade = { name: 'span-layout', run: migrateSpanLayout };

/** Throws when a store holds trace entries of an earlier layout: it was opened without migrating. */
export function assertNoOlderLayout(kv: Kv): void {
  for (const _ of kv.db(olderTracesDbName).keys({ limit: 1 })) {
    throw new Error('The span store holds trace entries of an earlier layout: migrateSpanLayout runs before it opens (Journal.checkFormat)');
  }
}

function completed(entry: StoredTraceEntry, since: string): TraceEntry {
  return { head: entry.head, spans: entry.spans, tokens: entry.tokens ?? 0, since };
}

/**
 * Walks every key of `db` in key order (values are read by `change` where it needs them),
 * committing the ops it makes, and those `last` makes once every key is walked, at most
 * `opsPerCommitMax` at a time. The keys of a chunk are walked, then its ops written, and the walk
 * resumes after the last key it read: nothing is read across a commit, and no key is changed
 * twice (one written further on is walked again, and is of the current layout by then).
 */
async function inChunks(kv: Kv, db: KvDb, opsPerCommitMax: number, change: (key: Key) => KvOp[], last?: () => KvOp[]): Promise<void> {
  let after: Key | undefined;
  for (;;) {
    const ops: KvOp[] = [];
    let walked: Key | undefined;
    for (const key of db.keys(after ? { start: after } : {})) {
      // The walk starts at the last key walked (if it is still there): past it.
      if (walked === undefined && after && compareKeys(key, after) === 0) continue;
      walked = key;
      for (const op of change(key)) ops.push(op);
      if (ops.length >= opsPerCommitMax) break;
    }
    const done = walked === undefined || ops.length < opsPerCommitMax;
    if (done && last) for (const op of last()) ops.push(op);
    for (let first = 0; first < ops.length; first += opsPerCommitMax) await kv.write(ops.slice(first, first + opsPerCommitMax));
    if (done) return;
    after = walked;
  }
}

/** The earliest start a link lists. */
function earliestStart(refs: readonly LinkRef[]): string {
  return refs.reduce((min, ref) => (ref[0] < min ? ref[0] : min), refs[0]?.[0] ?? '');
}
