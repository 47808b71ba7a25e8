// Startup: a store of 1,000,000 records of every kind together (agents, datasets' datapoints,
// jobs, iterations) is seeded in its own process, then the service is started on it the way
// `npm start` starts it; the figure is the time from spawning the process to its first healthy
// answer, recovery included. `--quick` seeds a tenth as much.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { quick, removeDir, type Row, type SeedCounts, seedStore, startService } from './harness.ts';

const scale = quick ? 10 : 1;
const counts: Required<SeedCounts> = {
  agents: 1_000 / scale,
  datapointsPerAgent: 250,
  jobs: 68_000 / scale,
  iterationsPerJob: 10,
};
/** agents + their datasets + datapoints + jobs + iterations */
const records = counts.agents * (2 + counts.datapointsPerAgent) + counts.jobs * (1 + counts.iterationsPerJob);
const startupSecondsMax = 10;

export async function run(): Promise<Row[]> {
  const dataDir = mkdtempSync(join(tmpdir(), 'overmind-bench-startup-'));
  try {
    const seedStarted = performance.now();
    await seedStore(dataDir, counts);
    const seedSeconds = (performance.now() - seedStarted) / 1000;
    // Unpinned: recovery is measured as `npm start` runs it, with every core.
    const service = await startService({ dataDir, pinned: false });
    const seconds = service.startupMs / 1000;
    const rssMb = service.rssMb();
    await service.stop();
    return [
      {
        name: `startup with ${records.toLocaleString('en-US')} stored records (spawn to healthy)`,
        value: seconds,
        unit: 's',
        target: quick ? 'reported (quick)' : `<= ${startupSecondsMax} s`,
        pass: quick || seconds <= startupSecondsMax,
        note: `${counts.agents} agents with a ${counts.datapointsPerAgent}-datapoint dataset each, ${counts.jobs} jobs of ${counts.iterationsPerJob} iterations; RSS ${Math.round(rssMb)} MB; seeding ${seedSeconds.toFixed(0)} s`,
      },
    ];
  } finally {
    removeDir(dataDir);
  }
}
