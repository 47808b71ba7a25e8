// `npm run bench` (add `-- --quick` for a short smoke run): every benchmark of the service, each
// figure printed against its target. Benchmarks are scripts, not tests: machines here are shared,
// so throughput is judged as a ratio to a bare Node server measured in the same run.
import { placement, printRows, roundSeconds, rounds, type Row } from './harness.ts';

const suites: { name: string; load: () => Promise<{ run: () => Promise<Row[]> }> }[] = [
  { name: 'floor', load: () => import('./floor.ts') },
  { name: 'agents', load: () => import('./agents.ts') },
  { name: 'jobs', load: () => import('./jobs.ts') },
  { name: 'traces', load: () => import('./traces.ts') },
  { name: 'retention', load: () => import('./retention.ts') },
  { name: 'events', load: () => import('./events.ts') },
  { name: 'views', load: () => import('./views.ts') },
  { name: 'results', load: () => import('./results.ts') },
  { name: 'heavy', load: () => import('./heavy.ts') },
  { name: 'startup', load: () => import('./startup.ts') },
  { name: 'package', load: () => import('./package.ts') },
  { name: 'runs', load: () => import('./runs.ts') },
  // The store's synced commit alone, each way lmdb-js can write it (what bounds one task a lease).
  { name: 'commits', load: () => import('./store-commits.ts') },
  // The worker command, the handler worker; scoring on the server adds its row in bench/workers.ts.
  { name: 'workers', load: () => import('./workers.ts') },
  // Racing candidates: the simulation's savings, the service's work per completion, one real race.
  { name: 'races', load: () => import('./races.ts') },
];

const only = process.argv.slice(2).filter((arg) => !arg.startsWith('--'));
console.log(`${placement}; throughput: median of ${rounds} alternating ${roundSeconds}-second rounds against the bare server`);
const rows: Row[] = [];
for (const suite of suites) {
  if (only.length > 0 && !only.includes(suite.name)) continue;
  console.log(`\n== ${suite.name} ==`);
  const suiteRows = await (await suite.load()).run();
  printRows(suiteRows);
  rows.push(...suiteRows);
}
console.log('\n== summary ==');
printRows(rows);
const short = rows.filter((row) => !row.pass).length;
console.log(`\n${rows.length - short} of ${rows.length} figures meet their targets`);
