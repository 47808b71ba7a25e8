// The Koa application: the JSON error middleware first, then the router. It never listens;
// service.ts owns the server.
import Router from '@koa/router';
import Koa from 'koa';
import { jsonBodyReader, type BodyReader } from './http/body.ts';
import type { Deps } from './http/deps.ts';
import { errorMiddleware } from './http/errors.ts';
import { requestLogging } from './http/observability.ts';
import { agentRoutes } from './http/resources/agents.ts';
import { datasetRoutes } from './http/resources/datasets.ts';
import { healthRoutes } from './http/resources/health.ts';
import { identityRoutes } from './http/resources/identity.ts';
import { iterationRoutes } from './http/resources/iterations.ts';
import { jobRoutes } from './http/resources/jobs.ts';
import { projectRoutes } from './http/resources/projects.ts';
import { mountRoutes, type Route } from './http/route.ts';
import { traceRoutes } from './traces/routes.ts';

/** Every route the service serves, in one table. */
export function allRoutes(deps: Deps): Route[] {
  return [
    ...healthRoutes(deps),
    ...identityRoutes(deps),
    ...projectRoutes(deps),
    ...agentRoutes(deps),
    ...datasetRoutes(deps),
    ...jobRoutes(deps),
    ...iterationRoutes(deps),
    ...traceRoutes(deps),
  ];
}

export function createApp(deps: Deps): Koa {
  const app = new Koa();
  // Errors are answered and logged by errorMiddleware; Koa's own logging would repeat them.
  app.silent = true;
  app.use(requestLogging(deps.logger));
  app.use(errorMiddleware(deps.logger));
  const router = new Router();
  const { limits } = deps.config;
  const readers = new Map<number, BodyReader>();
  const readerFor = (bytesMax = limits.bodyBytesMax) => {
    let reader = readers.get(bytesMax);
    if (!reader) readers.set(bytesMax, (reader = jsonBodyReader(bytesMax, limits.jsonDepthMax)));
    return reader;
  };
  mountRoutes(router, allRoutes(deps), deps, readerFor);
  app.use(router.routes());
  app.use(router.allowedMethods());
  return app;
}
