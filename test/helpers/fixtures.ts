// Building blocks for HTTP tests: users, projects and API keys made through the API itself.
import * as assert from 'uvu/assert';
import type { Client } from './client.ts';

let counter = 0;
export const unique = (label: string) => `${label}-${process.pid}-${++counter}`;

export interface Member {
  id: number;
  email: string;
  access: string;
  refresh: string;
  /** A client authenticated with this user's access token. */
  client: Client;
}

export async function registerUser(anonymous: Client, email = `${unique('user')}@example.com`, password = 'correct horse'): Promise<Member> {
  const reply = await anonymous.post('/api/auth/register/', { email, password, password_confirm: password });
  assert.is(reply.status, 201, `register: ${reply.text}`);
  return {
    id: reply.body.user.id,
    email: reply.body.user.email,
    access: reply.body.access,
    refresh: reply.body.refresh,
    client: anonymous.as({ token: reply.body.access }),
  };
}

export async function createProject(client: Client, fields: Record<string, unknown> = {}): Promise<any> {
  const slug = unique('project');
  const reply = await client.post('/api/projects/', { name: slug, slug, ...fields });
  assert.is(reply.status, 201, `create project: ${reply.text}`);
  return reply.body;
}

export async function createApiKey(client: Client, project: string, fields: Record<string, unknown> = {}): Promise<any> {
  const reply = await client.post('/api/auth/api-keys/', { project, name: 'test key', ...fields });
  assert.is(reply.status, 201, `create API key: ${reply.text}`);
  return reply.body;
}

/** A user with a project of their own: the usual starting point. */
export async function memberWithProject(anonymous: Client): Promise<{ member: Member; project: any }> {
  const member = await registerUser(anonymous);
  const project = await createProject(member.client);
  return { member, project };
}
