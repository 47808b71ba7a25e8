// Every actor of the service, by kind and id: recovered from the store before the server
// listens, spawned for creates, forgotten when their stream ends. Operations that must change
// several streams atomically (moving an iteration, deleting a project) hold the actors involved
// in one global order and write all their changes in one commit.
import type { Limits } from '../config.ts';
import type { IterationChanges } from '../domain/job.ts';
import type { JobIteration, Timestamp } from '../domain/records.ts';
import { notFound } from '../domain/rejection.ts';
import type { Before, Change } from '../events/changes.ts';
import type { ReadModel } from '../read-model.ts';
import { StoreCorruptError, type Journal, type RecoveredStream } from '../store/journal.ts';
import type { KvOp } from '../store/kv.ts';
import { Unavailable } from '../unavailable.ts';
import { Actor, type ActorEnvironment, type StagedWrite, type StreamActor } from './actor.ts';
import type { ActorKind, JsonText } from './actor-kind.ts';
import {
  identityKind, identityStreamId, streamKinds,
  type IdentityKind, type RegisteredKind, type StreamKindName, type StreamKinds,
} from './kinds.ts';
import { ProjectGates } from './project-gates.ts';
import { UniqueClaims } from './unique-claims.ts';

type KindActor<K> = K extends ActorKind<infer S, infer C, infer E> ? Actor<S, C, E> : never;
export type IdentityActor = KindActor<IdentityKind>;
/** The actor of a stream of kind K. */
export type ActorOf<K extends StreamKindName> = KindActor<StreamKinds[K]>;
export type ProjectActor = ActorOf<'project'>;
export type JobActor = ActorOf<'job'>;
type CommandOf<K extends StreamKindName> = Parameters<ActorOf<K>['ask']>[0];
type EventsOf<K extends StreamKindName> = Awaited<ReturnType<ActorOf<K>['ask']>>;
// Inside the registry every kind is handled alike; the public methods above give the types back.
type AnyKind = RegisteredKind<any, any, any>;
type AnyActor = Actor<any, any, any>;

export interface RegistryOptions {
  journal: Journal;
  readModel: ReadModel;
  /** The configured limits: actors and their deciders read theirs by name. */
  limits: Readonly<Limits>;
  /** Reports every commit's outcome (store health). */
  storeOutcome(ok: boolean, error?: unknown): void;
  /** Called once a project's deletion is durable (for data kept outside actors, like spans). */
  projectDeleted?(projectId: string): void;
  /** JSON text of immutable values (datapoints), shared with responses. */
  jsonText: JsonText;
  /** Called with each committed message's changes once the read model has them (the event feed). */
  changed?(changes: readonly Change[]): void;
  /** Ops of other stores that a message's events write in their own commit (see ActorEnvironment.alongside). */
  alongside?(kind: string, id: string, events: readonly unknown[]): KvOp[];
  /** Called with each committed message's events once the read model has them (stores kept beside it, the runs' dispatch). */
  applied?(kind: string, id: string, events: readonly unknown[]): void;
  /** Called with a message's events once decided, before they are durable (see ActorEnvironment.decided). */
  decided?(kind: string, id: string, events: readonly unknown[]): void;
}

/** Commits begun since start for one actor kind, and the messages they carried. */
export interface CommitCount {
  commits: number;
  messages: number;
}

/** Actors whose snapshots one shutdown transaction writes. */
const snapshotsPerCommit = 512;

export class Registry {
  readonly gates = new ProjectGates();
  readonly claims = new UniqueClaims();
  identity: IdentityActor;
  /** The actors of each stream kind, by id. */
  private readonly actors = new Map<string, Map<string, AnyActor>>(Object.keys(streamKinds).map((name) => [name, new Map()]));
  private readonly env: ActorEnvironment;
  /** Commits begun by each actor kind since start (metrics). */
  private readonly commitCounts = new Map<string, CommitCount>();

  private constructor(private readonly options: RegistryOptions) {
    const { readModel } = options;
    const before: Before = { agent: (agentId) => readModel.agents.get(agentId), members: (project) => readModel.memberIds(project) };
    this.env = {
      journal: options.journal,
      claims: this.claims,
      limits: options.limits,
      storeOutcome: options.storeOutcome,
      jsonText: options.jsonText,
      committed(kindName, id, events) {
        const kind = registeredKind(kindName);
        // What changed is judged against the read model before the events (was the agent live?).
        const changes = options.changed ? kind.changes(id, events, before) : [];
        kind.apply(readModel, events);
        options.applied?.(kindName, id, events);
        if (changes.length > 0) options.changed!(changes);
      },
      alongside: options.alongside,
      decided: options.decided,
      commitBegun: (kindName, messages) => {
        let count = this.commitCounts.get(kindName);
        if (!count) this.commitCounts.set(kindName, (count = { commits: 0, messages: 0 }));
        count.commits++;
        count.messages += messages;
      },
      ended: (kindName, id) => {
        this.actorsOf(kindName).delete(id);
      },
    };
    this.identity = new Actor(identityKind, identityStreamId, this.env);
  }

  /** Recovers every stream (snapshot + journal suffix through evolve) and builds the read model. */
  static recover(options: RegistryOptions): Registry {
    const registry = new Registry(options);
    for (const stream of options.journal.streams()) registry.restore(stream);
    for (const actor of registry.all()) actor.takeClaims();
    identityKind.load(options.readModel, [registry.identity.current]);
    for (const [name, actors] of registry.actors) {
      registeredKind(name).load(options.readModel, [...actors.values()].map((actor) => actor.current));
    }
    return registry;
  }

  /** The live actor of a stream, if there is one. */
  actor<K extends StreamKindName>(kind: K, id: string): ActorOf<K> | undefined {
    return this.actorsOf(kind).get(id) as ActorOf<K> | undefined;
  }

  /**
   * Creates a stream with its first command, inside the gates of the projects it lands in (none
   * for a project itself); the actor is forgotten if that command is refused.
   */
  create<K extends StreamKindName>(kindName: K, id: string, projects: readonly string[], command: CommandOf<K>): Promise<EventsOf<K>> {
    return this.gates.pass(projects, () => this.spawn(kindName, id, command));
  }

  /**
   * The one way a route writes to a record: ask its actor (gone meanwhile: not found) inside the
   * gates of the projects the write lands in, so that a project being deleted refuses it.
   */
  ask<S, C, E>(actor: Actor<S, C, E> | undefined, projects: readonly string[], command: C): Promise<readonly E[]> {
    if (!actor) return Promise.reject(notFound());
    return this.gates.pass(projects, () => actor.ask(command));
  }

  /**
   * Moves an iteration to another job: removed from one stream, added to the other, one commit,
   * inside the gates of both jobs' projects. An iteration deleted meanwhile is not found; a target
   * job deleted meanwhile refuses the add.
   */
  moveIteration(source: JobActor, target: JobActor, id: string, changes: IterationChanges, projects: readonly string[], now: Timestamp): Promise<void> {
    return this.gates.pass(projects, () => this.joint([source, target], async () => {
      const current = source.current.iterations.get(id);
      if (!current) throw notFound();
      const moved: JobIteration = { ...current, ...changes };
      const removal = source.decide({ type: 'RemoveIteration', id, now });
      const addition = target.decide({ type: 'AddIteration', iteration: moved });
      await this.commitTogether([() => source.stage(removal), () => target.stage(addition)]);
    }));
  }

  /**
   * Deletes a project and everything in it: its agents (with datasets), jobs (with iterations)
   * and API keys, all in one commit. New writes into the project are refused from the start.
   */
  async deleteProject(project: ProjectActor): Promise<void> {
    const projectId = project.id;
    await this.gates.close(projectId);
    try {
      const streams = [...this.streamActors()].filter((actor) => (actor.kind as AnyKind).projectOf(actor.current) === projectId);
      await this.joint([project, this.identity, ...streams], async () => {
        const projectEvents = project.decide({ type: 'DeleteProject' });
        const identityEvents = this.identity.decide({ type: 'ForgetProject', project: projectId });
        await this.commitTogether([
          ...streams.map((actor) => () => actor.end()),
          () => this.identity.stage(identityEvents),
          () => project.stage(projectEvents),
        ]);
      });
    } catch (error) {
      this.gates.reopen(projectId);
      throw error;
    }
    this.options.projectDeleted?.(projectId);
  }

  /** Mailbox depth of every actor with something waiting (metrics). */
  *busyActors(): Generator<{ kind: string; depth: number }> {
    for (const actor of this.all()) if (actor.depth > 0) yield { kind: actor.stream.kind, depth: actor.depth };
  }

  /** Commits each actor kind began since start, and the messages they carried (metrics). */
  commitsByKind(): ReadonlyMap<string, CommitCount> {
    return this.commitCounts;
  }

  counts(): Record<string, number> {
    return Object.fromEntries([...this.actors].map(([name, actors]) => [name, actors.size]));
  }

  /** Graceful stop: refuse new messages, finish queued ones, snapshot everything journaled. */
  async close(): Promise<void> {
    const actors = [...this.all()];
    await Promise.all(actors.map((actor) => actor.stop()));
    const pending = actors.map((actor) => actor.snapshotNow()).filter((write) => write !== undefined);
    for (let start = 0; start < pending.length; start += snapshotsPerCommit) {
      const chunk = pending.slice(start, start + snapshotsPerCommit);
      await this.options.journal.kv.write(chunk.flatMap((write) => write.ops));
      for (const write of chunk) write.finish();
    }
  }

  private *all(): Generator<StreamActor> {
    yield this.identity;
    yield* this.streamActors();
  }

  private *streamActors(): Generator<AnyActor> {
    for (const actors of this.actors.values()) yield* actors.values();
  }

  private async spawn<K extends StreamKindName>(kindName: K, id: string, command: CommandOf<K>): Promise<EventsOf<K>> {
    const actors = this.actorsOf(kindName);
    if (actors.has(id)) throw new Error(`${kindName} ${id} already exists`);
    const actor: AnyActor = new Actor(streamKinds[kindName] as AnyKind, id, this.env);
    actors.set(id, actor);
    try {
      return (await actor.ask(command)) as EventsOf<K>;
    } finally {
      if (actor.isEmpty && actors.get(id) === actor) actors.delete(id);
    }
  }

  private actorsOf(kindName: string): Map<string, AnyActor> {
    const actors = this.actors.get(kindName);
    if (!actors) throw new Error(`the ${kindName} stream never ends`);
    return actors;
  }

  /** Holds every actor (in one global order, so joint operations cannot deadlock), then works. */
  private joint<T>(actors: readonly StreamActor[], work: () => Promise<T>): Promise<T> {
    const ordered = [...new Set(actors)].sort((a, b) => {
      const left = `${a.stream.kind}:${a.id}`;
      const right = `${b.stream.kind}:${b.id}`;
      return left < right ? -1 : left > right ? 1 : 0;
    });
    const hold = (index: number): Promise<T> =>
      index === ordered.length ? work() : ordered[index]!.exclusive(() => hold(index + 1));
    return hold(0);
  }

  /** Stages each actor's part (undoing all if one is refused), then commits them together. */
  private async commitTogether(stages: (() => StagedWrite)[]): Promise<void> {
    const staged: StagedWrite[] = [];
    try {
      for (const stage of stages) staged.push(stage());
    } catch (error) {
      for (const write of staged) write.abandon(error);
      throw error;
    }
    try {
      await this.options.journal.kv.write(staged.flatMap((write) => write.ops));
    } catch (error) {
      this.options.storeOutcome(false, error);
      for (const write of staged) write.abandon(error);
      throw new Unavailable('store_failed', 1);
    }
    this.options.storeOutcome(true);
    for (const write of staged) write.finish();
  }

  private restore(stream: RecoveredStream): void {
    if (stream.kind === identityKind.name) {
      this.identity = new Actor(identityKind, stream.id, this.env, stream);
      return;
    }
    const actors = this.actors.get(stream.kind);
    if (!actors) throw new StoreCorruptError(`The store holds a stream of unknown kind "${stream.kind}"`);
    actors.set(stream.id, new Actor(registeredKind(stream.kind), stream.id, this.env, stream));
  }
}

/** Every registered kind by the name its streams are stored under. */
function registeredKind(name: string): AnyKind {
  const kind: AnyKind | undefined = name === identityKind.name ? identityKind : streamKinds[name as StreamKindName];
  if (!kind) throw new Error(`no actor kind is named ${name}`);
  return kind;
}
