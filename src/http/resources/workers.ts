// /api/workers/: processes anywhere, in any language, that lease a project's tasks (the tasks of
// its runs, runs.ts), run them and complete them, over HTTP only, with the same credentials and
// tenancy as every other call. A worker is registered once (a record of its project), leases
// tasks (waiting for one up to `wait_ms`), keeps its leases alive with heartbeats, completes tasks
// with their results, and says goodbye. What becomes of each lease and completion is decided by
// the run's job actor (src/domain/run.ts); src/runs/run-dispatch.ts asks it.
import { randomUUID } from 'node:crypto';
import type { Principal } from '../../auth/authenticate.ts';
import { timestamp } from '../../clock.ts';
import type { Limits } from '../../config.ts';
import type { Worker } from '../../domain/project.ts';
import { resolveRows } from '../../domain/result-batch.ts';
import type { ResultInput } from '../../domain/result-row.ts';
import { invalid, invalidPk, Rejected, type FieldErrors } from '../../domain/rejection.ts';
import type { CompletionItem, CompletionOutcome, Run } from '../../domain/run.ts';
import type { Json } from '../../domain/records.ts';
import type { ResultKeeper } from '../../results/result-keeper.ts';
import type { RunDispatch } from '../../runs/run-dispatch.ts';
import { taskKeyOf } from '../../runs/task-ids.ts';
import type { Validator } from '../../validation/validator.ts';
import { or404 } from '../errors.ts';
import type { RecordCollaborators } from '../record-collaborators.ts';
import { leasedTaskJson, workerJson } from '../representations.ts';
import { noContent, reply, type ApiContext, type Route } from '../route.ts';

/** What these routes use. */
export interface WorkerCollaborators extends RecordCollaborators {
  limits: Limits;
  validator: Validator;
  results: ResultKeeper;
  dispatch: RunDispatch;
}

/** A completion's item as the body schema lets it through (its result fields are checked one item at a time). */
type CompletionBodyItem = { task: string; lease: string; status?: string | null } & Record<string, unknown>;

export function workerRoutes({ registry, readModel, tenancy, lists, clock, limits, validator, results, dispatch }: WorkerCollaborators): Route[] {
  const visibleWorker = (ctx: ApiContext): Worker => tenancy.seen(ctx.state.principal, readModel.workers.get(ctx.params.id!), (worker) => worker.project);
  const leasedBy = (worker: string): number => {
    let held = 0;
    for (const run of readModel.runs.values()) held += readModel.runStates.get(run.id)?.tasks.byWorker.get(worker)?.size ?? 0;
    return held;
  };
  const answerWorker = (worker: Worker) => workerJson(worker, dispatch.lastSeen(worker.id), leasedBy(worker.id));

  const listWorkers = lists.endpoint<Worker, unknown>({
    schema: 'workers.list-query',
    serialize: (worker) => worker,
    text: (worker) => JSON.stringify(answerWorker(worker)),
    // When a worker was last heard from changes with every call it makes: answers are made afresh.
    textVersion: () => clock.nowMs(),
  });

  /** The project a new worker works for: the body's, else the API key's, else the caller's only one. */
  const projectOfWorker = (principal: Principal, named: string | null | undefined): string => {
    if (named) return tenancy.referencedProject(principal, named);
    const visible = tenancy.visibleProjects(principal);
    if (visible.length === 1) return visible[0]!;
    throw invalid({ project: ['This field is required.'] });
  };

  /** The bounds the configuration puts on a lease. */
  const checkLease = (max: number, waitMs: number) => {
    const errors: FieldErrors = {};
    if (max > limits.tasksPerLeaseMax) errors.max = [`Ensure this value is less than or equal to ${limits.tasksPerLeaseMax}.`];
    if (waitMs > limits.leaseWaitMsMax) errors.wait_ms = [`Ensure this value is less than or equal to ${limits.leaseWaitMsMax}.`];
    if (Object.keys(errors).length > 0) throw invalid(errors);
  };

  /** The run a task id names, when it is of the worker's project. */
  const runOfTask = (worker: Worker, id: string): { run: Run; position: number } | undefined => {
    const key = taskKeyOf(id);
    const run = key ? dispatch.runOfPrefix(key.prefix) : undefined;
    const state = run ? readModel.runStates.get(run.id) : undefined;
    if (!key || !run || !state || run.project !== worker.project || key.position >= state.tasks.total) return undefined;
    return { run, position: key.position };
  };

  /**
   * An item of a completion, resolved against its task: its result row (with the task's datapoint
   * and attempt), or rate_limited, or its errors (the item is invalid; nothing of it is written).
   */
  const resolveItem = (worker: Worker, item: CompletionBodyItem): { run: Run; item: CompletionItem } | { errors: FieldErrors } => {
    const found = runOfTask(worker, item.task);
    if (!found) return { errors: { task: [invalidPk(item.task)] } };
    const { run, position } = found;
    if (item.status === 'rate_limited') return { run, item: { position, token: item.lease, result: 'rate_limited' } };
    try {
      validator.body('results.results-write', { results: [item] });
    } catch (error) {
      if (!(error instanceof Rejected) || error.rejection.kind !== 'invalid') throw error;
      const nested = error.rejection.fields.results as FieldErrors[] | undefined;
      return { errors: nested?.[0] ?? error.rejection.fields };
    }
    const state = readModel.runStates.get(run.id)!;
    const roster = results.store.roster(run.dataset);
    if (!roster) return { errors: { task: ["The run's dataset version is gone."] } };
    const { iteration, datapoint, attempt } = state.tasks.taskAt(position);
    const input = { ...item, datapoint: roster.ids[datapoint]!, datapoint_order: undefined, attempt } as ResultInput;
    const { rows, errors } = resolveRows(roster, results.store.indexOfId(roster), [input], limits);
    if (errors) return { errors: errors[0]! };
    return { run, item: { position, token: item.lease, result: { iteration: run.iterations[iteration]!, row: rows[0]! } } };
  };

  return [
    {
      method: 'POST',
      path: '/api/workers',
      auth: true,
      body: 'workers.worker',
      summary: "Register a worker for a project's runs (the API key's project, or the body's).",
      responses: { 201: 'workers.worker-response' },
      async handle(ctx) {
        const { principal, body } = ctx.state;
        const project = projectOfWorker(principal, body.project as string | null | undefined);
        const worker: Worker = {
          id: randomUUID(),
          project,
          name: body.name as string,
          host: (body.host as string | null | undefined) ?? '',
          metadata: (body.metadata as Json | undefined) ?? null,
          registered_by: principal.user.id,
          created_at: timestamp(clock),
        };
        await registry.ask(registry.actor('project', project), [project], { type: 'RegisterWorker', worker });
        reply(ctx, 201, answerWorker(or404(readModel.workers.get(worker.id))));
      },
    },
    {
      method: 'GET',
      path: '/api/workers',
      auth: true,
      query: 'workers.list-query',
      summary: 'The workers of the projects the caller sees (newest first), each with when it was last heard from and the tasks it holds.',
      responses: { 200: { list: 'workers.worker-response' } },
      handle(ctx) {
        listWorkers(ctx, { collection: readModel.workers, partitions: tenancy.visibleProjects(ctx.state.principal) });
      },
    },
    {
      method: 'GET',
      path: '/api/workers/:id',
      auth: true,
      summary: 'A worker.',
      responses: { 200: 'workers.worker-response' },
      handle(ctx) {
        reply(ctx, 200, answerWorker(visibleWorker(ctx)));
      },
    },
    {
      method: 'DELETE',
      path: '/api/workers/:id',
      auth: true,
      summary: 'A worker says goodbye: every lease it holds goes back to the queue at once, and it is removed.',
      responses: { 204: null },
      async handle(ctx) {
        const worker = visibleWorker(ctx);
        await dispatch.release(worker);
        await registry.ask(registry.actor('project', worker.project), [worker.project], { type: 'RemoveWorker', id: worker.id });
        noContent(ctx);
      },
    },
    {
      method: 'POST',
      path: '/api/workers/:id/lease',
      auth: true,
      body: 'workers.lease',
      summary:
        "Lease up to `max` tasks of the worker's project (its live runs in turn, or `run`), waiting up to `wait_ms` for one when none is ready: " +
        'each with everything needed to run it and a lease token that its result must come back with before the lease expires.',
      responses: { 200: 'workers.lease-response' },
      async handle(ctx) {
        const worker = visibleWorker(ctx);
        const body = validator.withDefaults('workers.lease', ctx.state.body as { max: number; wait_ms: number; run?: string | null });
        checkLease(body.max, body.wait_ms);
        const run = body.run ?? null;
        if (run !== null && readModel.runs.get(run)?.project !== worker.project) throw invalid({ run: [invalidPk(run)] });
        const leased = await dispatch.lease(worker, { max: body.max, waitMs: body.wait_ms, run });
        const tasks = leased.map((task) => {
          const state = readModel.runStates.get(task.run.id);
          const { iteration, datapoint } = state!.tasks.taskAt(task.position);
          const dataset = readModel.datasets.get(task.run.dataset);
          return leasedTaskJson(task, readModel.iterations.get(task.run.iterations[iteration]!), dataset?.datapoints[datapoint], state!.tasks.tries[task.position]!);
        });
        reply(ctx, 200, { tasks });
      },
    },
    {
      method: 'POST',
      path: '/api/workers/:id/heartbeat',
      auth: true,
      body: 'workers.heartbeat',
      summary: "The worker is alive: every lease it holds lasts its run's lease_seconds from now. Answers, of the tasks it names, those it must stop.",
      responses: { 200: 'workers.heartbeat-response' },
      async handle(ctx) {
        const worker = visibleWorker(ctx);
        const named = (ctx.state.body.tasks as string[] | undefined) ?? [];
        const running = named.map((id) => ({ id, ...(runOfTask(worker, id) ?? { run: undefined, position: -1 }) }));
        const known = running.filter((task): task is { id: string; run: Run; position: number } => task.run !== undefined);
        const stop = await dispatch.heartbeat(worker, known.map(({ id, run, position }) => ({ id, run: run.id, position })));
        const unknown = running.filter((task) => task.run === undefined).map((task) => task.id);
        reply(ctx, 200, { stop: [...unknown, ...stop], leases: leasedBy(worker.id) });
      },
    },
    {
      method: 'POST',
      path: '/api/workers/:id/complete',
      auth: true,
      body: 'workers.complete',
      bodyBytesMax: limits.completionBodyBytesMax,
      summary:
        "Complete leased tasks: each item (a task's token and its result row's fields, or status rate_limited) is answered on its own: accepted, " +
        'stale (its lease expired or moved: nothing is written), cancelled (its run ended) or invalid (with its errors).',
      responses: { 200: 'workers.complete-response' },
      async handle(ctx) {
        const worker = visibleWorker(ctx);
        const items = ctx.state.body.results as CompletionBodyItem[];
        if (items.length > limits.completionItemsMax) {
          throw invalid({ results: { non_field_errors: [`Ensure this field has no more than ${limits.completionItemsMax} elements.`] } });
        }
        const answers: { task: string; outcome: CompletionOutcome | 'invalid'; errors?: FieldErrors }[] = items.map((item) => ({ task: item.task, outcome: 'invalid' }));
        const byRun = new Map<string, { run: Run; items: CompletionItem[]; at: number[] }>();
        items.forEach((item, at) => {
          const resolved = resolveItem(worker, item);
          if ('errors' in resolved) {
            answers[at]!.errors = resolved.errors;
            return;
          }
          const group = byRun.get(resolved.run.id) ?? { run: resolved.run, items: [], at: [] };
          group.items.push(resolved.item);
          group.at.push(at);
          byRun.set(resolved.run.id, group);
        });
        await Promise.all(
          [...byRun.values()].map(async ({ run, items: resolved, at }) => {
            const outcomes = await dispatch.complete(worker, run, resolved);
            outcomes.forEach((outcome, k) => (answers[at[k]!]!.outcome = outcome));
          }),
        );
        reply(ctx, 200, { results: answers });
      },
    },
  ];
}
