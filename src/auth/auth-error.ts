// Why a caller is not who they claim to be. auth/ says so in its own terms; the one error mapper
// (src/http/errors.ts) turns it into the 401 answer, with WWW-Authenticate.
export class AuthError extends Error {
  constructor(
    /** No credentials at all, or credentials that do not hold. */
    readonly reason: 'missing' | 'invalid',
    readonly detail: string,
    /** The answer's `code` (simplejwt's `token_not_valid` for JWTs). */
    readonly code: string,
  ) {
    super(detail);
    this.name = 'AuthError';
  }
}

export const missingCredentials = () => new AuthError('missing', 'Authentication credentials were not provided.', 'not_authenticated');

export const invalidCredentials = (detail: string, code = 'authentication_failed') => new AuthError('invalid', detail, code);
