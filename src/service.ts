// The embeddable service: open the store, recover every actor and the read model, build the app.
// `createService({ storage: 'memory' })` runs it all in-process with no disk and no port; main.ts
// adds a listening server and signal handling.
import { randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { resolve } from 'node:path';
import type Koa from 'koa';
import type { Logger } from 'pino';
import { Registry } from './actors/registry.ts';
import { createApp, type Collaborators } from './app.ts';
import { apiKeyUseRecorder } from './auth/api-key-use.ts';
import { Authenticator } from './auth/authenticate.ts';
import { LoginThrottle } from './auth/login-throttle.ts';
import { Tokens } from './auth/tokens.ts';
import { configWith, type Config, type Limits } from './config.ts';
import type { Clock } from './clock.ts';
import { clientErrorListener } from './http/errors.ts';
import { closingConnections, stopServer } from './http/graceful-stop.ts';
import { ServiceMetrics } from './http/metrics.ts';
import { Lists } from './http/pages.ts';
import { ChangeFeed } from './events/change-feed.ts';
import { ComputePool } from './compute/compute-pool.ts';
import { publishedChanges, publishedResults } from './http/published-changes.ts';
import { createLogger } from './log.ts';
import { ReadModel } from './read-model.ts';
import { StoreHealth } from './store/health.ts';
import { storeUpgrades } from './store-upgrades.ts';
import { JsonCache } from './json-cache.ts';
import { Journal } from './store/journal.ts';
import type { Kv } from './store/kv.ts';
import { LmdbKv } from './store/lmdb-kv.ts';
import { MemoryKv } from './store/memory-kv.ts';
import { ResultKeeper } from './results/result-keeper.ts';
import { ResultIntake } from './results/result-intake.ts';
import { ResultAnswers } from './results/result-answers.ts';
import { GoneVersions } from './runs/gone-versions.ts';
import { RunDispatch } from './runs/run-dispatch.ts';
import { RunPlacements } from './runs/run-placements.ts';
import { RunProgress } from './runs/run-progress.ts';
import { RunResults } from './runs/run-results.ts';
import { RunRescorer } from './runs/run-rescore.ts';
import { RunScoring } from './runs/run-scoring.ts';
import type { AgentEvent } from './domain/agent.ts';
import type { JobEvent } from './domain/job.ts';
import { Tenancy } from './tenancy.ts';
import { Traces } from './traces/traces.ts';
import { sharedValidator } from './validation/validator.ts';

export interface ServiceOptions extends Partial<Omit<Config, 'limits'>> {
  limits?: Partial<Limits>;
  /** A store to use instead of the configured one (tests: reopening, fault injection). */
  kv?: Kv;
  clock?: Clock;
  logger?: Logger;
}

export interface Service {
  readonly config: Config;
  readonly app: Koa;
  /** What the service is made of, by name (the registry, the read model, the stores...), for embedding and tests. */
  readonly deps: Collaborators;
  /** The request listener, for embedding in any Node HTTP server or test client. */
  readonly handler: ReturnType<Koa['callback']>;
  /** Starts an HTTP server (port 0 picks a free one). */
  listen(port?: number, host?: string): Promise<AddressInfo>;
  /** Stops accepting, finishes in-flight requests, snapshots every actor and closes the store. */
  close(): Promise<void>;
}

const systemClock: Clock = { nowMs: () => Date.now() };

export async function createService(options: ServiceOptions = {}): Promise<Service> {
  const { kv: givenKv, clock = systemClock, logger: givenLogger, ...settings } = options;
  const config = configWith(settings);
  const logger = givenLogger ?? createLogger(config.logLevel);
  const kv = givenKv ?? (config.storage === 'memory' ? new MemoryKv() : new LmdbKv(resolve(config.dataDir)));
  const journal = new Journal(kv);
  await journal.checkFormat(storeUpgrades);
  const health = new StoreHealth(kv);
  const recordStoreOutcome = (ok: boolean, error?: unknown) => {
    health.record(ok, error);
    if (!ok) logger.error({ err: error }, 'store write failed');
  };
  const readModel = new ReadModel();
  const jsonCache = new JsonCache(config.limits.jsonCacheCharsMax);
  const traces = new Traces({ kv, config, clock, logger, outcome: recordStoreOutcome });
  const placements = new RunPlacements();
  const results = new ResultKeeper({
    kv,
    limits: config.limits,
    logger,
    outcome: recordStoreOutcome,
    checkCodec: config.debugChecks,
    // Results are wanted while their iteration lives and their version's agent is not deleted.
    isLive: (iteration, roster) => readModel.iterations.get(iteration) !== undefined && readModel.agents.get(roster.agent) !== undefined,
    writingRun: (iteration) => {
      const record = readModel.iterations.get(iteration);
      return (record ? readModel.liveRunOf(record)?.id : undefined) ?? placements.runOf(iteration);
    },
  });
  // Event ids grow across restarts too: each process starts numbering at the clock's microseconds.
  const changes = new ChangeFeed(config.limits, clock.nowMs() * 1000);
  const runResults = new RunResults(results);
  // Made once the registry has recovered (they read what it recovered); no commit applies before.
  let runs: { dispatch: RunDispatch; progress: RunProgress; answers: ResultAnswers; goneVersions: GoneVersions } | undefined;
  const started = clock.nowMs();
  const registry = Registry.recover({
    journal,
    readModel,
    limits: config.limits,
    storeOutcome: recordStoreOutcome,
    projectDeleted: (projectId) => {
      traces.forgetProject(projectId);
      runs?.dispatch.forgetGone();
    },
    jsonText: (value) => jsonCache.text(value),
    changed: (committed) => {
      // A run's last rows and progress are announced before its end.
      if (committed.some((change) => change.type === 'run.finished')) runs?.progress.flush();
      changes.publish(publishedChanges(committed, readModel, jsonCache));
      if (committed.some((change) => change.type.endsWith('.deleted'))) results.sweepSoon();
    },
    // A run's completed tasks write their result rows in the commit that marks them done.
    alongside: (kind, _id, events) => (kind === 'job' ? runResults.opsOf(events as JobEvent[]) : []),
    applied: (kind, _id, events) => {
      if (!runs) throw new Error('a commit applied before the runs were followed');
      if (kind === 'job') {
        const written = runResults.apply(events as JobEvent[]);
        runs.progress.wrote(written);
        for (const { iteration } of written) runs.answers.prepare(iteration);
        runs.dispatch.applied(events as JobEvent[]);
      } else if (kind === 'agent') {
        runs.goneVersions.followAgent(events as AgentEvent[]);
      }
    },
    // A new run's tasks go to waiting leases in the commit that creates it.
    // A failure here only loses the early hand-out: the leases are served once the run is durable.
    decided: (kind, _id, events) => {
      if (kind !== 'job') return;
      try {
        runs?.dispatch.decided(events as JobEvent[]);
      } catch (error) {
        logger.error({ err: error }, 'serving waiting leases from a run being created failed');
      }
    },
  });
  results.load();
  // Before anything writes in the background: the store reopens underneath.
  await kv.releaseRecoveryPages();
  traces.start((projectId) => readModel.projects.get(projectId) !== undefined);
  results.start();
  logger.info({ ms: clock.nowMs() - started, ...registry.counts(), storage: kv.kind }, 'state recovered');
  const tokens = new Tokens(config.secretKey ?? (await storedSecret(journal)), config.limits.tokenCacheEntriesMax, () =>
    Math.floor(clock.nowMs() / 1000),
  );
  const keyUsed = apiKeyUseRecorder({
    ask: (command) => registry.identity.ask(command),
    nowMs: clock.nowMs,
    failed: (error) => logger.debug({ err: error }, 'could not record API key use'),
  });
  const validator = sharedValidator();
  const compute = new ComputePool(config.limits);
  const resultAnswers = new ResultAnswers(results.store, compute, config.limits);
  resultAnswers.prepare();
  const progress = new RunProgress({
    readModel,
    clock,
    publish: (published) => changes.publish(published),
    resultsWritten: (iteration, written) => {
      const record = readModel.iterations.get(iteration);
      const table = results.store.table(iteration);
      if (!record || !table) return null;
      return publishedResults(record, { roster: table.roster, created: written.created, replaced: written.replaced, results: table.rows }, readModel);
    },
  });
  const dispatch = new RunDispatch({ registry, readModel, clock, limits: config.limits, progressed: (run) => progress.progressed(run) });
  const goneVersions = new GoneVersions({ registry, readModel, clock, logger });
  runs = { dispatch, progress, answers: resultAnswers, goneVersions };
  const resultIntake = new ResultIntake({
    results,
    readModel,
    gates: registry.gates,
    clock,
    limits: config.limits,
    validator,
    written: (iteration, written) => {
      changes.publish([publishedResults(iteration, written, readModel)]);
      resultAnswers.prepare(iteration.id);
    },
  });
  const runScoring = new RunScoring({ readModel, spans: traces.store });
  const rescorer = new RunRescorer({
    registry,
    readModel,
    results,
    intake: resultIntake,
    scoring: runScoring,
    clock,
    limits: config.limits,
    failed: (run, error) => logger.error({ err: error, run }, 'a rescoring stopped; it resumes at the next start'),
  });
  rescorer.resumeAll();
  goneVersions.sweep();
  const deps: Collaborators = {
    config,
    kv,
    registry,
    readModel,
    compute,
    resultAnswers,
    tenancy: new Tenancy(readModel, registry.gates),
    results,
    dispatch,
    goneVersions,
    placements,
    runScoring,
    rescorer,
    resultIntake,
    validator,
    tokens,
    authenticator: new Authenticator({ readModel, tokens, nowMs: clock.nowMs, keyUsed }),
    loginThrottle: new LoginThrottle(config.limits),
    health,
    traces,
    changes,
    metrics: new ServiceMetrics({
      busyActors: () => registry.busyActors(),
      actorCommits: () => registry.commitsByKind(),
      storeBytes: () => kv.stats().bytes,
      storeHealthy: () => health.isHealthy,
      spansStored: () => traces.spansStored,
      spanResults: () => resultIntake.fromSpans,
    }),
    jsonCache,
    lists: new Lists(validator, config.limits, jsonCache),
    clock,
    logger,
  };
  const app = createApp(deps);
  const handler = app.callback();
  const connections = closingConnections(handler);
  let server: Server | undefined;
  let closing: Promise<void> | undefined;

  return {
    config,
    app,
    deps,
    handler,
    listen(port = config.port, host = config.host) {
      const { headersTimeoutSeconds, requestTimeoutSeconds, keepAliveTimeoutSeconds } = config.limits;
      // Deliberate timeouts: a slow or stalled client cannot hold a connection for long. Node
      // looks for expired headers and requests every connectionsCheckingInterval (30 s by
      // default); looking every second cuts a client off within a second of its limit.
      server = createServer(
        {
          headersTimeout: headersTimeoutSeconds * 1000,
          requestTimeout: requestTimeoutSeconds * 1000,
          keepAliveTimeout: keepAliveTimeoutSeconds * 1000,
          connectionsCheckingInterval: 1000,
        },
        connections.handle,
      );
      server.on('connection', connections.track);
      server.on('clientError', clientErrorListener(logger));
      const listening = server;
      return new Promise((resolvePromise, reject) => {
        listening.once('error', reject);
        listening.listen(port, host, () => resolvePromise(listening.address() as AddressInfo));
      });
    },
    close() {
      closing ??= (async () => {
        // Event streams never finish by themselves: end them so the server can close; leases
        // waiting for a task are answered now.
        changes.close();
        dispatch.close();
        progress.close();
        await rescorer.close();
        if (server) await stopServer(server, connections, config.shutdownGraceSeconds * 1000);
        await traces.close();
        await results.close();
        await compute.close();
        await registry.close();
        await kv.close();
      })();
      return closing;
    },
  };
}

/** The JWT secret kept in the store, generated on first start so tokens survive restarts. */
async function storedSecret(journal: Journal): Promise<string> {
  const existing = journal.meta.get<string>(['secret']);
  if (existing) return existing;
  const secret = randomBytes(48).toString('base64url');
  await journal.kv.write([{ db: journal.meta, key: ['secret'], value: secret }]);
  return secret;
}

