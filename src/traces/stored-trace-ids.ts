// The trace ids the span store holds, kept in memory so that a span decision knows a new trace is
// new without reading: nearly every trace an export brings is new, and the range read that looked
// for it in every project, inside the write transaction, cost a new trace more than the rest of
// its decision (9.6% -> 1.7% of the main thread under the ingest benchmark).
//
// The set may hold ids the store no longer holds (a superset is all a decision needs): a commit
// that failed leaves the ids its decision added, and removed traces leave theirs until they are
// as many as half of the set, when it is scanned again. It is only read and changed by decisions,
// which run one at a time inside the write transaction, and it is scanned from the store a chunk
// per decision there too, where every earlier commit is visible: so it never misses a stored trace,
// and filling it never stalls a decision for long (the traces of a million spans take ~30
// decisions). Until the scan is complete every trace may be stored, and is read for.
import { prefixEnd, type Key, type KvDb } from '../store/kv.ts';

/** Trace keys read per decision while the set is being filled. */
const keysPerChunk = 4096;

export class StoredTraceIds {
  private ids = new Set<string>();
  /** Where the scan reads next, or null once the set holds every stored trace id. */
  private scanFrom: Key | null = [];
  private removals = 0;

  /** `traces` is keyed by [trace_id, project]. */
  constructor(private readonly traces: KvDb) {}

  /** Reads the next chunk of stored trace ids, while the set is being filled. Decisions only. */
  advance(): void {
    if (this.scanFrom === null) return;
    let last: string | undefined;
    let read = 0;
    for (const key of this.traces.keys({ start: this.scanFrom, limit: keysPerChunk })) {
      last = key[0] as string;
      this.ids.add(last);
      read++;
    }
    // The next chunk starts past every project's key of the last trace read.
    this.scanFrom = read < keysPerChunk ? null : prefixEnd([last!]);
  }

  /** Whether the trace may be stored in some project: certainly not when this says false. */
  mayHold(traceId: string): boolean {
    return this.scanFrom !== null || this.ids.has(traceId);
  }

  /** A decision stores the trace in some project. */
  added(traceId: string): void {
    this.ids.add(traceId);
  }

  /** A decision removes a trace from a project: once such stale ids are half the set, it is filled again. */
  removed(): void {
    if (++this.removals <= this.ids.size / 2) return;
    this.ids = new Set();
    this.scanFrom = [];
    this.removals = 0;
  }
}
