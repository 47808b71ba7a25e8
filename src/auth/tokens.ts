// JWTs as djangorestframework-simplejwt makes them: HS256, claims token_type, exp, iat, jti and
// user_id; access tokens live 24 hours, refresh tokens 7 days, and a token of one type is never
// accepted as the other. Verified access tokens are remembered until they expire, so a hot token
// costs one map lookup instead of an HMAC. A span token (type "spans") is good for exporting
// spans to one project only: what the worker command hands the agents it runs.
import { randomUUID } from 'node:crypto';

/** jose, loaded with the first token issued or verified rather than at every start (50-170 ms here). */
let jose: Promise<typeof import('jose')> | undefined;
const loadJose = () => (jose ??= import('jose'));

export const accessLifetimeSeconds = 24 * 60 * 60;
export const refreshLifetimeSeconds = 7 * 24 * 60 * 60;

export type TokenType = 'access' | 'refresh' | 'spans';

export interface TokenClaims {
  userId: number;
  jti: string;
  /** Expiry, seconds since the epoch. */
  exp: number;
}

/** What a span token names besides its user: the project its spans go to, and the API key it was issued with (null: a user's token). */
export interface SpanTokenClaims extends TokenClaims {
  project: string;
  apiKey: string | null;
}

export class InvalidToken extends Error {}

export class Tokens {
  private readonly key: Uint8Array;
  private readonly verifiedAccess = new Map<string, TokenClaims>();

  constructor(secret: string, private readonly cacheEntriesMax: number, private readonly nowSeconds: () => number) {
    this.key = new TextEncoder().encode(secret);
  }

  async issuePair(userId: number): Promise<{ access: string; refresh: string }> {
    const [access, refresh] = await Promise.all([this.issue(userId, 'access'), this.issue(userId, 'refresh')]);
    return { access, refresh };
  }

  async issue(userId: number, type: 'access' | 'refresh'): Promise<string> {
    return this.sign({ token_type: type, user_id: userId }, type === 'access' ? accessLifetimeSeconds : refreshLifetimeSeconds);
  }

  /** A span token for one project, and when it expires (seconds since the epoch); it lives as long as an access token. */
  async issueSpans(userId: number, project: string, apiKey: string | null): Promise<{ token: string; exp: number }> {
    const exp = this.nowSeconds() + accessLifetimeSeconds;
    return { token: await this.sign({ token_type: 'spans', user_id: userId, project, api_key: apiKey }, accessLifetimeSeconds), exp };
  }

  private async sign(claims: Record<string, unknown>, lifetimeSeconds: number): Promise<string> {
    const now = this.nowSeconds();
    const { SignJWT } = await loadJose();
    return new SignJWT(claims)
      .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
      .setIssuedAt(now)
      .setExpirationTime(now + lifetimeSeconds)
      .setJti(randomUUID().replace(/-/g, ''))
      .sign(this.key);
  }

  /** The claims of an access token verified before and not yet expired (no HMAC, no promise). */
  rememberedAccess(token: string): TokenClaims | undefined {
    const cached = this.verifiedAccess.get(token);
    return cached && cached.exp > this.nowSeconds() ? cached : undefined;
  }

  /** The claims of a valid, unexpired token of `type`; throws InvalidToken otherwise. */
  async verify(token: string, type: 'access' | 'refresh'): Promise<TokenClaims> {
    return (type === 'access' && this.rememberedAccess(token)) || this.verified(token, type);
  }

  /** The claims of a valid, unexpired access or span token, and which it is; throws InvalidToken otherwise. */
  async verifyAccessOrSpans(token: string): Promise<{ type: 'access'; claims: TokenClaims } | { type: 'spans'; claims: SpanTokenClaims }> {
    const cached = this.rememberedAccess(token);
    if (cached) return { type: 'access', claims: cached };
    const claims = await this.verified(token, 'access', 'spans');
    return 'project' in claims ? { type: 'spans', claims } : { type: 'access', claims };
  }

  /** The claims of a token of one of `types`, checked by its signature and claims (an access token's remembered). */
  private async verified(token: string, ...types: TokenType[]): Promise<TokenClaims | SpanTokenClaims> {
    const now = this.nowSeconds();
    const { jwtVerify } = await loadJose();
    let payload: Record<string, unknown>;
    try {
      ({ payload } = await jwtVerify(token, this.key, {
        algorithms: ['HS256'],
        requiredClaims: ['exp', 'iat', 'jti'],
        currentDate: new Date(now * 1000),
      }));
    } catch {
      throw new InvalidToken('Token is invalid or expired');
    }
    const userId = payload.user_id;
    if (!types.includes(payload.token_type as TokenType) || typeof userId !== 'number' || !Number.isSafeInteger(userId)) {
      throw new InvalidToken('Token has wrong type');
    }
    const claims: TokenClaims = { userId, jti: String(payload.jti), exp: Number(payload.exp) };
    if (payload.token_type === 'spans') {
      const { project, api_key: apiKey } = payload;
      if (typeof project !== 'string' || (apiKey !== null && typeof apiKey !== 'string')) throw new InvalidToken('Token has wrong type');
      return { ...claims, project, apiKey };
    }
    if (payload.token_type === 'access') this.remember(token, claims);
    return claims;
  }

  private remember(token: string, claims: TokenClaims): void {
    // Bounded: when full, start over (simple, and a cold start only costs re-verification).
    if (this.verifiedAccess.size >= this.cacheEntriesMax) this.verifiedAccess.clear();
    this.verifiedAccess.set(token, claims);
  }
}
