// `npm test`'s runner: uvu over every test file (or those matching the pattern given), then a
// check that nothing was left running. uvu lets the process end by itself, so a server, child
// process or timer a test forgot to close would keep CI waiting after the results are printed;
// here leftovers are named, fail the run, and the process ends.
import { parse } from 'uvu/parse';
import { run } from 'uvu/run';

/** Resources that keep the event loop alive on purpose: the process's own stdio. */
const stdio = new Set(['TTYWrap', 'PipeWrap']);
const settleMs = 3000;

process.env.FORCE_COLOR ??= '1';
const pattern = process.argv[2] ?? '\\.test\\.ts$';
const { suites } = await parse('test', pattern);
await run(suites, { bail: false });

// Closing sockets and exiting children need a moment; anything still there after it leaked.
const deadline = performance.now() + settleMs;
let leftovers: string[] = [];
do {
  await new Promise((resolve) => setTimeout(resolve, 50));
  leftovers = process.getActiveResourcesInfo().filter((resource) => !stdio.has(resource));
} while (leftovers.length > 0 && performance.now() < deadline);
if (leftovers.length > 0) {
  console.error(`\nThe tests left these running: ${leftovers.join(', ')}`);
  process.exitCode = 1;
}
process.exit();
