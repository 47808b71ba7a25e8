// `npm start`: configuration from the environment, recover state, then listen. SIGTERM and
// SIGINT stop accepting, finish in-flight requests, snapshot and close the store (src/cli/serve.ts,
// shared with the package's start command, src/cli/start.ts).
import { serveOnceLoaded } from './cli/early-signals.ts';
import { loadConfig, ConfigError } from './config.ts';

// npm start is configured by the environment alone. An argument is a mistake (`worker`, or a flag
// meant for the package's command), refused rather than ignored while a second service starts.
const args = process.argv.slice(2);
if (args.length > 0) {
  console.error(
    `npm start takes no arguments (given: ${args.join(' ')}); its configuration comes from the environment (README, "Configuration").\n` +
      'The worker command is npm run worker -- <options> (or overmind-eval-service worker); flags such as --port are overmind-eval-service\'s (--help).',
  );
  process.exit(2);
}

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
