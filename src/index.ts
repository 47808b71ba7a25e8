// The package's entry (`import { createService } from 'overmind-eval-service'`): the in-process
// API for embedding the whole service, in memory or on LMDB, in another program or test suite
// (docs/TESTING.md). `overmind-eval-service` (src/cli/start.ts) is its start command.
export { createService, type Service, type ServiceOptions } from './service.ts';
export { loadConfig, configWith, defaultLimits, ConfigError, type Config, type Limits, type LogLevel, type StorageKind } from './config.ts';
export type { Clock } from './clock.ts';
