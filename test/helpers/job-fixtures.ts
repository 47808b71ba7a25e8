// Building blocks for job and iteration tests. Jobs and iterations are made through the API;
// agents are made through the registry, so that these tests do not depend on the agents routes.
import { randomUUID } from 'node:crypto';
import * as assert from 'uvu/assert';
import { newAgent } from '../../src/domain/agent.ts';
import type { Agent } from '../../src/domain/records.ts';
import type { Client } from './client.ts';
import { unique } from './fixtures.ts';
import type { Running } from './service.ts';

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

export async function createAgent(running: Running, project: string): Promise<Agent> {
  const id = randomUUID();
  const now = new Date().toISOString();
  const slug = unique('agent');
  const agent = newAgent({ id, now, project, name: slug, slug });
  await running.service.deps.registry.createAgent(id, { type: 'CreateAgent', agent });
  return agent;
}

/** Soft-deletes an agent, as DELETE /api/agents/{id}/ does. */
export async function deleteAgent(running: Running, id: string): Promise<void> {
  await running.service.deps.registry.agent(id)!.ask({ type: 'DeleteAgent', now: new Date().toISOString() });
}

/** The list item fields of a job, in the interface's order. */
export const jobListItemFields = [
  'id', 'created_at', 'updated_at', 'agent', 'analyzer_model', 'baseline_score', 'best_score', 'improvement',
  'job_type', 'num_iterations', 'project', 'prompt_slug', 'status',
];

export const jobFields = [
  'id', 'created_at', 'updated_at', 'iterations', 'agent', 'analyzer_model', 'backtest_results', 'baseline_score',
  'best_agent_code', 'best_score', 'candidates_per_iteration', 'worker_task_id', 'data_source', 'improvement',
  'job_type', 'num_iterations', 'project', 'prompt_slug', 'report_markdown', 'result', 'status', 'triggered_by',
];

export const iterationFields = [
  'id', 'created_at', 'iteration_name', 'job', 'agent_code', 'avg_score', 'description', 'dimension_scores', 'order', 'status',
];
