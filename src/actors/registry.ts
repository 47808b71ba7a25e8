// Every actor of the service, by kind and id: recovered from the store before the server
// listens, spawned for creates, forgotten when their stream ends. Operations that must change
// several streams atomically (moving an iteration, deleting a project) hold the actors involved
// in one global order and write all their changes in one commit.
import type { AgentState } from '../domain/agent.ts';
import type { IdentityState } from '../domain/identity.ts';
import type { IterationChanges, JobState } from '../domain/job.ts';
import type { ProjectState } from '../domain/project.ts';
import type { JobIteration } from '../domain/records.ts';
import { notFound } from '../domain/rejection.ts';
import { agentChanges, jobChanges, projectChanges, type Before, type Change } from '../events/changes.ts';
import type { ReadModel } from '../read-model.ts';
import { StoreCorruptError, type Journal, type RecoveredStream } from '../store/journal.ts';
import { Actor, ActorUnavailable, type ActorEnvironment, type StagedWrite, type StreamActor } from './actor.ts';
import type { ActorKind, JsonText } from './kind.ts';
import {
  agentKind, identityKind, identityStreamId, jobKind, projectKind,
  type AgentKind, type IdentityKind, type JobKind, type ProjectKind,
} from './kinds.ts';
import { ProjectGates } from './project-gates.ts';
import { UniqueClaims } from './unique-claims.ts';

type KindActor<K> = K extends ActorKind<infer S, infer C, infer E> ? Actor<S, C, E> : never;
export type IdentityActor = KindActor<IdentityKind>;
export type ProjectActor = KindActor<ProjectKind>;
export type AgentActor = KindActor<AgentKind>;
export type JobActor = KindActor<JobKind>;

export interface RegistryOptions {
  journal: Journal;
  readModel: ReadModel;
  mailboxDepthMax: number;
  commitBatchMax: number;
  commitsInFlightMax: number;
  snapshotEvery: number;
  /** Reports every commit's outcome (store health). */
  storeOutcome(ok: boolean, error?: unknown): void;
  /** Called once a project's deletion is durable (for data kept outside actors, like spans). */
  projectDeleted?(projectId: string): void;
  /** JSON text of immutable values (datapoints), shared with responses. */
  jsonText: JsonText;
  /** Called with each committed message's changes once the read model has them (the event feed). */
  changed?(changes: readonly Change[]): void;
}

/** Actors whose snapshots one shutdown transaction writes. */
const snapshotsPerCommit = 512;

export class Registry {
  readonly gates = new ProjectGates();
  readonly claims = new UniqueClaims();
  identity: IdentityActor;
  private readonly projects = new Map<string, ProjectActor>();
  private readonly agents = new Map<string, AgentActor>();
  private readonly jobs = new Map<string, JobActor>();
  private readonly env: ActorEnvironment;

  private constructor(private readonly options: RegistryOptions) {
    const { readModel } = options;
    this.env = {
      journal: options.journal,
      claims: this.claims,
      mailboxDepthMax: options.mailboxDepthMax,
      commitBatchMax: options.commitBatchMax,
      commitsInFlightMax: options.commitsInFlightMax,
      snapshotEvery: options.snapshotEvery,
      storeOutcome: options.storeOutcome,
      jsonText: options.jsonText,
      committed(kind, id, events) {
        // What changed is read against the state before the events (was the agent live?).
        const changes = options.changed ? changesOf(kind, id, events, readModel) : [];
        if (kind === 'identity') readModel.applyIdentity(events as never);
        else if (kind === 'project') readModel.applyProject(events as never);
        else if (kind === 'agent') readModel.applyAgent(events as never);
        else readModel.applyJob(events as never);
        if (changes.length > 0) options.changed!(changes);
      },
      ended: (kind, id) => {
        this.mapFor(kind).delete(id);
      },
    };
    this.identity = new Actor(identityKind, identityStreamId, this.env);
  }

  /** Recovers every stream (snapshot + journal suffix through evolve) and builds the read model. */
  static recover(options: RegistryOptions): Registry {
    const registry = new Registry(options);
    for (const stream of options.journal.streams()) registry.restore(stream);
    for (const actor of registry.all()) actor.takeClaims();
    options.readModel.load({
      identity: registry.identity.current as IdentityState,
      projects: [...registry.projects.values()].map((actor) => actor.current as ProjectState),
      agents: [...registry.agents.values()].map((actor) => actor.current as AgentState),
      jobs: [...registry.jobs.values()].map((actor) => actor.current as JobState),
    });
    return registry;
  }

  project(id: string): ProjectActor | undefined {
    return this.projects.get(id);
  }

  agent(id: string): AgentActor | undefined {
    return this.agents.get(id);
  }

  job(id: string): JobActor | undefined {
    return this.jobs.get(id);
  }

  /**
   * The one way a route writes to a record: ask its actor (gone meanwhile: not found) inside the
   * gates of the projects the write lands in, so that a project being deleted refuses it.
   */
  write<S, C, E>(actor: Actor<S, C, E> | undefined, projects: readonly string[], command: C): Promise<readonly E[]> {
    if (!actor) return Promise.reject(notFound());
    return this.gates.pass(projects, () => actor.ask(command));
  }

  /** Creates a stream with its first command; the actor is forgotten if that command is refused. */
  createProject(id: string, command: Parameters<ProjectActor['ask']>[0]) {
    return this.create(this.projects, new Actor(projectKind, id, this.env), command);
  }

  createAgent(id: string, command: Parameters<AgentActor['ask']>[0]) {
    return this.create(this.agents, new Actor(agentKind, id, this.env), command);
  }

  createJob(id: string, command: Parameters<JobActor['ask']>[0]) {
    return this.create(this.jobs, new Actor(jobKind, id, this.env), command);
  }

  /**
   * Moves an iteration to another job: removed from one stream, added to the other, one commit.
   * An iteration deleted meanwhile is not found; a target job deleted meanwhile refuses the add.
   */
  moveIteration(source: JobActor, target: JobActor, id: string, changes: IterationChanges, iterationsMax: number): Promise<void> {
    return this.joint([source, target], async () => {
      const current = source.current.iterations.get(id);
      if (!current) throw notFound();
      const moved: JobIteration = { ...current, ...changes };
      const removal = source.decide({ type: 'RemoveIteration', id });
      const addition = target.decide({ type: 'AddIteration', iteration: moved, iterationsMax });
      await this.commitTogether([() => source.stage(removal), () => target.stage(addition)]);
    });
  }

  /**
   * Deletes a project and everything in it: its agents (with datasets), jobs (with iterations)
   * and API keys, all in one commit. New writes into the project are refused from the start.
   */
  async deleteProject(project: ProjectActor): Promise<void> {
    const projectId = project.id;
    await this.gates.close(projectId);
    try {
      const agents = [...this.agents.values()].filter((actor) => actor.current.agent?.project === projectId);
      const jobs = [...this.jobs.values()].filter((actor) => actor.current.job?.project === projectId);
      const streams: StreamActor[] = [...agents, ...jobs];
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

  counts(): Record<string, number> {
    return { project: this.projects.size, agent: this.agents.size, job: this.jobs.size };
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
    yield* this.projects.values();
    yield* this.agents.values();
    yield* this.jobs.values();
  }

  private async create<S, C, E>(map: Map<string, Actor<S, C, E>>, actor: Actor<S, C, E>, command: C): Promise<readonly E[]> {
    if (map.has(actor.id)) throw new Error(`${actor.kind.name} ${actor.id} already exists`);
    map.set(actor.id, actor);
    try {
      return await actor.ask(command);
    } finally {
      if (actor.isEmpty && map.get(actor.id) === actor) map.delete(actor.id);
    }
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
      throw new ActorUnavailable('store_failed', 1);
    }
    this.options.storeOutcome(true);
    for (const write of staged) write.finish();
  }

  private restore(stream: RecoveredStream): void {
    switch (stream.kind) {
      case 'identity':
        this.identity = new Actor(identityKind, stream.id, this.env, stream);
        break;
      case 'project':
        this.projects.set(stream.id, new Actor(projectKind, stream.id, this.env, stream));
        break;
      case 'agent':
        this.agents.set(stream.id, new Actor(agentKind, stream.id, this.env, stream));
        break;
      case 'job':
        this.jobs.set(stream.id, new Actor(jobKind, stream.id, this.env, stream));
        break;
      default:
        throw new StoreCorruptError(`The store holds a stream of unknown kind "${stream.kind}"`);
    }
  }

  private mapFor(kind: string): Map<string, unknown> {
    if (kind === 'project') return this.projects;
    if (kind === 'agent') return this.agents;
    if (kind === 'job') return this.jobs;
    throw new Error(`the ${kind} stream never ends`);
  }
}

/** The changes one committed message makes, judged against the read model before it applies them. */
function changesOf(kind: string, id: string, events: readonly unknown[], readModel: ReadModel): Change[] {
  const before: Before = { agent: (agentId) => readModel.agents.get(agentId), members: (project) => readModel.memberIds(project) };
  if (kind === 'project') return projectChanges(events as never, before);
  if (kind === 'agent') return agentChanges(id, events as never, before);
  if (kind === 'job') return jobChanges(events as never);
  return [];
}
