// The records the service keeps, in their wire shape (snake_case, every field present, null when
// unset). Records are immutable: a change makes a new object, so readers can hold one safely.

/** Any JSON value (the interface's `unknown`). */
export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

export type Timestamp = string;
export type Uuid = string;

export interface User {
  readonly id: number;
  readonly email: string;
  readonly email_verified: boolean;
  readonly password_hash: string;
  readonly created_at: Timestamp;
}

export interface ApiKey {
  readonly id: Uuid;
  readonly user: number;
  readonly project: Uuid;
  readonly name: string | null;
  readonly prefix: string;
  /** Hex SHA-256 of the whole key; the key itself is never stored. */
  readonly key_hash: string;
  readonly is_active: boolean;
  readonly created_at: Timestamp;
  readonly expires_at: Timestamp | null;
  readonly last_used_at: Timestamp | null;
}

export interface Project {
  readonly id: Uuid;
  readonly created_at: Timestamp;
  readonly updated_at: Timestamp;
  readonly name: string;
  readonly slug: string;
  readonly description: string | null;
  readonly is_active: boolean | null;
  readonly settings: Json;
}

/** Project fields that read back as their model's default (not null) when omitted on create. */
export const projectDefaults = { is_active: true } as const satisfies Readonly<Record<string, Json>>;

export interface Membership {
  readonly id: Uuid;
  readonly project: Uuid;
  readonly user: number;
  readonly user_email: string;
  readonly created_at: Timestamp;
  readonly updated_at: Timestamp;
}

/** The agent fields a client may write (everything but id and timestamps). */
export const agentWritableFields = [
  'name', 'project', 'slug', 'active_dataset', 'agent_description', 'agent_path', 'analyzer_model',
  'backtest_metadata', 'backtest_model_suggestions', 'consistency_rules',
  'dataset_has_expected_output', 'dataset_input_keys', 'dataset_size', 'description',
  'display_name', 'entrypoint_fn', 'eval_dataset', 'evaluation_criteria', 'fixed_elements',
  'improvement_metadata', 'input_schema', 'is_deleted', 'model', 'optimizable_elements',
  'output_fields', 'output_schema', 'policy_data', 'policy_markdown', 'proposed_criteria', 'status',
  'structure_weight', 'tool_analysis', 'tool_config', 'tool_usage_weight', 'total_points', 'tags',
] as const;

export type AgentWritableField = (typeof agentWritableFields)[number];

/** Agent text fields that read back as "" when omitted on create. */
export const agentBlankText: ReadonlySet<string> = new Set([
  'agent_path', 'analyzer_model', 'description', 'display_name', 'entrypoint_fn', 'model', 'policy_markdown', 'status',
]);

/** Agent fields that read back as their model's default (not null) when omitted on create. */
export const agentDefaults: Readonly<Partial<Record<AgentWritableField, Json>>> = { dataset_has_expected_output: false, dataset_size: 0 };

export type Agent = {
  readonly id: Uuid;
  readonly created_at: Timestamp;
  readonly updated_at: Timestamp;
  readonly project: Uuid;
  readonly name: string;
  readonly slug: string;
  readonly active_dataset: Uuid | null;
  readonly is_deleted: boolean;
} & { readonly [field in Exclude<AgentWritableField, 'project' | 'name' | 'slug' | 'active_dataset' | 'is_deleted'>]: Json };

export interface Datapoint {
  readonly id: Uuid;
  readonly expected_output: Json;
  readonly input: Json;
  readonly order: number;
  readonly persona: string | null;
  readonly tags: Json;
}

export interface Dataset {
  readonly id: Uuid;
  readonly agent: Uuid;
  /** The agent's project, so that tenancy never needs the agent. */
  readonly project: Uuid;
  readonly created_at: Timestamp;
  readonly version: number;
  readonly generator_model: string | null;
  readonly metadata: Json;
  readonly name: string | null;
  readonly policy_hash: string | null;
  readonly source: string | null;
  readonly num_datapoints: number;
  readonly datapoints: readonly Datapoint[];
}

export const jobStatuses = ['pending', 'running', 'completed', 'failed', 'cancelled'] as const;
export type JobStatus = (typeof jobStatuses)[number];
export const jobTypes = ['inference', 'uploaded_outputs_setup', 'judge_scoring', 'prompt_tuning', 'model_backtesting'] as const;

/** The job fields a client may write. */
export const jobWritableFields = [
  'agent', 'analyzer_model', 'backtest_results', 'baseline_score', 'best_agent_code', 'best_score',
  'candidates_per_iteration', 'worker_task_id', 'data_source', 'improvement', 'job_type',
  'num_iterations', 'project', 'prompt_slug', 'report_markdown', 'result', 'status',
] as const;

/** Job text fields that read back as "" when omitted on create (job_type is a choice, not text). */
export const jobBlankText: ReadonlySet<string> = new Set([
  'analyzer_model', 'best_agent_code', 'worker_task_id', 'data_source', 'prompt_slug', 'report_markdown',
]);

export interface Job {
  readonly id: Uuid;
  readonly created_at: Timestamp;
  readonly updated_at: Timestamp;
  readonly agent: Uuid | null;
  readonly analyzer_model: string | null;
  readonly backtest_results: Json;
  readonly baseline_score: number | null;
  readonly best_agent_code: string | null;
  readonly best_score: number | null;
  readonly candidates_per_iteration: number | null;
  readonly worker_task_id: string | null;
  readonly data_source: string | null;
  readonly improvement: number | null;
  readonly job_type: string | null;
  readonly num_iterations: number | null;
  readonly project: Uuid;
  readonly prompt_slug: string | null;
  readonly report_markdown: string | null;
  readonly result: Json;
  readonly status: JobStatus;
  readonly triggered_by: number | null;
}

export const iterationStatuses = ['keep', 'discard'] as const;
export type IterationStatus = (typeof iterationStatuses)[number];

/** The job iteration fields a client may write. */
export const iterationWritableFields = [
  'iteration_name', 'job', 'agent_code', 'avg_score', 'description', 'dimension_scores', 'order', 'status',
] as const;

/** Iteration text fields that read back as "" when omitted on create. */
export const iterationBlankText: ReadonlySet<string> = new Set(['agent_code', 'description']);

export interface JobIteration {
  readonly id: Uuid;
  readonly created_at: Timestamp;
  readonly job: Uuid;
  /** The job's project, so that tenancy never needs the job. */
  readonly project: Uuid;
  readonly iteration_name: string;
  readonly agent_code: string | null;
  readonly avg_score: number | null;
  readonly description: string | null;
  readonly dimension_scores: Json;
  readonly order: number | null;
  readonly status: IterationStatus | null;
}

/**
 * Every writable field of a new record: as given, else what DRF's model stores for an omitted
 * optional field: a blank string for the text fields listed in `blankText`, the model's default
 * for the fields in `defaults` (a boolean or a count), null for the rest (JSON, numbers without a
 * default, references). An explicit null stays null (the model's fields are null=True).
 */
export function writableOrDefault(
  writable: readonly string[],
  given: object,
  blankText: ReadonlySet<string>,
  defaults: Readonly<Record<string, Json | undefined>> = {},
): Record<string, unknown> {
  const fields = given as Readonly<Record<string, unknown>>;
  const record: Record<string, unknown> = {};
  for (const field of writable) {
    record[field] = field in fields ? fields[field] : blankText.has(field) ? '' : (defaults[field] ?? null);
  }
  return record;
}

/** Copies `source[field]` for each listed field present in `source` (a PATCH's merge). */
export function pickPresent<T extends object>(source: Readonly<Record<string, unknown>>, fields: readonly string[]): Partial<T> {
  const picked: Record<string, unknown> = {};
  for (const field of fields) if (field in source) picked[field] = source[field];
  return picked as Partial<T>;
}
