// Who is calling: `Authorization: Bearer <jwt or key>`, `Authorization: Api-Key <key>` or
// `X-Api-Key: <key>`. A user sees the projects they belong to; an API key sees only its own
// project, and only while its owner still belongs to it. A span token (`Bearer`) is taken only
// where a route says so (span export), for its one project, while what issued it stands.
import type { ApiKey, User } from '../domain/records.ts';
import { invalidCredentials, missingCredentials } from './auth-error.ts';
import type { ReadModel } from '../read-model.ts';
import { apiKeyMatches, apiKeyPrefixLength, hashApiKey, looksLikeApiKey } from './api-keys.ts';
import { InvalidToken, type Tokens } from './tokens.ts';

export interface Principal {
  user: User;
  apiKey: ApiKey | null;
  /** A span token's project: the caller may export spans there, and do nothing else. */
  spanToken?: { project: string };
}

/** The one project a caller is bound to (an API key's, a span token's), or null for a user's token. */
export function boundProject(principal: Principal): string | null {
  return principal.apiKey?.project ?? principal.spanToken?.project ?? null;
}

export interface AuthenticatorDeps {
  readModel: ReadModel;
  tokens: Tokens;
  nowMs(): number;
  /** Called when a key is used, so that its last_used_at can be recorded (sparingly). */
  keyUsed(apiKey: ApiKey): void;
}

export function credentialFrom(headers: { authorization?: string; 'x-api-key'?: string | string[] }): string | null {
  const apiKeyHeader = headers['x-api-key'];
  const direct = Array.isArray(apiKeyHeader) ? apiKeyHeader[0] : apiKeyHeader;
  if (direct) return direct.trim();
  const authorization = headers.authorization?.trim();
  if (!authorization) return null;
  // "<scheme> <value>": read on every request, so found by position rather than by a split.
  const gap = /\s+/.exec(authorization);
  const scheme = (gap ? authorization.slice(0, gap.index) : authorization).toLowerCase();
  if (scheme !== 'bearer' && scheme !== 'api-key') return null;
  const value = gap ? authorization.slice(gap.index + gap[0].length) : '';
  if (!value || /\s/.test(value)) {
    throw invalidCredentials('Authorization header must contain two space-delimited values', 'bad_authorization_header');
  }
  return value;
}

export class Authenticator {
  constructor(private readonly deps: AuthenticatorDeps) {}

  /**
   * The caller, or a thrown 401. Answers synchronously for API keys and for access tokens seen
   * before (the hot path): only a token's first verification is asynchronous.
   */
  authenticate(headers: { authorization?: string; 'x-api-key'?: string | string[] }, { spanTokens = false } = {}): Principal | Promise<Principal> {
    const seen = this.rememberedBearer(headers);
    if (seen) return this.principalOf(seen.userId);
    const credential = credentialFrom(headers);
    if (credential === null) throw missingCredentials();
    if (looksLikeApiKey(credential)) return this.byApiKey(credential);
    const remembered = this.deps.tokens.rememberedAccess(credential);
    if (remembered) return this.principalOf(remembered.userId);
    return spanTokens ? this.byAccessOrSpanToken(credential) : this.byToken(credential);
  }

  /**
   * The hot path: `Bearer <token>` with an access token verified before. Such a token holds no
   * whitespace, so it is the whole rest of the header, found without parsing it (any other form
   * of the header misses the cache and is parsed as credentialFrom says).
   */
  private rememberedBearer(headers: { authorization?: string; 'x-api-key'?: string | string[] }) {
    const authorization = headers.authorization;
    if (authorization === undefined || headers['x-api-key'] !== undefined || !authorization.startsWith('Bearer ')) return undefined;
    return this.deps.tokens.rememberedAccess(authorization.slice('Bearer '.length));
  }

  private async byToken(token: string): Promise<Principal> {
    let userId: number;
    try {
      userId = (await this.deps.tokens.verify(token, 'access')).userId;
    } catch (error) {
      if (error instanceof InvalidToken) throw invalidCredentials('Given token not valid for any token type', 'token_not_valid');
      throw error;
    }
    return this.principalOf(userId);
  }

  /** An access token, or a span token while its API key (or its user's membership) stands. */
  private async byAccessOrSpanToken(token: string): Promise<Principal> {
    let verified;
    try {
      verified = await this.deps.tokens.verifyAccessOrSpans(token);
    } catch (error) {
      if (error instanceof InvalidToken) throw invalidCredentials('Given token not valid for any token type', 'token_not_valid');
      throw error;
    }
    const principal = this.principalOf(verified.claims.userId);
    if (verified.type === 'access') return principal;
    const { apiKey: keyId, project } = verified.claims;
    if (!this.deps.readModel.isMember(principal.user.id, project)) {
      throw invalidCredentials('The user this span token was issued to is no longer a member of its project.', 'token_not_valid');
    }
    if (keyId !== null) {
      const apiKey = this.deps.readModel.apiKeys.get(keyId);
      if (!apiKey || this.keyRefusal(apiKey) !== null) {
        throw invalidCredentials('The API key this span token was issued with is revoked, expired or gone.', 'token_not_valid');
      }
    }
    return { ...principal, spanToken: { project } };
  }

  /** Why a key found by its hash is refused (revoked, expired), or null while it stands. */
  private keyRefusal(apiKey: ApiKey): string | null {
    if (!apiKey.is_active) return 'API key has been revoked.';
    if (apiKey.expires_at !== null && Date.parse(apiKey.expires_at) <= this.deps.nowMs()) return 'API key has expired.';
    return null;
  }

  private principalOf(userId: number): Principal {
    const user = this.deps.readModel.users.get(userId);
    if (!user) throw invalidCredentials('User not found', 'user_not_found');
    return { user, apiKey: null };
  }

  private byApiKey(key: string): Principal {
    const { readModel } = this.deps;
    const hash = hashApiKey(key);
    const apiKey = readModel.apiKeysByPrefix.get(key.slice(0, apiKeyPrefixLength))?.find((candidate) => apiKeyMatches(hash, candidate.key_hash));
    if (!apiKey) throw invalidCredentials('Invalid API key.');
    const refusal = this.keyRefusal(apiKey);
    if (refusal !== null) throw invalidCredentials(refusal);
    const user = readModel.users.get(apiKey.user);
    if (!user) throw invalidCredentials('Invalid API key.');
    this.deps.keyUsed(apiKey);
    return { user, apiKey };
  }
}
