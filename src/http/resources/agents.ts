// /api/agents/: registered agents of a project. (project, slug) is unique among live agents (a
// unique claim taken when the agent actor decides); DELETE is a soft delete that frees the slug
// and leaves the agent's datasets, jobs and traces in place.
import { randomUUID } from 'node:crypto';
import { newAgent, type AgentChanges, type AgentEvent } from '../../domain/agent.ts';
import { agentWritableFields, pickPresent, type Agent } from '../../domain/records.ts';
import { timestamp } from '../../clock.ts';
import type { GoneVersions } from '../../runs/gone-versions.ts';
import type { JsonCache } from '../../json-cache.ts';
import { agentJson, agentListItemJson, evalSpecJson } from '../representations.ts';
import { noContent, reply, replyRecord, type ApiContext, type Route } from '../route.ts';
import type { RecordCollaborators } from '../record-collaborators.ts';

/** What these routes use. */
export interface AgentCollaborators extends RecordCollaborators {
  jsonCache: JsonCache;
  goneVersions: GoneVersions;
}

export function agentRoutes({ registry, readModel, tenancy, lists, jsonCache, clock, goneVersions }: AgentCollaborators): Route[] {
  const listAgents = lists.endpoint({ schema: 'agents.list-query', serialize: agentListItemJson });

  /** A live agent the caller may see; anything else is 404. */
  const visibleAgent = (ctx: ApiContext): Agent =>
    tenancy.seen(ctx.state.principal, readModel.agents.get(ctx.params.id!), (agent) => agent.project);

  /** PUT and PATCH: only the fields sent change (DRF's update keeps the others). */
  const update = async (ctx: ApiContext) => {
    const agent = visibleAgent(ctx);
    const changes = agentChanges(ctx.state.body);
    const target = changes.project === undefined ? agent.project : tenancy.referencedProject(ctx.state.principal, changes.project);
    const events = await registry.ask(registry.actor('agent', agent.id), [agent.project, target], { type: 'UpdateAgent', changes, now: timestamp(clock) });
    reply(ctx, 200, agentJson(agentAfter(events)));
  };

  return [
    {
      method: 'GET',
      path: '/api/agents',
      auth: true,
      query: 'agents.list-query',
      summary: 'List the agents of the projects the caller can see.',
      responses: { 200: { list: 'agents.agent-list-item-response' } },
      handle(ctx) {
        listAgents(ctx, { collection: readModel.agents, partitions: tenancy.visibleProjects(ctx.state.principal) });
      },
    },
    {
      method: 'POST',
      path: '/api/agents',
      auth: true,
      body: 'agents.agent',
      summary: 'Register an agent in a project.',
      responses: { 201: 'agents.agent-response' },
      async handle(ctx) {
        const body = ctx.state.body;
        const project = tenancy.referencedProject(ctx.state.principal, body.project as string);
        const agent = newAgent(
          { id: randomUUID(), now: timestamp(clock), project, name: body.name as string, slug: body.slug as string },
          agentChanges(body),
        );
        const events = await registry.create('agent', agent.id, [project], { type: 'CreateAgent', agent });
        reply(ctx, 201, agentJson(agentAfter(events)));
      },
    },
    {
      method: 'GET',
      path: '/api/agents/:id',
      auth: true,
      summary: 'Retrieve an agent.',
      responses: { 200: 'agents.agent-response' },
      handle(ctx) {
        replyRecord(ctx, jsonCache, visibleAgent(ctx), agentJson);
      },
    },
    { method: 'PUT', path: '/api/agents/:id', auth: true, body: 'agents.agent', summary: 'Update an agent (name, project and slug required).', responses: { 200: 'agents.agent-response' }, target: visibleAgent, handle: update },
    { method: 'PATCH', path: '/api/agents/:id', auth: true, body: 'agents.agent', summary: 'Update some fields of an agent.', responses: { 200: 'agents.agent-response' }, target: visibleAgent, handle: update },
    {
      method: 'DELETE',
      path: '/api/agents/:id',
      auth: true,
      summary: 'Soft-delete an agent; its datasets, jobs and traces stay.',
      responses: { 204: null },
      async handle(ctx) {
        const agent = visibleAgent(ctx);
        await registry.ask(registry.actor('agent', agent.id), [agent.project], { type: 'DeleteAgent', now: timestamp(clock) });
        await goneVersions.settled(); // its runs read failed once this answers
        noContent(ctx);
      },
    },
    {
      method: 'GET',
      path: '/api/agents/:id/eval_spec',
      auth: true,
      summary: "The agent's evaluation settings, with defaults for what is unset.",
      responses: { 200: 'agents.eval-spec-response' },
      handle(ctx) {
        reply(ctx, 200, evalSpecJson(visibleAgent(ctx)));
      },
    },
  ];
}

/** The writable fields present in a validated body; `is_deleted: null` means false (it is never null). */
function agentChanges(body: Record<string, unknown>): AgentChanges {
  const changes = pickPresent<AgentChanges>(body, agentWritableFields);
  return body.is_deleted === null ? { ...changes, is_deleted: false } : changes;
}

/** The agent as this write left it (a later write may already have changed the read model). */
function agentAfter(events: readonly AgentEvent[]): Agent {
  for (let i = events.length - 1; i >= 0; i--) {
    const event = events[i]!;
    if (event.type === 'AgentCreated' || event.type === 'AgentUpdated') return event.agent;
  }
  throw new Error('an agent write produced no agent');
}
