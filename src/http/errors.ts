// The one error mapper. Whatever goes wrong becomes one of the JSON error shapes of docs/API.md
// ("Error shapes"): a field map on 400, else {detail, code};
// Koa's own plain-text errors never reach a client, and a 500 carries only a reference that is
// logged with the stack.
import { AssertionError } from 'node:assert';
import { randomUUID } from 'node:crypto';
import type { Duplex } from 'node:stream';
import type { Middleware } from 'koa';
import type { Logger } from 'pino';
import { Unavailable } from '../unavailable.ts';
import { ProjectClosed } from '../actors/project-gates.ts';
import { AuthError } from '../auth/auth-error.ts';
import { Rejected, type FieldErrors } from '../domain/rejection.ts';
import { InvalidPage } from '../query/pagination.ts';
import { NoProjectForSpans } from '../traces/no-project-for-spans.ts';

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly body: Record<string, unknown>,
    readonly headers: Readonly<Record<string, string>> = {},
  ) {
    super(typeof body.detail === 'string' ? body.detail : `HTTP ${status}`);
    this.name = 'ApiError';
  }
}

const authenticateHeader = { 'WWW-Authenticate': 'Bearer realm="api"' };

export const fail = {
  validation: (fields: FieldErrors) => new ApiError(400, fields),
  parse: (reason: string) => new ApiError(400, { detail: `JSON parse error - ${reason}`, code: 'parse_error' }),
  /** DRF's ParseError for a body that is not what its headers say (protobuf, gzip). */
  malformed: (detail: string) => new ApiError(400, { detail, code: 'parse_error' }),
  badRequest: (detail: string) => new ApiError(400, { detail, code: 'invalid' }),
  notAuthenticated: () =>
    new ApiError(401, { detail: 'Authentication credentials were not provided.', code: 'not_authenticated' }, authenticateHeader),
  authenticationFailed: (detail: string, code = 'authentication_failed') =>
    new ApiError(401, { detail, code }, authenticateHeader),
  forbidden: (detail: string) => new ApiError(403, { detail, code: 'permission_denied' }),
  notFound: (detail = 'Not found.') => new ApiError(404, { detail, code: 'not_found' }),
  methodNotAllowed: (method: string) =>
    new ApiError(405, { detail: `Method "${method}" not allowed.`, code: 'method_not_allowed' }),
  conflict: (detail: string) => new ApiError(409, { detail, code: 'conflict' }),
  payloadTooLarge: (bytesMax: number, detail = `Request body is larger than ${bytesMax} bytes.`) =>
    new ApiError(413, { detail, code: 'payload_too_large' }),
  unsupportedMediaType: (type: string) =>
    new ApiError(415, { detail: `Unsupported media type "${type}" in request.`, code: 'unsupported_media_type' }),
  throttled: (waitSeconds: number, detail = `Request was throttled. Expected available in ${waitSeconds} second${waitSeconds === 1 ? '' : 's'}.`) =>
    new ApiError(429, { detail, code: 'throttled' }, { 'Retry-After': String(waitSeconds) }),
  unavailable: (detail: string, retryAfterSeconds: number) =>
    new ApiError(503, { detail, code: 'unavailable' }, { 'Retry-After': String(retryAfterSeconds) }),
};

/** The value, or 404 when there is none (a record, or its actor, gone meanwhile). */
export function or404<T>(value: T | undefined): T {
  if (value === undefined) throw fail.notFound();
  return value;
}

/** An error thrown by a body parser or Node itself (http-errors style). */
interface StatusError {
  status?: number;
  statusCode?: number;
  expose?: boolean;
  type?: string;
  message?: string;
}

/** Maps any thrown value to the API error a client should see; null for a genuine 500. */
export function toApiError(error: unknown): ApiError | null {
  if (error instanceof ApiError) return error;
  if (error instanceof InvalidPage) return fail.notFound(error.message);
  if (error instanceof AuthError) return error.reason === 'missing' ? fail.notAuthenticated() : fail.authenticationFailed(error.detail, error.code);
  if (error instanceof Rejected) {
    const rejection = error.rejection;
    switch (rejection.kind) {
      case 'invalid':
        return fail.validation(rejection.fields);
      case 'not_found':
        return fail.notFound();
      case 'forbidden':
        return fail.forbidden(rejection.detail);
      case 'conflict':
        return fail.conflict(rejection.detail);
    }
  }
  if (error instanceof Unavailable) return fail.unavailable(error.message, error.retryAfterSeconds);
  if (error instanceof NoProjectForSpans) return fail.badRequest(error.message);
  if (error instanceof ProjectClosed) return fail.notFound();
  const status = (error as StatusError)?.status ?? (error as StatusError)?.statusCode;
  if (typeof status === 'number' && status >= 400 && status < 500) return fromClientStatus(error as StatusError, status);
  return null;
}

function fromClientStatus(error: StatusError, status: number): ApiError {
  switch (status) {
    case 413:
      return new ApiError(413, { detail: 'Request body is too large.', code: 'payload_too_large' });
    case 415:
      return new ApiError(415, { detail: error.message ?? 'Unsupported media type.', code: 'unsupported_media_type' });
    case 400:
      if (error.type === 'request.aborted') return fail.badRequest('The request body was not received completely.');
      if (error instanceof SyntaxError || error.type === undefined) return fail.parse(error.message ?? 'invalid JSON');
      return fail.badRequest(error.message ?? 'Bad request.');
    default:
      return new ApiError(status, { detail: error.expose && error.message ? error.message : 'Bad request.', code: 'invalid' });
  }
}

/**
 * A failed assert means the service's own invariants no longer hold: going on could acknowledge
 * a write wrongly, so the process stops (what was acknowledged is durable and recovers).
 */
export const stopOnBrokenInvariant = (error: AssertionError): void => {
  setImmediate(() => {
    throw error;
  });
};

/**
 * First in the chain: every error and every bodiless 404/405 the router leaves becomes JSON; a
 * failed assert is answered 500, logged as fatal and handed to `brokenInvariant`.
 */
export function errorMiddleware(logger: Logger, brokenInvariant = stopOnBrokenInvariant): Middleware {
  return async (ctx, next) => {
    try {
      await next();
      if (ctx.body === undefined || ctx.body === null) {
        // The router answers a method it never serves (TRACE, say) with 501 and an empty Allow
        // when no route matched the path: that is an unknown path, as Django answers it.
        const unknownPath = ctx.status === 404 || (ctx.status === 501 && !ctx.response.get('Allow'));
        if (unknownPath) {
          ctx.remove('Allow');
          throw fail.notFound();
        }
        if (ctx.status === 405 || ctx.status === 501) throw fail.methodNotAllowed(ctx.method);
      }
    } catch (error) {
      const apiError = toApiError(error);
      if (apiError) {
        ctx.status = apiError.status;
        ctx.set(apiError.headers);
        ctx.body = apiError.body;
        return;
      }
      const errorId = randomUUID();
      const broken = error instanceof AssertionError;
      logger[broken ? 'fatal' : 'error'](
        { err: error, error_id: errorId, request_id: ctx.state.requestId, method: ctx.method, path: ctx.path },
        broken ? 'broken invariant: stopping' : 'unexpected error',
      );
      if (broken) brokenInvariant(error);
      ctx.status = 500;
      ctx.body = {
        detail: `The server hit an unexpected error (ref ${errorId}).`,
        code: 'internal_error',
        error_id: errorId,
      };
    }
  };
}

/**
 * Node's HTTP server answers on its own when a request cannot reach Koa: headers or a body that
 * did not arrive in time (408), headers too large (431), bytes that are not HTTP (400). Its
 * answers have no body; these carry the same JSON shape as every other error, and are logged
 * (there is no request log line for them). The listener owns the socket.
 */
export function clientErrorListener(logger: Logger): (error: NodeJS.ErrnoException, socket: Duplex) => void {
  return (error, socket) => {
    const inFlight = (socket as Duplex & { _httpMessage?: { headersSent?: boolean } })._httpMessage;
    // A reset peer cannot be answered; a response already under way must not be corrupted.
    if (error.code === 'ECONNRESET' || !socket.writable || inFlight?.headersSent) {
      socket.destroy();
      return;
    }
    const [status, reason, body] = clientErrorAnswer(error.code);
    logger.info({ status, code: error.code, remote: (socket as Duplex & { remoteAddress?: string }).remoteAddress }, 'request refused before routing');
    const text = JSON.stringify(body);
    socket.end(
      `HTTP/1.1 ${status} ${reason}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(text)}\r\nConnection: close\r\n\r\n${text}`,
    );
  };
}

function clientErrorAnswer(code: string | undefined): [number, string, Record<string, string>] {
  if (code === 'ERR_HTTP_REQUEST_TIMEOUT') {
    return [408, 'Request Timeout', { detail: 'The request was not received in time.', code: 'request_timeout' }];
  }
  if (code === 'HPE_HEADER_OVERFLOW') {
    return [431, 'Request Header Fields Too Large', { detail: 'Request header fields are too large.', code: 'request_header_fields_too_large' }];
  }
  return [400, 'Bad Request', { detail: 'The request is not valid HTTP.', code: 'bad_request' }];
}
