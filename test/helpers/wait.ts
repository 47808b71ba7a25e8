// Waiting for something a service does in the background, without fixed sleeps.
import * as assert from 'uvu/assert';

/** Polls `condition` every 5 ms until it holds; fails the test with `what` after `timeoutMs`. */
export async function until(condition: () => boolean | Promise<boolean>, what: string, timeoutMs = 2000): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  while (!(await condition())) {
    if (performance.now() > deadline) assert.unreachable(`not within ${timeoutMs} ms: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}
