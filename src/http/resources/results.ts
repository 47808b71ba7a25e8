// /api/job-iterations/{id}/results/: how one candidate did on each datapoint of one dataset
// version, written in batches (each durable before its answer) and read as a list, one row, a
// summary, and, for a job, every iteration's summary at once. An iteration's results are of one
// version: its first batch pins it. Results are not records of the read model: they are kept in
// their own store (src/results/), and only the rows a page shows are read from it.
import type { Limits } from '../../config.ts';
import type { Dataset, JobIteration } from '../../domain/records.ts';
import { resultKeyOf, type ResultInput } from '../../domain/result-row.ts';
import type { ReadModel } from '../../read-model.ts';
import type { ResultIntake } from '../../results/result-intake.ts';
import { resultRows, type ResultRef } from '../../results/result-list.ts';
import type { ResultAnswers } from '../../results/result-answers.ts';
import type { ResultKeeper } from '../../results/result-keeper.ts';
import type { Tenancy } from '../../tenancy.ts';
import { or404 } from '../errors.ts';
import type { Lists } from '../pages.ts';
import { jobSummaryItemJson, resultJson, resultListItemJson, resultsWrittenJson, resultSummaryJson } from '../representations.ts';
import { reply, type ApiContext, type Route } from '../route.ts';

/** What these routes use. */
export interface ResultCollaborators {
  readModel: ReadModel;
  tenancy: Tenancy;
  lists: Lists;
  results: ResultKeeper;
  resultIntake: ResultIntake;
  resultAnswers: ResultAnswers;
  limits: Limits;
}

export function resultRoutes({ readModel, tenancy, lists, results, resultIntake, resultAnswers, limits }: ResultCollaborators): Route[] {
  const { store } = results;

  const visibleIteration = (ctx: ApiContext, id = ctx.params.id!): JobIteration =>
    tenancy.seen(ctx.state.principal, readModel.iterations.get(id), (iteration) => iteration.project);

  const listResults = lists.endpoint<ResultRef, unknown>({
    schema: 'results.list-query',
    serialize: (ref) => ref,
    text: (ref) => JSON.stringify(resultListItemJson(or404(store.listedRow(ref.iteration, ref.roster, ref.index, ref.attempt)))),
  });

  return [
    {
      method: 'POST',
      path: '/api/job-iterations/:id/results',
      auth: true,
      body: 'results.results-write',
      bodyBytesMax: limits.resultBodyBytesMax,
      summary:
        "Write a batch of results (one row per datapoint and attempt) of a dataset version of the job's agent. The first batch pins the " +
        'iteration to its version; a row sent again replaces it. The whole batch is checked before anything is written.',
      responses: { 200: 'results.results-written-response' },
      // An iteration a live run evaluates is written by that run alone.
      errors: [409],
      target: visibleIteration,
      async handle(ctx) {
        const { principal, body } = ctx.state;
        const iteration = visibleIteration(ctx);
        const visible = (dataset: Dataset) => tenancy.canSee(principal, dataset.project);
        const roster = resultIntake.rosterFor(iteration, body.dataset as string | null | undefined, visible);
        const written = await resultIntake.writeAll(iteration, roster, body.results as ResultInput[]);
        reply(ctx, 200, resultsWrittenJson(written));
      },
    },
    {
      method: 'GET',
      path: '/api/job-iterations/:id/results',
      auth: true,
      query: 'results.list-query',
      summary: "An iteration's results (without output), by datapoint order then attempt unless `ordering` says score.",
      responses: { 200: { list: 'results.result-list-item-response' } },
      handle(ctx) {
        const iteration = visibleIteration(ctx);
        listResults(ctx, { collection: resultRows(iteration.id, store.table(iteration.id), limits.attemptsPerDatapointMax), partitions: [iteration.project] });
      },
    },
    {
      method: 'GET',
      path: '/api/job-iterations/:id/results/summary',
      auth: true,
      summary: "What an iteration's results add up to: coverage, the mean score and pass rate with 95% intervals over datapoints, and each numeric dimension.",
      responses: { 200: 'results.summary-response' },
      // Heavy work waits for a worker thread in a bounded queue (src/compute/).
      errors: [503],
      async handle(ctx) {
        const iteration = visibleIteration(ctx);
        reply(ctx, 200, resultSummaryJson(iteration.id, await resultAnswers.summary(iteration.id)));
      },
    },
    {
      method: 'GET',
      path: '/api/job-iterations/:id/results/:result_id',
      auth: true,
      summary: 'One result, with its output.',
      responses: { 200: 'results.result-response' },
      handle(ctx) {
        const iteration = visibleIteration(ctx);
        const table = or404(store.table(iteration.id));
        const key = or404(resultKeyOf(iteration.id, ctx.params.result_id!));
        const record = or404(store.row(iteration.id, table.roster, key.index, key.attempt));
        reply(ctx, 200, resultJson(record));
      },
    },
    {
      method: 'GET',
      path: '/api/jobs/:id/results-summary',
      auth: true,
      summary: "The results summary of every iteration of a job that has results, in the job's iteration order.",
      responses: { 200: 'results.job-summary-response' },
      // Heavy work waits for a worker thread in a bounded queue (src/compute/).
      errors: [503],
      async handle(ctx) {
        const job = tenancy.seen(ctx.state.principal, readModel.jobs.get(ctx.params.id!), (found) => found.project);
        const withResults = readModel.iterationsOf(job).filter((iteration) => results.store.table(iteration.id));
        const summaries = await resultAnswers.summariesOf(withResults.map((iteration) => iteration.id));
        reply(ctx, 200, { job: job.id, iterations: summaries.map((summary, i) => jobSummaryItemJson(withResults[i]!.id, summary)) });
      },
    },
  ];
}
