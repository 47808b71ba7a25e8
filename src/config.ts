// Configuration from the environment, frozen once at boot. Every limit the service enforces is
// named here (qualifier last: `pageSizeMax`), so that the limits table of docs/API.md has one source.
import { availableParallelism } from 'node:os';

export type StorageKind = 'lmdb' | 'memory';
export type LogLevel = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';

export interface Limits {
  /** Bytes of a JSON request body on ordinary routes. */
  bodyBytesMax: number;
  /** Bytes of a JSON request body on POST /api/datasets/ (100,000 datapoints must fit). */
  datasetBodyBytesMax: number;
  /** Bytes of an OTLP export request, after decompression. */
  traceBodyBytesMax: number;
  /** Spans in one OTLP export request. */
  spanBatchMax: number;
  /** Spans of exports waiting to be written before further exports get 503. */
  traceQueueSpansMax: number;
  /** Spans of waiting exports written together in one commit. */
  traceCommitSpansMax: number;
  /** Spans removed in one commit by retention pruning or a project's deletion. */
  tracePruneSpansMax: number;
  /** Spans in one trace's answer (GET /api/traces/{trace_id}/); span_count still counts them all. */
  traceDetailSpansMax: number;
  /** Spans one trace holds (in one project); new spans past it are refused (OTLP partial success). */
  spansPerTraceMax: number;
  /** Datapoints in one dataset. */
  datapointsPerDatasetMax: number;
  pageSizeDefault: number;
  pageSizeMax: number;
  /** Highest page number a list accepts; beyond it the answer is "Invalid page.". */
  pageNumberMax: number;
  /** Whitespace/comma-separated terms honoured in one `search`. */
  searchTermsMax: number;
  /** Fields honoured in one `ordering`. */
  orderingFieldsMax: number;
  /** Characters of a query string value that is matched or parsed. */
  queryValueCharsMax: number;
  /** Messages waiting in one actor's mailbox before it answers 503. */
  mailboxDepthMax: number;
  /** Messages decided together and written in one LMDB commit by one actor. */
  commitBatchMax: number;
  /**
   * Commits of one actor in flight at once: a busy actor decides its next messages while earlier
   * commits are being made durable, up to this many; then messages wait in its mailbox, to be
   * decided together once one is durable. Two let one commit be written while the one before it
   * is flushed (overlapping syncs); more only made each commit smaller, at a cost per commit.
   */
  commitsInFlightMax: number;
  /** Journal entries of one actor between two snapshots of it. */
  snapshotEvery: number;
  /**
   * Journal entries a snapshot covers removed in one commit; the rest go in the actor's next
   * commits (removing thousands at once held every write to the record behind one long commit).
   */
  journalRemovalsPerCommitMax: number;
  /** API keys one user may hold (active or not). */
  apiKeysPerUserMax: number;
  /** Members of one project. */
  membershipsPerProjectMax: number;
  /** Iterations of one job (a job's representation embeds them all). */
  iterationsPerJobMax: number;
  /** Nesting depth of a JSON request body (objects and arrays). */
  jsonDepthMax: number;
  /** Failed logins for one email in the window before further attempts get 429. */
  loginFailuresMax: number;
  /** Failed logins from one client address in the window before further attempts get 429. */
  loginFailuresPerAddressMax: number;
  loginFailureWindowSeconds: number;
  /** Emails and addresses the login throttle remembers. */
  loginThrottleKeysMax: number;
  /** Verified access tokens remembered, so a hot token is not re-verified on every call. */
  tokenCacheEntriesMax: number;
  /** Characters of JSON text kept for immutable records (datasets' datapoints, hot records). */
  jsonCacheCharsMax: number;
  /** Dataset diffs kept once computed, so that paging through a large diff does not redo it. */
  diffCacheEntriesMax: number;
  /** Bytes of list answers each list endpoint keeps to send again while what they show is unchanged. */
  listAnswerCacheBytesMax: number;
  /** Characters of either iteration's agent_code beyond which a comparison makes no code diff. */
  codeDiffCharsMax: number;
  /** Lines added plus removed beyond which a code diff is given up (its cost grows with their square). */
  codeDiffEditsMax: number;
  /** A job's progress page size when none is asked: a chart wants every point at once. */
  progressPageSizeDefault: number;
  progressPageSizeMax: number;
  /** Seconds a client may take to send a request's headers (a stalled client is cut off). */
  headersTimeoutSeconds: number;
  /** Seconds a client may take to send a whole request, body included (a 128 MiB dataset must fit). */
  requestTimeoutSeconds: number;
  /** Seconds an idle keep-alive connection stays open. */
  keepAliveTimeoutSeconds: number;
  /** Changes the event feed keeps for streams resuming with Last-Event-ID. */
  eventLogEventsMax: number;
  /** Characters of those changes (their rendered events) the feed keeps. */
  eventLogCharsMax: number;
  /** Event streams one user may hold open at once. */
  eventStreamsPerUserMax: number;
  /** Bytes waiting to be sent to one event stream before it is cut (a reader too slow to keep up). */
  eventStreamBufferBytesMax: number;
  /** Seconds between heartbeats on an event stream. */
  eventHeartbeatSeconds: number;
  /** Trace ids named in one spans.ingested event. */
  eventTraceIdsMax: number;
  /** Bytes of a POST /api/job-iterations/{id}/results/ body. */
  resultBodyBytesMax: number;
  /** Rows in one results batch. */
  resultRowsPerBatchMax: number;
  /** Characters of one result's `output` written as JSON. */
  resultOutputCharsMax: number;
  /** Numeric dimensions in one result's dimension_scores. */
  resultDimensionsMax: number;
  /** Distinct dimension names over one iteration's results (each is a column in memory). */
  resultDimensionsPerIterationMax: number;
  /** Attempts of one datapoint by one iteration: `attempt` is 0 .. this - 1. */
  attemptsPerDatapointMax: number;
  /** Results one iteration holds. */
  resultsPerIterationMax: number;
  /** Result rows waiting to be written before further batches get 503. */
  resultQueueRowsMax: number;
  /** Result rows of waiting batches written together in one commit. */
  resultCommitRowsMax: number;
  /** Result rows removed in one commit when their iteration is gone. */
  resultPurgeRowsMax: number;
  /** Result summaries kept once computed (each until its iteration's results change). */
  summaryCacheEntriesMax: number;
  /** Result comparisons kept once computed (each until either side's results change). */
  comparisonCacheEntriesMax: number;
  /** Worker threads for heavy answers (src/compute/). */
  computeThreadsMax: number;
  /** Heavy tasks waiting for a worker thread before further heavy requests get 503. */
  computeQueueMax: number;
  /** Work expected to take longer than this, in microseconds, runs on a worker thread. */
  computeInlineMicrosMax: number;
  /** Runs one job holds (ended ones included). */
  runsPerJobMax: number;
  /** Tasks in one run (iterations x datapoints x attempts). */
  tasksPerRunMax: number;
  /** Tasks handed out by one lease; also the in-flight cap of a run without max_in_flight. */
  tasksPerLeaseMax: number;
  /** Items in one completion (POST /api/workers/{id}/complete/). */
  completionItemsMax: number;
  /** Bytes of a completion's body. */
  completionBodyBytesMax: number;
  /** Milliseconds a lease may wait for a task (`wait_ms`). */
  leaseWaitMsMax: number;
  /** Leases waiting for a task in one project at once; past it a lease answers at once, empty. */
  leaseWaitersPerProjectMax: number;
  /** Seconds a lease may last (`lease_seconds`) before a heartbeat extends it. */
  leaseSecondsMax: number;
  /** Tries a task may be given (`max_tries`). */
  taskTriesMax: number;
  /** Workers registered in one project. */
  workersPerProjectMax: number;
  /** Milliseconds a failed try waits before its retry, doubled with each further try (times a jitter in [0.5, 1.5)). */
  runRetryDelayMs: number;
  /** The longest such wait, in milliseconds. */
  runRetryDelayMsMax: number;
}

export interface Config {
  host: string;
  port: number;
  dataDir: string;
  storage: StorageKind;
  /** JWT signing secret; when absent one is generated and kept in the store. */
  secretKey: string | undefined;
  logLevel: LogLevel;
  /** Days spans are kept; undefined keeps them forever. */
  traceRetentionDays: number | undefined;
  /** scrypt cost parameter N (a power of two). */
  passwordHashCost: number;
  /** Seconds an in-flight request may take to finish during a graceful stop. */
  shutdownGraceSeconds: number;
  /**
   * Checks that cost time on hot paths: every stored result row is read back as it is written
   * (DEBUG_CHECKS=1; the tests run with them).
   */
  debugChecks: boolean;
  limits: Limits;
}

export const defaultLimits: Readonly<Limits> = Object.freeze({
  bodyBytesMax: 2 * 1024 * 1024,
  datasetBodyBytesMax: 128 * 1024 * 1024,
  traceBodyBytesMax: 32 * 1024 * 1024,
  spanBatchMax: 10_000,
  traceQueueSpansMax: 65_536,
  traceCommitSpansMax: 8192,
  // A removal decision holds the event loop ~13 us per span (bench/retention.ts): 4,096 held it
  // 108 ms at p50 and up to 210 ms; 1,024 about 14 ms, and costs less per span.
  tracePruneSpansMax: 1024,
  traceDetailSpansMax: 10_000,
  // As many as a trace's answer shows: every stored span of a trace can be seen.
  spansPerTraceMax: 10_000,
  datapointsPerDatasetMax: 100_000,
  pageSizeDefault: 25,
  pageSizeMax: 100,
  pageNumberMax: 1_000_000,
  searchTermsMax: 16,
  orderingFieldsMax: 8,
  queryValueCharsMax: 1024,
  mailboxDepthMax: 1024,
  commitBatchMax: 256,
  commitsInFlightMax: 2,
  snapshotEvery: 256,
  journalRemovalsPerCommitMax: 256,
  apiKeysPerUserMax: 100,
  membershipsPerProjectMax: 1000,
  iterationsPerJobMax: 10_000,
  jsonDepthMax: 64,
  loginFailuresMax: 5,
  loginFailuresPerAddressMax: 50,
  loginFailureWindowSeconds: 900,
  loginThrottleKeysMax: 100_000,
  tokenCacheEntriesMax: 10_000,
  jsonCacheCharsMax: 64 * 1024 * 1024,
  diffCacheEntriesMax: 16,
  listAnswerCacheBytesMax: 4 * 1024 * 1024,
  codeDiffCharsMax: 1_000_000,
  codeDiffEditsMax: 1000,
  progressPageSizeDefault: 1000,
  progressPageSizeMax: 10_000,
  headersTimeoutSeconds: 10,
  requestTimeoutSeconds: 120,
  keepAliveTimeoutSeconds: 5,
  eventLogEventsMax: 10_000,
  eventLogCharsMax: 32 * 1024 * 1024,
  eventStreamsPerUserMax: 16,
  eventStreamBufferBytesMax: 1024 * 1024,
  eventHeartbeatSeconds: 15,
  eventTraceIdsMax: 100,
  resultBodyBytesMax: 16 * 1024 * 1024,
  resultRowsPerBatchMax: 1000,
  resultOutputCharsMax: 64 * 1024,
  resultDimensionsMax: 32,
  resultDimensionsPerIterationMax: 64,
  attemptsPerDatapointMax: 100,
  resultsPerIterationMax: 1_000_000,
  resultQueueRowsMax: 65_536,
  resultCommitRowsMax: 8192,
  resultPurgeRowsMax: 4096,
  summaryCacheEntriesMax: 256,
  comparisonCacheEntriesMax: 64,
  // Every core: the threads run below the event loop's priority (compute-worker.ts), so the event
  // loop keeps its core when it has work, and a comparison's bootstrap spreads over the rest.
  computeThreadsMax: availableParallelism(),
  computeQueueMax: 64,
  computeInlineMicrosMax: 2000,
  runsPerJobMax: 1000,
  tasksPerRunMax: 2_000_000,
  tasksPerLeaseMax: 1000,
  completionItemsMax: 1000,
  completionBodyBytesMax: 32 * 1024 * 1024,
  leaseWaitMsMax: 60_000,
  leaseWaitersPerProjectMax: 1024,
  leaseSecondsMax: 3600,
  taskTriesMax: 20,
  workersPerProjectMax: 1024,
  runRetryDelayMs: 1000,
  runRetryDelayMsMax: 60_000,
});

/** Environment variable for each limit: LIMIT_ + the name in SCREAMING_SNAKE_CASE. */
export function limitEnvName(name: keyof Limits): string {
  return 'LIMIT_' + name.replace(/[A-Z]/g, (c) => '_' + c).toUpperCase();
}

export class ConfigError extends Error {}

/**
 * What a run's body defaults to when it leaves these out (schemas/runs/run.json's `default`s;
 * test/http/runs-limits.test.ts checks they agree): a limit below one would refuse every run that
 * leaves the field out, for a field its client never sent.
 */
export const runDefaults = { leaseSeconds: 60, maxTries: 3 } as const;

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const limits = { ...defaultLimits };
  for (const name of Object.keys(defaultLimits) as (keyof Limits)[]) {
    const raw = env[limitEnvName(name)];
    if (raw !== undefined && raw !== '') limits[name] = positiveInteger(limitEnvName(name), raw);
  }
  if (limits.pageSizeDefault > limits.pageSizeMax) {
    throw new ConfigError('LIMIT_PAGE_SIZE_DEFAULT must not exceed LIMIT_PAGE_SIZE_MAX');
  }
  if (limits.progressPageSizeDefault > limits.progressPageSizeMax) {
    throw new ConfigError('LIMIT_PROGRESS_PAGE_SIZE_DEFAULT must not exceed LIMIT_PROGRESS_PAGE_SIZE_MAX');
  }
  if (limits.attemptsPerDatapointMax > 4096) {
    // A result's id holds its attempt in 12 bits (resultIdOf).
    throw new ConfigError('LIMIT_ATTEMPTS_PER_DATAPOINT_MAX must not exceed 4096');
  }
  if (limits.taskTriesMax > 255) {
    // A task's failed tries are counted in a byte (RunTasks.tries).
    throw new ConfigError('LIMIT_TASK_TRIES_MAX must not exceed 255');
  }
  if (limits.leaseSecondsMax < runDefaults.leaseSeconds) {
    throw new ConfigError(`LIMIT_LEASE_SECONDS_MAX must be at least ${runDefaults.leaseSeconds}, a run's default lease_seconds`);
  }
  if (limits.taskTriesMax < runDefaults.maxTries) {
    throw new ConfigError(`LIMIT_TASK_TRIES_MAX must be at least ${runDefaults.maxTries}, a run's default max_tries`);
  }
  if (limits.headersTimeoutSeconds > limits.requestTimeoutSeconds) {
    throw new ConfigError('LIMIT_HEADERS_TIMEOUT_SECONDS must not exceed LIMIT_REQUEST_TIMEOUT_SECONDS');
  }
  const storage = env.STORAGE ?? 'lmdb';
  if (storage !== 'lmdb' && storage !== 'memory') {
    throw new ConfigError(`STORAGE must be "lmdb" or "memory", not "${storage}"`);
  }
  const logLevel = (env.LOG_LEVEL ?? 'info') as LogLevel;
  if (!['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'].includes(logLevel)) {
    throw new ConfigError(`LOG_LEVEL "${logLevel}" is not a pino level`);
  }
  const retention = env.TRACE_RETENTION_DAYS;
  return Object.freeze({
    host: env.HOST || '127.0.0.1',
    port: env.PORT ? portNumber(env.PORT) : 8000,
    dataDir: env.DATA_DIR || './data',
    storage,
    secretKey: env.SECRET_KEY || undefined,
    logLevel,
    traceRetentionDays: retention ? positiveInteger('TRACE_RETENTION_DAYS', retention) : undefined,
    passwordHashCost: env.PASSWORD_HASH_COST ? powerOfTwo(env.PASSWORD_HASH_COST) : 16384,
    shutdownGraceSeconds: env.SHUTDOWN_GRACE_SECONDS
      ? positiveInteger('SHUTDOWN_GRACE_SECONDS', env.SHUTDOWN_GRACE_SECONDS)
      : 10,
    debugChecks: env.DEBUG_CHECKS === '1',
    limits: Object.freeze(limits),
  });
}

/**
 * A config for embedding and tests: defaults, with any field (or limit) overridden. An embedded
 * service logs warnings and errors only unless asked (`logLevel`): its request log would drown
 * the output of the program around it (a test runner's). npm start and the start command read
 * the environment (loadConfig), where the default is `info`.
 */
export function configWith(overrides: Partial<Omit<Config, 'limits'>> & { limits?: Partial<Limits> } = {}): Config {
  const base: Config = { ...loadConfig({}), logLevel: 'warn' };
  return Object.freeze({
    ...base,
    ...overrides,
    limits: Object.freeze({ ...base.limits, ...overrides.limits }),
  });
}

function positiveInteger(name: string, raw: string): number {
  const value = Number(raw);
  if (!Number.isSafeInteger(value) || value <= 0) {
    throw new ConfigError(`${name} must be a positive integer, not "${raw}"`);
  }
  return value;
}

function portNumber(raw: string): number {
  const value = Number(raw);
  if (!Number.isInteger(value) || value < 0 || value > 65535) {
    throw new ConfigError(`PORT must be an integer from 0 to 65535, not "${raw}"`);
  }
  return value;
}

function powerOfTwo(raw: string): number {
  const value = positiveInteger('PASSWORD_HASH_COST', raw);
  if ((value & (value - 1)) !== 0 || value < 2) {
    throw new ConfigError(`PASSWORD_HASH_COST must be a power of two, not "${raw}"`);
  }
  return value;
}
