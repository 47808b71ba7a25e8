// The limits on list queries and on what the auth layer remembers, each exceeded once.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { LoginThrottle } from '../../src/auth/login-throttle.ts';
import { Tokens } from '../../src/auth/tokens.ts';
import { createProject, registerUser } from '../helpers/fixtures.ts';
import { withService } from '../helpers/service.ts';

test('pageNumberMax: a page past it is "Invalid page." even when the list is that long', () =>
  withService(
    async ({ client }) => {
      const member = await registerUser(client);
      for (let i = 0; i < 3; i++) await createProject(member.client);
      assert.is((await member.client.get('/api/projects/', { page_size: 1, page: 2 })).status, 200);
      const past = await member.client.get('/api/projects/', { page_size: 1, page: 3 });
      assert.is(past.status, 404);
      assert.equal(past.body, { detail: 'Invalid page.', code: 'not_found' });
    },
    { limits: { pageNumberMax: 2 } },
  ));

test('searchTermsMax and orderingFieldsMax: terms and fields past the limit are ignored', () =>
  withService(
    async ({ client }) => {
      const member = await registerUser(client);
      const made = [await createProject(member.client, { name: 'alpha beta' }), await createProject(member.client, { name: 'alpha beta' })];
      // Slugs chosen so that honouring "-slug" would put the larger id first.
      const [low, high] = made.sort((a, b) => (a.id < b.id ? -1 : 1));
      assert.is((await member.client.patch(`/api/projects/${low.id}/`, { slug: 'a-low' })).status, 200);
      assert.is((await member.client.patch(`/api/projects/${high.id}/`, { slug: 'z-high' })).status, 200);
      // The third term matches nothing; ignored, it cannot empty the answer.
      const searched = await member.client.get('/api/projects/', { search: 'alpha beta nothing-matches-this' });
      assert.is(searched.body.count, 2);
      // "-slug" comes second and is ignored: equal names fall back to the id tiebreak.
      const ordered = await member.client.get('/api/projects/', { ordering: 'name,-slug' });
      assert.equal(ordered.body.results.map((project: { id: string }) => project.id), [low.id, high.id]);
    },
    { limits: { searchTermsMax: 2, orderingFieldsMax: 1 } },
  ));

test('loginThrottleKeysMax: the throttle forgets its oldest keys first, so memory stays bounded', () => {
  const throttle = new LoginThrottle({ loginFailuresMax: 1, loginFailuresPerAddressMax: 100, loginFailureWindowSeconds: 60, loginThrottleKeysMax: 3 });
  throttle.recordFailure('a@x', '10.0.0.1', 0);
  assert.is(throttle.waitSeconds('a@x', '10.0.0.1', 1), 59);
  // Two more emails: with the address, four keys; the oldest (email a@x) is forgotten.
  throttle.recordFailure('b@x', '10.0.0.1', 2);
  throttle.recordFailure('c@x', '10.0.0.1', 3);
  assert.is(throttle.waitSeconds('a@x', '10.0.0.1', 4), 0);
  assert.is(throttle.waitSeconds('c@x', '10.0.0.1', 4), 59);
});

test('tokenCacheEntriesMax: a full cache of verified tokens starts over, and tokens still verify', async () => {
  const tokens = new Tokens('secret', 2, () => 1_000);
  const issued = await Promise.all([1, 2, 3].map((user) => tokens.issue(user, 'access')));
  for (const token of issued) await tokens.verify(token, 'access');
  // Two fit; the third cleared the cache and is the only one remembered.
  assert.ok(tokens.rememberedAccess(issued[2]!));
  assert.not.ok(tokens.rememberedAccess(issued[0]!));
  assert.not.ok(tokens.rememberedAccess(issued[1]!));
  assert.is((await tokens.verify(issued[0]!, 'access')).userId, 1);
});

test.run();
