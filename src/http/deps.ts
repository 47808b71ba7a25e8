// Everything a route handler may use, built once per service.
import type { Logger } from 'pino';
import type { Registry } from '../actors/registry.ts';
import type { Authenticator } from '../auth/authenticate.ts';
import type { LoginThrottle } from '../auth/login-throttle.ts';
import type { Tokens } from '../auth/tokens.ts';
import type { Clock } from '../clock.ts';
import type { Config } from '../config.ts';
import type { ChangeFeed } from '../events/change-feed.ts';
import type { JsonCache } from '../json-cache.ts';
import type { ReadModel } from '../read-model.ts';
import type { StoreHealth } from '../store/health.ts';
import type { Kv } from '../store/kv.ts';
import type { Tenancy } from '../tenancy.ts';
import type { ComputePool } from '../compute/compute-pool.ts';
import type { Results } from '../results/results.ts';
import type { ResultIntake } from '../results/result-intake.ts';
import type { ResultViews } from '../results/result-views.ts';
import type { Traces } from '../traces/traces.ts';
import type { Validator } from '../validation/validator.ts';
import type { ServiceMetrics } from './metrics.ts';

export interface Deps {
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
  /** Heavy answers, off the event loop (src/compute/). */
  compute: ComputePool;
  /** What each caller may see. */
  tenancy: Tenancy;
  /** Results per datapoint (src/results/). */
  results: Results;
  /** How results are written, posted or carried by spans. */
  resultIntake: ResultIntake;
  /** What results add up to: summaries, comparisons, paired datapoints. */
  resultViews: ResultViews;
  /** Spans: OTLP ingestion and span queries (src/traces/). */
  traces: Traces;
  /** Every committed change, for the event streams (GET /api/events/). */
  changes: ChangeFeed;
  /** Prometheus metrics of this service instance (GET /metrics). */
  metrics: ServiceMetrics;
  clock: Clock;
  logger: Logger;
}

/** What one part of the HTTP layer uses of Deps: each names the few members it needs. */
export type Uses<K extends keyof Deps> = Pick<Deps, K>;
