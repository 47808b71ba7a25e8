// /api/job-iterations/: each iteration lives in its job's stream, so its job's actor handles it.
// Sending another job moves the iteration there in one commit of both streams. Iterations of a
// job in a final status stay writable: the status is the job's, not theirs. (Comparisons of two
// iterations are comparisons.ts's.)
import { randomUUID } from 'node:crypto';
import type { Principal } from '../../auth/authenticate.ts';
import { newIteration, type IterationChanges } from '../../domain/job.ts';
import { iterationWritableFields, pickPresent, type Job, type JobIteration } from '../../domain/records.ts';
import { invalid, invalidPk } from '../../domain/rejection.ts';
import { timestamp } from '../../clock.ts';
import type { JsonCache } from '../../json-cache.ts';
import { fail, or404 } from '../errors.ts';
import { iterationJson } from '../representations.ts';
import { noContent, replyRecord, type ApiContext, type Route } from '../route.ts';
import type { RecordCollaborators } from '../record-collaborators.ts';

/** The fields an update changes in place; `job` moves the iteration instead. */
const changeFields = iterationWritableFields.filter((field) => field !== 'job');

/** What these routes use. */
export interface IterationCollaborators extends RecordCollaborators {
  jsonCache: JsonCache;
}

export function iterationRoutes({ registry, readModel, tenancy, lists, jsonCache, clock }: IterationCollaborators): Route[] {
  const listIterations = lists.endpoint({ schema: 'iterations.list-query', serialize: iterationJson });

  const visibleIteration = (ctx: ApiContext, id = ctx.params.id!): JobIteration =>
    tenancy.seen(ctx.state.principal, readModel.iterations.get(id), (iteration) => iteration.project);

  /** The iteration as committed; gone meanwhile (deleted with its job) is 404. */
  const answerIteration = (ctx: ApiContext, status: number, id: string) => {
    const iteration = or404(readModel.iterations.get(id));
    replyRecord(ctx, jsonCache, iteration, iterationJson, status);
  };

  /** A referenced job must be visible, with its actor. */
  const jobReference = (principal: Principal, id: string) => {
    const job: Job = tenancy.referenced(principal, 'job', id, readModel.jobs.get(id), (found) => found.project);
    const actor = registry.actor('job', job.id);
    if (!actor) throw invalid({ job: [invalidPk(id)] });
    return { job, actor };
  };

  const move = async (iteration: JobIteration, principal: Principal, targetId: string, changes: IterationChanges) => {
    const source = or404(registry.actor('job', iteration.job));
    const target = jobReference(principal, targetId);
    const projects = [...new Set([iteration.project, target.job.project])];
    try {
      await registry.moveIteration(source, target.actor, iteration.id, changes, projects, timestamp(clock));
    } catch (error) {
      // A job deleted while the move waited: the iteration is gone with it, or the target is.
      if (!readModel.iterations.get(iteration.id)) throw fail.notFound();
      if (!readModel.jobs.get(target.job.id)) throw invalid({ job: [invalidPk(targetId)] });
      throw error;
    }
  };

  const update = async (ctx: ApiContext) => {
    const { principal, body } = ctx.state;
    const iteration = visibleIteration(ctx);
    const changes = pickPresent<IterationChanges>(body, changeFields);
    const targetId = body.job as string | undefined;
    if (targetId !== undefined && targetId !== iteration.job) {
      await move(iteration, principal, targetId, changes);
    } else {
      await registry.ask(registry.actor('job', iteration.job), [iteration.project], { type: 'UpdateIteration', id: iteration.id, changes });
    }
    answerIteration(ctx, 200, iteration.id);
  };

  return [
    {
      method: 'GET',
      path: '/api/job-iterations',
      auth: true,
      query: 'iterations.list-query',
      summary: 'List job iterations (by order, then created_at, by default).',
      responses: { 200: { list: 'iterations.iteration-response' } },
      handle(ctx) {
        listIterations(ctx, { collection: readModel.iterations, partitions: tenancy.visibleProjects(ctx.state.principal) });
      },
    },
    {
      method: 'POST',
      path: '/api/job-iterations',
      auth: true,
      body: 'iterations.iteration',
      summary: 'Add an iteration to a job.',
      responses: { 201: 'iterations.iteration-response' },
      async handle(ctx) {
        const { principal, body } = ctx.state;
        const { job, actor } = jobReference(principal, body.job as string);
        const iteration = newIteration(
          { id: randomUUID(), now: timestamp(clock), job: job.id, project: job.project, iterationName: body.iteration_name as string },
          pickPresent<IterationChanges>(body, changeFields),
        );
        await registry.ask(actor, [job.project], { type: 'AddIteration', iteration });
        answerIteration(ctx, 201, iteration.id);
      },
    },
    {
      method: 'GET',
      path: '/api/job-iterations/:id',
      auth: true,
      summary: 'Retrieve a job iteration.',
      responses: { 200: 'iterations.iteration-response' },
      handle(ctx) {
        replyRecord(ctx, jsonCache, visibleIteration(ctx), iterationJson);
      },
    },
    { method: 'PUT', path: '/api/job-iterations/:id', auth: true, body: 'iterations.iteration', summary: 'Replace a job iteration (iteration_name and job required).', responses: { 200: 'iterations.iteration-response' }, target: visibleIteration, handle: update },
    { method: 'PATCH', path: '/api/job-iterations/:id', auth: true, body: 'iterations.iteration', summary: 'Update a job iteration; another job moves it there.', responses: { 200: 'iterations.iteration-response' }, target: visibleIteration, handle: update },
    {
      method: 'DELETE',
      path: '/api/job-iterations/:id',
      auth: true,
      summary: 'Delete a job iteration.',
      responses: { 204: null },
      async handle(ctx) {
        const iteration = visibleIteration(ctx);
        await registry.ask(registry.actor('job', iteration.job), [iteration.project], { type: 'RemoveIteration', id: iteration.id, now: timestamp(clock) });
        noContent(ctx);
      },
    },
  ];
}
