import { Histogram, Registry } from 'prom-client';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { RequestDurations } from '../../src/http/metrics.ts';

const bounds = [0.001, 0.01, 0.1];

/** The same observations through RequestDurations and through prom-client's own Histogram, as text. */
async function bothTexts(observations: [method: string, route: string, status: number, seconds: number][]) {
  const ours = new Registry();
  const durations = new RequestDurations(bounds);
  ours.registerMetric(durations as unknown as Histogram);
  const theirs = new Registry();
  const histogram = new Histogram({ name: durations.name, help: durations.help, labelNames: ['method', 'route', 'status'], buckets: bounds, registers: [theirs] });
  for (const [method, route, status, seconds] of observations) {
    durations.observe(method, route, status, seconds);
    histogram.observe({ method: ['GET', 'POST'].includes(method) ? method : 'OTHER', route, status: String(status) }, seconds);
  }
  const lines = async (registry: Registry) => (await registry.metrics()).split('\n').filter(Boolean).sort();
  return { ours: await lines(ours), theirs: await lines(theirs), durations, registry: ours };
}

test('request durations expose what prom-client\'s Histogram exposes for the same observations', async () => {
  const { ours, theirs } = await bothTexts([
    ['GET', '/api/agents/:id', 200, 0.0004],
    ['GET', '/api/agents/:id', 200, 0.001], // on a bound: counted in it (le is "less or equal")
    ['GET', '/api/agents/:id', 200, 0.05],
    ['GET', '/api/agents/:id', 404, 0.002],
    ['POST', '/api/job-iterations', 201, 2.5], // over every bound: only +Inf
    ['PROPFIND', 'unmatched', 405, 0.003],
    ['MKCOL', 'unmatched', 405, 0.004], // unknown methods are one series, OTHER
  ]);
  assert.equal(ours, theirs);
  const other = ours.filter((line) => line.includes('method="OTHER"') && line.includes('le="0.01"'));
  assert.equal(other.map((line) => line.split(' ').at(-1)), ['2']);
});

test('request durations count per bucket, cumulatively, with their sum and count, and reset', async () => {
  const { durations, registry } = await bothTexts([
    ['GET', '/health', 200, 0.0005],
    ['GET', '/health', 200, 0.005],
    ['GET', '/health', 200, 0.5],
  ]);
  const { values } = await durations.get();
  const bucket = (le: number | string) => values.find((value) => value.metricName.endsWith('_bucket') && value.labels.le === le)!.value;
  assert.equal([bucket(0.001), bucket(0.01), bucket(0.1), bucket('+Inf')], [1, 2, 2, 3]);
  assert.is(values.find((value) => value.metricName.endsWith('_count'))!.value, 3);
  assert.ok(Math.abs(values.find((value) => value.metricName.endsWith('_sum'))!.value - 0.5055) < 1e-12);
  registry.resetMetrics();
  assert.equal((await durations.get()).values, []);
});

test.run();
