// `npm start`'s first step: compile the service to dist/ only when a source is newer than the last
// build (npm install builds it; this catches edits made since), so a start costs no compile.
import { execFileSync } from 'node:child_process';
import { readdirSync, statSync, utimesSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const buildInfo = join(root, 'dist/.tsbuildinfo');
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
if (sources > built) {
  console.error('compiling src/ to dist/ ...');
  execFileSync(process.execPath, [join(root, 'node_modules/typescript/bin/tsc'), '-p', join(root, 'tsconfig.build.json')], { stdio: 'inherit' });
  // tsc leaves its build info alone when no output changed: mark the build as current.
  const now = new Date();
  utimesSync(buildInfo, now, now);
}
