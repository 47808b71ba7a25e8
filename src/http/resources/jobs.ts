// /api/jobs/: one actor per job. A job belongs to a project (its body's, else its agent's, else
// the only project the caller sees), its status only moves forward, and its representation
// embeds its iterations. Its progress is what a chart of the run needs, without any code.
import { randomUUID } from 'node:crypto';
import type { Principal } from '../../auth/authenticate.ts';
import { newJob, type JobChanges } from '../../domain/job.ts';
import { jobWritableFields, pickPresent, type Agent, type Job } from '../../domain/records.ts';
import { invalid } from '../../domain/rejection.ts';
import { progressPage, progressSummary } from '../../views/job-progress.ts';
import { timestamp } from '../../clock.ts';
import type { Limits } from '../../config.ts';
import { or404 } from '../errors.ts';
import { jobJson, jobListItemJson, jobLiveFields, progressPointJson, progressSummaryJson } from '../representations.ts';
import { noContent, reply, type ApiContext, type Route } from '../route.ts';
import type { RecordCollaborators } from '../record-collaborators.ts';

const agentElsewhere = () => invalid({ agent: ['This agent belongs to another project than the job.'] });

/** What these routes use. */
export interface JobCollaborators extends RecordCollaborators {
  limits: Limits;
}

export function jobRoutes({ registry, readModel, tenancy, lists, clock, limits }: JobCollaborators): Route[] {
  // A chart wants every point at once: progress pages are larger than other lists'.
  const progressSizes = { sizeDefault: limits.progressPageSizeDefault, sizeMax: limits.progressPageSizeMax };

  const listJobs = lists.endpoint({
    schema: 'jobs.list-query',
    serialize: jobListItemJson,
    liveFields: { of: (job) => jobLiveFields(readModel.agentLabel(job.agent)), version: () => readModel.agentLabelsVersion },
  });

  const visibleJob = (ctx: ApiContext): Job =>
    tenancy.seen(ctx.state.principal, readModel.jobs.get(ctx.params.id!), (job) => job.project);

  /** The job as committed, with its iterations; gone meanwhile (deleted) is 404. */
  const answerJob = (ctx: ApiContext, status: number, id: string) => {
    const job = or404(readModel.jobs.get(id));
    reply(ctx, status, jobJson(job, readModel.iterationsOf(job), readModel.agentLabel(job.agent)));
  };

  /**
   * decisions §6: the body's project, else the agent's, else the only project the caller sees
   * (for an API key that is always its own project).
   */
  const projectForNewJob = (principal: Principal, fields: JobChanges, agent: Agent | undefined): string => {
    if (fields.project) {
      const project = tenancy.referencedProject(principal, fields.project);
      if (agent && agent.project !== project) throw agentElsewhere();
      return project;
    }
    if (agent) return agent.project;
    const visible = tenancy.visibleProjects(principal);
    if (visible.length === 1) return visible[0]!;
    throw invalid({ project: ['This field is required.'] });
  };

  /** Checks the references an update sends; answers the project the job ends up in. */
  const projectAfterUpdate = (principal: Principal, job: Job, changes: JobChanges): string => {
    if (changes.project === null) throw invalid({ project: ['This field may not be null.'] });
    const project = changes.project === undefined ? job.project : tenancy.referencedProject(principal, changes.project);
    if (changes.agent) {
      if (tenancy.referencedAgent(principal, changes.agent).project !== project) throw agentElsewhere();
    } else if (changes.agent === undefined && project !== job.project && job.agent) {
      const agent = readModel.agents.get(job.agent);
      if (agent && agent.project !== project) throw invalid({ project: ["The job's agent belongs to another project."] });
    }
    return project;
  };

  // PUT is PATCH here: no job field is required, and DRF keeps the fields a PUT leaves out.
  const update = async (ctx: ApiContext) => {
    const { principal, body } = ctx.state;
    const job = visibleJob(ctx);
    const changes = pickPresent<JobChanges>(body, jobWritableFields);
    const project = projectAfterUpdate(principal, job, changes);
    const projects = project === job.project ? [project] : [job.project, project];
    await registry.ask(registry.actor('job', job.id), projects, { type: 'UpdateJob', changes, now: timestamp(clock) });
    answerJob(ctx, 200, job.id);
  };

  return [
    {
      method: 'GET',
      path: '/api/jobs',
      auth: true,
      query: 'jobs.list-query',
      summary: 'List jobs (newest first by default).',
      responses: { 200: { list: 'jobs.job-list-item-response' } },
      handle(ctx) {
        listJobs(ctx, { collection: readModel.jobs, partitions: tenancy.visibleProjects(ctx.state.principal) });
      },
    },
    {
      method: 'POST',
      path: '/api/jobs',
      auth: true,
      body: 'jobs.job',
      summary: 'Create a job (pending unless a status is sent); answers with its iterations.',
      responses: { 201: 'jobs.job-response' },
      async handle(ctx) {
        const { principal, body } = ctx.state;
        const fields = pickPresent<JobChanges>(body, jobWritableFields);
        const agent = fields.agent ? tenancy.referencedAgent(principal, fields.agent) : undefined;
        const project = projectForNewJob(principal, fields, agent);
        const job = newJob({ id: randomUUID(), now: timestamp(clock), project, triggeredBy: principal.user.id }, fields);
        await registry.create('job', job.id, [project], { type: 'CreateJob', job, sent: fields });
        answerJob(ctx, 201, job.id);
      },
    },
    {
      method: 'GET',
      path: '/api/jobs/:id',
      auth: true,
      summary: 'Retrieve a job with its iterations (by order, then created_at).',
      responses: { 200: 'jobs.job-response' },
      handle(ctx) {
        const job = visibleJob(ctx);
        reply(ctx, 200, jobJson(job, readModel.iterationsOf(job), readModel.agentLabel(job.agent)));
      },
    },
    { method: 'PUT', path: '/api/jobs/:id', auth: true, body: 'jobs.job', summary: 'Update a job (fields left out keep their values).', responses: { 200: 'jobs.job-response' }, errors: [409], target: visibleJob, handle: update },
    { method: 'PATCH', path: '/api/jobs/:id', auth: true, body: 'jobs.job', summary: 'Update some fields of a job.', responses: { 200: 'jobs.job-response' }, errors: [409], target: visibleJob, handle: update },
    {
      method: 'DELETE',
      path: '/api/jobs/:id',
      auth: true,
      summary: 'Delete a job and its iterations.',
      responses: { 204: null },
      async handle(ctx) {
        const job = visibleJob(ctx);
        await registry.ask(registry.actor('job', job.id), [job.project], { type: 'DeleteJob' });
        noContent(ctx);
      },
    },
    {
      method: 'GET',
      path: '/api/jobs/:id/progress',
      auth: true,
      query: 'jobs.progress-query',
      pageSizes: progressSizes,
      summary: "A job's run for a chart: the job as listed, its iterations in order (without code) with the best avg_score so far, counts by status, and the best iteration.",
      responses: { 200: 'jobs.job-progress-response' },
      handle(ctx) {
        const job = visibleJob(ctx);
        const iterations = readModel.iterationsOf(job);
        const page = lists.paginate(
          ctx,
          (offset, limit) => ({ count: iterations.length, items: progressPage(iterations, offset, limit) }),
          progressPointJson,
          progressSizes,
        );
        const listed = { ...jobListItemJson(job), ...jobLiveFields(readModel.agentLabel(job.agent)) };
        reply(ctx, 200, { ...page, ...progressSummaryJson(progressSummary(iterations)), job: listed });
      },
    },
  ];
}
