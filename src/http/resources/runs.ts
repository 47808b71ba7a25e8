// /api/jobs/{id}/runs/ and /api/runs/{id}/: a job's iterations evaluated on one dataset version
// as leased work, one task per iteration, datapoint and attempt, that workers anywhere lease, run
// and complete (workers.ts). A run is work of its job's actor (src/domain/run.ts decides); a run's
// iterations are pinned to its version before it is created, and their results fill in as its
// tasks complete.
import { randomUUID } from 'node:crypto';
import { timestamp } from '../../clock.ts';
import type { Limits } from '../../config.ts';
import type { Roster } from '../../domain/result-batch.ts';
import type { Dataset, Job, JobIteration } from '../../domain/records.ts';
import { invalid, invalidPk } from '../../domain/rejection.ts';
import type { Run, RunBudget, RunOrder, RunState } from '../../domain/run.ts';
import type { ResultIntake } from '../../results/result-intake.ts';
import type { ResultKeeper } from '../../results/result-keeper.ts';
import type { RunDispatch } from '../../runs/run-dispatch.ts';
import { taskRows, type TaskRef } from '../../runs/task-list.ts';
import { Xoshiro128StarStar } from '../../stats/xoshiro128.ts';
import type { Validator } from '../../validation/validator.ts';
import { or404 } from '../errors.ts';
import type { RecordCollaborators } from '../record-collaborators.ts';
import { runJson, taskJson } from '../representations.ts';
import { reply, type ApiContext, type Route } from '../route.ts';

/** What these routes use. */
export interface RunCollaborators extends RecordCollaborators {
  limits: Limits;
  validator: Validator;
  results: ResultKeeper;
  resultIntake: ResultIntake;
  dispatch: RunDispatch;
}

/** A run's body with its defaults (runs.run). */
interface RunBody {
  dataset: string;
  iterations: string[];
  attempts: number;
  order: RunOrder;
  seed: number | null;
  max_tries: number;
  lease_seconds: number;
  max_in_flight: number | null;
  budget: { max_cost?: number | null; max_tasks?: number | null } | null;
}

export function runRoutes({ registry, readModel, tenancy, lists, clock, limits, validator, results, resultIntake, dispatch }: RunCollaborators): Route[] {
  const visibleJob = (ctx: ApiContext): Job => tenancy.seen(ctx.state.principal, readModel.jobs.get(ctx.params.id!), (job) => job.project);
  const visibleRun = (ctx: ApiContext): RunState => {
    const run = tenancy.seen(ctx.state.principal, readModel.runs.get(ctx.params.id!), (found) => found.project);
    return or404(readModel.runStates.get(run.id));
  };
  const rosterOfRun = (state: RunState): Roster | undefined => results.store.roster(state.run.dataset);

  const listRuns = lists.endpoint<Run, unknown>({
    schema: 'runs.list-query',
    serialize: (run) => run,
    text: (run) => JSON.stringify(runJson(readModel.runStates.get(run.id)!)),
    textVersion: () => readModel.runTasksVersion,
  });
  const listTasks = lists.endpoint<TaskRef, unknown>({
    schema: 'runs.tasks-query',
    serialize: (ref) => ref,
    text: (ref) => JSON.stringify(taskJson(ref.run, ref.id, ref.roster)),
  });

  /** The iterations a run names: each of this job, once. */
  const iterationsOf = (job: Job, ids: readonly string[]): JobIteration[] => {
    const errors: string[] = [];
    const found = ids.map((id) => {
      const iteration = readModel.iterations.get(id);
      if (!iteration || iteration.job !== job.id) errors.push(iteration ? `Iteration ${id} is of another job.` : invalidPk(id));
      return iteration!;
    });
    if (errors.length > 0) throw invalid({ iterations: errors });
    if (new Set(ids).size !== ids.length) throw invalid({ iterations: ['An iteration is named twice.'] });
    return found;
  };

  /** The bounds the configuration puts on a run's body. */
  const checkBounds = (body: RunBody, tasks: number) => {
    const errors: Record<string, string[]> = {};
    if (body.attempts > limits.attemptsPerDatapointMax) errors.attempts = [`Ensure this value is less than or equal to ${limits.attemptsPerDatapointMax}.`];
    if (body.max_tries > limits.taskTriesMax) errors.max_tries = [`Ensure this value is less than or equal to ${limits.taskTriesMax}.`];
    if (body.lease_seconds > limits.leaseSecondsMax) errors.lease_seconds = [`Ensure this value is less than or equal to ${limits.leaseSecondsMax}.`];
    if (tasks > limits.tasksPerRunMax) errors.non_field_errors = [`A run holds at most ${limits.tasksPerRunMax} tasks; this one would have ${tasks}.`];
    if (Object.keys(errors).length > 0) throw invalid(errors);
  };

  /** The order datapoints are handed out in: the version's, or shuffled (Fisher-Yates with the seeded generator of src/stats/). */
  const datapointOrder = (count: number, order: RunOrder, seed: number): number[] => {
    const indexes = Array.from({ length: count }, (_, i) => i);
    if (order === 'dataset') return indexes;
    const generator = Xoshiro128StarStar.seeded(seed);
    for (let i = count - 1; i > 0; i--) {
      const j = generator.nextIndex(i + 1);
      [indexes[i], indexes[j]] = [indexes[j]!, indexes[i]!];
    }
    return indexes;
  };

  /** A new run's id: one whose tasks' ids share no prefix with a live run's. */
  const newRunId = (): string => {
    for (;;) {
      const id = randomUUID();
      if (!dispatch.prefixTaken(id)) return id;
    }
  };

  return [
    {
      method: 'POST',
      path: '/api/jobs/:id/runs',
      auth: true,
      body: 'runs.run',
      summary:
        "Run iterations of this job on a dataset version of its agent, each datapoint `attempts` times, as leased work for workers (one task each). " +
        'Its iterations are pinned to the version; the job follows its runs (it is running from the first lease).',
      responses: { 201: 'runs.run-response' },
      errors: [409],
      async handle(ctx) {
        const { principal } = ctx.state;
        const job = visibleJob(ctx);
        const body = validator.withDefaults('runs.run', ctx.state.body as unknown as RunBody);
        const iterations = iterationsOf(job, body.iterations);
        const visible = (dataset: Dataset) => tenancy.canSee(principal, dataset.project);
        const rosters = iterations.map((iteration) => resultIntake.rosterFor(iteration, body.dataset, visible));
        const roster = rosters[0]!;
        checkBounds(body, iterations.length * roster.ids.length * body.attempts);
        // Pinned first, each durably: results of another version can no longer be written to them.
        for (const iteration of iterations) await results.pin(iteration.id, roster, clock.nowMs());
        const now = timestamp(clock);
        const budget: RunBody['budget'] = body.budget ?? {};
        const run = {
          id: newRunId(),
          job: job.id,
          project: job.project,
          dataset: roster.dataset,
          iterations: iterations.map((iteration) => iteration.id),
          attempts: body.attempts,
          order: body.order,
          seed: body.seed ?? null,
          max_tries: body.max_tries,
          lease_seconds: body.lease_seconds,
          max_in_flight: body.max_in_flight ?? null,
          budget: { max_cost: budget.max_cost ?? null, max_tasks: budget.max_tasks ?? null } satisfies RunBudget,
          status: 'queued' as const,
          reason: null,
          created_at: now,
          started_at: null,
          finished_at: null,
        };
        const shape = {
          iterations: iterations.length,
          datapoints: roster.ids.length,
          attempts: body.attempts,
          datapointOrder: datapointOrder(roster.ids.length, body.order, body.seed ?? 0),
        };
        await registry.ask(registry.actor('job', job.id), [job.project], { type: 'CreateRun', run, shape });
        reply(ctx, 201, runJson(or404(readModel.runStates.get(run.id))));
      },
    },
    {
      method: 'GET',
      path: '/api/jobs/:id/runs',
      auth: true,
      query: 'runs.list-query',
      summary: "A job's runs (newest first by default), each with its counts by task state.",
      responses: { 200: { list: 'runs.run-response' } },
      handle(ctx) {
        const job = visibleJob(ctx);
        listRuns(ctx, { collection: readModel.runs, partitions: [job.project], fixedFilters: [{ field: 'job', op: 'exact', value: job.id }] });
      },
    },
    {
      method: 'GET',
      path: '/api/runs/:id',
      auth: true,
      summary: 'A run with its counts by task state, what it spent and why it ended.',
      responses: { 200: 'runs.run-response' },
      handle(ctx) {
        reply(ctx, 200, runJson(visibleRun(ctx)));
      },
    },
    {
      method: 'POST',
      path: '/api/runs/:id/cancel',
      auth: true,
      summary: 'Cancel a run: its queued and leased tasks are cancelled (a worker holding one is told to stop at its next heartbeat); its results so far stay.',
      responses: { 200: 'runs.run-response' },
      errors: [409],
      async handle(ctx) {
        const { run } = visibleRun(ctx);
        await registry.ask(registry.actor('job', run.job), [run.project], { type: 'CancelRun', run: run.id, now: timestamp(clock) });
        reply(ctx, 200, runJson(or404(readModel.runStates.get(run.id))));
      },
    },
    {
      method: 'POST',
      path: '/api/runs/:id/retry',
      auth: true,
      summary: 'Queue again only the tasks that ended dead or with an error result ("rerun only the failed"), their tries starting over; an ended run runs again.',
      responses: { 200: 'runs.run-response' },
      errors: [409],
      async handle(ctx) {
        const state = visibleRun(ctx);
        const { run } = state;
        await registry.ask(registry.actor('job', run.job), [run.project], {
          type: 'RetryRun',
          run: run.id,
          failedResults: failedResultPositions(state),
          nowMs: clock.nowMs(),
        });
        reply(ctx, 200, runJson(or404(readModel.runStates.get(run.id))));
      },
    },
    {
      method: 'GET',
      path: '/api/runs/:id/tasks',
      auth: true,
      query: 'runs.tasks-query',
      summary: "A run's tasks (by iteration, datapoint and attempt), each with its state, tries, last error, the worker holding it and until when, and its result.",
      responses: { 200: { list: 'runs.task-response' } },
      handle(ctx) {
        const state = visibleRun(ctx);
        listTasks(ctx, { collection: taskRows(state, rosterOfRun(state), readModel.runTasksVersion), partitions: [state.run.project] });
      },
    },
  ];

  /** The positions of a run's tasks whose result row has status error (read from the iterations' tables). */
  function failedResultPositions({ run, tasks }: RunState): Set<number> {
    const failed = new Set<number>();
    run.iterations.forEach((iteration, i) => {
      const table = results.store.table(iteration);
      if (!table) return;
      for (const slot of table.slotsInOrder()) {
        if (!table.isError(slot) || table.attemptAt(slot) >= run.attempts) continue;
        failed.add(tasks.positionOf({ iteration: i, datapoint: table.indexAt(slot), attempt: table.attemptAt(slot) }));
      }
    });
    return failed;
  }
}
