// One structured log line per request, tagged with a request id that is echoed in X-Request-Id
// (a client's own id is kept when it is reasonable), so a report from a user finds its log line.
import { randomUUID } from 'node:crypto';
import type { Middleware } from 'koa';
import type { Logger } from 'pino';

const acceptableRequestId = /^[\w.:-]{1,128}$/;

export interface RequestObserver {
  /** Called once per finished request with its route pattern, status and duration. */
  observe(method: string, route: string, status: number, seconds: number): void;
}

export function requestLogging(logger: Logger, observer?: RequestObserver): Middleware {
  return async (ctx, next) => {
    const started = process.hrtime.bigint();
    const given = ctx.get('X-Request-Id');
    const requestId = acceptableRequestId.test(given) ? given : randomUUID();
    ctx.state.requestId = requestId;
    ctx.set('X-Request-Id', requestId);
    try {
      await next();
    } finally {
      const seconds = Number(process.hrtime.bigint() - started) / 1e9;
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
