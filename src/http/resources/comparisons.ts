// Two iterations compared (of one job or two, any the caller can see): avg_score and every numeric
// dimension with its delta and a unified diff of agent_code, and their results per datapoint
// compared with paired statistics (src/views/result-comparison.ts); and every paired datapoint,
// as a list. Heavy comparisons are computed off the event loop and kept while both sides'
// results are unchanged (src/results/result-views.ts).
import type { Limits } from '../../config.ts';
import type { JobIteration } from '../../domain/records.ts';
import type { ReadModel } from '../../read-model.ts';
import { pairRows, type PairRef } from '../../results/paired-rows.ts';
import type { ResultViews } from '../../results/result-views.ts';
import type { Tenancy } from '../../tenancy.ts';
import { verdictNone, verdictPassed } from '../../views/datapoint-scores.ts';
import type { Lists } from '../pages.ts';
import { iterationComparisonJson } from '../representations.ts';
import { reply, type ApiContext, type Route } from '../route.ts';

/** What these routes use. */
export interface ComparisonCollaborators {
  readModel: ReadModel;
  tenancy: Tenancy;
  lists: Lists;
  resultViews: ResultViews;
  /** How much of a code diff is shown. */
  limits: Limits;
}

/** A comparison's confidence when none is asked. */
const confidenceDefault = 0.95;

export function comparisonRoutes({ readModel, tenancy, lists, resultViews, limits }: ComparisonCollaborators): Route[] {
  const visibleIteration = (ctx: ApiContext, id: string): JobIteration =>
    tenancy.seen(ctx.state.principal, readModel.iterations.get(id), (iteration) => iteration.project);

  const listPairs = lists.endpoint<PairRef, unknown>({
    schema: 'results.paired-query',
    serialize: (ref) => ref,
    text: (ref) => JSON.stringify(pairJson(ref)),
  });

  /** A paired datapoint as the list answers it, with each side's trace. */
  const pairJson = (ref: PairRef) => {
    const { data, roster, from, to } = ref.pairs;
    const index = data.index[ref.at]!;
    const score = (value: number) => (Number.isNaN(value) ? null : value);
    const passed = (verdict: number) => (verdict === verdictNone ? null : verdict === verdictPassed);
    return {
      datapoint: roster.ids[index]!,
      datapoint_order: ref.datapoint_order,
      score_from: score(data.scoreFrom[ref.at]!),
      score_to: score(data.scoreTo[ref.at]!),
      delta: ref.delta,
      passed_from: passed(data.passedFrom[ref.at]!),
      passed_to: passed(data.passedTo[ref.at]!),
      change: ref.change,
      trace_id_from: resultViews.traceOf(from, roster, index),
      trace_id_to: resultViews.traceOf(to, roster, index),
    };
  };

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
        const confidence = (ctx.state.query.confidence as number | undefined) ?? confidenceDefault;
        const results = await resultViews.comparison(from.id, to.id, confidence);
        reply(ctx, 200, { ...iterationComparisonJson(from, to, limits), results });
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
        const pairs = await resultViews.paired(from.id, to.id);
        listPairs(ctx, { collection: pairRows(pairs), partitions: [from.project] });
      },
    },
  ];
}
