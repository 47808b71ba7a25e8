// Building blocks for results tests: an agent with a dataset version, a job of that agent and an
// iteration of the job, all made through the API, and batches posted to the iteration.
import * as assert from 'uvu/assert';
import { createAgent, datapoints } from './agent-fixtures.ts';
import type { Client, Reply } from './client.ts';
import { createIteration, createJob } from './job-fixtures.ts';

export interface Evaluated {
  agent: any;
  dataset: any;
  job: any;
  iteration: any;
}

/** An agent with a dataset of `size` datapoints (orders 0..size-1), a job of it and one iteration. */
export async function evaluated(client: Client, project: string, size = 5): Promise<Evaluated> {
  const agent = await createAgent(client, project);
  const created = await client.post('/api/datasets/', { agent: agent.id, datapoints: datapoints(size) });
  assert.is(created.status, 201, created.text);
  const job = await createJob(client, { agent: agent.id, status: 'running' });
  const iteration = await createIteration(client, job.id);
  return { agent, dataset: created.body, job, iteration };
}

export const resultsPath = (iteration: { id: string }) => `/api/job-iterations/${iteration.id}/results/`;

export function postResults(client: Client, iteration: { id: string }, body: Record<string, unknown>): Promise<Reply> {
  return client.post(resultsPath(iteration), body);
}

/** Posts a batch that must be accepted. */
export async function writeResults(client: Client, iteration: { id: string }, body: Record<string, unknown>): Promise<any> {
  const reply = await postResults(client, iteration, body);
  assert.is(reply.status, 200, `write results: ${reply.text}`);
  return reply.body;
}

export async function summaryOf(client: Client, iteration: { id: string }): Promise<any> {
  const reply = await client.get(`${resultsPath(iteration)}summary/`);
  assert.is(reply.status, 200, reply.text);
  return reply.body;
}
