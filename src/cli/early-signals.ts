// The few hundred milliseconds before the service is running: its modules load, then serve()
// opens the store. A SIGTERM or SIGINT while the modules load ends the process at once with 0,
// as a stop at any later moment does (nothing is open yet); from its first line serve() takes
// the signals over itself. Without this, Node's default would end the process with 143 or 130.
// `npm start` (src/main.ts) and the start command (start.ts) both start this way.
import type { Config } from '../config.ts';
import type { ServeOptions } from './serve.ts';

/** Loads the service's modules (only now: a --help or a bad flag answers without them) and serves `config`. */
export async function serveOnceLoaded(config: Config, options?: ServeOptions): Promise<void> {
  const releaseSignals = exitOnSignalUntilServing();
  const { serve } = await import('./serve.ts');
  const served = serve(config, options);
  releaseSignals(); // serve() has taken them over
  await served;
}

/**
 * Until the returned function is called, SIGTERM and SIGINT exit with 0. It is called once
 * serve() has registered its own listeners (on its first, synchronous, step), so that the signals
 * are never left without one: removing the last listener gives a signal back to the default action.
 */
function exitOnSignalUntilServing(): () => void {
  const exitNow = () => process.exit(0);
  // SIGINT first: whoever sees the SIGTERM listener arrive (a test watches for it) knows both are there.
  process.on('SIGINT', exitNow);
  process.on('SIGTERM', exitNow);
  return () => {
    process.off('SIGTERM', exitNow);
    process.off('SIGINT', exitNow);
  };
}
