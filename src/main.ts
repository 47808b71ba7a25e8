// `npm start`: configuration from the environment, recover state, then listen. SIGTERM and
// SIGINT stop accepting, finish in-flight requests, snapshot and close the store (src/cli/serve.ts,
// shared with the package's start command, src/cli/start.ts).
import { serveOnceLoaded } from './cli/early-signals.ts';
import { loadConfig, ConfigError } from './config.ts';

let config;
try {
  config = loadConfig();
} catch (error) {
  if (error instanceof ConfigError) {
    console.error(`Configuration error: ${error.message}`);
    process.exit(2);
  }
  throw error;
}
await serveOnceLoaded(config);
