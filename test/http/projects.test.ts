import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { createApiKey, createProject, memberWithProject, registerUser } from '../helpers/fixtures.ts';
import { withService } from '../helpers/service.ts';

test('creating a project answers the full project; an omitted description reads "", is_active true, settings null; explicit null stays', () =>
  withService(async ({ client }) => {
    const member = await registerUser(client);
    const reply = await member.client.post('/api/projects/', { name: '  Alpha  ', slug: 'alpha', id: 'ignored', created_at: 'ignored' });
    assert.is(reply.status, 201);
    assert.equal(Object.keys(reply.body), ['id', 'created_at', 'updated_at', 'name', 'slug', 'description', 'is_active', 'settings']);
    assert.is(reply.body.name, 'Alpha');
    assert.is(reply.body.description, '');
    assert.is(reply.body.settings, null);
    assert.is(reply.body.is_active, true);
    assert.is.not(reply.body.id, 'ignored');
    const withAll = await member.client.post('/api/projects/', {
      name: 'Beta', slug: 'beta', description: 'd', is_active: false, settings: { nested: [1, { deep: true }] },
    });
    assert.equal(withAll.body.settings, { nested: [1, { deep: true }] });
    const nulled = await member.client.post('/api/projects/', { name: 'Gamma', slug: 'gamma', description: null, is_active: null });
    assert.is(nulled.body.description, null);
    assert.is(nulled.body.is_active, null);
    assert.is(withAll.body.is_active, false);
  }));

test('project fields are validated with DRF wording', () =>
  withService(async ({ client }) => {
    const member = await registerUser(client);
    const missing = await member.client.post('/api/projects/', {});
    assert.equal(missing.body, { name: ['This field is required.'], slug: ['This field is required.'] });
    const bad = await member.client.post('/api/projects/', { name: '', slug: 'x'.repeat(256), is_active: 'yes', description: 5 });
    assert.equal(bad.body, {
      name: ['This field may not be blank.'],
      slug: ['Ensure this field has no more than 255 characters.'],
      is_active: ['Must be a valid boolean.'],
      description: ['Not a valid string.'],
    });
    const nulls = await member.client.post('/api/projects/', { name: null, slug: 's' });
    assert.equal(nulls.body, { name: ['This field may not be null.'] });
    const longest = await member.client.post('/api/projects/', { name: 'n'.repeat(255), slug: 's'.repeat(255) });
    assert.is(longest.status, 201);
  }));

test('slugs are unique across all projects, and a slug is freed by a delete', () =>
  withService(async ({ client }) => {
    const first = await registerUser(client);
    const second = await registerUser(client);
    const project = await createProject(first.client, { slug: 'shared' });
    const taken = await second.client.post('/api/projects/', { name: 'x', slug: 'shared' });
    assert.is(taken.status, 400);
    assert.equal(taken.body, { slug: ['project with this slug already exists.'] });
    assert.is((await first.client.delete(`/api/projects/${project.id}/`)).status, 204);
    assert.is((await second.client.post('/api/projects/', { name: 'x', slug: 'shared' })).status, 201);
  }));

test('concurrent creates with one slug: exactly one wins', () =>
  withService(async ({ client }) => {
    const member = await registerUser(client);
    const replies = await Promise.all(Array.from({ length: 10 }, () => member.client.post('/api/projects/', { name: 'race', slug: 'race' })));
    assert.equal(replies.map((reply) => reply.status).sort(), [201, 400, 400, 400, 400, 400, 400, 400, 400, 400]);
  }));

test('PATCH changes only what is sent; PUT requires name and slug; a slug change keeps uniqueness', () =>
  withService(async ({ client }) => {
    const { member, project } = await memberWithProject(client);
    const other = await createProject(member.client, { slug: 'other' });
    const patched = await member.client.patch(`/api/projects/${project.id}/`, { description: 'new' });
    assert.is(patched.status, 200);
    assert.is(patched.body.description, 'new');
    assert.is(patched.body.name, project.name);
    assert.ok(patched.body.updated_at >= project.updated_at);
    const put = await member.client.put(`/api/projects/${project.id}/`, { name: 'Renamed' });
    assert.equal(put.body, { slug: ['This field is required.'] });
    const replaced = await member.client.put(`/api/projects/${project.id}/`, { name: 'Renamed', slug: 'renamed' });
    assert.is(replaced.body.description, 'new');
    const clash = await member.client.patch(`/api/projects/${other.id}/`, { slug: 'renamed' });
    assert.equal(clash.body, { slug: ['project with this slug already exists.'] });
    assert.is((await member.client.patch(`/api/projects/${other.id}/`, { slug: project.slug })).status, 200);
  }));

test("other users' projects are 404 everywhere", () =>
  withService(async ({ client }) => {
    const { project } = await memberWithProject(client);
    const stranger = await registerUser(client);
    for (const reply of [
      await stranger.client.get(`/api/projects/${project.id}/`),
      await stranger.client.patch(`/api/projects/${project.id}/`, { name: 'x' }),
      await stranger.client.delete(`/api/projects/${project.id}/`),
      await stranger.client.get(`/api/projects/${project.id}/memberships/`),
    ]) {
      assert.is(reply.status, 404);
      assert.equal(reply.body, { detail: 'Not found.', code: 'not_found' });
    }
    assert.is((await stranger.client.get('/api/projects/')).body.count, 0);
  }));

test('the list filters by name (contains, any case) and slug (exact), searches and orders', () =>
  withService(async ({ client }) => {
    const member = await registerUser(client);
    for (const [name, slug] of [['Beta Tools', 'beta'], ['alpha', 'alpha-1'], ['Gamma', 'gamma']]) {
      await createProject(member.client, { name, slug });
    }
    const names = async (query: Record<string, string>) =>
      (await member.client.get('/api/projects/', query)).body.results.map((p: any) => p.name);
    assert.equal(await names({}), ['Beta Tools', 'Gamma', 'alpha']);
    assert.equal(await names({ name: 'TOOL' }), ['Beta Tools']);
    assert.equal(await names({ slug: 'alpha' }), []);
    assert.equal(await names({ slug: 'alpha-1' }), ['alpha']);
    assert.equal(await names({ search: 'gam' }), ['Gamma']);
    assert.equal(await names({ search: 'a beta' }), ['Beta Tools']);
    assert.equal(await names({ ordering: '-name' }), ['alpha', 'Gamma', 'Beta Tools']);
    assert.equal(await names({ ordering: 'secret' }), ['Beta Tools', 'Gamma', 'alpha']);
    assert.equal(await names({ name: '' }), ['Beta Tools', 'Gamma', 'alpha']);
  }));

test('pages carry absolute next/previous links that keep the other parameters', () =>
  withService(async ({ client, url }) => {
    const member = await registerUser(client);
    for (let i = 0; i < 5; i++) await createProject(member.client, { name: `P${i}` });
    const first = await member.client.get('/api/projects', { page_size: 2, search: 'p', ordering: 'name' });
    assert.is(first.body.count, 5);
    assert.is(first.body.previous, null);
    assert.is(first.body.next, `${url}/api/projects/?ordering=name&page=2&page_size=2&search=p`);
    const second = await member.client.get(first.body.next.slice(url.length));
    assert.equal(second.body.results.map((p: any) => p.name), ['P2', 'P3']);
    assert.is(second.body.previous, `${url}/api/projects/?ordering=name&page_size=2&search=p`);
    const last = await member.client.get('/api/projects/', { page_size: 2, page: 'last' });
    assert.equal(last.body.results.length, 1);
    assert.is(last.body.next, null);
  }));

test('page sizes default to 25, clamp to 100, and a bad page is "Invalid page."', () =>
  withService(
    async ({ client }) => {
      const member = await registerUser(client);
      for (let i = 0; i < 4; i++) await createProject(member.client);
      assert.is((await member.client.get('/api/projects/')).body.results.length, 3);
      assert.is((await member.client.get('/api/projects/', { page_size: 1000 })).body.results.length, 4);
      assert.is((await member.client.get('/api/projects/', { page_size: 'x' })).body.results.length, 3);
      assert.is((await member.client.get('/api/projects/', { page_size: 0 })).body.results.length, 3);
      for (const page of ['0', '-1', 'abc', '1.5', '3', '99999999999']) {
        const reply = await member.client.get('/api/projects/', { page });
        assert.is(reply.status, 404, page);
        assert.equal(reply.body, { detail: 'Invalid page.', code: 'not_found' });
      }
      const empty = await (await registerUser(client)).client.get('/api/projects/');
      assert.equal(empty.body, { count: 0, next: null, previous: null, results: [] });
    },
    { limits: { pageSizeDefault: 3, pageSizeMax: 4 } },
  ));

test('memberships: the creator is a member; add by user_id or email; adding twice answers the same membership', () =>
  withService(async ({ client }) => {
    const { member, project } = await memberWithProject(client);
    const friend = await registerUser(client);
    const listed = await member.client.get(`/api/projects/${project.id}/memberships/`);
    assert.equal(listed.body.results.map((m: any) => m.user), [member.id]);
    assert.equal(Object.keys(listed.body.results[0]), ['id', 'project', 'user', 'user_email', 'created_at', 'updated_at']);
    const added = await member.client.post(`/api/projects/${project.id}/memberships/`, { user_id: friend.id });
    assert.is(added.status, 201);
    assert.is(added.body.user_email, friend.email);
    const again = await member.client.post(`/api/projects/${project.id}/memberships/`, { email: friend.email.toUpperCase() });
    assert.is(again.status, 201);
    assert.is(again.body.id, added.body.id);
    const friendSees = await friend.client.get(`/api/projects/${project.id}/`);
    assert.is(friendSees.status, 200);
  }));

test('memberships: unknown users are 400; removing yourself is 403; removing another takes their access', () =>
  withService(async ({ client }) => {
    const { member, project } = await memberWithProject(client);
    const friend = await registerUser(client);
    const base = `/api/projects/${project.id}/memberships/`;
    assert.equal((await member.client.post(base, { user_id: 999 })).body, { user_id: ['Invalid pk "999" - object does not exist.'] });
    assert.equal((await member.client.post(base, { email: 'ghost@example.com' })).body, { email: ['No user with this email address exists.'] });
    assert.equal((await member.client.post(base, {})).body, { non_field_errors: ['Give either user_id or email.'] });
    const added = await member.client.post(base, { user_id: friend.id });
    const mine = (await member.client.get(base)).body.results.find((m: any) => m.user === member.id);
    const self = await member.client.delete(`${base}${mine.id}/`);
    assert.is(self.status, 403);
    assert.is(self.body.code, 'permission_denied');
    assert.is((await member.client.delete(`${base}${added.body.id}/`)).status, 204);
    assert.is((await friend.client.get(`/api/projects/${project.id}/`)).status, 404);
    assert.is((await member.client.delete(`${base}${added.body.id}/`)).status, 404);
  }));

test('a project holds at most membershipsPerProjectMax members', () =>
  withService(
    async ({ client }) => {
      const { member, project } = await memberWithProject(client);
      const friend = await registerUser(client);
      await member.client.post(`/api/projects/${project.id}/memberships/`, { user_id: friend.id });
      const third = await registerUser(client);
      const refused = await member.client.post(`/api/projects/${project.id}/memberships/`, { user_id: third.id });
      assert.is(refused.status, 400);
      assert.equal(refused.body, { non_field_errors: ['A project may have at most 2 members.'] });
    },
    { limits: { membershipsPerProjectMax: 2 } },
  ));

test('an API key may not create projects, and stops working when its owner leaves the project', () =>
  withService(async ({ client }) => {
    const { member, project } = await memberWithProject(client);
    const friend = await registerUser(client);
    const added = await member.client.post(`/api/projects/${project.id}/memberships/`, { user_id: friend.id });
    const key = await createApiKey(friend.client, project.id);
    const keyClient = client.as({ apiKey: key.key });
    const create = await keyClient.post('/api/projects/', { name: 'x', slug: 'x' });
    assert.is(create.status, 403);
    assert.is((await keyClient.get(`/api/projects/${project.id}/`)).status, 200);
    await member.client.delete(`/api/projects/${project.id}/memberships/${added.body.id}/`);
    assert.is((await keyClient.get(`/api/projects/${project.id}/`)).status, 404);
  }));

test("deleting a project removes it, its memberships and its API keys", () =>
  withService(async ({ client }) => {
    const { member, project } = await memberWithProject(client);
    const key = await createApiKey(member.client, project.id);
    assert.is((await member.client.delete(`/api/projects/${project.id}/`)).status, 204);
    assert.is((await member.client.get(`/api/projects/${project.id}/`)).status, 404);
    assert.is((await member.client.get(`/api/projects/${project.id}/memberships/`)).status, 404);
    assert.is((await client.as({ apiKey: key.key }).get('/api/auth/me/')).status, 401);
    assert.is((await member.client.get('/api/auth/api-keys/')).body.count, 0);
    assert.is((await member.client.delete(`/api/projects/${project.id}/`)).status, 404);
  }));

test.run();
