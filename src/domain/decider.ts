// The shape of every actor kind's business logic. decide and evolve never read the clock,
// randomness or any I/O: ids and time arrive inside commands and events.

export interface Decider<State, Command, Event, Limits = object> {
  initialState(): State;
  /**
   * The events a command causes, or a thrown `Rejected` when it may not happen. Never mutates.
   * `limits` are the service's configured limits, read under their configured names.
   */
  decide(state: State, command: Command, limits: Limits): readonly Event[];
  /**
   * Applies one event. It may update `state` in place and return it: an actor owns its state, and
   * copying a job's iterations on every event would make each write O(n). Readers never see this
   * state; they read the committed read model.
   */
  evolve(state: State, event: Event): State;
  /** True once the stream has ended (its record was deleted): the stream is then dropped. */
  isGone(state: State): boolean;
}

/** Replays events onto a fresh or given state (recovery, tests). */
export function replay<State, Event>(
  decider: Pick<Decider<State, unknown, Event>, 'evolve'>,
  state: State,
  events: Iterable<Event>,
): State {
  for (const event of events) state = decider.evolve(state, event);
  return state;
}
