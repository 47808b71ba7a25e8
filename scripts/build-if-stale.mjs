// Compiles the service to dist/ when it needs it, for `npm start` (prestart), `npm run backup` and
// `npm run restore`: only when a source is newer than the last build (npm install builds it; this
// catches edits made since), so a start costs no compile.
//
// `--install` is npm install's step (prepare): it compiles whenever the compiler is there.
//
// The compiler is a dev dependency. A production install (`npm ci --omit=dev`) has none: there a
// current dist/ is used as it is, and a missing or stale one stops `npm start` with what to do
// (build with the dev dependencies first; `npm ci --omit=dev` leaves dist/ in place). The install
// itself only says so and succeeds, since dist/ may be copied in after it (a container's build
// stage).
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, statSync, utimesSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const atInstall = process.argv.includes('--install');
const buildInfo = join(root, 'dist/.tsbuildinfo');
const compiler = join(root, 'node_modules/typescript/bin/tsc');
const built = (() => {
  try {
    return statSync(buildInfo).mtimeMs;
  } catch {
    return 0;
  }
})();

/** The newest modification time under `dir`. */
function newest(dir) {
  let latest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    latest = Math.max(latest, entry.isDirectory() ? newest(path) : statSync(path).mtimeMs);
  }
  return latest;
}

const sources = Math.max(newest(join(root, 'src')), statSync(join(root, 'tsconfig.build.json')).mtimeMs, statSync(join(root, 'tsconfig.json')).mtimeMs);
const state = built === 0 ? 'missing' : sources > built ? 'stale' : 'current';

if (existsSync(compiler)) {
  if (atInstall || state !== 'current') {
    if (!atInstall) console.error('compiling src/ to dist/ ...');
    execFileSync(process.execPath, [compiler, '-p', join(root, 'tsconfig.build.json')], { stdio: 'inherit' });
    // tsc leaves its build info alone when no output changed: mark the build as current.
    const now = new Date();
    utimesSync(buildInfo, now, now);
  }
} else if (state !== 'current') {
  const what = state === 'missing' ? 'dist/ is not built' : 'dist/ is older than src/';
  const fix =
    'Build it with the dev dependencies installed (npm ci compiles it), then install for production ' +
    '(npm ci --omit=dev leaves dist/ in place), or copy a current dist/ in.';
  if (atInstall) {
    console.error(`${what} and the TypeScript compiler (a dev dependency) is not installed: npm start will refuse to run until it is built. ${fix}`);
  } else {
    console.error(`Cannot start: ${what}, and the TypeScript compiler (a dev dependency) is not installed to compile it. ${fix}`);
    process.exit(1);
  }
}
