// What the actor machinery needs to know about one kind of actor: its decider, how its state is
// snapshotted and its events journaled, and which unique claims its records hold. What the
// registry adds for readers (read-model hooks) is in kinds.ts.
import type { Limits } from '../config.ts';
import type { Decider } from '../domain/decider.ts';
import type { Rejected } from '../domain/rejection.ts';

/** A claim on a unique key, and the refusal to give when someone else holds it. */
export interface Claim {
  key: string;
  refusal: () => Rejected;
}

export interface SnapshotCodec<State> {
  /**
   * The snapshot value of `state`, plus large immutable parts not yet stored (`storedParts` lists
   * those earlier snapshots wrote) and parts no longer referenced.
   */
  encode(state: State, storedParts: ReadonlySet<string>, jsonText: JsonText): {
    value: unknown;
    newParts: [id: string, value: unknown][];
    staleParts: string[];
  };
  decode(value: unknown, readPart: (id: string) => unknown): { state: State; storedParts: Set<string> };
}

/** JSON text of an immutable value, cached (see src/json-cache.ts). */
export type JsonText = (value: object) => string;

/** How events are written to the journal and read back, when not as they are. */
export interface EventCodec<Event> {
  encode(event: Event, jsonText: JsonText): unknown;
  decode(stored: unknown): Event;
}

/** The `type` names of an event union. */
export type EventType<Event> = Event extends { type: infer T extends string } ? T : never;

export interface ActorKind<State, Command, Event> {
  readonly name: string;
  /**
   * Every event type of the kind (the compiler holds the list complete): an event decided or
   * replayed with another type is a bug or a corrupt store, and stops the actor loudly.
   */
  readonly eventTypes: Readonly<Record<EventType<Event>, true>>;
  /** Its decisions read the configured limits they need, under their configured names. */
  readonly decider: Decider<State, Command, Event, Limits>;
  readonly codec: SnapshotCodec<State>;
  readonly eventCodec?: EventCodec<Event>;
  /** The unique keys a state holds. */
  claimsOf(state: State): Claim[];
  /** The unique keys the state would hold after `events`, computed without applying them. */
  claimsAfter(state: State, events: readonly Event[]): Claim[];
  /**
   * How many items a snapshot of `state` encodes (a project's memberships; a job's parts, each a
   * reference to iterations stored once). A snapshot is written only once the journal since the
   * last one holds at least half as many entries, so that however large a state grows (its size
   * doubles between two snapshots at most), writing its snapshots costs each write about two
   * items' encoding.
   */
  snapshotItems(state: State): number;
}

/** Codec for states that are plain data apart from Maps, which are stored as entry lists. */
export function plainCodec<State>(toPlain: (state: State) => unknown, fromPlain: (value: unknown) => State): SnapshotCodec<State> {
  return {
    encode: (state) => ({ value: toPlain(state), newParts: [], staleParts: [] }),
    decode: (value) => ({ state: fromPlain(value), storedParts: new Set() }),
  };
}
