// Where each stored trace's entry is, kept in memory so that a trace is found by its id while its
// entry is keyed by time. Entries are keyed [project, at, trace_id], `at` being the trace's start
// when it was first stored: a new trace appends to the index instead of landing on a random page
// of it. Keyed by trace id, a commit's few hundred new traces dirtied as many random pages, which
// cost ingest a quarter of its CPU and half of what it wrote (36,590 -> 49,062 spans/s, 2.3 -> 1.3
// KB per span written, on a million spans). Stores written when entries were keyed by trace id
// are migrated when they open (span-layout.ts).
//
// The places may include some where nothing is stored any more (a superset is all a reader needs:
// it reads the place and finds nothing). A place whose entry a decision removed or moved, and one
// a decision added whose commit then failed, is checked by a later decision, inside its write
// transaction, which the span writer begins only once the one before has committed or failed (so
// what it reads is settled), and forgotten if its entry is not there: a look-up per place, so
// that retention's removals cost as they go (re-reading every place once stale ones were half of
// them held one decision for 208 ms with 200,000 traces). The places are read whole when the
// store opens (~125,000 keys for a million spans).
import type { Key, KvDb } from '../store/kv.ts';

export interface TracePlace {
  readonly project: string;
  /** The start the entry is keyed by. */
  readonly at: string;
}

/** One place of one trace. */
export interface TracePlaceRef {
  traceId: string;
  project: string;
  at: string;
}

const none: readonly TracePlace[] = [];

export class TracePlaces {
  /** Nearly every trace has one place: it is kept bare, a list only for the few with more. */
  private readonly places = new Map<string, TracePlace | TracePlace[]>();
  /** Project ids are few: one string each, not one per trace. */
  private readonly projects = new Map<string, string>();
  /** Places whose entry a decision removed or moved, or whose commit failed, for the next decision to check. */
  private leaving: TracePlaceRef[] = [];
  /** The places the decision being made added, until the next decision begins. */
  private addedByDecision: TracePlaceRef[] = [];

  /** `byStart` is keyed by [project, at, trace_id]. */
  constructor(private readonly byStart: KvDb) {
    for (const key of byStart.keys({})) this.keep(key[2] as string, key[0] as string, key[1] as string);
  }

  /** Every place a trace's entries may be, in any project. */
  of(traceId: string): readonly TracePlace[] {
    const kept = this.places.get(traceId);
    return kept === undefined ? none : Array.isArray(kept) ? kept : [kept];
  }

  /** The key of a trace's entry at a place: the one statement of the key's layout. */
  entryKey(traceId: string, project: string, at: string): Key {
    return [project, at, traceId];
  }

  /** A decision stores a trace's entry at a place. */
  added(traceId: string, project: string, at: string): void {
    if (this.keep(traceId, project, at)) this.addedByDecision.push({ traceId, project, at });
  }

  /**
   * The places the decision just made added. The span writer keeps them until its commit settles:
   * if it fails, they are handed back (`notStored`).
   */
  decisionAdded(): readonly TracePlaceRef[] {
    return this.addedByDecision;
  }

  /** A decision's commit failed: the places it added are checked by the next decision, as left ones are. */
  notStored(places: readonly TracePlaceRef[]): void {
    for (const place of places) this.leaving.push(place);
  }

  /** A decision removes or moves the entry at one of a trace's places. */
  left(traceId: string, project: string, at: string): void {
    this.leaving.push({ traceId, project, at });
  }

  /**
   * Called by each decision first: forgets the places left, or added by a failed commit, whose
   * entry is not stored. One stored again meanwhile is kept, and so is one whose removal's commit
   * failed (its entry is still there). The decision's own additions are counted from here.
   */
  refresh(): void {
    if (this.addedByDecision.length > 0) this.addedByDecision = [];
    if (this.leaving.length === 0) return;
    const leaving = this.leaving;
    this.leaving = [];
    for (const { traceId, project, at } of leaving) {
      if (!this.byStart.has(this.entryKey(traceId, project, at))) this.forget(traceId, project, at);
    }
  }

  /** Records a place; false if it was known. */
  private keep(traceId: string, project: string, at: string): boolean {
    const known = this.of(traceId);
    if (known.some((place) => place.project === project && place.at === at)) return false;
    const place = { project: this.project(project), at };
    this.places.set(traceId, known.length === 0 ? place : [...known, place]);
    return true;
  }

  private forget(traceId: string, project: string, at: string): void {
    const rest = this.of(traceId).filter((place) => place.project !== project || place.at !== at);
    if (rest.length === 0) this.places.delete(traceId);
    else this.places.set(traceId, rest.length === 1 ? rest[0]! : rest);
  }

  private project(id: string): string {
    let kept = this.projects.get(id);
    if (kept === undefined) this.projects.set(id, (kept = id));
    return kept;
  }
}
