// The request pipeline every route shares: paths, methods, bodies, errors and backpressure.
import { request as httpRequest } from 'node:http';
import { gzipSync } from 'node:zlib';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { allRoutes } from '../../src/app.ts';
import { MemoryKv } from '../../src/store/memory-kv.ts';
import { FaultyKv } from '../helpers/faulty-kv.ts';
import { memberWithProject, registerUser } from '../helpers/fixtures.ts';
import { withService } from '../helpers/service.ts';

/** A raw request, for methods and bodies fetch will not send. */
function raw(url: string, method: string, path: string, headers: Record<string, string> = {}, body?: string | Buffer) {
  return new Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: any }>((resolve, reject) => {
    const request = httpRequest(`${url}${path}`, { method, headers }, (response) => {
      let text = '';
      response.on('data', (chunk) => (text += chunk));
      response.on('end', () => resolve({ status: response.statusCode!, headers: response.headers, body: text ? JSON.parse(text) : null }));
    });
    request.on('error', reject);
    request.end(body);
  });
}

test('every path answers with and without its trailing slash', () =>
  withService(async ({ client }) => {
    const member = await registerUser(client);
    assert.is((await member.client.get('/api/projects')).status, 200);
    assert.is((await member.client.get('/api/projects/')).status, 200);
    assert.is((await client.get('/health')).status, 200);
    assert.is((await client.get('/health/')).status, 200);
    assert.is((await client.get('/api/health')).status, 200);
  }));

test('unknown paths are 404 and malformed ids are 404, always as JSON', () =>
  withService(async ({ client }) => {
    const member = await registerUser(client);
    for (const path of ['/nope', '/api/', '/api/projects/not-a-uuid/', '/api/projects/123/memberships/']) {
      const reply = await member.client.get(path);
      assert.is(reply.status, 404, path);
      assert.equal(reply.body, { detail: 'Not found.', code: 'not_found' });
      assert.match(reply.headers.get('content-type') ?? '', /application\/json/);
    }
  }));

test('a path id in any form a UUID is written in names the record; anything else is 404', () =>
  withService(async ({ client }) => {
    const { member, project } = await memberWithProject(client);
    const hex = project.id.replace(/-/g, '');
    for (const id of [project.id, project.id.toUpperCase(), hex, `urn:uuid:${project.id}`]) {
      const reply = await member.client.get(`/api/projects/${id}/`);
      assert.is(reply.status, 200, id);
      assert.is(reply.body.id, project.id, id);
    }
    for (const id of [`${project.id}0`, project.id.slice(1), project.id.replace(/-/, '_'), `${hex.slice(0, 31)}g`]) {
      assert.is((await member.client.get(`/api/projects/${id}/`)).status, 404, id);
    }
  }));

test('a method no route serves is 405 with Allow on a known path and 404 on an unknown one', () =>
  withService(async ({ url }) => {
    const known = await raw(url, 'TRACE', '/api/projects/', {});
    assert.is(known.status, 405);
    assert.is(known.body.code, 'method_not_allowed');
    assert.match(String(known.headers['allow']), /GET/);
    for (const path of ['/nope/', '/api/jobs/53a87091-175b-425c-9144-b3006b8ac3f0/nothing-here/']) {
      const unknown = await raw(url, 'TRACE', path, {});
      assert.is(unknown.status, 404, path);
      assert.equal(unknown.body, { detail: 'Not found.', code: 'not_found' });
      assert.is(unknown.headers['allow'], undefined);
    }
  }));

test('a known path with a wrong method is 405 with Allow', () =>
  withService(async ({ client, url }) => {
    const reply = await client.put('/api/auth/me/', {});
    assert.is(reply.status, 405);
    assert.equal(reply.body, { detail: 'Method "PUT" not allowed.', code: 'method_not_allowed' });
    assert.match(reply.headers.get('allow') ?? '', /GET/);
    const odd = await raw(url, 'PROPFIND', '/api/projects/');
    assert.is(odd.status, 405);
    assert.is(odd.body.code, 'method_not_allowed');
  }));

test('bodies that are not JSON are 415; malformed JSON is a parse error', () =>
  withService(async ({ client }) => {
    const member = await registerUser(client);
    const text = await member.client.request('POST', '/api/projects/', 'name=x', { 'content-type': 'text/plain' });
    assert.is(text.status, 415);
    assert.equal(text.body, { detail: 'Unsupported media type "text/plain" in request.', code: 'unsupported_media_type' });
    const form = await member.client.request('POST', '/api/projects/', 'name=x', { 'content-type': 'application/x-www-form-urlencoded' });
    assert.is(form.status, 415);
    const broken = await member.client.request('POST', '/api/projects/', '{"name": ', { 'content-type': 'application/json' });
    assert.is(broken.status, 400);
    assert.is(broken.body.code, 'parse_error');
    assert.match(broken.body.detail, /^JSON parse error - /);
    const proto = await member.client.request('POST', '/api/projects/', '{"__proto__": {"x": 1}, "name": "a", "slug": "b"}', { 'content-type': 'application/json' });
    assert.is(proto.status, 400);
    const vendor = await member.client.request('POST', '/api/projects/', JSON.stringify({ name: 'v', slug: 'v' }), { 'content-type': 'application/vnd.api+json' });
    assert.is(vendor.status, 201);
  }));

test('a path naming no record the caller sees is 404 before its body is read, as DRF\'s get_object() comes first: malformed, wrong type or invalid', () =>
  withService(async ({ client, service }) => {
    const { member, project } = await memberWithProject(client);
    const stranger = await registerUser(client);
    const unknown = '00000000-0000-4000-8000-000000000000';
    const routes = allRoutes(service.deps).filter((route) => route.path.includes(':') && (route.body || route.rawBody) && !route.params);
    assert.ok(routes.length >= 16, `${routes.length} routes with a path id and a body`);
    for (const route of routes) {
      assert.ok(route.target, `${route.method} ${route.path} declares the record its path names`);
      const path = `${route.path.replace(/:\w+/g, unknown)}/`;
      for (const [body, type] of [['{"broken": ', 'application/json'], ['x=1', 'text/plain'], ['{"max": -1, "results": 7}', 'application/json']]) {
        const answer = await member.client.request(route.method, path, body, { 'content-type': type });
        assert.equal([answer.status, answer.body], [404, { detail: 'Not found.', code: 'not_found' }], `${route.method} ${path} with ${type} ${body}`);
      }
    }
    // Another's project names no record of the stranger's either.
    const theirs = await stranger.client.request('PATCH', `/api/projects/${project.id}/`, '{"name": ', { 'content-type': 'application/json' });
    assert.is(theirs.status, 404);
  }));

test('a body that is not an object, or empty, is read as DRF reads it', () =>
  withService(async ({ client }) => {
    const member = await registerUser(client);
    const list = await member.client.post('/api/projects/', [1, 2]);
    assert.equal(list.body, { non_field_errors: ['Invalid data. Expected a dictionary, but got list.'] });
    const string = await member.client.post('/api/projects/', 'hello');
    assert.is(string.status, 415);
    const quoted = await member.client.request('POST', '/api/projects/', '"hello"', { 'content-type': 'application/json' });
    assert.equal(quoted.body, { non_field_errors: ['Invalid data. Expected a dictionary, but got str.'] });
    const empty = await member.client.request('POST', '/api/projects/', '', { 'content-type': 'application/json' });
    assert.equal(empty.body, { name: ['This field is required.'], slug: ['This field is required.'] });
  }));

test('a body over bodyBytesMax is 413, whether declared or streamed', () =>
  withService(
    async ({ client, url }) => {
      const member = await registerUser(client);
      const big = JSON.stringify({ name: 'x'.repeat(600), slug: 'big' });
      const declared = await member.client.post('/api/projects/', JSON.parse(big));
      assert.is(declared.status, 413);
      assert.is(declared.body.code, 'payload_too_large');
      const streamed = await raw(url, 'POST', '/api/projects/', {
        authorization: `Bearer ${member.access}`,
        'content-type': 'application/json',
        'transfer-encoding': 'chunked',
      }, big);
      assert.is(streamed.status, 413);
      assert.is(streamed.body.code, 'payload_too_large');
      const fits = await member.client.post('/api/projects/', { name: 'fits', slug: 'fits', description: 'x'.repeat(400) });
      assert.is(fits.status, 201);
    },
    { limits: { bodyBytesMax: 512 } },
  ));

test('a body that is not what its Content-Encoding says is a parse error; decompressed, it still counts against bodyBytesMax', () =>
  withService(
    async ({ client, url }) => {
      const member = await registerUser(client);
      const headers = (encoding: string) => ({ authorization: `Bearer ${member.access}`, 'content-type': 'application/json', 'content-encoding': encoding });
      for (const encoding of ['gzip', 'deflate', 'br']) {
        const plain = await raw(url, 'POST', '/api/projects/', headers(encoding), JSON.stringify({ name: 'p', slug: `plain-${encoding}` }));
        assert.is(plain.status, 400, encoding);
        assert.is(plain.body.code, 'parse_error');
        assert.match(plain.body.detail, new RegExp(`^JSON parse error - the body is not valid ${encoding} `));
      }
      const bomb = await raw(url, 'POST', '/api/projects/', headers('gzip'), gzipSync(`{"name": "${' '.repeat(100_000)}"}`));
      assert.is(bomb.status, 413);
      const compressed = await raw(url, 'POST', '/api/projects/', headers('gzip'), gzipSync(JSON.stringify({ name: 'z', slug: 'zipped' })));
      assert.is(compressed.status, 201);
      assert.is((await member.client.get('/api/projects/')).body.count, 1);
    },
    { limits: { bodyBytesMax: 512 } },
  ));

test('a body read as sent and one inflated by koa-body agree: byte-order mark, chunks, prototype keys, syntax errors', () =>
  withService(async ({ client, url }) => {
    const member = await registerUser(client);
    const headers = (encoding?: string) => ({
      authorization: `Bearer ${member.access}`,
      'content-type': 'application/json',
      ...(encoding ? { 'content-encoding': encoding } : {}),
    });
    const send = async (text: string, slug: string) => {
      const plain = await raw(url, 'POST', '/api/projects/', headers(), Buffer.from(text.replace('SLUG', `${slug}-a`)));
      const zipped = await raw(url, 'POST', '/api/projects/', headers('gzip'), gzipSync(Buffer.from(text.replace('SLUG', `${slug}-b`))));
      return [plain, zipped];
    };
    for (const reply of await send('\ufeff{"name": "bom", "slug": "SLUG"}', 'bom')) assert.is(reply.status, 201);
    for (const reply of await send('{"__proto__": {"x": 1}, "name": "p", "slug": "SLUG"}', 'proto')) {
      assert.equal(reply.body, { detail: 'JSON parse error - Object contains forbidden prototype property', code: 'parse_error' });
    }
    const [plain, zipped] = await send('{"name": "broken", "slug": "SLUG"', 'broken');
    assert.is(plain.status, 400);
    assert.equal(plain.body, zipped.body, 'the same JSON parse error either way');
    const chunked = await new Promise<number>((resolve, reject) => {
      const request = httpRequest(`${url}/api/projects/`, { method: 'POST', headers: { ...headers(), 'transfer-encoding': 'chunked' } }, (response) => {
        response.resume();
        resolve(response.statusCode!);
      });
      request.on('error', reject);
      for (const piece of ['{"name": "in', ' pieces", "sl', 'ug": "chunked"}']) request.write(piece);
      request.end();
    });
    assert.is(chunked, 201);
  }));

test('JSON nested deeper than jsonDepthMax is refused before it is stored', () =>
  withService(
    async ({ client }) => {
      const { member, project } = await memberWithProject(client);
      let deep: unknown = 1;
      for (let i = 0; i < 10; i++) deep = [deep];
      const refused = await member.client.patch(`/api/projects/${project.id}/`, { settings: deep });
      assert.is(refused.status, 400);
      assert.equal(refused.body, { detail: 'JSON parse error - nesting is deeper than 8 levels', code: 'parse_error' });
      let shallow: unknown = 1;
      for (let i = 0; i < 6; i++) shallow = [shallow];
      assert.is((await member.client.patch(`/api/projects/${project.id}/`, { settings: shallow })).status, 200);
    },
    { limits: { jsonDepthMax: 8 } },
  ));

test('numbers too large for a double are refused in bodies and query strings', () =>
  withService(async ({ client }) => {
    const { member, project } = await memberWithProject(client);
    const body = await member.client.request('PATCH', `/api/projects/${project.id}/`, '{"settings": {"x": 1e400}}', { 'content-type': 'application/json' });
    assert.is(body.status, 400);
    assert.equal(body.body, { detail: 'JSON parse error - a number is too large', code: 'parse_error' });
    const query = await member.client.get('/api/projects/', { page_size: 5, search: 'x' });
    assert.is(query.status, 200);
    for (const value of ['Infinity', '1e400', '-Infinity']) {
      const jobs = await member.client.get('/api/jobs/', { score_min: value });
      assert.is(jobs.status, 400, value);
      assert.equal(jobs.body, { score_min: ['Enter a number.'] });
    }
    assert.is((await member.client.get('/api/jobs/', { score_min: '1e300' })).status, 200);
  }));

test('a query value longer than queryValueCharsMax is a field error', () =>
  withService(
    async ({ client }) => {
      const member = await registerUser(client);
      const reply = await member.client.get('/api/projects/', { search: 'x'.repeat(33) });
      assert.is(reply.status, 400);
      assert.equal(reply.body, { search: ['Ensure this value has at most 32 characters.'] });
      assert.is((await member.client.get('/api/projects/', { search: 'x'.repeat(32) })).status, 200);
    },
    { limits: { queryValueCharsMax: 32 } },
  ));

test('raising queryValueCharsMax lets longer filter values through (no schema holds its own limit)', () =>
  withService(
    async ({ client }) => {
      const member = await registerUser(client);
      for (const [path, param] of [['/api/agents/', 'name'], ['/api/jobs/', 'prompt_slug'], ['/api/traces/services/', 'service_name']]) {
        const reply = await member.client.get(path!, { [param!]: 'x'.repeat(1500) });
        assert.is(reply.status, 200, `${path} ${param}: ${reply.text}`);
      }
      const tooLong = await member.client.get('/api/agents/', { name: 'x'.repeat(2001) });
      assert.equal(tooLong.body, { name: ['Ensure this value has at most 2000 characters.'] });
    },
    { limits: { queryValueCharsMax: 2000 } },
  ));

test('an unexpected error is a JSON 500 with a reference, never a stack', () =>
  withService(async ({ client, service }) => {
    const { member, project } = await memberWithProject(client);
    service.deps.readModel.projects.get = () => {
      throw new Error('secret internal detail');
    };
    const reply = await member.client.get(`/api/projects/${project.id}/`);
    assert.is(reply.status, 500);
    assert.is(reply.body.code, 'internal_error');
    assert.match(reply.body.error_id, /^[0-9a-f-]{36}$/);
    assert.is(reply.body.detail, `The server hit an unexpected error (ref ${reply.body.error_id}).`);
    assert.not.ok(reply.text.includes('secret'));
  }));

test('a full mailbox answers 503 with Retry-After, and the queued writes still land', async () => {
  const kv = new FaultyKv(new MemoryKv());
  await withService(
    async ({ client }) => {
      const { member, project } = await memberWithProject(client);
      const release = kv.holdWrites();
      const replies = Promise.all(
        Array.from({ length: 6 }, (_, i) => member.client.patch(`/api/projects/${project.id}/`, { description: `d${i}` })),
      );
      await new Promise((resolve) => setTimeout(resolve, 100));
      release();
      const statuses = (await replies).map((reply) => reply.status);
      assert.ok(statuses.includes(503), statuses.join());
      assert.ok(statuses.includes(200), statuses.join());
      const busy = (await replies).find((reply) => reply.status === 503)!;
      assert.is(busy.body.code, 'unavailable');
      assert.ok(Number(busy.headers.get('retry-after')) >= 1);
    },
    // One commit in flight at a time: the other writes wait in the mailbox, which holds two.
    { kv, limits: { mailboxDepthMax: 2, commitsInFlightMax: 1 } },
  );
});

test('when the store fails a write: 503, nothing changes, health says unhealthy, then recovers', async () => {
  const kv = new FaultyKv(new MemoryKv());
  await withService(
    async ({ client }) => {
      const { member, project } = await memberWithProject(client);
      kv.failWith = new Error('ENOSPC: no space left on device');
      const failed = await member.client.patch(`/api/projects/${project.id}/`, { name: 'changed' });
      assert.is(failed.status, 503);
      assert.is(failed.body.code, 'unavailable');
      assert.is((await member.client.get(`/api/projects/${project.id}/`)).body.name, project.name);
      const sick = await client.get('/health');
      assert.is(sick.status, 503);
      assert.is(sick.body.status, 'unhealthy');
      kv.failWith = null;
      assert.is((await client.get('/health')).body.status, 'healthy');
      assert.is((await member.client.patch(`/api/projects/${project.id}/`, { name: 'changed' })).body.name, 'changed');
    },
    { kv },
  );
});

test('health needs no credentials and names the storage', () =>
  withService(async ({ client }) => {
    const reply = await client.get('/api/health/');
    assert.is(reply.status, 200);
    assert.is(reply.body.status, 'healthy');
    assert.is(reply.body.storage, 'memory');
  }));

test.run();
