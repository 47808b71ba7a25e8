// Where each stored trace's entry is, kept in memory so that a trace is found by its id while its
// entry is keyed by time. Entries are keyed [project, at, trace_id], `at` being the trace's start
// when it was first stored: a new trace appends to the index instead of landing on a random page
// of it. Keyed by trace id, a commit's few hundred new traces dirtied as many random pages, which
// cost ingest a quarter of its CPU and half of what it wrote (36,590 -> 49,062 spans/s, 2.3 -> 1.3
// KB per span written, on a million spans). Stores written before keep each entry under
// [trace_id, project] in the legacy database (`at` null) until the trace changes, when it moves.
//
// The places may include some where nothing is stored any more (a superset is all a reader needs:
// it reads the place and finds nothing): a decision whose commit failed leaves the places it
// added, and a removed or moved entry leaves its old place until such stale places are half of
// them, when they are read again from the store at the start of the next decision, inside the
// write transaction, where every earlier commit is visible. They are read whole when the store
// opens (~125,000 keys for a million spans).
import type { KvDb } from '../store/kv.ts';

export interface TracePlace {
  readonly project: string;
  /** The start the entry is keyed by, or null for an entry of the legacy database. */
  readonly at: string | null;
}

const none: readonly TracePlace[] = [];

export class TracePlaces {
  /** Nearly every trace has one place: it is kept bare, a list only for the few with more. */
  private places = new Map<string, TracePlace | TracePlace[]>();
  /** Project ids are few: one string each, not one per trace. */
  private readonly projects = new Map<string, string>();
  private count = 0;
  private stale = 0;

  /** `byStart` is keyed by [project, at, trace_id], `legacy` by [trace_id, project]. */
  constructor(
    private readonly byStart: KvDb,
    private readonly legacy: KvDb,
  ) {
    this.read();
  }

  /** Every place a trace's entries may be, in any project. */
  of(traceId: string): readonly TracePlace[] {
    const kept = this.places.get(traceId);
    return kept === undefined ? none : Array.isArray(kept) ? kept : [kept];
  }

  /** A decision stores a trace's entry at a place. */
  added(traceId: string, project: string, at: string | null): void {
    const known = this.of(traceId);
    if (known.some((place) => place.project === project && place.at === at)) return;
    const place = { project: this.project(project), at };
    this.places.set(traceId, known.length === 0 ? place : [...known, place]);
    this.count++;
  }

  /** A decision removes or moves the entry at one place. */
  left(): void {
    this.stale++;
  }

  /** Called by each decision first: reads the places again once stale ones are half of them. */
  refresh(): void {
    if (this.stale > this.count / 2) this.read();
  }

  private read(): void {
    this.places = new Map();
    this.count = 0;
    this.stale = 0;
    for (const key of this.legacy.keys({})) this.added(key[0] as string, key[1] as string, null);
    for (const key of this.byStart.keys({})) this.added(key[2] as string, key[0] as string, key[1] as string);
  }

  private project(id: string): string {
    let kept = this.projects.get(id);
    if (kept === undefined) this.projects.set(id, (kept = id));
    return kept;
  }
}
