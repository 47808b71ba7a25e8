// What a worker is handed and what it hands back, as the service's worker routes speak them
// (schemas/workers/): a leased task, the task as a command or handler sees it (never its lease
// token, never the datapoint's expected output, which the service does not send), and a result.
import type { Json } from '../domain/records.ts';

/** A task as `POST /api/workers/{id}/lease/` hands it out. */
export interface LeasedTask {
  id: string;
  lease: string;
  lease_expires_at: string;
  run: string;
  iteration: { id: string; iteration_name: string; agent_code: string | null };
  datapoint: { id: string; order: number; input: Json; persona: string | null; tags: Json };
  attempt: number;
  try: number;
  /** Its run names a scoring: the service scores its ok result, and refuses one that carries scores of its own. */
  scored_by_service: boolean;
}

/** A task as a command reads it on its standard input (JSON) and a handler receives it. */
export interface TaskInput {
  task_id: string;
  run_id: string;
  iteration_id: string;
  iteration_name: string;
  datapoint_id: string;
  order: number;
  input: Json;
  persona: string | null;
  tags: Json;
  attempt: number;
  try: number;
}

/** The fields of a result row a worker sends (results.results-write's row, less what the task names). */
export interface ResultFields {
  output?: Json;
  score?: number | null;
  passed?: boolean | null;
  dimension_scores?: Record<string, number> | null;
  status?: 'ok' | 'error';
  error?: string;
  trace_id?: string | null;
  span_id?: string | null;
  latency_ms?: number | null;
  cost?: number | null;
}

/**
 * What running a task came to: a result to send, the agent's provider refusing it for now, or
 * nothing, the task cut short by the worker's own stop (no result: its lease goes back with the
 * goodbye, and another worker runs it with the same try).
 */
export type TaskOutcome = { kind: 'result'; fields: ResultFields } | { kind: 'rate_limited' } | { kind: 'interrupted' };

/** A completion's item: a task's token with its result, or status rate_limited. */
export type CompletionItem = { task: string; lease: string } & (ResultFields | { status: 'rate_limited' });

/** What the service answered for one item. */
export type CompletionOutcome = 'accepted' | 'stale' | 'cancelled' | 'invalid';

/** The characters of `error` a result row keeps (results.results-write). */
export const errorCharsMax = 16_384;

export function taskInputOf(task: LeasedTask): TaskInput {
  return {
    task_id: task.id,
    run_id: task.run,
    iteration_id: task.iteration.id,
    iteration_name: task.iteration.iteration_name,
    datapoint_id: task.datapoint.id,
    order: task.datapoint.order,
    input: task.datapoint.input,
    persona: task.datapoint.persona,
    tags: task.datapoint.tags,
    attempt: task.attempt,
    try: task.try,
  };
}
