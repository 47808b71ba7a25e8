// The four kinds of actor: identity (one for the service), project, agent and job (one each),
// each with everything the registry needs to know of it. Adding a kind is adding one here.
import { agentDecider, type AgentCommand, type AgentEvent, type AgentState } from '../domain/agent.ts';
import { identityDecider, type IdentityCommand, type IdentityEvent, type IdentityState } from '../domain/identity.ts';
import { jobDecider, type JobCommand, type JobEvent, type JobState } from '../domain/job.ts';
import { projectDecider, type ProjectCommand, type ProjectEvent, type ProjectState, type Worker } from '../domain/project.ts';
import type { Agent, ApiKey, Datapoint, Dataset, Membership, Project, User } from '../domain/records.ts';
import { invalid } from '../domain/rejection.ts';
import { agentChanges, jobChanges, projectChanges, type Before, type Change } from '../events/changes.ts';
import type { ReadModel } from '../read-model.ts';
import { plainCodec, type ActorKind, type Claim, type SnapshotCodec } from './actor-kind.ts';
import { iterationsPerPart, jobCodec, runEventCodec, runSnapshotItems } from './job-codec.ts';

/** An actor kind as the registry holds it: the actor's needs plus how readers learn of its writes. */
export interface RegisteredKind<State, Command, Event> extends ActorKind<State, Command, Event> {
  /** Applies one message's committed events to the read model. */
  apply(readModel: ReadModel, events: readonly Event[]): void;
  /** Builds the read model's part from every recovered state of the kind, in bulk. */
  load(readModel: ReadModel, states: Iterable<State>): void;
  /** What one message's events change, for the event feed, judged before the read model has them. */
  changes(id: string, events: readonly Event[], before: Before): Change[];
  /** The project a stream of the kind lives in: deleting that project ends the stream with it. */
  projectOf(state: State): string | undefined;
}

export type IdentityKind = RegisteredKind<IdentityState, IdentityCommand, IdentityEvent>;
export type ProjectKind = RegisteredKind<ProjectState, ProjectCommand, ProjectEvent>;
export type AgentKind = RegisteredKind<AgentState, AgentCommand, AgentEvent>;
export type JobKind = RegisteredKind<JobState, JobCommand, JobEvent>;

/** The single identity stream's id. */
export const identityStreamId = 'service';

export const identityKind: IdentityKind = {
  name: 'identity',
  eventTypes: { UserRegistered: true, ApiKeyCreated: true, ApiKeyRevoked: true, ApiKeyUsed: true, RefreshTokenUsed: true, ProjectApiKeysDeleted: true },
  decider: identityDecider,
  codec: plainCodec(
    (state) => ({
      users: [...state.users.values()],
      lastUserId: state.lastUserId,
      apiKeys: [...state.apiKeys.values()],
      usedRefreshTokens: [...state.usedRefreshTokens],
    }),
    (value) => {
      const plain = value as { users: User[]; lastUserId: number; apiKeys: ApiKey[]; usedRefreshTokens: [string, number][] };
      const state = identityDecider.initialState();
      for (const user of plain.users) {
        state.users.set(user.id, user);
        state.userIdsByEmail.set(user.email, user.id);
      }
      for (const apiKey of plain.apiKeys) {
        state.apiKeys.set(apiKey.id, apiKey);
        state.apiKeyCountByUser.set(apiKey.user, (state.apiKeyCountByUser.get(apiKey.user) ?? 0) + 1);
      }
      state.lastUserId = plain.lastUserId;
      state.usedRefreshTokens = new Map(plain.usedRefreshTokens);
      return state;
    },
  ),
  claimsOf: () => [],
  claimsAfter: () => [],
  snapshotItems: (state) => state.users.size + state.apiKeys.size + state.usedRefreshTokens.size,
  apply: (readModel, events) => readModel.applyIdentity(events),
  load: (readModel, states) => {
    for (const state of states) readModel.loadIdentity(state);
  },
  changes: () => [],
  projectOf: () => undefined,
};

const projectSlugClaim = (project: Project): Claim => ({
  key: `project-slug:${project.slug}`,
  refusal: () => invalid({ slug: ['project with this slug already exists.'] }),
});

export const projectKind: ProjectKind = {
  name: 'project',
  eventTypes: {
    ProjectCreated: true, ProjectUpdated: true, ProjectDeleted: true, MembershipAdded: true, MembershipRemoved: true,
    WorkerRegistered: true, WorkerRemoved: true,
  },
  decider: projectDecider,
  codec: plainCodec(
    (state) => ({ project: state.project, memberships: [...state.memberships.values()], workers: [...state.workers.values()] }),
    (value) => {
      // Snapshots written before workers hold none.
      const plain = value as { project: Project | null; memberships: Membership[]; workers?: Worker[] };
      const state = projectDecider.initialState();
      state.project = plain.project;
      for (const membership of plain.memberships) {
        state.memberships.set(membership.id, membership);
        state.membershipIdsByUser.set(membership.user, membership.id);
      }
      for (const worker of plain.workers ?? []) state.workers.set(worker.id, worker);
      return state;
    },
  ),
  claimsOf: (state) => (state.project ? [projectSlugClaim(state.project)] : []),
  claimsAfter(state, events) {
    let project = state.project;
    for (const event of events) project = event.type === 'ProjectDeleted' ? null : 'project' in event ? event.project : project;
    return project ? [projectSlugClaim(project)] : [];
  },
  snapshotItems: (state) => state.memberships.size + state.workers.size,
  apply: (readModel, events) => readModel.applyProject(events),
  load: (readModel, states) => readModel.loadProjects(states),
  changes: (_id, events, before) => projectChanges(events, before),
  // A project's own deletion is the registry's joint operation, not an end it shares.
  projectOf: () => undefined,
};

/** A live agent holds its slug within its project; a deleted one frees it. */
const agentSlugClaims = (agent: Agent | null): Claim[] =>
  agent && !agent.is_deleted
    ? [{
        key: `agent-slug:${agent.project}:${agent.slug}`,
        refusal: () => invalid({ non_field_errors: ['The fields project, slug must make a unique set.'] }),
      }]
    : [];

/**
 * Agent snapshots keep datasets without their datapoints; each dataset's datapoints are a part,
 * written once by the first snapshot that sees the dataset (datasets never change). Datapoints are
 * stored as JSON text, here and in the journal: encoding 10,000 datapoints as JSON is about twice
 * as fast as msgpack (whose short-string encoding runs in JavaScript), a dataset is written whole
 * and read whole, and the same cached text then answers the request that created it.
 */
const agentCodec: SnapshotCodec<AgentState> = {
  encode(state, storedParts, jsonText) {
    const datasets: Omit<Dataset, 'datapoints'>[] = [];
    const newParts: [string, unknown][] = [];
    for (const dataset of state.datasets.values()) {
      const { datapoints, ...meta } = dataset;
      datasets.push(meta);
      if (!storedParts.has(dataset.id)) newParts.push([dataset.id, jsonText(datapoints)]);
    }
    const staleParts = [...storedParts].filter((id) => !state.datasets.has(id));
    return { value: { agent: state.agent, datasets, lastVersion: state.lastVersion }, newParts, staleParts };
  },
  decode(value, readPart) {
    const plain = value as { agent: Agent | null; datasets: Omit<Dataset, 'datapoints'>[]; lastVersion: number };
    const state = agentDecider.initialState();
    state.agent = plain.agent;
    state.lastVersion = plain.lastVersion;
    for (const meta of plain.datasets) {
      state.datasets.set(meta.id, { ...meta, datapoints: JSON.parse(readPart(meta.id) as string) as Datapoint[] });
    }
    return { state, storedParts: new Set(state.datasets.keys()) };
  },
};

export const agentKind: AgentKind = {
  name: 'agent',
  eventTypes: { AgentCreated: true, AgentUpdated: true, DatasetCreated: true, DatasetDeleted: true, DatasetMoved: true },
  decider: agentDecider,
  codec: agentCodec,
  eventCodec: {
    encode: (event, jsonText) =>
      event.type === 'DatasetCreated'
        ? { ...event, dataset: { ...event.dataset, datapoints: jsonText(event.dataset.datapoints) } }
        : event,
    decode(stored) {
      const event = stored as AgentEvent;
      if (event.type !== 'DatasetCreated') return event;
      const datapoints = event.dataset.datapoints as unknown as string;
      return { ...event, dataset: { ...event.dataset, datapoints: JSON.parse(datapoints) as Datapoint[] } };
    },
  },
  claimsOf: (state) => agentSlugClaims(state.agent),
  claimsAfter(state, events) {
    let agent = state.agent;
    for (const event of events) if ('agent' in event) agent = event.agent;
    return agentSlugClaims(agent);
  },
  // Datapoints are parts, written once: a snapshot encodes the datasets' other fields.
  snapshotItems: (state) => state.datasets.size,
  apply: (readModel, events) => readModel.applyAgent(events),
  load: (readModel, states) => readModel.loadAgents(states),
  changes: (id, events, before) => agentChanges(id, events, before),
  projectOf: (state) => state.agent?.project,
};

export const jobKind: JobKind = {
  name: 'job',
  eventTypes: {
    JobCreated: true, JobUpdated: true, JobDeleted: true, IterationAdded: true, IterationUpdated: true, IterationRemoved: true,
    RunCreated: true, RunUpdated: true, TasksLeased: true, LeasesExtended: true, TasksCompleted: true, WorkerReleased: true,
    TasksQueuedAgain: true, RunEnded: true, RaceAdvanced: true,
  },
  decider: jobDecider,
  codec: jobCodec,
  eventCodec: runEventCodec,
  claimsOf: () => [],
  claimsAfter: () => [],
  // A snapshot references each full part of iterations (job-codec.ts) and encodes only the rest;
  // a run's task columns count as one item per runTasksPerSnapshotItem tasks.
  snapshotItems: (state) => Math.ceil(state.iterations.size / iterationsPerPart) + runSnapshotItems(state),
  apply: (readModel, events) => readModel.applyJob(events),
  load: (readModel, states) => readModel.loadJobs(states),
  changes: (_id, events) => jobChanges(events),
  projectOf: (state) => state.job?.project,
};

/** The kinds with one stream per record, by the name their streams are stored under. */
export const streamKinds = { project: projectKind, agent: agentKind, job: jobKind };
export type StreamKinds = typeof streamKinds;
export type StreamKindName = keyof StreamKinds;
