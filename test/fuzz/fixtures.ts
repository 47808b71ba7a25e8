// The records a fuzz run aims at: one of each kind owned by the caller (so that near-valid
// requests reach the handlers' deeper checks) and one of each owned by another tenant (whose ids
// must answer exactly like ids that do not exist). Requests that destroy a record get a fresh one
// made for them, and the caller's records are remade whenever fuzzing has removed one.
import * as assert from 'uvu/assert';
import type { Client } from '../helpers/client.ts';
import { createApiKey, createProject, registerUser, unique, type Member } from '../helpers/fixtures.ts';

export const resources = ['project', 'agent', 'dataset', 'job', 'iteration', 'apiKey', 'membership', 'trace'] as const;
export type Resource = (typeof resources)[number];

/** The resource a path parameter names: the collection segment just before it. */
const resourceBySegment: Readonly<Record<string, Resource>> = {
  projects: 'project',
  memberships: 'membership',
  agents: 'agent',
  datasets: 'dataset',
  jobs: 'job',
  'job-iterations': 'iteration',
  'api-keys': 'apiKey',
  traces: 'trace',
};

export function resourceOfParam(path: string, param: string): Resource | undefined {
  const segments = path.split('/');
  return resourceBySegment[segments[segments.indexOf(`:${param}`) - 1] ?? ''];
}

/** The body fields that reference another record, and which kind. */
export const referenceFields: Readonly<Record<string, Resource>> = {
  project: 'project',
  agent: 'agent',
  job: 'job',
  active_dataset: 'dataset',
};

type Records = Record<Resource, string>;

/** The records each kind is made from, in the order they must exist. */
const dependencies: Readonly<Record<Resource, readonly Resource[]>> = {
  project: [],
  agent: ['project'],
  dataset: ['project', 'agent'],
  job: ['project', 'agent'],
  iteration: ['project', 'agent', 'job'],
  apiKey: ['project'],
  membership: ['project'],
  trace: ['project'],
};

export class Fixtures {
  private constructor(
    /** The fuzzing caller. */
    readonly caller: Member,
    /** A user the caller's project admits as a member. */
    readonly guest: Member,
    readonly own: Records,
    readonly foreign: Records,
  ) {}

  static async create(anonymous: Client): Promise<Fixtures> {
    const caller = await registerUser(anonymous);
    const other = await registerUser(anonymous);
    const guest = await registerUser(anonymous);
    const own = await records(caller, guest);
    const foreign = await records(other, guest);
    return new Fixtures(caller, guest, own, foreign);
  }

  /** A new record of the caller's, for a request that may destroy it. */
  async fresh(resource: Resource): Promise<string> {
    await this.repair(dependencies[resource]);
    return makeRecord(this.caller, this.guest, this.own, resource);
  }

  /** Remakes each of the caller's records that fuzzing removed (soft-deleted agents included). */
  async repair(which: readonly Resource[] = resources): Promise<void> {
    for (const resource of which) {
      if (!(await exists(this.caller.client, this.own, resource))) this.own[resource] = await makeRecord(this.caller, this.guest, this.own, resource);
    }
  }
}

async function records(owner: Member, guest: Member): Promise<Records> {
  const made = {} as Records;
  for (const resource of resources) made[resource] = await makeRecord(owner, guest, made, resource);
  return made;
}

/** Makes one record of `resource` in the owner's records (`made` holds what it builds on). */
async function makeRecord(owner: Member, guest: Member, made: Records, resource: Resource): Promise<string> {
  const client = owner.client;
  const expectCreated = (reply: { status: number; text: string; body: any }) => {
    assert.ok(reply.status === 201 || reply.status === 200, `fixture ${resource}: ${reply.status} ${reply.text}`);
    return reply.body;
  };
  switch (resource) {
    case 'project':
      return (await createProject(client)).id;
    case 'agent': {
      const slug = unique('agent');
      return expectCreated(await client.post('/api/agents/', { name: slug, slug, project: made.project })).id;
    }
    case 'dataset':
      return expectCreated(await client.post('/api/datasets/', { agent: made.agent, datapoints: [{ input: 'q', expected_output: 'a' }] })).id;
    case 'job':
      return expectCreated(await client.post('/api/jobs/', { project: made.project, agent: made.agent, prompt_slug: unique('job') })).id;
    case 'iteration':
      return expectCreated(await client.post('/api/job-iterations/', { job: made.job, iteration_name: unique('it') })).id;
    case 'apiKey':
      return (await createApiKey(client, made.project)).id;
    case 'membership':
      return expectCreated(await client.post(`/api/projects/${made.project}/memberships/`, { user_id: guest.id })).id;
    case 'trace': {
      const traceId = Buffer.from(unique('trace').padEnd(16, '-').slice(-16)).toString('hex');
      const body = {
        resourceSpans: [
          {
            resource: { attributes: [{ key: 'overmind.project.id', value: { stringValue: made.project } }] },
            scopeSpans: [{ spans: [{ traceId, spanId: '0123456789abcdef', name: 'fixture', startTimeUnixNano: '1', endTimeUnixNano: '2' }] }],
          },
        ],
      };
      const reply = await client.request('POST', '/v1/traces', JSON.stringify(body), { 'content-type': 'application/json' });
      assert.is(reply.status, 200, `fixture trace: ${reply.text}`);
      return traceId;
    }
  }
}

async function exists(client: Client, own: Records, resource: Resource): Promise<boolean> {
  const id = own[resource];
  switch (resource) {
    case 'project':
      return (await client.get(`/api/projects/${id}/`)).status === 200;
    case 'agent':
      return (await client.get(`/api/agents/${id}/`)).status === 200;
    case 'dataset':
      return (await client.get(`/api/datasets/${id}/`)).status === 200;
    case 'job':
      return (await client.get(`/api/jobs/${id}/`)).status === 200;
    case 'iteration':
      return (await client.get(`/api/job-iterations/${id}/`)).status === 200;
    case 'apiKey':
      return ((await client.get('/api/auth/api-keys/', { page_size: 100 })).body.results ?? []).some((key: any) => key.id === id && key.is_active);
    case 'membership':
      return ((await client.get(`/api/projects/${own.project}/memberships/`, { page_size: 100 })).body.results ?? []).some(
        (membership: any) => membership.id === id,
      );
    case 'trace':
      return (await client.get(`/api/traces/${id}/`)).status === 200;
  }
}
