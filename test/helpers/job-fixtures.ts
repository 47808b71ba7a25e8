// Building blocks for job and iteration tests, made through the API.
import * as assert from 'uvu/assert';
import type { Client } from './client.ts';
import { unique } from './fixtures.ts';

export async function createJob(client: Client, fields: Record<string, unknown> = {}): Promise<any> {
  const reply = await client.post('/api/jobs/', fields);
  assert.is(reply.status, 201, `create job: ${reply.text}`);
  return reply.body;
}

export async function createIteration(client: Client, job: string, fields: Record<string, unknown> = {}): Promise<any> {
  const reply = await client.post('/api/job-iterations/', { job, iteration_name: unique('iteration').slice(0, 64), ...fields });
  assert.is(reply.status, 201, `create iteration: ${reply.text}`);
  return reply.body;
}

/** The list item fields of a job, in the interface's order. */
export const jobListItemFields = [
  'id', 'created_at', 'updated_at', 'agent', 'analyzer_model', 'baseline_score', 'best_score', 'improvement',
  'job_type', 'num_iterations', 'project', 'prompt_slug', 'status', 'agent_display_name',
];

export const jobFields = [
  'id', 'created_at', 'updated_at', 'iterations', 'agent', 'analyzer_model', 'backtest_results', 'baseline_score',
  'best_agent_code', 'best_score', 'candidates_per_iteration', 'worker_task_id', 'data_source', 'improvement',
  'job_type', 'num_iterations', 'project', 'prompt_slug', 'report_markdown', 'result', 'status', 'triggered_by',
  'agent_display_name',
];

export const iterationFields = [
  'id', 'created_at', 'iteration_name', 'job', 'agent_code', 'avg_score', 'description', 'dimension_scores', 'order', 'status',
];
