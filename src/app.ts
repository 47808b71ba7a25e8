// The Koa application: request logging, the JSON error middleware, then one router per
// resource. It never listens; service.ts owns the server.
import { constants as zlibConstants } from 'node:zlib';
import Router from '@koa/router';
import Koa, { type Middleware } from 'koa';
import compress from 'koa-compress';
import type { Logger } from 'pino';
import type { Registry } from './actors/registry.ts';
import type { Authenticator } from './auth/authenticate.ts';
import type { LoginThrottle } from './auth/login-throttle.ts';
import type { Tokens } from './auth/tokens.ts';
import type { Clock } from './clock.ts';
import type { ComputePool } from './compute/compute-pool.ts';
import type { Config } from './config.ts';
import type { ChangeFeed } from './events/change-feed.ts';
import type { JsonCache } from './json-cache.ts';
import { jsonBodyReader, type BodyReader } from './http/body.ts';
import { errorMiddleware } from './http/errors.ts';
import type { Lists } from './http/pages.ts';
import type { ServiceMetrics } from './http/metrics.ts';
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
import { runRoutes } from './http/resources/runs.ts';
import { workerRoutes } from './http/resources/workers.ts';
import { traceRoutes } from './http/resources/traces.ts';
import { mountRoutes, type RequestChecks, type Route } from './http/route.ts';
import type { ReadModel } from './read-model.ts';
import type { ResultIntake } from './results/result-intake.ts';
import type { ResultAnswers } from './results/result-answers.ts';
import type { ResultKeeper } from './results/result-keeper.ts';
import type { GoneVersions } from './runs/gone-versions.ts';
import type { RunDispatch } from './runs/run-dispatch.ts';
import type { RunPlacements } from './runs/run-placements.ts';
import type { RunRescorer } from './runs/run-rescore.ts';
import type { RunScoring } from './runs/run-scoring.ts';
import type { StoreHealth } from './store/health.ts';
import type { Kv } from './store/kv.ts';
import type { Tenancy } from './tenancy.ts';
import type { Traces } from './traces/traces.ts';
import type { Validator } from './validation/validator.ts';

/**
 * What a service is made of, each built once by createService. The app hands each part of itself
 * only the collaborators it uses, by name; the whole record is kept for embedding and tests
 * (Service.deps).
 */
export interface Collaborators {
  config: Config;
  kv: Kv;
  registry: Registry;
  readModel: ReadModel;
  validator: Validator;
  tokens: Tokens;
  authenticator: Authenticator;
  loginThrottle: LoginThrottle;
  health: StoreHealth;
  /** JSON text of immutable records, shared by the journal and responses. */
  jsonCache: JsonCache;
  /** Every list endpoint's pipeline: its query schema, page sizes and kept answers. */
  lists: Lists;
  /** Heavy answers, off the event loop (src/compute/). */
  compute: ComputePool;
  /** What each caller may see. */
  tenancy: Tenancy;
  /** Results per datapoint (src/results/). */
  results: ResultKeeper;
  /** How results are written, posted or carried by spans. */
  resultIntake: ResultIntake;
  /** What results add up to: summaries, comparisons, paired datapoints. */
  resultAnswers: ResultAnswers;
  /** Leased work: which run a worker's lease draws from, long polls, lease expiry (src/runs/). */
  dispatch: RunDispatch;
  /** Fails the runs of deleted dataset versions and agents; a delete answers once they are. */
  goneVersions: GoneVersions;
  /** Runs being created, their iterations held until their job decides. */
  placements: RunPlacements;
  /** Scoring on the server: each run's scorer, from its agent's eval spec or its scorers. */
  runScoring: RunScoring;
  /** Ended runs' results scored again in the background. */
  rescorer: RunRescorer;
  /** Spans: OTLP ingestion and span queries (src/traces/). */
  traces: Traces;
  /** Every committed change, for the event streams (GET /api/events/). */
  changes: ChangeFeed;
  /** Prometheus metrics of this service instance (GET /metrics). */
  metrics: ServiceMetrics;
  clock: Clock;
  logger: Logger;
}

/** Every route the service serves, in one table; each resource's routes get what they use by name. */
export function allRoutes(service: Collaborators): Route[] {
  const { config, registry, readModel, tenancy, lists, jsonCache, validator, clock } = service;
  const { results, resultIntake, resultAnswers, traces, changes } = service;
  const { limits } = config;
  const routes: Route[] = [
    ...healthRoutes({ health: service.health, clock, storage: config.storage }),
    ...identityRoutes({
      registry,
      readModel,
      tenancy,
      lists,
      clock,
      tokens: service.tokens,
      loginThrottle: service.loginThrottle,
      passwordHashCost: config.passwordHashCost,
    }),
    ...projectRoutes({ registry, readModel, tenancy, lists, clock }),
    ...agentRoutes({ registry, readModel, tenancy, lists, jsonCache, clock, goneVersions: service.goneVersions }),
    ...datasetRoutes({ registry, readModel, tenancy, lists, validator, compute: service.compute, jsonCache, clock, limits, goneVersions: service.goneVersions }),
    ...jobRoutes({ registry, readModel, tenancy, lists, clock, limits }),
    ...iterationRoutes({ registry, readModel, tenancy, lists, jsonCache, clock }),
    ...comparisonRoutes({ readModel, tenancy, lists, resultAnswers, compute: service.compute, limits }),
    ...resultRoutes({ readModel, tenancy, lists, results, resultIntake, resultAnswers, limits }),
    ...runRoutes({ registry, readModel, tenancy, lists, clock, limits, validator, results, resultIntake, dispatch: service.dispatch, placements: service.placements, runScoring: service.runScoring, rescorer: service.rescorer }),
    ...workerRoutes({ registry, readModel, tenancy, lists, jsonCache, clock, limits, validator, results, dispatch: service.dispatch, runScoring: service.runScoring }),
    ...traceRoutes({ registry, readModel, tenancy, traces, resultIntake, changes, validator, compute: service.compute, lists, clock, limits }),
    ...eventRoutes({ changes, tenancy, authenticator: service.authenticator, limits }),
  ];
  // The API document describes the whole table, its own routes included.
  routes.push(...docsRoutes({ validator, limits }, () => routes), ...metricsRoutes(service.metrics), ...consoleRoutes());
  return routes;
}

/** The OpenAPI document of a service, as its GET /api/schema/ answers it. */
export function apiDocument(service: Collaborators): OpenApiDocument {
  return apiDocumentOf(allRoutes(service), { validator: service.validator, limits: service.config.limits });
}

/** Media types worth compressing: JSON, the console's and Swagger UI's text files, the metrics; never the event stream. */
const compressibleType = /^(?:text\/(?!event-stream)|application\/(?:json|javascript)$|application\/[\w.+-]*\+json$|image\/svg\+xml$)/;

export function createApp(service: Collaborators): Koa {
  const { logger, metrics, authenticator, validator, config } = service;
  const app = new Koa();
  // Errors are answered and logged by errorMiddleware; Koa's own logging would repeat them.
  app.silent = true;
  app.use(requestLogging(logger, metrics));
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
  app.use(errorMiddleware(logger));
  app.use(routeByResource(allRoutes(service), { authenticator, validator, limits: config.limits }));
  return app;
}

/**
 * One router per resource (a path's first two segments, e.g. /api/agents). @koa/router tests
 * every route it holds on every request; grouped, a request only meets the few routes of its own
 * resource. Each group answers its own 405s with `Allow`.
 */
function routeByResource(routes: readonly Route[], checks: RequestChecks): Middleware {
  const { limits } = checks;
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
    mountRoutes(router, [route], checks, readerFor);
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
