// /api/projects/ and their memberships. The creator of a project becomes its first member;
// deleting a project deletes everything in it.
import { randomUUID } from 'node:crypto';
import { newMembership, newProject, type ProjectChanges } from '../../domain/project.ts';
import { pickPresent, type Project, type User } from '../../domain/records.ts';
import { invalid, invalidPk } from '../../domain/rejection.ts';
import { timestamp } from '../../clock.ts';
import type { ReadModel } from '../../read-model.ts';
import { fail, or404 } from '../errors.ts';
import { membershipJson, projectJson } from '../representations.ts';
import { noContent, reply, type ApiContext, type Route } from '../route.ts';
import type { RecordCollaborators } from '../record-collaborators.ts';

const projectFields = ['name', 'slug', 'description', 'is_active', 'settings'];

export function projectRoutes({ registry, readModel, tenancy, lists, clock }: RecordCollaborators): Route[] {
  const listProjects = lists.endpoint({ schema: 'projects.list-query', serialize: projectJson });
  const listMemberships = lists.endpoint({ schema: 'memberships.list-query', serialize: membershipJson });

  const visibleProject = (ctx: ApiContext, id: string): Project =>
    tenancy.seen(ctx.state.principal, readModel.projects.get(id), (project) => project.id);
  /** The project a path names (`:id`, or `:project_id` under it). */
  const pathProject = (ctx: ApiContext): Project => visibleProject(ctx, ctx.params.project_id ?? ctx.params.id!);

  const update = async (ctx: ApiContext) => {
    const project = pathProject(ctx);
    const changes = pickPresent<ProjectChanges>(ctx.state.body, projectFields);
    await registry.ask(registry.actor('project', project.id), [project.id], { type: 'UpdateProject', changes, now: timestamp(clock) });
    reply(ctx, 200, projectJson(readModel.projects.get(project.id)!));
  };

  return [
    {
      method: 'GET',
      path: '/api/projects',
      auth: true,
      query: 'projects.list-query',
      summary: 'List the projects the caller belongs to.',
      responses: { 200: { list: 'projects.project-response' } },
      handle(ctx) {
        listProjects(ctx, { collection: readModel.projects, partitions: tenancy.visibleProjects(ctx.state.principal) });
      },
    },
    {
      method: 'POST',
      path: '/api/projects',
      auth: true,
      body: 'projects.project',
      summary: 'Create a project; the caller becomes its first member.',
      responses: { 201: 'projects.project-response' },
      errors: [403],
      async handle(ctx) {
        const { principal, body } = ctx.state;
        if (principal.apiKey) throw fail.forbidden('An API key cannot create projects.');
        const now = timestamp(clock);
        const project = newProject(
          { id: randomUUID(), now, name: body.name as string, slug: body.slug as string },
          pickPresent<ProjectChanges>(body, projectFields),
        );
        const creator = newMembership({ id: randomUUID(), project: project.id, now }, principal.user);
        await registry.create('project', project.id, [], { type: 'CreateProject', project, creator });
        reply(ctx, 201, projectJson(readModel.projects.get(project.id)!));
      },
    },
    {
      method: 'GET',
      path: '/api/projects/:id',
      auth: true,
      summary: 'Retrieve a project.',
      responses: { 200: 'projects.project-response' },
      handle(ctx) {
        reply(ctx, 200, projectJson(visibleProject(ctx, ctx.params.id!)));
      },
    },
    { method: 'PUT', path: '/api/projects/:id', auth: true, body: 'projects.project', summary: 'Replace a project.', responses: { 200: 'projects.project-response' }, target: pathProject, handle: update },
    { method: 'PATCH', path: '/api/projects/:id', auth: true, body: 'projects.project', summary: 'Update a project.', responses: { 200: 'projects.project-response' }, target: pathProject, handle: update },
    {
      method: 'DELETE',
      path: '/api/projects/:id',
      auth: true,
      summary: 'Delete a project and everything in it.',
      responses: { 204: null },
      async handle(ctx) {
        const project = visibleProject(ctx, ctx.params.id!);
        const actor = or404(registry.actor('project', project.id));
        await registry.deleteProject(actor);
        noContent(ctx);
      },
    },
    {
      method: 'GET',
      path: '/api/projects/:project_id/memberships',
      auth: true,
      query: 'memberships.list-query',
      summary: "List a project's members.",
      responses: { 200: { list: 'memberships.membership-response' } },
      handle(ctx) {
        const project = visibleProject(ctx, ctx.params.project_id!);
        listMemberships(ctx, { collection: readModel.memberships, partitions: [project.id] });
      },
    },
    {
      method: 'POST',
      path: '/api/projects/:project_id/memberships',
      auth: true,
      body: 'memberships.membership-add',
      summary: 'Add a member by user_id or email (an existing member answers as is).',
      responses: { 201: 'memberships.membership-response' },
      target: pathProject,
      async handle(ctx) {
        const project = pathProject(ctx);
        const user = memberToAdd(readModel, ctx.state.body);
        const membership = newMembership({ id: randomUUID(), project: project.id, now: timestamp(clock) }, user);
        await registry.ask(registry.actor('project', project.id), [project.id], { type: 'AddMember', membership });
        reply(ctx, 201, membershipJson(readModel.membershipsByUser.get(user.id)!.get(project.id)!));
      },
    },
    {
      method: 'DELETE',
      path: '/api/projects/:project_id/memberships/:id',
      auth: true,
      summary: 'Remove a member (not yourself).',
      responses: { 204: null },
      errors: [403],
      async handle(ctx) {
        const project = visibleProject(ctx, ctx.params.project_id!);
        const membership = readModel.memberships.get(ctx.params.id!);
        if (!membership || membership.project !== project.id) throw fail.notFound();
        const requestedBy = ctx.state.principal.user.id;
        await registry.ask(registry.actor('project', project.id), [project.id], { type: 'RemoveMember', id: membership.id, requestedBy });
        noContent(ctx);
      },
    },
  ];
}

function memberToAdd(readModel: ReadModel, body: Record<string, unknown>): User {
  const userId = body.user_id as number | null | undefined;
  const email = body.email as string | null | undefined;
  if (userId != null) {
    const user = readModel.users.get(userId);
    if (!user) throw invalid({ user_id: [invalidPk(userId)] });
    return user;
  }
  if (email) {
    const id = readModel.userIdsByEmail.get(email.toLowerCase());
    const user = id === undefined ? undefined : readModel.users.get(id);
    if (!user) throw invalid({ email: ['No user with this email address exists.'] });
    return user;
  }
  throw invalid({ non_field_errors: ['Give either user_id or email.'] });
}
