// Users, API keys and used refresh tokens: one stream for the whole service, so that email
// uniqueness and refresh-token rotation are decided in one place, one message at a time.
import type { ApiKey, Timestamp, User } from './records.ts';
import type { Decider } from './decider.ts';
import { conflict, invalid, notFound } from './rejection.ts';

export interface IdentityState {
  users: Map<number, User>;
  userIdsByEmail: Map<string, number>;
  lastUserId: number;
  apiKeys: Map<string, ApiKey>;
  apiKeyCountByUser: Map<number, number>;
  /** jti -> expiry (seconds) of refresh tokens already exchanged. */
  usedRefreshTokens: Map<string, number>;
}

export type IdentityCommand =
  | { type: 'RegisterUser'; email: string; passwordHash: string; now: Timestamp }
  | { type: 'CreateApiKey'; apiKey: ApiKey }
  | { type: 'RevokeApiKey'; id: string; user: number }
  /** Records a use at `at`, unless one at or after `unlessUsedSince` is already recorded. */
  | { type: 'RecordApiKeyUse'; id: string; at: Timestamp; unlessUsedSince: Timestamp }
  | { type: 'RotateRefreshToken'; jti: string; expiresAt: number; nowSeconds: number }
  | { type: 'ForgetProject'; project: string };

export type IdentityEvent =
  | { type: 'UserRegistered'; user: User }
  | { type: 'ApiKeyCreated'; apiKey: ApiKey }
  | { type: 'ApiKeyRevoked'; apiKey: ApiKey }
  | { type: 'ApiKeyUsed'; apiKey: ApiKey }
  | { type: 'RefreshTokenUsed'; jti: string; expiresAt: number; nowSeconds: number }
  | { type: 'ProjectApiKeysDeleted'; project: string; ids: string[] };

/** The configured limits the identity's decisions read. */
export interface IdentityLimits {
  apiKeysPerUserMax: number;
}

export const identityDecider: Decider<IdentityState, IdentityCommand, IdentityEvent, IdentityLimits> = {
  initialState: () => ({
    users: new Map(),
    userIdsByEmail: new Map(),
    lastUserId: 0,
    apiKeys: new Map(),
    apiKeyCountByUser: new Map(),
    usedRefreshTokens: new Map(),
  }),

  decide(state, command, limits) {
    switch (command.type) {
      case 'RegisterUser': {
        if (state.userIdsByEmail.has(command.email)) {
          throw invalid({ email: ['An account with this email already exists.'] });
        }
        const user: User = {
          id: state.lastUserId + 1,
          email: command.email,
          email_verified: false,
          password_hash: command.passwordHash,
          created_at: command.now,
        };
        return [{ type: 'UserRegistered', user }];
      }
      case 'CreateApiKey': {
        const held = state.apiKeyCountByUser.get(command.apiKey.user) ?? 0;
        if (held >= limits.apiKeysPerUserMax) {
          throw invalid({ non_field_errors: [`A user may hold at most ${limits.apiKeysPerUserMax} API keys.`] });
        }
        return [{ type: 'ApiKeyCreated', apiKey: command.apiKey }];
      }
      case 'RevokeApiKey': {
        const apiKey = state.apiKeys.get(command.id);
        if (!apiKey || apiKey.user !== command.user) throw notFound();
        if (!apiKey.is_active) return [];
        return [{ type: 'ApiKeyRevoked', apiKey: { ...apiKey, is_active: false } }];
      }
      case 'RecordApiKeyUse': {
        const apiKey = state.apiKeys.get(command.id);
        if (!apiKey || (apiKey.last_used_at !== null && apiKey.last_used_at >= command.unlessUsedSince)) return [];
        return [{ type: 'ApiKeyUsed', apiKey: { ...apiKey, last_used_at: command.at } }];
      }
      case 'RotateRefreshToken': {
        if (state.usedRefreshTokens.has(command.jti)) throw conflict('Token is blacklisted');
        return [{ type: 'RefreshTokenUsed', jti: command.jti, expiresAt: command.expiresAt, nowSeconds: command.nowSeconds }];
      }
      case 'ForgetProject': {
        const ids = [...state.apiKeys.values()].filter((key) => key.project === command.project).map((key) => key.id);
        return ids.length ? [{ type: 'ProjectApiKeysDeleted', project: command.project, ids }] : [];
      }
    }
  },

  evolve(state, event) {
    switch (event.type) {
      case 'UserRegistered':
        state.users.set(event.user.id, event.user);
        state.userIdsByEmail.set(event.user.email, event.user.id);
        state.lastUserId = Math.max(state.lastUserId, event.user.id);
        break;
      case 'ApiKeyCreated':
        state.apiKeys.set(event.apiKey.id, event.apiKey);
        state.apiKeyCountByUser.set(event.apiKey.user, (state.apiKeyCountByUser.get(event.apiKey.user) ?? 0) + 1);
        break;
      case 'ApiKeyRevoked':
      case 'ApiKeyUsed':
        state.apiKeys.set(event.apiKey.id, event.apiKey);
        break;
      case 'RefreshTokenUsed':
        // A used token matters only until it expires. Every refresh token has the same lifetime,
        // so insertion order is expiry order and pruning stops at the first live one.
        for (const [jti, expiresAt] of state.usedRefreshTokens) {
          if (expiresAt >= event.nowSeconds) break;
          state.usedRefreshTokens.delete(jti);
        }
        state.usedRefreshTokens.set(event.jti, event.expiresAt);
        break;
      case 'ProjectApiKeysDeleted':
        for (const id of event.ids) {
          const apiKey = state.apiKeys.get(id);
          if (!apiKey) continue;
          state.apiKeys.delete(id);
          state.apiKeyCountByUser.set(apiKey.user, (state.apiKeyCountByUser.get(apiKey.user) ?? 1) - 1);
        }
        break;
    }
    return state;
  },

  isGone: () => false,
};
