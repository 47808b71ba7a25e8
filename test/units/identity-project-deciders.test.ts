import { test } from 'uvu';
import { defaultLimits } from '../../src/config.ts';
import * as assert from 'uvu/assert';
import { replay } from '../../src/domain/decider.ts';
import { identityDecider, type IdentityEvent } from '../../src/domain/identity.ts';
import { projectDecider } from '../../src/domain/project.ts';
import type { ApiKey, Membership, Project } from '../../src/domain/records.ts';
import { rejection } from '../helpers/deciders.ts';

const now = '2026-01-01T00:00:00.000Z';

const apiKey = (id: string, user: number, project = 'p'): ApiKey => ({
  id, user, project, name: null, prefix: 'ovr_abcdefgh', key_hash: 'ff', is_active: true,
  created_at: now, expires_at: null, last_used_at: null,
});

test('users get consecutive ids and unique emails', () => {
  let state = identityDecider.initialState();
  const register = (email: string) => {
    const events = identityDecider.decide(state, { type: 'RegisterUser', email, passwordHash: 'h', now }, defaultLimits);
    state = replay(identityDecider, state, events);
    return events;
  };
  assert.is((register('a@x.io')[0] as Extract<IdentityEvent, { type: 'UserRegistered' }>).user.id, 1);
  assert.is((register('b@x.io')[0] as Extract<IdentityEvent, { type: 'UserRegistered' }>).user.id, 2);
  assert.equal(rejection(() => register('a@x.io')), { kind: 'invalid', fields: { email: ['An account with this email already exists.'] } });
});

test('API keys are counted per user against the limit, and revoking twice changes nothing', () => {
  let state = identityDecider.initialState();
  state = replay(identityDecider, state, identityDecider.decide(state, { type: 'CreateApiKey', apiKey: apiKey('k1', 1) }, { apiKeysPerUserMax: 1 }));
  assert.equal(rejection(() => identityDecider.decide(state, { type: 'CreateApiKey', apiKey: apiKey('k2', 1) }, { apiKeysPerUserMax: 1 })).kind, 'invalid');
  assert.is(identityDecider.decide(state, { type: 'CreateApiKey', apiKey: apiKey('k3', 2) }, { apiKeysPerUserMax: 1 }).length, 1);
  assert.equal(rejection(() => identityDecider.decide(state, { type: 'RevokeApiKey', id: 'k1', user: 2 }, defaultLimits)), { kind: 'not_found' });
  state = replay(identityDecider, state, identityDecider.decide(state, { type: 'RevokeApiKey', id: 'k1', user: 1 }, defaultLimits));
  assert.is(state.apiKeys.get('k1')!.is_active, false);
  assert.equal(identityDecider.decide(state, { type: 'RevokeApiKey', id: 'k1', user: 1 }, defaultLimits), []);
});

test('a key use is recorded only when none was recorded since the given moment', () => {
  let state = identityDecider.initialState();
  state = replay(identityDecider, state, [{ type: 'ApiKeyCreated', apiKey: { ...apiKey('k', 1), last_used_at: '2026-01-01T00:00:30.000Z' } }]);
  const recent = { type: 'RecordApiKeyUse' as const, id: 'k', at: '2026-01-01T00:01:00.000Z', unlessUsedSince: '2026-01-01T00:00:00.000Z' };
  assert.equal(identityDecider.decide(state, recent, defaultLimits), []);
  const later = { ...recent, at: '2026-01-01T00:02:00.000Z', unlessUsedSince: '2026-01-01T00:01:00.000Z' };
  assert.is(identityDecider.decide(state, later, defaultLimits).length, 1);
});

test('a refresh token is exchanged once; expired used tokens are forgotten', () => {
  let state = identityDecider.initialState();
  const rotate = (jti: string, expiresAt: number, nowSeconds: number) => {
    state = replay(identityDecider, state, identityDecider.decide(state, { type: 'RotateRefreshToken', jti, expiresAt, nowSeconds }, defaultLimits));
  };
  rotate('a', 100, 0);
  assert.equal(rejection(() => rotate('a', 100, 1)), { kind: 'conflict', detail: 'Token is blacklisted' });
  rotate('b', 300, 200);
  assert.equal([...state.usedRefreshTokens.keys()], ['b']);
});

test("forgetting a project deletes its keys and frees the owners' allowance", () => {
  let state = identityDecider.initialState();
  state = replay(identityDecider, state, [
    { type: 'ApiKeyCreated', apiKey: apiKey('k1', 1, 'p1') },
    { type: 'ApiKeyCreated', apiKey: apiKey('k2', 1, 'p2') },
  ]);
  state = replay(identityDecider, state, identityDecider.decide(state, { type: 'ForgetProject', project: 'p1' }, defaultLimits));
  assert.equal([...state.apiKeys.keys()], ['k2']);
  assert.is(state.apiKeyCountByUser.get(1), 1);
  assert.equal(identityDecider.decide(state, { type: 'ForgetProject', project: 'p1' }, defaultLimits), []);
});

const project: Project = {
  id: 'p', created_at: now, updated_at: now, name: 'P', slug: 'p', description: null, is_active: null, settings: null,
};
const member = (id: string, user: number): Membership => ({ id, project: 'p', user, user_email: `${user}@x.io`, created_at: now, updated_at: now });

test('a project starts with its creator as a member; adding a member twice changes nothing', () => {
  let state = projectDecider.initialState();
  state = replay(projectDecider, state, projectDecider.decide(state, { type: 'CreateProject', project, creator: member('m1', 1) }, defaultLimits));
  assert.is(state.memberships.size, 1);
  assert.equal(projectDecider.decide(state, { type: 'AddMember', membership: member('m2', 1) }, { membershipsPerProjectMax: 10, workersPerProjectMax: 8 }), []);
  assert.equal(rejection(() => projectDecider.decide(state, { type: 'AddMember', membership: member('m3', 2) }, { membershipsPerProjectMax: 1, workersPerProjectMax: 8 })).kind, 'invalid');
});

test('nobody removes themselves; removing another member works; unknown memberships are not found', () => {
  let state = projectDecider.initialState();
  state = replay(projectDecider, state, [
    { type: 'ProjectCreated', project },
    { type: 'MembershipAdded', membership: member('m1', 1) },
    { type: 'MembershipAdded', membership: member('m2', 2) },
  ]);
  assert.equal(rejection(() => projectDecider.decide(state, { type: 'RemoveMember', id: 'm1', requestedBy: 1 }, defaultLimits)).kind, 'forbidden');
  assert.equal(rejection(() => projectDecider.decide(state, { type: 'RemoveMember', id: 'nope', requestedBy: 1 }, defaultLimits)), { kind: 'not_found' });
  state = replay(projectDecider, state, projectDecider.decide(state, { type: 'RemoveMember', id: 'm2', requestedBy: 1 }, defaultLimits));
  assert.not.ok(state.membershipIdsByUser.has(2));
});

test('updating a project stamps updated_at; a deleted project is gone', () => {
  let state = replay(projectDecider, projectDecider.initialState(), [{ type: 'ProjectCreated', project }]);
  const [updated] = projectDecider.decide(state, { type: 'UpdateProject', changes: { name: 'Q' }, now: '2026-02-01T00:00:00.000Z' }, defaultLimits);
  assert.equal(updated, { type: 'ProjectUpdated', project: { ...project, name: 'Q', updated_at: '2026-02-01T00:00:00.000Z' } });
  state = replay(projectDecider, state, projectDecider.decide(state, { type: 'DeleteProject' }, defaultLimits));
  assert.ok(projectDecider.isGone(state));
  assert.equal(rejection(() => projectDecider.decide(state, { type: 'DeleteProject' }, defaultLimits)), { kind: 'not_found' });
});

test.run();
