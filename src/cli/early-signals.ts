// The few hundred milliseconds before the service is running: its modules load, then serve()
// opens the store. A SIGTERM or SIGINT while the modules load ends the process at once with 0,
// as a stop at any later moment does (nothing is open yet); from its first line serve() takes
// the signals over itself. Without this, Node's default would end the process with 143 or 130.

/**
 * Until the returned function is called, SIGTERM and SIGINT exit with 0. Call it once serve()
 * has registered its own listeners (on its first, synchronous, step), so that the signals are
 * never left without one: removing the last listener gives a signal back to the default action.
 */
export function exitOnSignalUntilServing(): () => void {
  const exitNow = () => process.exit(0);
  process.on('SIGTERM', exitNow);
  process.on('SIGINT', exitNow);
  return () => {
    process.off('SIGTERM', exitNow);
    process.off('SIGINT', exitNow);
  };
}
