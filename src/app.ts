// The Koa application: request logging, the JSON error middleware, then one router per
// resource. It never listens; service.ts owns the server.
import { constants as zlibConstants } from 'node:zlib';
import Router from '@koa/router';
import Koa, { type Middleware } from 'koa';
import compress from 'koa-compress';
import { jsonBodyReader, type BodyReader } from './http/body.ts';
import type { Deps } from './http/deps.ts';
import { errorMiddleware } from './http/errors.ts';
import { requestLogging } from './http/observability.ts';
import type { OpenApiDocument } from './http/openapi.ts';
import { agentRoutes } from './http/resources/agents.ts';
import { consoleRoutes } from './http/resources/console.ts';
import { datasetRoutes } from './http/resources/datasets.ts';
import { comparisonRoutes } from './http/resources/comparisons.ts';
import { apiDocumentOf, docsRoutes } from './http/resources/docs.ts';
import { eventRoutes } from './http/resources/events.ts';
import { healthRoutes } from './http/resources/health.ts';
import { identityRoutes } from './http/resources/identity.ts';
import { iterationRoutes } from './http/resources/iterations.ts';
import { jobRoutes } from './http/resources/jobs.ts';
import { metricsRoutes } from './http/resources/metrics.ts';
import { projectRoutes } from './http/resources/projects.ts';
import { resultRoutes } from './http/resources/results.ts';
import { traceRoutes } from './http/resources/traces.ts';
import { mountRoutes, type Route } from './http/route.ts';

/** Every route the service serves, in one table. */
export function allRoutes(deps: Deps): Route[] {
  const routes: Route[] = [
    ...healthRoutes(deps),
    ...identityRoutes(deps),
    ...projectRoutes(deps),
    ...agentRoutes(deps),
    ...datasetRoutes(deps),
    ...jobRoutes(deps),
    ...iterationRoutes(deps),
    ...comparisonRoutes(deps),
    ...resultRoutes(deps),
    ...traceRoutes(deps),
    ...eventRoutes(deps),
  ];
  // The API document describes the whole table, its own routes included.
  routes.push(...docsRoutes(deps, () => routes), ...metricsRoutes(deps), ...consoleRoutes());
  return routes;
}

/** The OpenAPI document of the service `deps` belong to, as GET /api/schema/ answers it. */
export function apiDocument(deps: Deps): OpenApiDocument {
  return apiDocumentOf(allRoutes(deps), deps);
}

/** Media types worth compressing: JSON, the console's and Swagger UI's text files, the metrics; never the event stream. */
const compressibleType = /^(?:text\/(?!event-stream)|application\/(?:json|javascript)$|application\/[\w.+-]*\+json$|image\/svg\+xml$)/;

export function createApp(deps: Deps): Koa {
  const app = new Koa();
  // Errors are answered and logged by errorMiddleware; Koa's own logging would repeat them.
  app.silent = true;
  app.use(requestLogging(deps.logger, deps.metrics));
  // Answers of 1 KiB or more are compressed when the client accepts it (error answers too: this
  // wraps errorMiddleware). The event stream never is: its route writes to ctx.res itself, so its
  // headers are sent before this runs, it says `no-transform`, and the filter leaves its type out.
  // Brotli at quality 4 (koa-compress's default; 11 took 0.5 s for the 155 KB API document and
  // 8.9 s for the 1.7 MB Swagger UI bundle) costs about what gzip's default level does (5 ms and
  // ~100 ms) for about its size (11.6% of the document against 11.4%, 25.8% of the bundle against
  // 26.6%); both run on zlib's threads, not the event loop.
  app.use(
    compress({
      threshold: 1024,
      filter: (type) => compressibleType.test(type),
      br: { params: { [zlibConstants.BROTLI_PARAM_QUALITY]: 4 } },
    }),
  );
  app.use(errorMiddleware(deps.logger));
  app.use(routeByResource(allRoutes(deps), deps));
  return app;
}

/**
 * One router per resource (a path's first two segments, e.g. /api/agents). @koa/router tests
 * every route it holds on every request; grouped, a request only meets the few routes of its own
 * resource. Each group answers its own 405s with `Allow`.
 */
function routeByResource(routes: readonly Route[], deps: Deps): Middleware {
  const { limits } = deps.config;
  const readers = new Map<number, BodyReader>();
  const readerFor = (bytesMax = limits.bodyBytesMax) => {
    let reader = readers.get(bytesMax);
    if (!reader) readers.set(bytesMax, (reader = jsonBodyReader(bytesMax, limits.jsonDepthMax)));
    return reader;
  };
  const routers = new Map<string, Router>();
  for (const route of routes) {
    const resource = resourceOf(route.path);
    let router = routers.get(resource);
    if (!router) routers.set(resource, (router = new Router()));
    mountRoutes(router, [route], deps, readerFor);
  }
  const handlers = new Map<string, Middleware>();
  for (const [resource, router] of routers) {
    const dispatch = router.routes() as unknown as Middleware;
    const allowedMethods = router.allowedMethods() as unknown as Middleware;
    handlers.set(resource, (ctx, next) => dispatch(ctx, () => allowedMethods(ctx, next)));
  }
  return (ctx, next) => {
    const handler = handlers.get(resourceOf(ctx.path));
    return handler ? handler(ctx, next) : next();
  };
}

/** "/api/agents/1/eval_spec/" -> "/api/agents"; "/health/" -> "/health". */
function resourceOf(path: string): string {
  const second = path.indexOf('/', 1);
  const third = second < 0 ? -1 : path.indexOf('/', second + 1);
  if (third >= 0) return path.slice(0, third);
  return path.endsWith('/') && path.length > 1 ? path.slice(0, -1) : path;
}
