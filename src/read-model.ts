// The committed state every reader sees: immutable records in indexed collections, changed only
// by committed events (or built in bulk from recovered actor states). A record here is never
// ahead of what the store holds.
import type { AgentEvent, AgentState } from './domain/agent.ts';
import type { IdentityEvent, IdentityState } from './domain/identity.ts';
import type { JobEvent, JobState } from './domain/job.ts';
import type { ProjectEvent, ProjectState, Worker } from './domain/project.ts';
import type { Agent, ApiKey, Datapoint, Dataset, Job, JobIteration, Membership, Project, User } from './domain/records.ts';
import { raceFromPlain, raceToPlain } from './domain/run-race.ts';
import { applyRunEvent, isWriting, newRunState, type Run, type RunState } from './domain/run.ts';
import { RunTasks } from './domain/run-tasks.ts';
import { Collection } from './query/collection.ts';
import type { SortedRecords } from './query/list.ts';
import { nextVersion, VersionedMap, versionOfImmutable } from './query/versions.ts';

const newestFirst = [{ field: 'created_at', descending: true }] as const;
const datapointOrdering = [{ field: 'order', descending: false }] as const;

export class ReadModel {
  readonly users = new Map<number, User>();
  readonly userIdsByEmail = new Map<string, number>();
  readonly apiKeysByPrefix = new Map<string, ApiKey[]>();
  /** user -> project -> membership: what each user may see. */
  readonly membershipsByUser = new Map<number, Map<string, Membership>>();
  /** Every agent's label and project, soft-deleted agents included: a job names its agent by it. */
  private readonly agentLabels = new VersionedMap<string, { label: string; project: string }>();

  readonly apiKeys = new Collection<ApiKey>({
    partitionOf: (apiKey) => String(apiKey.user),
    defaultOrdering: newestFirst,
    indexedFields: ['project'],
  });
  readonly projects = new Collection<Project>({
    partitionOf: (project) => project.id,
    defaultOrdering: [{ field: 'name', descending: false }],
    indexedFields: ['slug'],
  });
  readonly memberships = new Collection<Membership>({
    partitionOf: (membership) => membership.project,
    defaultOrdering: [{ field: 'created_at', descending: false }],
    indexedFields: ['user'],
  });
  readonly agents = new Collection<Agent>({
    partitionOf: (agent) => agent.project,
    defaultOrdering: newestFirst,
    indexedFields: ['slug', 'name', 'status', 'model'],
  });
  readonly datasets = new Collection<Dataset>({
    partitionOf: (dataset) => dataset.project,
    defaultOrdering: newestFirst,
    indexedFields: ['agent', 'version', 'name', 'source', 'generator_model'],
  });
  readonly jobs = new Collection<Job>({
    partitionOf: (job) => job.project,
    defaultOrdering: newestFirst,
    indexedFields: ['status', 'job_type', 'agent', 'analyzer_model', 'data_source', 'prompt_slug'],
  });
  readonly iterations = new Collection<JobIteration>({
    partitionOf: (iteration) => iteration.project,
    defaultOrdering: [
      { field: 'order', descending: false },
      { field: 'created_at', descending: false },
    ],
    // Not iteration_name: names are often unique, and a sorted list per distinct value would cost
    // more memory than the iterations themselves; a name filter scans what the other filters leave.
    indexedFields: ['job', 'status'],
    // Every job retrieve embeds its iterations: have those small lists ready from the start.
    eagerFields: ['job'],
  });

  readonly workers = new Collection<Worker>({
    partitionOf: (worker) => worker.project,
    defaultOrdering: newestFirst,
    indexedFields: [],
  });
  readonly runs = new Collection<Run>({
    partitionOf: (run) => run.project,
    defaultOrdering: newestFirst,
    indexedFields: ['job', 'status'],
  });
  /**
   * Each run's committed tasks and spending, changed by its committed events as the job's actor
   * changes its own (the same applyRunEvent): the actor's copy decides, this one answers.
   */
  readonly runStates = new Map<string, RunState>();
  /** Changes whenever a run's tasks or spending do (their counts are answered beside the run record). */
  runTasksVersion = nextVersion();

  /** The projects a user belongs to. */
  projectsOf(userId: number): Iterable<string> {
    return this.membershipsByUser.get(userId)?.keys() ?? [];
  }

  /** The users who belong to a project. */
  memberIds(projectId: string): number[] {
    return this.memberships.partition(projectId)?.all.toArray().map((membership) => membership.user) ?? [];
  }

  isMember(userId: number, projectId: string): boolean {
    return this.membershipsByUser.get(userId)?.has(projectId) ?? false;
  }

  /** What a job shows as its agent's name: the agent's display_name, else its name. */
  agentLabel(agentId: string | null): string | null {
    return agentId === null ? null : (this.agentLabels.get(agentId)?.label ?? null);
  }

  /** Changes whenever any agent's label may have (query/versions.ts). */
  get agentLabelsVersion(): number {
    return this.agentLabels.version;
  }

  /** A job's iterations in their order (order, then created_at). */
  iterationsOf(job: Job): JobIteration[] {
    return this.iterations.partition(job.project)?.byField.get('job')?.get(job.id)?.toArray() ?? [];
  }

  /** A dataset's datapoints for the list pipeline: kept sorted by order (then position) since creation. */
  datapointsOf(dataset: Dataset): SortedRecords<Datapoint> {
    // A dataset record never changes: it names its partition and datapoints for as long as it lives.
    return { partition: dataset.project, records: dataset.datapoints, defaultOrdering: datapointOrdering, version: versionOfImmutable(dataset) };
  }

  applyIdentity(events: readonly IdentityEvent[]): void {
    for (const event of events) {
      switch (event.type) {
        case 'UserRegistered':
          this.users.set(event.user.id, event.user);
          this.userIdsByEmail.set(event.user.email, event.user.id);
          break;
        case 'ApiKeyCreated':
        case 'ApiKeyRevoked':
        case 'ApiKeyUsed':
          this.putApiKey(event.apiKey);
          break;
        case 'ProjectApiKeysDeleted':
          for (const id of event.ids) this.deleteApiKey(id);
          break;
        case 'RefreshTokenUsed':
          break;
      }
    }
  }

  applyProject(events: readonly ProjectEvent[]): void {
    for (const event of events) {
      switch (event.type) {
        case 'ProjectCreated':
        case 'ProjectUpdated':
          this.projects.put(event.project);
          break;
        case 'ProjectDeleted':
          this.forgetProject(event.project.id);
          break;
        case 'MembershipAdded':
          this.putMembership(event.membership);
          break;
        case 'MembershipRemoved':
          this.memberships.delete(event.membership.id);
          this.membershipsByUser.get(event.membership.user)?.delete(event.membership.project);
          break;
        case 'WorkerRegistered':
          this.workers.put(event.worker);
          break;
        case 'WorkerRemoved':
          this.workers.delete(event.worker.id);
          break;
      }
    }
  }

  applyAgent(events: readonly AgentEvent[]): void {
    for (const event of events) {
      switch (event.type) {
        case 'AgentCreated':
        case 'AgentUpdated':
          if (event.agent.is_deleted) this.agents.delete(event.agent.id);
          else this.agents.put(event.agent);
          this.labelAgent(event.agent);
          break;
        case 'DatasetCreated':
          this.datasets.put(event.dataset);
          break;
        case 'DatasetDeleted':
          this.datasets.delete(event.dataset.id);
          break;
        case 'DatasetMoved': {
          const dataset = this.datasets.get(event.id);
          if (dataset) this.datasets.put({ ...dataset, project: event.project });
          break;
        }
      }
    }
  }

  applyJob(events: readonly JobEvent[]): void {
    for (const event of events) {
      switch (event.type) {
        case 'JobCreated':
        case 'JobUpdated':
          this.jobs.put(event.job);
          break;
        case 'JobDeleted':
          for (const iteration of this.iterationsOf(event.job)) this.iterations.delete(iteration.id);
          for (const run of this.runsOf(event.job)) this.forgetRun(run.id);
          this.jobs.delete(event.job.id);
          break;
        case 'IterationAdded':
        case 'IterationUpdated':
          this.iterations.put(event.iteration);
          break;
        case 'IterationRemoved':
          this.iterations.delete(event.iteration.id);
          break;
        case 'RunCreated':
          this.runStates.set(event.run.id, newRunState(event));
          this.runs.put(event.run);
          break;
        default: {
          const state = this.runStates.get(typeof event.run === 'string' ? event.run : event.run.id);
          if (!state) break; // its job was deleted by a write of the same commit
          applyRunEvent(state, event);
          if (event.type === 'RunUpdated' || event.type === 'RunEnded') this.runs.put(state.run);
          this.runTasksVersion = nextVersion();
        }
      }
    }
  }

  /** The run that writes an iteration's results now (live, or being rescored), if one does: it alone writes them meanwhile. */
  liveRunOf(iteration: JobIteration): Run | undefined {
    const job = this.jobs.get(iteration.job);
    if (!job) return undefined;
    return this.runsOf(job).find((run) => isWriting(run) && run.iterations.includes(iteration.id));
  }

  /** A job's runs, newest first. */
  runsOf(job: Job): Run[] {
    return this.runs.partition(job.project)?.byField.get('job')?.get(job.id)?.toArray() ?? [];
  }

  /** Drops every record of a deleted project (its streams were dropped in the same commit). */
  forgetProject(projectId: string): void {
    this.projects.delete(projectId);
    this.memberships.deletePartition(projectId);
    this.workers.deletePartition(projectId);
    this.agents.deletePartition(projectId);
    this.datasets.deletePartition(projectId);
    this.jobs.deletePartition(projectId);
    this.iterations.deletePartition(projectId);
    for (const run of [...this.runs.values()]) if (run.project === projectId) this.forgetRun(run.id);
    for (const memberships of this.membershipsByUser.values()) memberships.delete(projectId);
    for (const [id, { project }] of this.agentLabels) if (project === projectId) this.agentLabels.delete(id);
    for (const apiKey of [...this.apiKeys.values()]) if (apiKey.project === projectId) this.deleteApiKey(apiKey.id);
  }

  // Recovery builds everything from the recovered actor states in bulk: one sort per index.

  loadIdentity(state: IdentityState): void {
    for (const user of state.users.values()) {
      this.users.set(user.id, user);
      this.userIdsByEmail.set(user.email, user.id);
    }
    for (const apiKey of state.apiKeys.values()) this.putApiKey(apiKey);
  }

  loadProjects(states: Iterable<ProjectState>): void {
    const projects: Project[] = [];
    const memberships: Membership[] = [];
    const workers: Worker[] = [];
    for (const state of states) {
      if (!state.project) continue;
      projects.push(state.project);
      for (const membership of state.memberships.values()) memberships.push(membership);
      for (const worker of state.workers.values()) workers.push(worker);
    }
    this.projects.load(projects);
    this.memberships.load(memberships);
    this.workers.load(workers);
    for (const membership of memberships) this.indexMembershipByUser(membership);
  }

  loadAgents(states: Iterable<AgentState>): void {
    const agents: Agent[] = [];
    const datasets: Dataset[] = [];
    for (const state of states) {
      if (state.agent) this.labelAgent(state.agent);
      if (state.agent && !state.agent.is_deleted) agents.push(state.agent);
      for (const dataset of state.datasets.values()) datasets.push(dataset);
    }
    this.agents.load(agents);
    this.datasets.load(datasets);
  }

  loadJobs(states: Iterable<JobState>): void {
    const jobs: Job[] = [];
    const iterations: JobIteration[] = [];
    const runs: Run[] = [];
    for (const state of states) {
      if (!state.job) continue;
      jobs.push(state.job);
      for (const iteration of state.iterations.values()) iterations.push(iteration);
      for (const { run, tasks, spending, race } of state.runs.values()) {
        runs.push(run);
        // A copy of its own: the actor goes on changing its state in place.
        const raceCopy = race && raceFromPlain(raceToPlain(race), run.iterations, tasks.shape.datapoints);
        this.runStates.set(run.id, { run, tasks: RunTasks.fromPlain(tasks.toPlain()), spending: { ...spending }, race: raceCopy });
      }
    }
    this.jobs.load(jobs);
    this.iterations.load(iterations);
    this.runs.load(runs);
  }

  private forgetRun(id: string): void {
    this.runs.delete(id);
    this.runStates.delete(id);
    this.runTasksVersion = nextVersion();
  }

  private labelAgent(agent: Agent): void {
    const label = typeof agent.display_name === 'string' && agent.display_name !== '' ? agent.display_name : agent.name;
    this.agentLabels.set(agent.id, { label, project: agent.project });
  }

  private putMembership(membership: Membership): void {
    this.memberships.put(membership);
    this.indexMembershipByUser(membership);
  }

  private indexMembershipByUser(membership: Membership): void {
    let byProject = this.membershipsByUser.get(membership.user);
    if (!byProject) this.membershipsByUser.set(membership.user, (byProject = new Map()));
    byProject.set(membership.project, membership);
  }

  private putApiKey(apiKey: ApiKey): void {
    this.deleteApiKey(apiKey.id);
    this.apiKeys.put(apiKey);
    const siblings = this.apiKeysByPrefix.get(apiKey.prefix);
    if (siblings) siblings.push(apiKey);
    else this.apiKeysByPrefix.set(apiKey.prefix, [apiKey]);
  }

  private deleteApiKey(id: string): void {
    const previous = this.apiKeys.get(id);
    if (!previous) return;
    this.apiKeys.delete(id);
    const siblings = this.apiKeysByPrefix.get(previous.prefix)?.filter((key) => key.id !== id) ?? [];
    if (siblings.length > 0) this.apiKeysByPrefix.set(previous.prefix, siblings);
    else this.apiKeysByPrefix.delete(previous.prefix);
  }
}
