// Driving a pure decider in unit tests the way an actor drives it.
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

/** Decides one command and applies its events, as an actor does. */
export function step<State, Command, Event>(
  decider: Decider<State, Command, Event>,
  state: State,
  command: Command,
): { state: State; events: readonly Event[] } {
  const events = decider.decide(state, command);
  return { state: replay(decider, state, events), events };
}
