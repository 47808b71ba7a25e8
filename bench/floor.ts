// The floor: how close to the bare server Koa, @koa/router and koa-body alone come on this
// machine (bench/koa-floor-server.ts), measured as the service's figures are. Reported, not a
// target: it shows how much of a service figure's distance from the bare server is the stack's.
import { compareWithBare, comparisonNote, startBare, startChildServer, type Row } from './harness.ts';
import { iterationBodies } from './jobs.ts';

export async function run(): Promise<Row[]> {
  const bare = await startBare();
  const floor = await startChildServer('bench/koa-floor-server.ts');
  try {
    const get = await compareWithBare(bare, { url: `${floor.url}/api/agents/0b0b/`, serverPid: floor.pid, connections: 50 });
    const post = await compareWithBare(bare, {
      url: `${floor.url}/api/job-iterations/`,
      serverPid: floor.pid,
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      bodies: iterationBodies(['00000000-0000-4000-8000-000000000000']),
      connections: 50,
    });
    const row = (name: string, comparison: typeof get): Row => ({
      name,
      value: comparison.serviceRps,
      unit: 'req/s',
      ratio: comparison.ratio,
      target: 'reported',
      pass: comparison.failures === 0,
      note: comparisonNote(comparison),
    });
    return [
      row('floor: Koa + @koa/router, GET of a ready JSON text (50 connections)', get),
      row('floor: Koa + @koa/router + koa-body, POST of an iteration (50 connections)', post),
    ];
  } finally {
    await floor.stop();
    await bare.stop();
  }
}
