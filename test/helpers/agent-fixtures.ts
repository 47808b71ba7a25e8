// Agents and datasets made through the API, for tests that need them as a starting point.
import * as assert from 'uvu/assert';
import type { Client } from './client.ts';
import { unique } from './fixtures.ts';

export async function createAgent(client: Client, project: string, fields: Record<string, unknown> = {}): Promise<any> {
  const slug = unique('agent');
  const reply = await client.post('/api/agents/', { name: slug, slug, project, ...fields });
  assert.is(reply.status, 201, `create agent: ${reply.text}`);
  return reply.body;
}

/** `count` datapoints with distinct inputs and personas, in posted order. */
export function datapoints(count: number): Record<string, unknown>[] {
  return Array.from({ length: count }, (_, i) => ({
    input: { question: `question ${i}` },
    expected_output: `answer ${i}`,
    persona: `persona-${i % 3}`,
    tags: [`tag-${i}`],
  }));
}

export async function createDataset(client: Client, agent: string, fields: Record<string, unknown> = {}): Promise<any> {
  const reply = await client.post('/api/datasets/', { agent, datapoints: datapoints(3), ...fields });
  assert.is(reply.status, 201, `create dataset: ${reply.text}`);
  return reply.body;
}
