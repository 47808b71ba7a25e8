// /api/jobs/{id}/runs/ and /api/runs/{id}/: a job's iterations evaluated on one dataset version
// as leased work, one task per iteration, datapoint and attempt, that workers anywhere lease, run
// and complete (workers.ts). A run is work of its job's actor (src/domain/run.ts decides); a run's
// iterations are pinned to its version before it is created, and their results fill in as its
// tasks complete.
import { randomUUID } from 'node:crypto';
import { timestamp } from '../../clock.ts';
import type { Limits } from '../../config.ts';
import { tooManyResults, type Roster } from '../../domain/result-batch.ts';
import type { Dataset, Job, JobIteration } from '../../domain/records.ts';
import { conflict, invalid, invalidPk, notFound } from '../../domain/rejection.ts';
import { evalSpecOf } from '../../domain/agent.ts';
import { busyIteration, type Run, type RunBudget, type RunCommand, type RunOrder, type RunScoringConfig, type RunState } from '../../domain/run.ts';
import { handOutBlock } from '../../domain/run-tasks.ts';
import type { ResultIntake } from '../../results/result-intake.ts';
import type { ResultKeeper } from '../../results/result-keeper.ts';
import type { RunDispatch } from '../../runs/run-dispatch.ts';
import type { RunPlacements } from '../../runs/run-placements.ts';
import type { RunRescorer } from '../../runs/run-rescore.ts';
import { RunScoring } from '../../runs/run-scoring.ts';
import { scoreRangeOf, scoringErrors, specPassThresholdDefault } from '../../scoring/run-scorer.ts';
import { settleRace, type RaceBody } from '../../runs/race-setup.ts';
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
  placements: RunPlacements;
  runScoring: RunScoring;
  rescorer: RunRescorer;
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
  budget: BudgetBody;
  scoring: RunScoringConfig | null;
  race: RaceBody | null;
}

/** A budget as a run's body or a retry's sends it (runs.fields#/$defs/budgetBody). */
type BudgetBody = { max_cost?: number | null; max_tasks?: number | null } | null | undefined;

/** A budget sent as a run's: a cap left out is none. */
function runBudgetOf(body: BudgetBody): RunBudget {
  return { max_cost: body?.max_cost ?? null, max_tasks: body?.max_tasks ?? null };
}

/** A run's parts once checked: what creating it takes. */
interface NewRun {
  id: string;
  job: Job;
  body: RunBody;
  iterations: readonly JobIteration[];
  roster: Roster;
  race: ReturnType<typeof settleRace> | null;
  scoring: RunScoringConfig | null;
}

export function runRoutes({ registry, readModel, tenancy, lists, clock, limits, validator, results, resultIntake, dispatch, placements, rescorer }: RunCollaborators): Route[] {
  const visibleJob = (ctx: ApiContext): Job => tenancy.seen(ctx.state.principal, readModel.jobs.get(ctx.params.id!), (job) => job.project);
  const visibleRun = (ctx: ApiContext): RunState => {
    const run = tenancy.seen(ctx.state.principal, readModel.runs.get(ctx.params.id!), (found) => found.project);
    return or404(readModel.runStates.get(run.id));
  };
  const rosterOfRun = (state: RunState): Roster | undefined => results.store.roster(state.run.dataset);
  /** A run's command, to its job's actor. */
  const askJobOf = (run: Run, command: RunCommand) => registry.ask(registry.actor('job', run.job), [run.project], command);
  /** The run as it is now (after the write just made). */
  const answerRun = (ctx: ApiContext, status: number, id: string) => reply(ctx, status, runJson(or404(readModel.runStates.get(id))));

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

  /** The iterations a run names: each of this job, once (one the caller cannot see does not exist for it). */
  const iterationsOf = (job: Job, ids: readonly string[], visible: (iteration: JobIteration) => boolean): JobIteration[] => {
    const errors: string[] = [];
    const found = ids.map((id) => {
      const iteration = readModel.iterations.get(id);
      if (!iteration || !visible(iteration)) errors.push(invalidPk(id));
      else if (iteration.job !== job.id) errors.push(`Iteration ${id} is of another job.`);
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
    // No run holds more tasks than this, so none has more in flight.
    if (body.max_in_flight !== null && body.max_in_flight > limits.tasksPerRunMax) errors.max_in_flight = [`Ensure this value is less than or equal to ${limits.tasksPerRunMax}.`];
    if (tasks > limits.tasksPerRunMax) errors.non_field_errors = [`A run holds at most ${limits.tasksPerRunMax} tasks; this one would have ${tasks}.`];
    // A run with no task would never end (a run ends on a completion): its version has no datapoint.
    if (tasks === 0) errors.dataset = ['This dataset version has no datapoints: a run of it would have no task.'];
    if (Object.keys(errors).length > 0) throw invalid(errors);
  };

  /**
   * Each iteration's results once the run has written them all stay within their bound: one row
   * per datapoint and attempt, and the rows it already has of attempts the run does not make.
   */
  const checkResultsFit = (iterations: readonly JobIteration[], datapoints: number, attempts: number) => {
    for (const iteration of iterations) {
      const rowsAfter = datapoints * attempts + (results.store.table(iteration.id)?.rowsFromAttempt(attempts) ?? 0);
      if (rowsAfter > limits.resultsPerIterationMax) throw invalid({ non_field_errors: [tooManyResults(limits, rowsAfter, 'run')] });
    }
  };

  /**
   * What the job's actor refuses a new run for (decideCreate: a cancelled job, its runs at the
   * limit, an iteration another run writes now), checked before the run's iterations are pinned:
   * a refused run writes nothing. The actor checks again when it decides.
   */
  const checkJobTakesRun = (job: Job, iterations: readonly JobIteration[]) => {
    if (job.status === 'cancelled') throw conflict('A cancelled job takes no new run.');
    const runs = readModel.runsOf(job).length + placements.placedIn(job.id);
    if (runs >= limits.runsPerJobMax) throw invalid({ non_field_errors: [`A job may have at most ${limits.runsPerJobMax} runs.`] });
    for (const iteration of iterations) {
      const other = readModel.liveRunOf(iteration);
      if (other) throw invalid({ iterations: [busyIteration(iteration.id, other)] });
      const placed = placements.runOf(iteration.id);
      if (placed) throw invalid({ iterations: [`Iteration ${iteration.id} is being placed in run ${placed}, created now.`] });
    }
  };

  /** A scoring checked against the job's agent (its eval spec, its output_schema), a spec's threshold filled in; 400 on `scoring`. */
  const checkedScoring = (job: Job, scoring: RunScoringConfig | null | undefined): RunScoringConfig | null => {
    if (scoring === null || scoring === undefined) return null;
    const agent = job.agent ? readModel.agents.get(job.agent) : undefined;
    if (!agent) throw invalid({ scoring: ['A run is scored by the service only for a job of an agent.'] });
    const errors = scoringErrors(scoring, evalSpecOf(agent), RunScoring.depsOf(agent), limits.resultDimensionsMax);
    if (errors) throw invalid(errors);
    return scoring.method === 'spec' ? { method: 'spec', pass_threshold: scoring.pass_threshold ?? specPassThresholdDefault } : scoring;
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

  /** A new run of checked parts, its iterations pinned: its job decides it, and it is answered once durable. */
  const createRun = async (ctx: ApiContext, parts: NewRun) => {
    const { id, job, body, iterations, roster, race, scoring } = parts;
    const now = timestamp(clock);
    // A race's order is shuffled, by the seed sent or else one drawn from its id (fixed before any score).
    const order: RunOrder = race ? 'shuffled' : body.order;
    const seed = body.seed ?? (race ? parseInt(id.slice(0, 8), 16) : null);
    const run = {
      id,
      job: job.id,
      project: job.project,
      dataset: roster.dataset,
      iterations: iterations.map((iteration) => iteration.id),
      attempts: body.attempts,
      order,
      seed,
      max_tries: body.max_tries,
      lease_seconds: body.lease_seconds,
      max_in_flight: body.max_in_flight ?? null,
      budget: runBudgetOf(body.budget),
      scoring,
      rescore: null,
      race: race?.config ?? null,
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
      datapointOrder: datapointOrder(roster.ids.length, order, seed ?? 0),
      // A race's pairs complete together; other runs go a block of datapoints at a time.
      block: race ? 1 : handOutBlock,
    };
    await askJobOf(run, { type: 'CreateRun', run, shape, incumbentValues: race?.incumbentValues ?? null });
    answerRun(ctx, 201, run.id);
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
      target: visibleJob,
      async handle(ctx) {
        const { principal } = ctx.state;
        const job = visibleJob(ctx);
        const sentOrder = (ctx.state.body as { order?: RunOrder }).order;
        const body = validator.withDefaults('runs.run', ctx.state.body as unknown as RunBody);
        const visibleIteration = (iteration: JobIteration) => tenancy.canSee(principal, iteration.project);
        const iterations = iterationsOf(job, body.iterations, visibleIteration);
        const scoring = checkedScoring(job, body.scoring);
        const visible = (dataset: Dataset) => tenancy.canSee(principal, dataset.project);
        const rosters = iterations.map((iteration) => resultIntake.rosterFor(iteration, body.dataset, visible));
        const roster = rosters[0]!;
        checkBounds(body, iterations.length * roster.ids.length * body.attempts);
        // Again once pinned (below); here, a run refused at once pins nothing.
        checkResultsFit(iterations, roster.ids.length, body.attempts);
        const race = body.race ? settleRace(readModel, results.store, {
          job,
          race: body.race,
          iterations: iterations.map((iteration) => iteration.id),
          roster,
          scoringRange: scoring && scoreRangeOf(scoring, evalSpecOf(readModel.agents.get(job.agent!)!)),
          order: sentOrder,
          visible: visibleIteration,
        }) : null;
        checkJobTakesRun(job, iterations);
        const id = newRunId();
        // Held from here to the job's decision (RunPlacements): no other run takes these
        // iterations, and no batch of results lands on them.
        const placed = placements.place(id, job.id, iterations.map((iteration) => iteration.id));
        const unpinned = iterations.filter((iteration) => results.store.pinOf(iteration.id) === undefined).map((iteration) => iteration.id);
        try {
          // Pinned first, each durably (together: the results' writer commits them at once): results of
          // another version can no longer be written to them. Once they are, every batch written
          // before is in the tables, and the rows the run would leave are counted.
          await Promise.all(iterations.map((iteration) => results.pin(iteration.id, roster, clock.nowMs())));
          checkResultsFit(iterations, roster.ids.length, body.attempts);
          await createRun(ctx, { id, job, body, iterations, roster, race, scoring });
        } catch (refusal) {
          // Refused after pinning (the job cancelled meanwhile, a bound): the pins it made go
          // again. Nothing wrote those iterations since it was placed; one with rows got them
          // from a batch decided before, whose pin it is.
          const made = unpinned.filter((iteration) => results.store.pinOf(iteration) !== undefined && !results.store.table(iteration)?.rows);
          await results.unpin(made);
          throw refusal;
        } finally {
          placed();
        }
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
        await askJobOf(run, { type: 'CancelRun', run: run.id, now: timestamp(clock) });
        answerRun(ctx, 200, run.id);
      },
    },
    {
      method: 'POST',
      path: '/api/runs/:id/retry',
      auth: true,
      body: 'runs.retry',
      summary:
        'Queue again only the tasks that ended dead or with an error result ("rerun only the failed"), their tries starting over; an ended run runs again, ' +
        'with the `budget` sent from now on (a run whose budget is spent takes no retry without a larger one).',
      responses: { 200: 'runs.run-response' },
      errors: [409],
      target: visibleRun,
      async handle(ctx) {
        const state = visibleRun(ctx);
        const { run } = state;
        // A run cannot go on without its dataset version or its agent (deleting either failed it).
        const dataset = readModel.datasets.get(run.dataset);
        if (!dataset || !readModel.agents.get(dataset.agent)) throw conflict("This run's dataset version, or its agent, was deleted: it cannot run again.");
        await askJobOf(run, {
          type: 'RetryRun',
          run: run.id,
          failedResults: failedResultPositions(state),
          nowMs: clock.nowMs(),
          ...(ctx.state.body.budget !== undefined ? { budget: runBudgetOf(ctx.state.body.budget as BudgetBody) } : {}),
        });
        answerRun(ctx, 200, run.id);
      },
    },
    {
      method: 'POST',
      path: '/api/runs/:id/rescore',
      auth: true,
      body: 'runs.rescore',
      summary:
        "Score an ended run's results again (or one iteration's) from their stored outputs and traces, with its scoring or the one given " +
        "(from now on the run's), without running the agent again: in the background, its progress in the run's `rescore` and on the event stream.",
      responses: { 202: 'runs.run-response' },
      errors: [409],
      target: visibleRun,
      async handle(ctx) {
        const state = visibleRun(ctx);
        const { run } = state;
        const body = ctx.state.body as { scoring?: RunScoringConfig | null; iteration?: string | null };
        const job = or404(readModel.jobs.get(run.job));
        const scoring = checkedScoring(job, body.scoring ?? run.scoring);
        if (!scoring) throw invalid({ scoring: ['This run is not scored by the service: name a scoring.'] });
        const iteration = body.iteration ?? null;
        if (iteration !== null && !run.iterations.includes(iteration)) throw invalid({ iteration: [`Not an iteration of this run.`] });
        await rescorer.start(state, scoring, iteration);
        answerRun(ctx, 202, run.id);
      },
    },
    {
      method: 'GET',
      path: '/api/runs/:id/race',
      auth: true,
      summary: "A racing run's candidates' bounds as they narrowed, pair by pair, for a chart (404 for a run that is not a race).",
      responses: { 200: 'runs.race-history-response' },
      handle(ctx) {
        const { run, tasks, race } = visibleRun(ctx);
        if (!race) throw notFound();
        reply(ctx, 200, {
          run: run.id,
          datapoints: race.settings.datapoints,
          tasks_total: tasks.total,
          tasks_saved: race.tasksSaved,
          candidates: race.candidates.map(({ candidate, history }) => ({
            iteration: candidate.iteration,
            state: candidate.state,
            stopped_at: candidate.stopped_at,
            pairs: history.pairs,
            low: history.low,
            high: history.high,
          })),
        });
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
