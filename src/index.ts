// The package's entry (`import { createService } from 'overmind-eval-service'`): the in-process
// API for embedding the whole service, in memory or on LMDB, in another program or test suite
// (docs/TESTING.md), and a worker that runs a run's tasks with a JavaScript function (runWorker,
// src/worker/handler-worker.ts). `overmind-eval-service` (src/cli/start.ts) is its start command,
// and `overmind-eval-service worker` its worker command.
export { createService, type Service, type ServiceOptions } from './service.ts';
export { loadConfig, configWith, defaultLimits, ConfigError, type Config, type Limits, type LogLevel, type StorageKind } from './config.ts';
export type { Clock } from './clock.ts';
export {
  runWorker,
  type Handler,
  type HandlerContext,
  type HandlerResult,
  type HandlerTask,
  type WorkerHandle,
  type WorkerOptions,
  type WorkerSummary,
} from './worker/handler-worker.ts';
export type { WorkerCounts, WorkerEnd } from './worker/worker-loop.ts';
