// How each record is written on the wire. A record's representations (full and list item) are
// made from its response schema in schemas/: the schema's properties, in its order, read from the
// record (records are kept in their wire shape), so a field is named once, where it is described.
// The few fields that are not the record's own (a job's iterations, its agent's name, a new key)
// are passed in. Answers that are not one record (eval_spec, the views) are written out here.
import { evalSpecOf } from '../domain/agent.ts';
import type { Worker } from '../domain/project.ts';
import type { Agent, ApiKey, Datapoint, Dataset, Job, JobIteration, Membership, Project, User } from '../domain/records.ts';
import type { Roster } from '../domain/result-batch.ts';
import type { RaceState } from '../domain/run-race.ts';
import type { Run, RunState } from '../domain/run.ts';
import type { LeasedTask } from '../runs/run-dispatch.ts';
import type { StoppedEarly } from '../runs/race-stops.ts';
import { taskIdOf } from '../runs/task-ids.ts';
import { resultIdOf, type ListedRow, type ResultRecord } from '../domain/result-row.ts';
import type { PairedItem } from '../results/paired-list.ts';
import type { ComparisonAnswer } from '../results/result-answers.ts';
import type { Written } from '../results/result-writer.ts';
import type { ResultSummary } from '../views/result-summary.ts';
import type { JsonCache } from '../json-cache.ts';
import { sharedValidator } from '../validation/validator.ts';
import type { ChangeEntry, DatasetDiff } from '../views/dataset-diff.ts';
import { compareDimensions, compareNumbers } from '../views/iteration-compare.ts';
import type { ProgressPoint, ProgressSummary } from '../views/job-progress.ts';

type Json = Record<string, unknown>;

/**
 * A record's representation as response schema `id` describes it. `computed` names the fields
 * the record does not hold: their values come in the second argument (and are left out when not
 * given, as a list item leaves `agent_display_name` to withLiveFields).
 */
export function representation<T extends object>(id: string, computed: readonly string[] = []) {
  const properties = sharedValidator().documents.get(id)?.properties as object | undefined;
  if (!properties) throw new Error(`no response schema "${id}" with properties`);
  const fields = Object.keys(properties).map((name) => ({ name, computed: computed.includes(name) }));
  return (record: T, values: Readonly<Json> = {}): Json => {
    const source = record as Readonly<Json>;
    const json: Json = {};
    for (const field of fields) {
      if (!field.computed) json[field.name] = source[field.name];
      else if (field.name in values) json[field.name] = values[field.name];
    }
    return json;
  };
}

export const userJson = representation<User>('auth.user-response');
export const projectJson = representation<Project>('projects.project-response');
export const membershipJson = representation<Membership>('memberships.membership-response');
export const apiKeyJson = representation<ApiKey>('auth.api-key-response');

const createdApiKey = representation<ApiKey>('auth.api-key-created-response', ['key']);
/** The one response that shows the key itself. */
export const createdApiKeyJson = (apiKey: ApiKey, key: string) => createdApiKey(apiKey, { key });

export const agentJson = representation<Agent>('agents.agent-response');
export const agentListItemJson = representation<Agent>('agents.agent-list-item-response');

/** eval_spec: the agent's evaluation settings with the documented defaults filled in (the spec a run scores with). */
export const evalSpecJson = evalSpecOf;

export const datapointJson = representation<Datapoint>('datasets.datapoint-response');

/** List items leave the datapoints out (they are paged through /datapoints/). */
export const datasetListItemJson = representation<Dataset>('datasets.dataset-list-item-response');

/**
 * Create, retrieve and activate answer with every datapoint. Datapoint records are already in
 * their wire shape (datapointJson's fields, in its order), so the datapoints' part is the cached
 * text of the records themselves, usually made when the dataset was journaled.
 */
export function datasetJsonText(dataset: Dataset, cache: JsonCache): string {
  const fields = JSON.stringify(datasetListItemJson(dataset));
  return `${fields.slice(0, -1)},"datapoints":${cache.text(dataset.datapoints)}}`;
}


/** A change between two dataset versions: its datapoint on each side, as the datapoints listing shows them. */
export const datasetChangeJson = (entry: ChangeEntry, from: Dataset, to: Dataset) => ({
  change: entry.change,
  before: entry.before < 0 ? null : datapointJson(from.datapoints[entry.before]!),
  after: entry.after < 0 ? null : datapointJson(to.datapoints[entry.after]!),
});

const diffSideJson = (dataset: Dataset, contentHash: string) => ({
  id: dataset.id,
  version: dataset.version,
  content_hash: contentHash,
  num_datapoints: dataset.num_datapoints,
});

/** A diff's summary: both versions and how many datapoints of each kind (whatever the page shows). */
export const datasetDiffSummaryJson = (from: Dataset, to: Dataset, diff: DatasetDiff) => ({
  from: diffSideJson(from, diff.fromHash),
  to: diffSideJson(to, diff.toHash),
  added: diff.counts.added,
  removed: diff.counts.removed,
  changed: diff.counts.changed,
  unchanged: diff.counts.unchanged,
});

export const iterationJson = representation<JobIteration>('iterations.iteration-response');

/** An iteration as a comparison names it (no code, no dimensions: those are compared). */
const comparedIterationJson = representation<JobIteration>('iterations.compared-iteration-response');

/** Two iterations side by side: scores and numeric dimensions with their deltas, and the diff of agent_code (codeDiff's, computed apart). */
export const iterationComparisonJson = (from: JobIteration, to: JobIteration, code_diff: string | null) => ({
  from: comparedIterationJson(from),
  to: comparedIterationJson(to),
  avg_score: compareNumbers(from.avg_score, to.avg_score),
  dimensions: compareDimensions(from.dimension_scores, to.dimension_scores),
  code_diff,
});

/** A point of a job's progress: the iteration without its code, and the best score reached by then. */
const progressPoint = representation<JobIteration>('jobs.progress-point-response', ['best_so_far']);
export const progressPointJson = ({ iteration, bestSoFar }: ProgressPoint) => progressPoint(iteration, { best_so_far: bestSoFar });

export const progressSummaryJson = ({ counts, best }: ProgressSummary) => ({
  counts,
  best_iteration: best?.id ?? null,
  best_score: best?.avg_score ?? null,
});

/** A result as listed (no output). */
export const resultListItemJson = representation<ListedRow>('results.result-list-item-response');

/** A result with its output (kept as JSON text). */
const result = representation<ResultRecord>('results.result-response', ['output']);
export const resultJson = (record: ResultRecord) => result(record, { output: JSON.parse(record.output) as unknown });

/** What a durable batch did (the answer to its POST). */
const resultsWritten = representation<Written>('results.results-written-response', ['dataset', 'results_count']);
export const resultsWrittenJson = (written: Written) => resultsWritten(written, { dataset: written.roster.dataset, results_count: written.results });

/** A durable batch as its event announces it: the answer to its POST, with whose results they are. */
const resultsWrittenEvent = representation<Written>('results.results-written-event', ['iteration', 'job', 'project', 'dataset', 'results_count']);
export const resultsWrittenEventJson = (iteration: JobIteration, written: Written) =>
  resultsWrittenEvent(written, { iteration: iteration.id, job: iteration.job, project: iteration.project, dataset: written.roster.dataset, results_count: written.results });

const resultSummary = representation<ResultSummary>('results.summary-response', ['iteration']);
export const resultSummaryJson = (iteration: string, summary: ResultSummary) => resultSummary(summary, { iteration });

/** An iteration's results as a job's summary lists them: the missing datapoints counted, not named. */
const jobSummaryItem = representation<ResultSummary>('results.job-summary-item-response', ['iteration', 'missing']);
export const jobSummaryItemJson = (iteration: string, summary: ResultSummary) => jobSummaryItem(summary, { iteration, missing: summary.missing.count });

/** Two iterations' results compared: as computed, with the wire's names for the intervals (`ci95` is at the comparison's confidence). */
export function comparisonJson(comparison: ComparisonAnswer, stoppedEarly: StoppedEarly | null = null) {
  if (!comparison.comparable) return comparison;
  const { score } = comparison;
  return {
    ...comparison,
    stopped_early: stoppedEarly,
    score: {
      mean_from: score.mean_from,
      mean_to: score.mean_to,
      delta: score.delta,
      se: score.se,
      ci95: score.ci,
      ci95_bootstrap: score.ci_bootstrap,
      p_value: score.p_value,
      wilcoxon_p_value: score.wilcoxon_p_value,
      correlation: score.correlation,
    },
    dimensions: comparison.dimensions.map((dimension) => ({
      name: dimension.name,
      n: dimension.n,
      delta: dimension.delta,
      ci95: dimension.ci,
      p_value: dimension.p_value,
      p_value_holm: dimension.p_value_holm,
    })),
  };
}

/** A datapoint of two iterations' comparison, as their paired list shows it. */
export const pairedDatapointJson = representation<PairedItem>('results.paired-datapoint-response');

const job = representation<Job>('jobs.job-response', ['iterations', 'agent_display_name']);
/** `agentLabel` is the job's agent's display_name, else its name (ReadModel.agentLabel). */
export const jobJson = (record: Job, iterations: readonly JobIteration[], agentLabel: string | null) =>
  job(record, { iterations: iterations.map((iteration) => iterationJson(iteration)), agent_display_name: agentLabel });

/** The list item less `agent_display_name`, which follows the agent and is added as a live field. */
const jobListItem = representation<Job>('jobs.job-list-item-response', ['agent_display_name']);
export const jobListItemJson = (record: Job) => jobListItem(record);

/** What a job list item adds to the cached text of its record: the agent's current label. */
export const jobLiveFields = (agentLabel: string | null) => ({ agent_display_name: agentLabel });

/**
 * Appends fields computed at read time to the cached JSON text of an object: records are
 * immutable, but a few fields follow other records (a job shows its agent's current name).
 */
export function withLiveFields(text: string, fields: object): string {
  const extra = JSON.stringify(fields);
  if (extra === '{}') return text;
  return text === '{}' ? extra : `${text.slice(0, -1)},${extra.slice(1)}`;
}

// ---- runs, tasks and workers ----

/** A run with what its tasks say now: counts by state, what it spent, what it lets be in flight. */
const run = representation<Run>('runs.run-response', ['counts', 'spent', 'in_flight_allowed', 'race']);

/** A race as a run answers it: its settings, each candidate's standing, the tasks it saved. */
function raceJson(race: RaceState): Json {
  return { ...race.config, candidates: race.candidates.map(({ candidate }) => candidate), tasks_saved: race.tasksSaved } as unknown as Json;
}
export const runJson = ({ run: record, tasks, spending, race }: RunState) =>
  run(record, {
    counts: { ...tasks.counts },
    spent: { cost: spending.cost, tasks: spending.executed },
    in_flight_allowed: spending.inFlightAllowed,
    race: race && raceJson(race),
  });

/** A task as its run's list shows it. */
const task = representation<Record<string, unknown>>('runs.task-response');
export function taskJson({ run: record, tasks }: RunState, position: number, roster: Roster | undefined): Record<string, unknown> {
  const { iteration, datapoint, attempt } = tasks.taskAt(position);
  const iterationId = record.iterations[iteration]!;
  const lease = tasks.leases.get(position);
  const expiresAt = lease ? tasks.leaseExpiry.get(lease.worker) : undefined;
  const state = tasks.stateOf(position);
  return task({
    id: taskIdOf(record.id, position),
    run: record.id,
    iteration: iterationId,
    datapoint: roster?.ids[datapoint] ?? null,
    datapoint_order: roster?.orders[datapoint] ?? null,
    attempt,
    state,
    tries: tasks.tries[position]!,
    last_error: tasks.lastErrors.get(position) ?? null,
    worker: lease?.worker ?? null,
    lease_expires_at: expiresAt === undefined ? null : new Date(expiresAt).toISOString(),
    result: state === 'done' || state === 'dead' ? resultIdOf(iterationId, datapoint, attempt) : null,
  });
}

/** A leased task's iteration (its code) and datapoint (its input, never its expected output). */
export const leasedIterationJson = representation<JobIteration>('workers.leased-iteration-response');
export const leasedDatapointJson = representation<Datapoint>('workers.leased-datapoint-response');

/**
 * A task as a lease hands it out (workers.leased-task-response), written out directly: a lease
 * hands out up to a thousand, and its iteration's and datapoint's texts are the JSON cache's
 * (made once each, shared by every lease of them).
 */
export function leasedTaskText(leased: LeasedTask, iterationText: string, datapointText: string, tries: number): string {
  const { run: record, position, token, expiresAt } = leased;
  return (
    `{"id":"${taskIdOf(record.id, position)}","lease":"${token}","lease_expires_at":"${new Date(expiresAt).toISOString()}",` +
    `"run":"${record.id}","iteration":${iterationText},"datapoint":${datapointText},"attempt":${position % record.attempts},"try":${tries + 1},` +
    `"scored_by_service":${record.scoring !== null}}`
  );
}

/** A worker with when it was last heard from and the tasks it holds now. */
const worker = representation<Worker>('workers.worker-response', ['last_seen_at', 'leased']);
export const workerJson = (record: Worker, lastSeenMs: number | undefined, leased: number) =>
  worker(record, { last_seen_at: lastSeenMs === undefined ? null : new Date(lastSeenMs).toISOString(), leased });
