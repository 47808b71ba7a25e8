// Two iterations compared (of one job or two, any the caller can see): avg_score and every numeric
// dimension with its delta and a unified diff of agent_code, and their results per datapoint
// compared with paired statistics (src/views/result-comparison.ts); and every paired datapoint,
// as a list. Heavy comparisons are computed off the event loop and kept while both sides'
// results are unchanged (src/results/result-answers.ts).
import type { ComputePool } from '../../compute/compute-pool.ts';
import type { Limits } from '../../config.ts';
import type { JobIteration } from '../../domain/records.ts';
import type { ReadModel } from '../../read-model.ts';
import { pairedItemOf, pairRows, type PairRef } from '../../results/paired-list.ts';
import type { ResultAnswers } from '../../results/result-answers.ts';
import { stoppedEarlyOf } from '../../runs/race-stops.ts';
import type { Tenancy } from '../../tenancy.ts';
import type { Lists } from '../pages.ts';
import { comparisonJson, iterationComparisonJson, pairedDatapointJson } from '../representations.ts';
import { reply, type ApiContext, type Route } from '../route.ts';

/** What these routes use. */
export interface ComparisonCollaborators {
  readModel: ReadModel;
  tenancy: Tenancy;
  lists: Lists;
  resultAnswers: ResultAnswers;
  /** Where a long code diff is computed (src/compute/). */
  compute: ComputePool;
  /** How much of a code diff is shown. */
  limits: Limits;
}

export function comparisonRoutes({ readModel, tenancy, lists, resultAnswers, compute, limits }: ComparisonCollaborators): Route[] {
  const visibleIteration = (ctx: ApiContext, id: string): JobIteration =>
    tenancy.seen(ctx.state.principal, readModel.iterations.get(id), (iteration) => iteration.project);

  const listPairs = lists.endpoint<PairRef, unknown>({
    schema: 'results.paired-query',
    serialize: (ref) => ref,
    text: (ref) => JSON.stringify(pairedDatapointJson(pairedItemOf(ref, (iteration, index) => resultAnswers.traceOf(iteration, ref.pairs.roster, index)))),
  });

  return [
    {
      method: 'GET',
      path: '/api/job-iterations/:id/compare/:other_id',
      auth: true,
      query: 'iterations.compare-query',
      summary:
        'Iteration {id} against {other_id} (of any job): avg_score and every numeric dimension with its delta, a unified diff of agent_code, ' +
        'and their results per datapoint compared with paired statistics and a verdict.',
      responses: { 200: 'iterations.iteration-comparison-response' },
      // Heavy work waits for a worker thread in a bounded queue (src/compute/).
      errors: [503],
      async handle(ctx) {
        const from = visibleIteration(ctx, ctx.params.id!);
        const to = visibleIteration(ctx, ctx.params.other_id!);
        // The code diff on a worker thread when it is long (jsdiff takes ~0.7 s for 1 MB a side).
        const side = (iteration: JobIteration) => ({ name: iteration.iteration_name, code: iteration.agent_code });
        const [results, codeDiff] = await Promise.all([
          resultAnswers.comparison(from.id, to.id, ctx.state.query.confidence as number),
          compute.run({ kind: 'codeDiff', from: side(from), to: side(to), limits }),
        ]);
        reply(ctx, 200, { ...iterationComparisonJson(from, to, codeDiff), results: comparisonJson(results, stoppedEarlyOf(readModel, from, to)) });
      },
    },
    {
      method: 'GET',
      path: '/api/job-iterations/:id/compare/:other_id/datapoints',
      auth: true,
      query: 'results.paired-query',
      summary: 'Every datapoint scored on either side of a comparison, with both scores, both pass verdicts and what changed.',
      responses: { 200: { list: 'results.paired-datapoint-response' } },
      // Heavy work waits for a worker thread in a bounded queue (src/compute/).
      errors: [503],
      async handle(ctx) {
        const from = visibleIteration(ctx, ctx.params.id!);
        const to = visibleIteration(ctx, ctx.params.other_id!);
        const pairs = await resultAnswers.paired(from.id, to.id);
        listPairs(ctx, { collection: pairRows(pairs), partitions: [from.project] });
      },
    },
  ];
}
