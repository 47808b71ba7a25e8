// A toy actor kind for the actor's unit tests: a list of numbers. `Refuse` is refused by the
// decider, `Crash` throws a bug in decide, `Poison` decides an event that evolve cannot apply,
// `Name` takes a unique claim on its name, `Stray` decides an event of a type the kind does not have.
import type { ActorEnvironment } from '../../src/actors/actor.ts';
import { defaultLimits, type Limits } from '../../src/config.ts';
import { plainCodec, type ActorKind } from '../../src/actors/actor-kind.ts';
import { UniqueClaims } from '../../src/actors/unique-claims.ts';
import { conflict, invalid } from '../../src/domain/rejection.ts';
import { Journal } from '../../src/store/journal.ts';
import { MemoryKv } from '../../src/store/memory-kv.ts';
import { FaultyKv } from './faulty-kv.ts';

export type Command =
  | { type: 'Append'; value: number }
  | { type: 'Refuse' }
  | { type: 'Crash' }
  | { type: 'Poison' }
  | { type: 'Name'; name: string }
  | { type: 'Stray' };
export type Event = { type: 'Appended'; value: number } | { type: 'Named'; name: string } | { type: 'Poisoned' };
export interface State {
  values: number[];
  name: string | null;
}

const nameClaim = (name: string) => ({ key: `name:${name}`, refusal: () => invalid({ name: ['taken'] }) });

export const listKind: ActorKind<State, Command, Event> = {
  name: 'list',
  eventTypes: { Appended: true, Named: true, Poisoned: true },
  decider: {
    initialState: () => ({ values: [], name: null }),
    decide(_state, command) {
      if (command.type === 'Refuse') throw conflict('refused');
      if (command.type === 'Crash') throw new Error('a bug');
      if (command.type === 'Poison') return [{ type: 'Poisoned' }];
      if (command.type === 'Stray') return [{ type: 'Strayed' } as unknown as Event];
      if (command.type === 'Name') return [{ type: 'Named', name: command.name }];
      return [{ type: 'Appended', value: command.value }];
    },
    evolve(state, event) {
      if (event.type === 'Poisoned') throw new Error('an event that cannot be applied');
      if (event.type === 'Named') state.name = event.name;
      else state.values.push(event.value);
      return state;
    },
    isGone: () => false,
  },
  codec: plainCodec((state) => ({ ...state, values: [...state.values] }), (value) => {
    const plain = value as State;
    return { values: [...plain.values], name: plain.name };
  }),
  claimsOf: (state) => (state.name ? [nameClaim(state.name)] : []),
  claimsAfter(state, events) {
    let name = state.name;
    for (const event of events) if (event.type === 'Named') name = event.name;
    return name ? [nameClaim(name)] : [];
  },
  snapshotItems: (state) => state.values.length,
};

/** An environment on a FaultyKv over memory, recording what reaches the read model. */
export function environment(kv = new FaultyKv(new MemoryKv()), limits: Partial<Limits> = {}) {
  const committed: Event[][] = [];
  const env: ActorEnvironment = {
    journal: new Journal(kv),
    claims: new UniqueClaims(),
    limits: { ...defaultLimits, mailboxDepthMax: 1000, commitBatchMax: 256, commitsInFlightMax: 4, snapshotEvery: 1000, ...limits },
    committed: (_kind, _id, events) => committed.push([...(events as Event[])]),
    ended: () => {},
    storeOutcome: () => {},
    jsonText: (value) => JSON.stringify(value),
  };
  return { env, kv, committed };
}

/** The values appended, in the order the read model received them. */
export function committedValues(committed: Event[][]): number[] {
  return committed.flat().flatMap((event) => (event.type === 'Appended' ? [event.value] : []));
}
