// Driving a pure decider in unit tests the way an actor drives it.
import type { ActorKind } from '../../src/actors/actor-kind.ts';
import { defaultLimits, type Limits } from '../../src/config.ts';
import { replay, type Decider } from '../../src/domain/decider.ts';
import { Rejected, type Rejection } from '../../src/domain/rejection.ts';

/** The rejection `run` throws; fails when it throws anything else or nothing. */
export function rejection(run: () => unknown): Rejection {
  try {
    run();
  } catch (error) {
    if (error instanceof Rejected) return error.rejection;
    throw error;
  }
  throw new Error('expected a rejection');
}

/** Decides one command and applies its events, as an actor does (under the default limits). */
export function step<State, Command, Event>(
  decider: Decider<State, Command, Event, Limits>,
  state: State,
  command: Command,
  limits: Limits = defaultLimits,
): { state: State; events: readonly Event[] } {
  const events = decider.decide(state, command, limits);
  return { state: replay(decider, state, events), events };
}

/** JSON text as the actors' JSON cache makes it. */
const jsonText = (value: object) => JSON.stringify(value);

/**
 * Events as recovery reads them back: through the kind's event codec and a fresh copy (as the
 * store decodes it), so nothing is shared with the state that produced them.
 */
export function storedEvents<Event>(kind: ActorKind<any, any, Event>, events: readonly Event[]): Event[] {
  return events.map((event) => {
    const stored = structuredClone(kind.eventCodec ? kind.eventCodec.encode(event, jsonText) : event);
    return kind.eventCodec ? kind.eventCodec.decode(stored) : (stored as Event);
  });
}

/** A state as recovery reads it back from a snapshot (its parts included). */
export function snapshotRoundTrip<State>(kind: ActorKind<State, any, any>, state: State): State {
  const encoded = structuredClone(kind.codec.encode(state, new Set(), jsonText));
  const parts = new Map(encoded.newParts);
  return kind.codec.decode(encoded.value, (id) => parts.get(id)).state;
}
