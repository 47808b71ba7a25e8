import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { createApiKey, createProject, registerUser, unique } from '../helpers/fixtures.ts';
import { withService } from '../helpers/service.ts';
import { until } from '../helpers/wait.ts';

test('registering answers 201 with a token pair and the user', () =>
  withService(async ({ client }) => {
    const reply = await client.post('/api/auth/register/', {
      email: '  Grace@Example.COM ',
      password: 'long enough',
      password_confirm: 'long enough',
    });
    assert.is(reply.status, 201);
    assert.equal(reply.body.user, { id: 1, email: 'grace@example.com', email_verified: false });
    assert.type(reply.body.access, 'string');
    assert.type(reply.body.refresh, 'string');
  }));

test('a second account with the same email (in any case) is refused', () =>
  withService(async ({ client }) => {
    await registerUser(client, 'dup@example.com');
    const reply = await client.post('/api/auth/register/', { email: 'DUP@example.com', password: 'long enough', password_confirm: 'long enough' });
    assert.is(reply.status, 400);
    assert.equal(reply.body, { email: ['An account with this email already exists.'] });
  }));

test('registration checks every field with DRF wording', () =>
  withService(async ({ client }) => {
    const missing = await client.post('/api/auth/register/', {});
    assert.is(missing.status, 400);
    assert.equal(missing.body, {
      email: ['This field is required.'],
      password: ['This field is required.'],
      password_confirm: ['This field is required.'],
    });
    const bad = await client.post('/api/auth/register/', { email: 'not-an-email', password: 'short', password_confirm: 'short' });
    assert.equal(bad.body, { email: ['Enter a valid email address.'], password: ['Ensure this field has at least 8 characters.'] });
    const long = await client.post('/api/auth/register/', { email: 'a@b.co', password: 'x'.repeat(129), password_confirm: 'x'.repeat(129) });
    assert.equal(long.body.password, ['Ensure this field has no more than 128 characters.']);
    const mismatch = await client.post('/api/auth/register/', { email: 'a@b.co', password: 'long enough', password_confirm: 'different one' });
    assert.equal(mismatch.body, { password_confirm: ["Password fields didn't match."] });
  }));

test('login answers a token pair; wrong credentials answer 401', () =>
  withService(async ({ client }) => {
    const member = await registerUser(client, 'login@example.com', 'right password');
    const ok = await client.post('/api/auth/token/', { email: 'LOGIN@example.com', password: 'right password' });
    assert.is(ok.status, 200);
    assert.equal(Object.keys(ok.body).sort(), ['access', 'refresh']);
    const me = await client.as({ token: ok.body.access }).get('/api/auth/me/');
    assert.equal(me.body, { id: member.id, email: 'login@example.com', email_verified: false });
    const wrong = await client.post('/api/auth/token/', { email: 'login@example.com', password: 'wrong password' });
    assert.is(wrong.status, 401);
    assert.is(wrong.body.detail, 'No active account found with the given credentials');
    const nobody = await client.post('/api/auth/token/', { email: 'nobody@example.com', password: 'whatever1' });
    assert.is(nobody.status, 401);
  }));

test('repeated failed logins are throttled with 429 and Retry-After', () =>
  withService(
    async ({ client }) => {
      await registerUser(client, 'throttle@example.com', 'right password');
      for (let i = 0; i < 3; i++) {
        const reply = await client.post('/api/auth/token/', { email: 'throttle@example.com', password: 'wrong' });
        assert.is(reply.status, 401);
      }
      const throttled = await client.post('/api/auth/token/', { email: 'throttle@example.com', password: 'right password' });
      assert.is(throttled.status, 429);
      assert.is(throttled.body.code, 'throttled');
      assert.match(throttled.body.detail, /^Request was throttled\. Expected available in \d+ seconds?\.$/);
      assert.ok(Number(throttled.headers.get('retry-after')) > 0);
    },
    { limits: { loginFailuresMax: 3 } },
  ));

test('the refresh token rotates: the old one is refused once used', () =>
  withService(async ({ client }) => {
    const member = await registerUser(client);
    const first = await client.post('/api/auth/token/refresh/', { refresh: member.refresh });
    assert.is(first.status, 200);
    assert.ok(first.body.access && first.body.refresh && first.body.refresh !== member.refresh);
    const again = await client.post('/api/auth/token/refresh/', { refresh: member.refresh });
    assert.is(again.status, 401);
    assert.is(again.body.code, 'token_not_valid');
    const next = await client.post('/api/auth/token/refresh/', { refresh: first.body.refresh });
    assert.is(next.status, 200);
  }));

test('a refresh token is not an access token, and an access token cannot refresh', () =>
  withService(async ({ client }) => {
    const member = await registerUser(client);
    const asAccess = await client.as({ token: member.refresh }).get('/api/auth/me/');
    assert.is(asAccess.status, 401);
    assert.is(asAccess.body.code, 'token_not_valid');
    const asRefresh = await client.post('/api/auth/token/refresh/', { refresh: member.access });
    assert.is(asRefresh.status, 401);
    assert.is(asRefresh.body.code, 'token_not_valid');
  }));

test('tokens expire: access after 24 hours, refresh after 7 days', async () => {
  let now = Date.parse('2026-01-01T00:00:00Z');
  await withService(
    async ({ client }) => {
      const member = await registerUser(client);
      now += 24 * 3600 * 1000 - 5000;
      assert.is((await member.client.get('/api/auth/me/')).status, 200);
      now += 10_000;
      const expired = await member.client.get('/api/auth/me/');
      assert.is(expired.status, 401);
      assert.is(expired.body.code, 'token_not_valid');
      now += 6 * 24 * 3600 * 1000 - 20_000;
      assert.is((await client.post('/api/auth/token/refresh/', { refresh: member.refresh })).status, 200);
      const second = await registerUser(client);
      now += 7 * 24 * 3600 * 1000 + 1000;
      assert.is((await client.post('/api/auth/token/refresh/', { refresh: second.refresh })).status, 401);
    },
    { clock: { nowMs: () => now } },
  );
});

test('a tampered or foreign-signed token is refused', () =>
  withService(async ({ client }) => {
    const member = await registerUser(client);
    const [header, payload, signature] = member.access.split('.');
    const claims = JSON.parse(Buffer.from(payload!, 'base64url').toString());
    const forged = Buffer.from(JSON.stringify({ ...claims, user_id: 99 })).toString('base64url');
    const tampered = await client.as({ token: `${header}.${forged}.${signature}` }).get('/api/auth/me/');
    assert.is(tampered.status, 401);
    const noneAlg = `${Buffer.from('{"alg":"none","typ":"JWT"}').toString('base64url')}.${payload}.`;
    assert.is((await client.as({ token: noneAlg }).get('/api/auth/me/')).status, 401);
    assert.is((await client.as({ token: 'garbage' }).get('/api/auth/me/')).status, 401);
  }));

test('calls without credentials answer 401 with WWW-Authenticate', () =>
  withService(async ({ client }) => {
    const reply = await client.get('/api/auth/me/');
    assert.is(reply.status, 401);
    assert.equal(reply.body, { detail: 'Authentication credentials were not provided.', code: 'not_authenticated' });
    assert.match(reply.headers.get('www-authenticate') ?? '', /^Bearer/);
    const malformed = await client.request('GET', '/api/auth/me/', undefined, { authorization: 'Bearer' });
    assert.is(malformed.status, 401);
    assert.is(malformed.body.code, 'bad_authorization_header');
  }));

test('a token seen before is read from any form of the header the first reading takes, and only from those', () =>
  withService(async ({ client }) => {
    const member = await registerUser(client);
    const me = (authorization: string, more: Record<string, string> = {}) =>
      client.request('GET', '/api/auth/me/', undefined, { authorization, ...more });
    assert.is((await me(`Bearer ${member.access}`)).status, 200, 'the token is verified and remembered');
    for (const form of [`Bearer ${member.access}`, `bearer ${member.access}`, `Bearer  ${member.access}`, `Bearer ${member.access} `, `BEARER\t${member.access}`]) {
      assert.is((await me(form)).status, 200, JSON.stringify(form));
    }
    const extra = await me(`Bearer ${member.access} more`);
    assert.is(extra.status, 401);
    assert.is(extra.body.code, 'bad_authorization_header');
    assert.is((await me(`Token ${member.access}`)).status, 401, 'another scheme');
    assert.is((await me(`Bearer ${member.access}x`)).status, 401, 'another token');
    const keyFirst = await me(`Bearer ${member.access}`, { 'x-api-key': 'ovm_not-a-key' });
    assert.is(keyFirst.status, 401, 'an X-Api-Key header is read before Authorization');
  }));

test('API keys: created once with the key, listed without it, usable three ways, revoked', () =>
  withService(async ({ client }) => {
    const member = await registerUser(client);
    const project = await createProject(member.client);
    const created = await createApiKey(member.client, project.id, { name: 'ci' });
    assert.equal(Object.keys(created).sort(), ['created_at', 'expires_at', 'id', 'key', 'name', 'prefix', 'project']);
    assert.match(created.key, /^ovr_[A-Za-z0-9_-]{43}$/);
    assert.is(created.prefix, created.key.slice(0, 12));
    const listed = await member.client.get('/api/auth/api-keys/');
    assert.is(listed.body.count, 1);
    assert.equal(Object.keys(listed.body.results[0]).sort(), ['created_at', 'expires_at', 'id', 'is_active', 'last_used_at', 'name', 'prefix', 'project']);
    assert.not.ok(listed.text.includes(created.key));
    for (const header of ['x-api-key', 'authorization', 'bearer'] as const) {
      const me = await client.as({ apiKey: created.key, header }).get('/api/auth/me/');
      assert.is(me.status, 200, header);
      assert.is(me.body.id, member.id);
    }
    assert.is((await member.client.delete(`/api/auth/api-keys/${created.id}/`)).status, 204);
    const revoked = await client.as({ apiKey: created.key }).get('/api/auth/me/');
    assert.is(revoked.status, 401);
    assert.is(revoked.body.code, 'authentication_failed');
    const after = await member.client.get('/api/auth/api-keys/');
    assert.is(after.body.results[0].is_active, false);
  }));

test('an API key records when it was last used', () =>
  withService(async ({ client }) => {
    const member = await registerUser(client);
    const project = await createProject(member.client);
    const created = await createApiKey(member.client, project.id);
    await client.as({ apiKey: created.key }).get('/api/auth/me/');
    let lastUsed = null;
    await until(async () => {
      lastUsed = (await member.client.get('/api/auth/api-keys/')).body.results[0].last_used_at;
      return lastUsed !== null;
    }, 'last_used_at is recorded');
    assert.type(lastUsed, 'string');
  }));

test('an expired API key is refused; an expiry in the past cannot be set', async () => {
  let now = Date.parse('2026-03-01T00:00:00Z');
  await withService(
    async ({ client }) => {
      const member = await registerUser(client);
      const project = await createProject(member.client);
      const past = await member.client.post('/api/auth/api-keys/', { project: project.id, expires_at: '2026-02-01T00:00:00Z' });
      assert.is(past.status, 400);
      assert.equal(past.body, { expires_at: ['Expiry must be in the future.'] });
      const created = await createApiKey(member.client, project.id, { expires_at: '2026-03-02T00:00:00+00:00' });
      assert.is(created.expires_at, '2026-03-02T00:00:00.000Z');
      assert.is((await client.as({ apiKey: created.key }).get('/api/auth/me/')).status, 200);
      now = Date.parse('2026-03-02T00:00:01Z');
      const expired = await client.as({ apiKey: created.key }).get('/api/auth/me/');
      assert.is(expired.status, 401);
      assert.is(expired.body.detail, 'API key has expired.');
    },
    { clock: { nowMs: () => now } },
  );
});

test("API keys: another user's key is 404; another project is an invalid pk; a bad key is 401", () =>
  withService(async ({ client }) => {
    const owner = await registerUser(client);
    const other = await registerUser(client);
    const project = await createProject(owner.client);
    const key = await createApiKey(owner.client, project.id);
    assert.is((await other.client.delete(`/api/auth/api-keys/${key.id}/`)).status, 404);
    const foreign = await other.client.post('/api/auth/api-keys/', { project: project.id });
    assert.is(foreign.status, 400);
    assert.equal(foreign.body, { project: [`Invalid pk "${project.id}" - object does not exist.`] });
    const bad = await client.as({ apiKey: 'ovr_' + 'x'.repeat(43) }).get('/api/auth/me/');
    assert.is(bad.status, 401);
    assert.is(bad.body.detail, 'Invalid API key.');
  }));

test('a user holds at most apiKeysPerUserMax keys', () =>
  withService(
    async ({ client }) => {
      const member = await registerUser(client);
      const project = await createProject(member.client);
      await createApiKey(member.client, project.id);
      await createApiKey(member.client, project.id);
      const third = await member.client.post('/api/auth/api-keys/', { project: project.id });
      assert.is(third.status, 400);
      assert.equal(third.body, { non_field_errors: ['A user may hold at most 2 API keys.'] });
    },
    { limits: { apiKeysPerUserMax: 2 } },
  ));

test('an API key only sees its own project and its own keys', () =>
  withService(async ({ client }) => {
    const member = await registerUser(client);
    const first = await createProject(member.client);
    const second = await createProject(member.client);
    const key = await createApiKey(member.client, first.id);
    await createApiKey(member.client, second.id);
    const keyClient = client.as({ apiKey: key.key });
    const projects = await keyClient.get('/api/projects/');
    assert.equal(projects.body.results.map((p: any) => p.id), [first.id]);
    assert.is((await keyClient.get(`/api/projects/${second.id}/`)).status, 404);
    const keys = await keyClient.get('/api/auth/api-keys/');
    assert.equal(keys.body.results.map((k: any) => k.project), [first.id]);
  }));

test('emails are unique per registration even when registered concurrently', () =>
  withService(async ({ client }) => {
    const email = `${unique('race')}@example.com`;
    const replies = await Promise.all(
      Array.from({ length: 8 }, () => client.post('/api/auth/register/', { email, password: 'long enough', password_confirm: 'long enough' })),
    );
    assert.equal(replies.map((r) => r.status).sort(), [201, 400, 400, 400, 400, 400, 400, 400]);
  }));

test.run();
