// Building blocks for runs tests: a job of an agent with a dataset version and iterations, runs of
// it, and a worker that leases, heartbeats and completes, all through the API.
import * as assert from 'uvu/assert';
import { createAgent, datapoints } from './agent-fixtures.ts';
import type { Kv } from '../../src/store/kv.ts';
import type { Client, Reply } from './client.ts';
import { createIteration, createJob } from './job-fixtures.ts';

export interface RunSetup {
  agent: any;
  dataset: any;
  job: any;
  iterations: any[];
}

/** An agent with a dataset of `size` datapoints, a job of it (pending) and `iterations` iterations. */
export async function runSetup(client: Client, project: string, size = 4, iterations = 2): Promise<RunSetup> {
  const agent = await createAgent(client, project);
  const dataset = await client.post('/api/datasets/', { agent: agent.id, datapoints: datapoints(size) });
  assert.is(dataset.status, 201, dataset.text);
  const job = await createJob(client, { agent: agent.id });
  const made = [];
  for (let i = 0; i < iterations; i++) made.push(await createIteration(client, job.id, { order: i, agent_code: `code ${i}` }));
  return { agent, dataset: dataset.body, job, iterations: made };
}

export async function createRun(client: Client, setup: RunSetup, fields: Record<string, unknown> = {}): Promise<any> {
  const reply = await client.post(`/api/jobs/${setup.job.id}/runs/`, { dataset: setup.dataset.id, iterations: setup.iterations.map((it) => it.id), ...fields });
  assert.is(reply.status, 201, `create run: ${reply.text}`);
  return reply.body;
}

export async function registerWorker(client: Client, fields: Record<string, unknown> = {}): Promise<any> {
  const reply = await client.post('/api/workers/', { name: 'test worker', host: 'localhost', ...fields });
  assert.is(reply.status, 201, `register worker: ${reply.text}`);
  return reply.body;
}

export async function lease(client: Client, worker: { id: string }, body: Record<string, unknown> = {}): Promise<any[]> {
  const reply = await client.post(`/api/workers/${worker.id}/lease/`, { max: 100, ...body });
  assert.is(reply.status, 200, `lease: ${reply.text}`);
  return reply.body.tasks;
}

export function complete(client: Client, worker: { id: string }, results: Record<string, unknown>[]): Promise<Reply> {
  return client.post(`/api/workers/${worker.id}/complete/`, { results });
}

/** Completes tasks that must all be accepted, each with a score (by default 0.5). */
export async function completeAll(client: Client, worker: { id: string }, tasks: any[], fields: (task: any) => Record<string, unknown> = () => ({ score: 0.5 })): Promise<void> {
  const reply = await complete(client, worker, tasks.map((task) => ({ task: task.id, lease: task.lease, ...fields(task) })));
  assert.is(reply.status, 200, reply.text);
  assert.equal(reply.body.results.map((item: any) => item.outcome), tasks.map(() => 'accepted'), reply.text);
}

export async function runOf(client: Client, run: { id: string }): Promise<any> {
  const reply = await client.get(`/api/runs/${run.id}/`);
  assert.is(reply.status, 200, reply.text);
  return reply.body;
}

export async function tasksOf(client: Client, run: { id: string }, query: Record<string, string | number | boolean> = {}): Promise<any[]> {
  return client.listAll(`/api/runs/${run.id}/tasks/`, query);
}

/** How many POSTs to a route pattern the service has answered 200, by its request counts (GET /metrics). */
export async function postsAnswered(client: Client, route: string): Promise<number> {
  const text = (await client.get('/metrics')).text;
  const line = text.split('\n').find((one) => one.startsWith('http_request_duration_seconds_count{') && one.includes(`route="${route}"`) && one.includes('method="POST"') && one.includes('status="200"'));
  return line ? Number(line.split(' ').at(-1)) : 0;
}

/** Counts the store's commits from now on (every write is one): the count so far, when asked. */
export function commitCounter(kv: Kv): () => number {
  const write = kv.write.bind(kv);
  let commits = 0;
  kv.write = (late) => {
    commits++;
    return write(late);
  };
  return () => commits;
}
