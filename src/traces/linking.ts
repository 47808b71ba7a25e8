// Which project each span lands in and which agent, job and iteration it links to. A link names a
// record of the span's own project or it is dropped: a span never points into another tenant.
// `overmind.agent.name` creates the agent the first time the name is seen in a project.
import { randomUUID } from 'node:crypto';
import type { Registry } from '../actors/registry.ts';
import { boundProject, type Principal } from '../auth/authenticate.ts';
import { timestamp, type Clock } from '../clock.ts';
import { newAgent } from '../domain/agent.ts';
import type { Agent } from '../domain/records.ts';
import { Rejected } from '../domain/rejection.ts';
import type { ReadModel } from '../read-model.ts';
import type { Tenancy } from '../tenancy.ts';
import { canonicalUuidOf } from '../validation/validator.ts';
import { NoProjectForSpans } from './no-project-for-spans.ts';
import { slugify } from './slug.ts';
import type { ResourceDraft, SpanDraft, SpanLinks } from './spans.ts';

/** What linking reads and writes: the records spans name, who may see them, and the agents it creates. */
export interface LinkingCollaborators {
  readModel: Pick<ReadModel, 'agents' | 'jobs' | 'iterations' | 'membershipsByUser'>;
  registry: Pick<Registry, 'create' | 'claims' | 'actor'>;
  clock: Clock;
  tenancy: Pick<Tenancy, 'canSee'>;
}

type LinkKind = 'agent' | 'job' | 'iteration';

/** What one export's spans of one resource link to, as found so far. */
interface ResourceLinks {
  project: string;
  /** Hint -> the record it names, or null. */
  checked: Record<LinkKind, Map<string, string | null>>;
  /** `overmind.agent.name` as sent -> the agent of that name (null: none, or none made). */
  named: Map<string, string | null>;
}

/** Agent name and slug bounds (the agent resource's own). */
const agentNameCharsMax = 255;

export class SpanLinker {
  /** First sightings of an agent name being created, so concurrent exports create one agent. */
  private readonly creating = new Map<string, Promise<string | null>>();

  constructor(private readonly deps: LinkingCollaborators) {}

  async linksFor(principal: Principal, drafts: readonly SpanDraft[]): Promise<SpanLinks[]> {
    // Spans of one resource mostly repeat the same few links: each distinct one is checked once.
    const resources = new Map<ResourceDraft, ResourceLinks>();
    const resourceOf = (resource: ResourceDraft) => {
      let known = resources.get(resource);
      if (!known) {
        const project = this.projectFor(principal, resource);
        known = { project, checked: { agent: new Map(), job: new Map(), iteration: new Map() }, named: new Map() };
        resources.set(resource, known);
      }
      return known;
    };
    const linked = (known: ResourceLinks, kind: LinkKind, hint: string | null): string | null => {
      if (hint === null) return null;
      let id = known.checked[kind].get(hint);
      if (id === undefined) known.checked[kind].set(hint, (id = this.linked(kind, known.project, hint)));
      return id;
    };
    // Agents named by spans without a valid agent id are found, or created, before any span links
    // to them; a span token (an agent under test) finds them only.
    const naming: Promise<unknown>[] = [];
    const mayCreate = principal.spanToken === undefined;
    for (const { resource, hints } of drafts) {
      const known = resourceOf(resource);
      const name = hints.agentName;
      if (name === null || known.named.has(name) || linked(known, 'agent', hints.agentId) !== null) continue;
      const agent = agentName(name);
      known.named.set(name, null);
      if (agent) naming.push(this.agentNamed(known.project, agent, mayCreate).then((id) => known.named.set(name, id)));
    }
    await Promise.all(naming);
    return drafts.map(({ resource, hints }) => {
      const known = resourceOf(resource);
      return {
        project: known.project,
        agent: linked(known, 'agent', hints.agentId) ?? (hints.agentName === null ? null : known.named.get(hints.agentName) ?? null),
        job: linked(known, 'job', hints.job),
        iteration: linked(known, 'iteration', hints.iteration),
      };
    });
  }

  /** The record `hint` names when it is a live record of that kind in `project`, else null. */
  private linked(kind: LinkKind, project: string, hint: string): string | null {
    const { agents, jobs, iterations } = this.deps.readModel;
    const records = kind === 'agent' ? agents : kind === 'job' ? jobs : iterations;
    return linkedId(hint, (id) => records.get(id)?.project === project);
  }

  /**
   * An API key (or a span token) writes to its own project. A user writes to `overmind.project.id` when a member of
   * it, else to their oldest membership; a caller with no project at all cannot export.
   */
  private projectFor(principal: Principal, resource: ResourceDraft): string {
    const { readModel, tenancy } = this.deps;
    const bound = boundProject(principal);
    if (bound !== null) {
      if (tenancy.canSee(principal, bound)) return bound;
    } else {
      const hinted = resource.projectHint ? canonicalUuidOf(resource.projectHint) : undefined;
      if (hinted && tenancy.canSee(principal, hinted)) return hinted;
      const oldest = [...(readModel.membershipsByUser.get(principal.user.id)?.values() ?? [])]
        .filter((membership) => tenancy.canSee(principal, membership.project))
        .sort((a, b) => (a.created_at < b.created_at ? -1 : a.created_at > b.created_at ? 1 : a.project < b.project ? -1 : 1))[0];
      if (oldest) return oldest.project;
    }
    throw new NoProjectForSpans();
  }

  private agentNamed(project: string, name: string, mayCreate: boolean): Promise<string | null> {
    const slug = slugify(name).slice(0, agentNameCharsMax);
    if (!slug) return Promise.resolve(null);
    const existing = liveAgentWithSlug(this.deps, project, slug);
    if (existing) return Promise.resolve(existing.id);
    if (!mayCreate) return Promise.resolve(null);
    const key = `${project}\n${slug}`;
    let pending = this.creating.get(key);
    if (!pending) {
      pending = this.createAgent(project, name, slug).finally(() => this.creating.delete(key));
      this.creating.set(key, pending);
    }
    return pending;
  }

  private async createAgent(project: string, name: string, slug: string): Promise<string | null> {
    const { registry, clock } = this.deps;
    const agent = newAgent({ id: randomUUID(), now: timestamp(clock), project, name, slug });
    try {
      await registry.create('agent', agent.id, [project], { type: 'CreateAgent', agent });
      return agent.id;
    } catch (error) {
      if (!(error instanceof Rejected) || error.rejection.kind !== 'invalid') throw error;
      // Another writer holds the slug: once its create has committed, link to that agent.
      await this.createdElsewhere(project, slug);
      return liveAgentWithSlug(this.deps, project, slug)?.id ?? null;
    }
  }

  /** Waits for the agent that claimed `slug` to finish its create (its mailbox runs in order). */
  private async createdElsewhere(project: string, slug: string): Promise<void> {
    // The claim key is the agent kind's (src/actors/kinds.ts); its owner is "agent:<id>".
    const owner = this.deps.registry.claims.ownerOf(`agent-slug:${project}:${slug}`);
    const actor = owner?.startsWith('agent:') ? this.deps.registry.actor('agent', owner.slice('agent:'.length)) : undefined;
    await actor?.exclusive(async () => {});
  }
}

function agentName(hint: string | null): string | null {
  const name = hint?.trim().slice(0, agentNameCharsMax);
  return name ? name : null;
}

/** The canonical id when `hint` is a UUID that `exists` accepts, else null. */
function linkedId(hint: string | null, exists: (id: string) => boolean): string | null {
  const id = hint ? canonicalUuidOf(hint) : undefined;
  return id !== undefined && exists(id) ? id : null;
}

function liveAgentWithSlug(deps: Pick<LinkingCollaborators, 'readModel'>, project: string, slug: string): Agent | undefined {
  const partition = deps.readModel.agents.partition(project);
  const bySlug = partition?.byField.get('slug');
  const candidates = bySlug ? bySlug.get(slug)?.iterate() ?? [] : partition?.all.iterate() ?? [];
  for (const agent of candidates) if (agent.slug === slug && !agent.is_deleted) return agent;
  return undefined;
}
