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
import { resolveRowAt } from '../../domain/result-batch.ts';
import type { ResultInput } from '../../domain/result-row.ts';
import { invalid, invalidPk, Rejected, type FieldErrors } from '../../domain/rejection.ts';
import type { CompletionItem, CompletionOutcome, Run } from '../../domain/run.ts';
import type { Datapoint, Json, JobIteration } from '../../domain/records.ts';
import type { JsonCache } from '../../json-cache.ts';
import type { ResultKeeper } from '../../results/result-keeper.ts';
import type { LeasedTask, LeaseRequest, RunDispatch } from '../../runs/run-dispatch.ts';
import { ScoreOutOfBounds, ScorerUnusable, type RunScoring } from '../../runs/run-scoring.ts';
import { DimensionNamesInFlight } from '../../runs/dimension-names.ts';
import { taskKeyOf } from '../../runs/task-ids.ts';
import type { Validator } from '../../validation/validator.ts';
import { or404 } from '../errors.ts';
import type { RecordCollaborators } from '../record-collaborators.ts';
import { leasedDatapointJson, leasedIterationJson, leasedTaskText, workerJson } from '../representations.ts';
import { noContent, reply, replyJsonText, type ApiContext, type Route } from '../route.ts';

/** What these routes use. */
export interface WorkerCollaborators extends RecordCollaborators {
  jsonCache: JsonCache;
  limits: Limits;
  validator: Validator;
  results: ResultKeeper;
  dispatch: RunDispatch;
  runScoring: RunScoring;
}

/** A completion's item as the body schema lets it through (its result fields are checked one item at a time). */
type CompletionBodyItem = { task: string; lease: string; status?: string | null } & Record<string, unknown>;

/** How a completion answers one of its items. */
type CompletionAnswer = { task: string; outcome: CompletionOutcome | 'invalid'; errors?: FieldErrors };

/** The fields a run the service scores writes itself. */
const serviceScoredFields = ['score', 'passed', 'dimension_scores'] as const;

/** What a task whose iteration or datapoint went meanwhile is handed out with (its run fails with them). */
const goneIteration = { id: null, iteration_name: '', agent_code: null } as unknown as JobIteration;
const goneDatapoint = { id: null, order: 0, input: null, persona: null, tags: null } as unknown as Datapoint;

export function workerRoutes({ registry, readModel, tenancy, lists, jsonCache, clock, limits, validator, results, dispatch, runScoring }: WorkerCollaborators): Route[] {
  const namesInFlight = new DimensionNamesInFlight((iteration) => results.store.table(iteration)?.dimensionNames() ?? [], limits);
  const visibleWorker = (ctx: ApiContext): Worker => tenancy.seen(ctx.state.principal, readModel.workers.get(ctx.params.id!), (worker) => worker.project);
  const answerWorker = (worker: Worker) => workerJson(worker, dispatch.lastSeen(worker.id), dispatch.leasesHeldBy(worker.id));

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

  /**
   * A lease's request from its body (a lease's own, or a completion's `next`, whose errors are
   * said under `next`): the configuration's bounds, and a run of the worker's project.
   */
  const leaseRequestOf = (worker: Worker, given: object, field?: string): LeaseRequest => {
    const body = validator.withDefaults('workers.lease', given as { max: number; wait_ms: number; run?: string | null });
    const run = body.run ?? null;
    const errors: FieldErrors = {};
    if (body.max > limits.tasksPerLeaseMax) errors.max = [`Ensure this value is less than or equal to ${limits.tasksPerLeaseMax}.`];
    if (body.wait_ms > limits.leaseWaitMsMax) errors.wait_ms = [`Ensure this value is less than or equal to ${limits.leaseWaitMsMax}.`];
    if (run !== null && readModel.runs.get(run)?.project !== worker.project) errors.run = [invalidPk(run)];
    if (Object.keys(errors).length > 0) throw invalid(field ? { [field]: errors } : errors);
    return { max: body.max, waitMs: body.wait_ms, run };
  };

  /** Leased tasks as a lease answers them (a JSON array), each with what the run's records say of it. */
  const leasedText = (leased: readonly LeasedTask[]): string => {
    const tasks = leased.map((task) => {
      const { tasks: columns } = readModel.runStates.get(task.run.id)!;
      const { iteration, datapoint } = columns.taskAt(task.position);
      // Gone meanwhile (its run fails with it): the task is handed out as it stands.
      const record = readModel.iterations.get(task.run.iterations[iteration]!) ?? goneIteration;
      const point = readModel.datasets.get(task.run.dataset)?.datapoints[datapoint] ?? goneDatapoint;
      return leasedTaskText(task, jsonCache.text(record, leasedIterationJson), jsonCache.text(point, leasedDatapointJson), columns.tries[task.position]!);
    });
    return `[${tasks.join(',')}]`;
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
   * A completion's items, resolved against their tasks: each its result row (with its task's
   * datapoint and attempt), or rate_limited, or its errors (the item is invalid; nothing of it is
   * written). Their fields are checked in one pass (results-write's row schema), not one by one.
   * A result's dimension names are counted in flight (`names`) until its completion settles.
   */
  const resolveItems = (worker: Worker, items: readonly CompletionBodyItem[]): ({ run: Run; item: CompletionItem; names?: string[] } | { errors: FieldErrors })[] => {
    const rows = items.filter((item) => item.status !== 'rate_limited');
    const fieldErrors = rowErrors(rows);
    let row = 0;
    const named = new Set<string>();
    return items.map((item) => {
      const errors = item.status === 'rate_limited' ? undefined : fieldErrors[row++];
      const found = runOfTask(worker, item.task);
      if (!found) return { errors: { task: [invalidPk(item.task)] } };
      // One answer a task: its first item is decided, a repeat is refused (which of them wrote
      // would otherwise be for the worker to guess).
      const key = `${found.run.id}:${found.position}`;
      if (named.has(key)) return { errors: { task: ['This task is named more than once in this completion: only its first item is read.'] } };
      named.add(key);
      const { run, position } = found;
      if (item.status === 'rate_limited') return { run, item: { position, token: item.lease, result: 'rate_limited' } };
      if (errors && Object.keys(errors).length > 0) return { errors };
      const { iteration, datapoint, attempt } = readModel.runStates.get(run.id)!.tasks.taskAt(position);
      const scored = scoredByService(run, datapoint, item);
      if ('errors' in scored) return scored;
      const resolved = resolveRowAt(datapoint, attempt, scored.input, limits);
      if ('errors' in resolved) return { errors: resolved.errors };
      const iterationId = run.iterations[iteration]!;
      const result = { iteration: iterationId, row: resolved.row };
      const dimensions = resolved.row.fields.dimension_scores;
      // Most results have no dimension: nothing is counted in flight for them.
      if (!dimensions) return { run, item: { position, token: item.lease, result } };
      const names = Object.keys(dimensions);
      const tooMany = namesInFlight.take(iterationId, names);
      if (tooMany) return { errors: { dimension_scores: [tooMany] } };
      return { run, item: { position, token: item.lease, result }, names };
    });
  };

  /**
   * An item of a run the service scores: refused if it carries a score of its own, else (an ok
   * result) its score, passed and dimensions computed from its output; any other item as it is.
   * An ok result is refused, on `scoring`, while the run's agent gives no scorer.
   */
  const scoredByService = (run: Run, datapoint: number, item: CompletionBodyItem): { input: ResultInput } | { errors: FieldErrors } => {
    const scorer = runScoring.scorerOf(run);
    if (!scorer) return withinRaceRange(run, item);
    const errors: FieldErrors = {};
    for (const field of serviceScoredFields) {
      if (item[field] !== undefined && item[field] !== null) errors[field] = [`This run is scored by the service (scoring "${run.scoring!.method}"): a completion does not send ${field}.`];
    }
    if (Object.keys(errors).length > 0) return { errors };
    if ((item.status ?? 'ok') !== 'ok') return { input: item as ResultInput };
    if (scorer instanceof ScorerUnusable) return { errors: { scoring: [scorer.message] } };
    const traceId = typeof item.trace_id === 'string' ? item.trace_id.toLowerCase() : null;
    const scored = runScoring.score(run, scorer, datapoint, item.output ?? null, traceId);
    if (scored instanceof ScoreOutOfBounds) return { errors: { scoring: [scored.message] } };
    return { input: { ...item, ...scored } as ResultInput };
  };

  /** A racing run's reported score must lie within its score range: the race's bounds rest on it. */
  const withinRaceRange = (run: Run, item: CompletionBodyItem): { input: ResultInput } | { errors: FieldErrors } => {
    const score = item.score;
    if (!run.race || typeof score !== 'number') return { input: item as ResultInput };
    const [low, high] = run.race.score_range;
    if (score >= low && score <= high) return { input: item as ResultInput };
    return { errors: { score: [`Ensure this value is within the race's score_range [${low}, ${high}].`] } };
  };

  /**
   * Completes a completion's items, run by run (each run's job decides its own), filling in each
   * item's answer: its outcome, or its errors (an invalid item is answered without being sent).
   * `sent`: how many items went to each run.
   */
  const completeByRun = (worker: Worker, items: readonly CompletionBodyItem[], answers: CompletionAnswer[]): { completed: Promise<unknown>; sent: Map<string, number> } => {
    const byRun = new Map<string, { run: Run; items: CompletionItem[]; at: number[] }>();
    const inFlight: { iteration: string; names: string[] }[] = [];
    resolveItems(worker, items).forEach((resolved, at) => {
      if ('errors' in resolved) {
        answers[at]!.errors = resolved.errors;
        return;
      }
      const { result } = resolved.item;
      if (resolved.names && result !== 'rate_limited') inFlight.push({ iteration: result.iteration, names: resolved.names });
      const group = byRun.get(resolved.run.id) ?? { run: resolved.run, items: [], at: [] };
      group.items.push(resolved.item);
      group.at.push(at);
      byRun.set(resolved.run.id, group);
    });
    // Not async: the items are resolved (and their asks queued on their jobs) before this returns,
    // so that a lease asked for next queues behind them.
    const completed = Promise.all(
      [...byRun.values()].map(async ({ run, items: resolved, at }) => {
        const outcomes = await dispatch.complete(worker, run, resolved);
        outcomes.forEach((outcome, k) => (answers[at[k]!]!.outcome = outcome));
      }),
    ).finally(() => {
      for (const { iteration, names } of inFlight) namesInFlight.release(iteration, names);
    });
    return { completed, sent: new Map([...byRun].map(([run, group]) => [run, group.items.length])) };
  };

  /** Each row's field errors ({} for a good one), checked against results-write's row schema in one pass. */
  const rowErrors = (rows: readonly CompletionBodyItem[]): FieldErrors[] => {
    if (rows.length === 0) return [];
    try {
      validator.body('results.results-write', { results: rows });
      return [];
    } catch (error) {
      if (!(error instanceof Rejected) || error.rejection.kind !== 'invalid') throw error;
      return (error.rejection.fields.results as FieldErrors[] | undefined) ?? [];
    }
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
        try {
          await dispatch.release(worker);
          await registry.ask(registry.actor('project', worker.project), [worker.project], { type: 'RemoveWorker', id: worker.id });
        } finally {
          dispatch.departed(worker);
        }
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
      target: visibleWorker,
      async handle(ctx) {
        const worker = visibleWorker(ctx);
        const request = leaseRequestOf(worker, ctx.state.body);
        replyJsonText(ctx, 200, `{"tasks":${leasedText(await dispatch.lease(worker, request))}}`);
      },
    },
    {
      method: 'POST',
      path: '/api/workers/:id/heartbeat',
      auth: true,
      body: 'workers.heartbeat',
      summary: "The worker is alive: every lease it holds lasts its run's lease_seconds from now. Answers, of the tasks it names, those it must stop.",
      responses: { 200: 'workers.heartbeat-response' },
      target: visibleWorker,
      async handle(ctx) {
        const worker = visibleWorker(ctx);
        const named = (ctx.state.body.tasks as string[] | undefined) ?? [];
        const running = named.map((id) => ({ id, ...(runOfTask(worker, id) ?? { run: undefined, position: -1 }) }));
        const known = running.filter((task): task is { id: string; run: Run; position: number } => task.run !== undefined);
        const stop = await dispatch.heartbeat(worker, known.map(({ id, run, position }) => ({ id, run: run.id, position })));
        const unknown = running.filter((task) => task.run === undefined).map((task) => task.id);
        reply(ctx, 200, { stop: [...unknown, ...stop], leases: dispatch.leasesHeldBy(worker.id) });
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
        'stale (its lease expired or moved: nothing is written), cancelled (its run ended) or invalid (with its errors). ' +
        'With `next`, the same call leases the worker\'s next tasks, decided with these results and written in their commit: one round trip a task.',
      responses: { 200: 'workers.complete-response' },
      target: visibleWorker,
      async handle(ctx) {
        const worker = visibleWorker(ctx);
        const items = ctx.state.body.results as CompletionBodyItem[];
        if (items.length > limits.completionItemsMax) {
          throw invalid({ results: { non_field_errors: [`Ensure this field has no more than ${limits.completionItemsMax} elements.`] } });
        }
        const next = ctx.state.body.next ? leaseRequestOf(worker, ctx.state.body.next as object, 'next') : undefined;
        const answers: CompletionAnswer[] = items.map((item) => ({ task: item.task, outcome: 'invalid' }));
        const { completed, sent } = completeByRun(worker, items, answers);
        // The next lease is asked for at once: it queues behind the completions on their job's
        // actor, is decided with them and joins their commit (the slots they free count as free).
        // A lease that fails is answered with no tasks (the worker leases again); when the
        // completions fail, the call does, and a task leased beside them goes back to the queue
        // when its lease expires.
        const leased = next ? dispatch.lease(worker, next, sent).catch((): LeasedTask[] => []) : undefined;
        await completed;
        if (!leased) return reply(ctx, 200, { results: answers });
        replyJsonText(ctx, 200, `{"results":${JSON.stringify(answers)},"tasks":${leasedText(await leased)}}`);
      },
    },
  ];
}
