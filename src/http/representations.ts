// How each record is written on the wire: the full representation and, where the interface
// names one, the list item. Property order follows the interface's tables.
import type { Agent, ApiKey, Datapoint, Dataset, Job, JobIteration, Membership, Project, User } from '../domain/records.ts';
import type { JsonCache } from '../json-cache.ts';
import { digestOf, type ChangeEntry, type DatasetDiff } from '../views/dataset-diff.ts';
import { codeDiff, compareDimensions, compareNumbers, type CodeDiffLimits } from '../views/iteration-compare.ts';
import type { ProgressPoint, ProgressSummary } from '../views/job-progress.ts';

export const userJson = (user: User) => ({ id: user.id, email: user.email, email_verified: user.email_verified });

export const projectJson = (project: Project) => ({
  id: project.id,
  created_at: project.created_at,
  updated_at: project.updated_at,
  name: project.name,
  slug: project.slug,
  description: project.description,
  is_active: project.is_active,
  settings: project.settings,
});

export const membershipJson = (membership: Membership) => ({
  id: membership.id,
  project: membership.project,
  user: membership.user,
  user_email: membership.user_email,
  created_at: membership.created_at,
  updated_at: membership.updated_at,
});

export const apiKeyJson = (apiKey: ApiKey) => ({
  id: apiKey.id,
  name: apiKey.name,
  prefix: apiKey.prefix,
  project: apiKey.project,
  is_active: apiKey.is_active,
  expires_at: apiKey.expires_at,
  last_used_at: apiKey.last_used_at,
  created_at: apiKey.created_at,
});

/** The one response that shows the key itself. */
export const createdApiKeyJson = (apiKey: ApiKey, key: string) => ({
  id: apiKey.id,
  key,
  name: apiKey.name,
  prefix: apiKey.prefix,
  project: apiKey.project,
  created_at: apiKey.created_at,
  expires_at: apiKey.expires_at,
});

export const agentJson = (agent: Agent) => ({
  id: agent.id,
  created_at: agent.created_at,
  updated_at: agent.updated_at,
  name: agent.name,
  project: agent.project,
  slug: agent.slug,
  active_dataset: agent.active_dataset,
  agent_description: agent.agent_description,
  agent_path: agent.agent_path,
  analyzer_model: agent.analyzer_model,
  backtest_metadata: agent.backtest_metadata,
  backtest_model_suggestions: agent.backtest_model_suggestions,
  consistency_rules: agent.consistency_rules,
  dataset_has_expected_output: agent.dataset_has_expected_output,
  dataset_input_keys: agent.dataset_input_keys,
  dataset_size: agent.dataset_size,
  description: agent.description,
  display_name: agent.display_name,
  entrypoint_fn: agent.entrypoint_fn,
  eval_dataset: agent.eval_dataset,
  evaluation_criteria: agent.evaluation_criteria,
  fixed_elements: agent.fixed_elements,
  improvement_metadata: agent.improvement_metadata,
  input_schema: agent.input_schema,
  is_deleted: agent.is_deleted,
  model: agent.model,
  optimizable_elements: agent.optimizable_elements,
  output_fields: agent.output_fields,
  output_schema: agent.output_schema,
  policy_data: agent.policy_data,
  policy_markdown: agent.policy_markdown,
  proposed_criteria: agent.proposed_criteria,
  status: agent.status,
  structure_weight: agent.structure_weight,
  tool_analysis: agent.tool_analysis,
  tool_config: agent.tool_config,
  tool_usage_weight: agent.tool_usage_weight,
  total_points: agent.total_points,
  tags: agent.tags,
});

export const agentListItemJson = (agent: Agent) => ({
  id: agent.id,
  created_at: agent.created_at,
  name: agent.name,
  project: agent.project,
  slug: agent.slug,
  updated_at: agent.updated_at,
  agent_path: agent.agent_path,
  analyzer_model: agent.analyzer_model,
  dataset_has_expected_output: agent.dataset_has_expected_output,
  dataset_size: agent.dataset_size,
  description: agent.description,
  display_name: agent.display_name,
  entrypoint_fn: agent.entrypoint_fn,
  model: agent.model,
  status: agent.status,
  structure_weight: agent.structure_weight,
  tags: agent.tags,
  tool_usage_weight: agent.tool_usage_weight,
  total_points: agent.total_points,
});

/** eval_spec: the agent's evaluation settings with the documented defaults filled in. */
export const evalSpecJson = (agent: Agent) => ({
  agent_description: agent.description ?? '',
  agent_path: agent.agent_path ?? '',
  input_schema: agent.input_schema ?? {},
  output_fields: agent.output_fields ?? {},
  structure_weight: agent.structure_weight ?? 20,
  total_points: agent.total_points ?? 100,
  tool_config: agent.tool_config ?? {},
  tool_usage_weight: agent.tool_usage_weight ?? 10,
  consistency_rules: agent.consistency_rules ?? [],
  optimizable_elements: agent.optimizable_elements ?? [],
  fixed_elements: agent.fixed_elements ?? [],
});

export const datapointJson = (datapoint: Datapoint) => ({
  id: datapoint.id,
  expected_output: datapoint.expected_output,
  input: datapoint.input,
  order: datapoint.order,
  persona: datapoint.persona,
  tags: datapoint.tags,
});

const datasetFields = (dataset: Dataset) => ({
  id: dataset.id,
  agent: dataset.agent,
  created_at: dataset.created_at,
  version: dataset.version,
  num_datapoints: dataset.num_datapoints,
  generator_model: dataset.generator_model,
  metadata: dataset.metadata,
  name: dataset.name,
  policy_hash: dataset.policy_hash,
  source: dataset.source,
});

/**
 * Create, retrieve and activate answer with every datapoint. Datapoint records are already in
 * their wire shape (datapointJson's fields, in its order), so the datapoints' part is the cached
 * text of the records themselves, usually made when the dataset was journaled.
 */
export function datasetJsonText(dataset: Dataset, cache: JsonCache): string {
  const fields = JSON.stringify(datasetFields(dataset));
  return `${fields.slice(0, -1)},"datapoints":${cache.text(dataset.datapoints)}}`;
}

/** List items leave the datapoints out (they are paged through /datapoints/). */
export const datasetListItemJson = datasetFields;

/** A change between two dataset versions: its datapoint on each side, as the datapoints listing shows them. */
export const datasetChangeJson = (entry: ChangeEntry, from: Dataset, to: Dataset) => ({
  change: entry.change,
  before: entry.before < 0 ? null : datapointJson(from.datapoints[entry.before]!),
  after: entry.after < 0 ? null : datapointJson(to.datapoints[entry.after]!),
});

const diffSideJson = (dataset: Dataset) => ({
  id: dataset.id,
  version: dataset.version,
  content_hash: digestOf(dataset.datapoints).contentHash,
  num_datapoints: dataset.num_datapoints,
});

/** A diff's summary: both versions and how many datapoints of each kind (whatever the page shows). */
export const datasetDiffSummaryJson = (from: Dataset, to: Dataset, diff: DatasetDiff) => ({
  from: diffSideJson(from),
  to: diffSideJson(to),
  added: diff.counts.added,
  removed: diff.counts.removed,
  changed: diff.counts.changed,
  unchanged: diff.counts.unchanged,
});

export const iterationJson = (iteration: JobIteration) => ({
  id: iteration.id,
  created_at: iteration.created_at,
  iteration_name: iteration.iteration_name,
  job: iteration.job,
  agent_code: iteration.agent_code,
  avg_score: iteration.avg_score,
  description: iteration.description,
  dimension_scores: iteration.dimension_scores,
  order: iteration.order,
  status: iteration.status,
});

/** An iteration as a comparison names it (no code, no dimensions: those are compared). */
const comparedIterationJson = (iteration: JobIteration) => ({
  id: iteration.id,
  iteration_name: iteration.iteration_name,
  job: iteration.job,
  order: iteration.order,
  status: iteration.status,
  avg_score: iteration.avg_score,
  created_at: iteration.created_at,
});

/** Two iterations side by side: scores and numeric dimensions with their deltas, and a diff of agent_code. */
export const iterationComparisonJson = (from: JobIteration, to: JobIteration, limits: CodeDiffLimits) => ({
  from: comparedIterationJson(from),
  to: comparedIterationJson(to),
  avg_score: compareNumbers(from.avg_score, to.avg_score),
  dimensions: compareDimensions(from.dimension_scores, to.dimension_scores),
  code_diff: codeDiff({ name: from.iteration_name, code: from.agent_code }, { name: to.iteration_name, code: to.agent_code }, limits),
});

/** A point of a job's progress: the iteration without its code, and the best score reached by then. */
export const progressPointJson = ({ iteration, bestSoFar }: ProgressPoint) => ({
  id: iteration.id,
  order: iteration.order,
  iteration_name: iteration.iteration_name,
  avg_score: iteration.avg_score,
  status: iteration.status,
  created_at: iteration.created_at,
  best_so_far: bestSoFar,
});

export const progressSummaryJson = ({ counts, best }: ProgressSummary) => ({
  counts,
  best_iteration: best?.id ?? null,
  best_score: best?.avg_score ?? null,
});

/** `agentLabel` is the job's agent's display_name, else its name (ReadModel.agentLabel). */
export const jobJson = (job: Job, iterations: readonly JobIteration[], agentLabel: string | null) => ({
  id: job.id,
  created_at: job.created_at,
  updated_at: job.updated_at,
  iterations: iterations.map(iterationJson),
  agent: job.agent,
  analyzer_model: job.analyzer_model,
  backtest_results: job.backtest_results,
  baseline_score: job.baseline_score,
  best_agent_code: job.best_agent_code,
  best_score: job.best_score,
  candidates_per_iteration: job.candidates_per_iteration,
  worker_task_id: job.worker_task_id,
  data_source: job.data_source,
  improvement: job.improvement,
  job_type: job.job_type,
  num_iterations: job.num_iterations,
  project: job.project,
  prompt_slug: job.prompt_slug,
  report_markdown: job.report_markdown,
  result: job.result,
  status: job.status,
  triggered_by: job.triggered_by,
  agent_display_name: agentLabel,
});

/** The list item less `agent_display_name`, which follows the agent and is added as a live field. */
export const jobListItemJson = (job: Job) => ({
  id: job.id,
  created_at: job.created_at,
  updated_at: job.updated_at,
  agent: job.agent,
  analyzer_model: job.analyzer_model,
  baseline_score: job.baseline_score,
  best_score: job.best_score,
  improvement: job.improvement,
  job_type: job.job_type,
  num_iterations: job.num_iterations,
  project: job.project,
  prompt_slug: job.prompt_slug,
  status: job.status,
});

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
