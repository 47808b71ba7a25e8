// One structured log line per request, tagged with a request id that is echoed in X-Request-Id
// (a client's own id is kept when it is reasonable), so a report from a user finds its log line.
import { randomBytes } from 'node:crypto';
import type { Middleware } from 'koa';
import type { Logger } from 'pino';

const acceptableRequestId = /^[\w.:-]{1,128}$/;

/** Ids unique across restarts without a random draw per request: a process prefix and a counter. */
const processPrefix = randomBytes(6).toString('hex');
let requestCount = 0;
const nextRequestId = () => `${processPrefix}-${(++requestCount).toString(36)}`;

export interface RequestObserver {
  /** Called once per finished request with its route pattern, status and duration. */
  observe(method: string, route: string, status: number, seconds: number): void;
}

export function requestLogging(logger: Logger, observer?: RequestObserver): Middleware {
  return async (ctx, next) => {
    const started = performance.now();
    const given = ctx.req.headers['x-request-id'];
    const requestId = typeof given === 'string' && acceptableRequestId.test(given) ? given : nextRequestId();
    ctx.state.requestId = requestId;
    ctx.set('X-Request-Id', requestId);
    try {
      await next();
    } finally {
      const seconds = (performance.now() - started) / 1000;
      const route = (ctx as { _matchedRoute?: string })._matchedRoute ?? 'unmatched';
      observer?.observe(ctx.method, route, ctx.status, seconds);
      if (logger.isLevelEnabled('info')) {
        logger.info(
          { request_id: requestId, method: ctx.method, path: ctx.path, route, status: ctx.status, ms: Math.round(seconds * 1e6) / 1e3 },
          'request',
        );
      }
    }
  };
}
