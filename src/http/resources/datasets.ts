// /api/datasets/: immutable, versioned sets of datapoints. A dataset is written by its agent's
// actor, which numbers versions one after another even when datasets are posted concurrently;
// no operation changes a dataset once created (a new version is posted instead), which is what
// lets a diff of two versions be computed once and paged through.
import { randomUUID } from 'node:crypto';
import { timestamp } from '../../clock.ts';
import type { ComputePool } from '../../compute/compute-pool.ts';
import type { Limits } from '../../config.ts';
import { newDataset, type AgentEvent, type DatapointInput, type DatasetFields } from '../../domain/agent.ts';
import { pickPresent, type Dataset } from '../../domain/records.ts';
import { invalid, invalidPk } from '../../domain/rejection.ts';
import type { GoneVersions } from '../../runs/gone-versions.ts';
import type { JsonCache } from '../../json-cache.ts';
import { predicateFor } from '../../query/filters.ts';
import { filtersOf, listDeclaration } from '../../validation/list-vocabulary.ts';
import type { Query, Validator } from '../../validation/validator.ts';
import { diffPage, type DatapointChange, type DatasetDiff } from '../../views/dataset-diff.ts';
import { keptAnswer, LruCache } from '../../views/lru-cache.ts';
import { fail } from '../errors.ts';
import { datapointJson, datasetChangeJson, datasetDiffSummaryJson, datasetJsonText, datasetListItemJson } from '../representations.ts';
import { noContent, reply, replyJsonText, type ApiContext, type Route } from '../route.ts';
import type { RecordCollaborators } from '../record-collaborators.ts';

const datasetFields = ['generator_model', 'metadata', 'name', 'policy_hash', 'source'];

/** What these routes use. */
export interface DatasetCollaborators extends RecordCollaborators {
  /** The datasets list's query schema, which the datapoints list also filters by. */
  validator: Validator;
  compute: ComputePool;
  jsonCache: JsonCache;
  limits: Limits;
  goneVersions: GoneVersions;
}

export function datasetRoutes({ registry, readModel, tenancy, lists, validator, compute, jsonCache, clock, limits, goneVersions }: DatasetCollaborators): Route[] {
  const matchesDatasetFilters = datasetFilterMatcher(validator);

  const visibleDataset = (ctx: ApiContext, id = ctx.params.id!): Dataset =>
    tenancy.seen(ctx.state.principal, readModel.datasets.get(id), (dataset) => dataset.project);

  const listDatasets = lists.endpoint({ schema: 'datasets.list-query', serialize: datasetListItemJson });
  const listDatapoints = lists.endpoint({ schema: 'datasets.datapoints-query', serialize: datapointJson });

  // Datasets never change, so a diff stays right for as long as both exist. A cold one (the two
  // versions' canonical inputs and hashes, then the diff) is computed off the event loop when large.
  const diffs = new LruCache<string, Promise<DatasetDiff>>(limits.diffCacheEntriesMax);
  const diffOf = (from: Dataset, to: Dataset) =>
    keptAnswer(diffs, `${from.id} ${to.id}`, () =>
      compute.run({
        kind: 'diff',
        from: { id: from.id, text: jsonCache.text(from.datapoints) },
        to: { id: to.id, text: jsonCache.text(to.datapoints) },
      }),
    );

  return [
    {
      method: 'GET',
      path: '/api/datasets',
      auth: true,
      query: 'datasets.list-query',
      summary: 'List dataset versions (without their datapoints) of the projects the caller can see.',
      responses: { 200: { list: 'datasets.dataset-list-item-response' } },
      handle(ctx) {
        listDatasets(ctx, { collection: readModel.datasets, partitions: tenancy.visibleProjects(ctx.state.principal) });
      },
    },
    {
      method: 'POST',
      path: '/api/datasets',
      auth: true,
      body: 'datasets.dataset',
      bodyBytesMax: limits.datasetBodyBytesMax,
      summary: "Create the next version of an agent's dataset, optionally making it the active one.",
      responses: { 201: 'datasets.dataset-response' },
      async handle(ctx) {
        const { body, principal } = ctx.state;
        const points = body.datapoints as DatapointInput[];
        const datapointsMax = limits.datapointsPerDatasetMax;
        if (points.length > datapointsMax) {
          throw invalid({ datapoints: { non_field_errors: [`Ensure this field has no more than ${datapointsMax} elements.`] } });
        }
        const agentId = body.agent as string;
        const agent = tenancy.referencedAgent(principal, agentId);
        const actor = registry.actor('agent', agent.id);
        if (!actor) throw invalid({ agent: [invalidPk(agentId)] });
        const datapointIds = Array.from(points, () => randomUUID());
        const dataset = newDataset(
          { id: randomUUID(), agent: agent.id, project: agent.project, now: timestamp(clock), datapointIds },
          pickPresent<DatasetFields>(body, datasetFields),
          points,
        );
        // make_active defaults to true; an explicit null is falsy, as in the original's Python.
        const makeActive = body.make_active === undefined || body.make_active === true;
        const events = await registry.ask(actor, [agent.project], { type: 'CreateDataset', dataset, makeActive });
        replyJsonText(ctx, 201, datasetJsonText(createdDataset(events), jsonCache));
      },
    },
    {
      method: 'GET',
      path: '/api/datasets/:id',
      auth: true,
      summary: 'Retrieve a dataset version with all its datapoints.',
      responses: { 200: 'datasets.dataset-response' },
      handle(ctx) {
        replyJsonText(ctx, 200, datasetJsonText(visibleDataset(ctx), jsonCache));
      },
    },
    {
      method: 'DELETE',
      path: '/api/datasets/:id',
      auth: true,
      summary: "Delete one dataset version (the agent's active_dataset is cleared if it was this one).",
      responses: { 204: null },
      async handle(ctx) {
        const dataset = visibleDataset(ctx);
        // The dataset's agent actor stays after a soft delete: a missing one means the dataset is gone.
        await registry.ask(registry.actor('agent', dataset.agent), [dataset.project], { type: 'DeleteDataset', id: dataset.id, now: timestamp(clock) });
        await goneVersions.settled(); // its runs read failed once this answers
        noContent(ctx);
      },
    },
    {
      method: 'POST',
      path: '/api/datasets/:id/activate',
      auth: true,
      summary: "Make this version its agent's active dataset.",
      responses: { 200: 'datasets.dataset-response' },
      async handle(ctx) {
        const dataset = visibleDataset(ctx);
        await registry.ask(registry.actor('agent', dataset.agent), [dataset.project], { type: 'ActivateDataset', id: dataset.id, now: timestamp(clock) });
        replyJsonText(ctx, 200, datasetJsonText(dataset, jsonCache));
      },
    },
    {
      method: 'GET',
      path: '/api/datasets/:id/datapoints',
      auth: true,
      query: 'datasets.datapoints-query',
      summary: "Page through a dataset version's datapoints (default order: order).",
      responses: { 200: { list: 'datasets.datapoint-response' } },
      handle(ctx) {
        const dataset = visibleDataset(ctx);
        if (!matchesDatasetFilters(dataset, ctx.state.query)) throw fail.notFound();
        listDatapoints(ctx, { collection: readModel.datapointsOf(dataset), partitions: [dataset.project] });
      },
    },
    {
      method: 'GET',
      path: '/api/datasets/:id/diff/:other_id',
      auth: true,
      query: 'datasets.diff-query',
      summary: 'The datapoints version {other_id} removes, changes and adds against version {id} of the same agent, matched by input; with a summary.',
      responses: { 200: 'datasets.dataset-diff-response' },
      // Heavy work waits for a worker thread in a bounded queue (src/compute/).
      errors: [503],
      async handle(ctx) {
        const from = visibleDataset(ctx);
        const to = visibleDataset(ctx, ctx.params.other_id);
        if (from.agent !== to.agent) throw invalid({ non_field_errors: ['Both dataset versions must belong to the same agent.'] });
        const diff = await diffOf(from, to);
        const only = ctx.state.query.change as DatapointChange | undefined;
        const page = lists.paginate(ctx, (offset, limit) => diffPage(diff, only, offset, limit), (entry) => datasetChangeJson(entry, from, to));
        reply(ctx, 200, { ...page, summary: datasetDiffSummaryJson(from, to, diff) });
      },
    },
  ];
}

/**
 * DRF's get_object() filters the queryset before it looks the dataset up: the datasets list's own
 * filters, given on the datapoints URL, must all match the dataset or it is not found.
 */
function datasetFilterMatcher({ documents }: Validator): (dataset: Dataset, query: Query) => boolean {
  const accepted = new Set(Object.keys(documents.get('datasets.datapoints-query')!.properties as object));
  const declaration = listDeclaration(documents.get('datasets.list-query')!);
  const selecting = { ...declaration, filters: declaration.filters.filter((filter) => accepted.has(filter.param)) };
  return (dataset, query) => filtersOf(selecting, query).every((filter) => predicateFor(filter)(dataset));
}

function createdDataset(events: readonly AgentEvent[]): Dataset {
  const created = events.find((event) => event.type === 'DatasetCreated');
  if (!created) throw new Error('a dataset create produced no dataset');
  return created.dataset;
}
