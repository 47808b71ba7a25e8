// JWTs as djangorestframework-simplejwt makes them: HS256, claims token_type, exp, iat, jti and
// user_id; access tokens live 24 hours, refresh tokens 7 days, and a token of one type is never
// accepted as the other. Verified access tokens are remembered until they expire, so a hot token
// costs one map lookup instead of an HMAC.
import { randomUUID } from 'node:crypto';

/** jose, loaded with the first token issued or verified rather than at every start (50-170 ms here). */
let jose: Promise<typeof import('jose')> | undefined;
const loadJose = () => (jose ??= import('jose'));

export const accessLifetimeSeconds = 24 * 60 * 60;
export const refreshLifetimeSeconds = 7 * 24 * 60 * 60;

export type TokenType = 'access' | 'refresh';

export interface TokenClaims {
  userId: number;
  jti: string;
  /** Expiry, seconds since the epoch. */
  exp: number;
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

  async issue(userId: number, type: TokenType): Promise<string> {
    const now = this.nowSeconds();
    const { SignJWT } = await loadJose();
    return new SignJWT({ token_type: type, user_id: userId })
      .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
      .setIssuedAt(now)
      .setExpirationTime(now + (type === 'access' ? accessLifetimeSeconds : refreshLifetimeSeconds))
      .setJti(randomUUID().replace(/-/g, ''))
      .sign(this.key);
  }

  /** The claims of an access token verified before and not yet expired (no HMAC, no promise). */
  rememberedAccess(token: string): TokenClaims | undefined {
    const cached = this.verifiedAccess.get(token);
    return cached && cached.exp > this.nowSeconds() ? cached : undefined;
  }

  /** The claims of a valid, unexpired token of `type`; throws InvalidToken otherwise. */
  async verify(token: string, type: TokenType): Promise<TokenClaims> {
    const now = this.nowSeconds();
    if (type === 'access') {
      const cached = this.rememberedAccess(token);
      if (cached) return cached;
    }
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
    if (payload.token_type !== type || typeof userId !== 'number' || !Number.isSafeInteger(userId)) {
      throw new InvalidToken('Token has wrong type');
    }
    const claims: TokenClaims = { userId, jti: String(payload.jti), exp: Number(payload.exp) };
    if (type === 'access') this.remember(token, claims);
    return claims;
  }

  private remember(token: string, claims: TokenClaims): void {
    // Bounded: when full, start over (simple, and a cold start only costs re-verification).
    if (this.verifiedAccess.size >= this.cacheEntriesMax) this.verifiedAccess.clear();
    this.verifiedAccess.set(token, claims);
  }
}
