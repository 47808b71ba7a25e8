// scratch: profile single-task lifecycles (not committed)
import { sendJson, signUp, startService, startLineChild, removeDir, processSeconds } from './harness.ts';
const batch = Number(process.argv[2] ?? 1);
const seconds = Number(process.argv[3] ?? 8);
const service = await startService({ env: { ...(process.env.STORE ? { STORAGE: process.env.STORE } : {}), ...(process.env.INFLIGHT ? { LIMIT_COMMITS_IN_FLIGHT_MAX: process.env.INFLIGHT } : {}), ...(process.env.SNAP ? { LIMIT_SNAPSHOT_EVERY: process.env.SNAP } : {}) } });
const { access, projectId } = await signUp(service.url, 'prof');
const post = (path: string, body: unknown) => sendJson(service.url, 'POST', path, body, access);
const agent = await post('/api/agents/', { name: 'runs', slug: 'runs', project: projectId });
const points = Array.from({ length: 20000 }, (_, i) => ({ input: { question: `case ${i}` }, expected_output: `answer ${i}` }));
const dataset = (await post('/api/datasets/', { agent: agent.id, datapoints: points })).id as string;
const job = await post('/api/jobs/', { agent: agent.id });
const iterations: string[] = [];
for (let i = 0; i < 20; i++) iterations.push((await post('/api/job-iterations/', { job: job.id, iteration_name: `c-${i}`, order: i, agent_code: 'x' })).id as string);
const workerIds: string[] = [];
for (let i = 0; i < 8; i++) workerIds.push((await post('/api/workers/', { name: `b-${i}` })).id as string);
await post(`/api/jobs/${job.id}/runs/`, { dataset, iterations });
const child = await startLineChild(['bench/run-workers.ts'], { input: JSON.stringify({ url: service.url, access, workers: workerIds, batch, chained: process.env.CHAINED === '1' }) });
for (let r = 0; r < 3; r++) {
  const before = processSeconds(service.pid);
  child.send(`go ${seconds}`);
  const { tasks, seconds: took } = JSON.parse(await child.next());
  console.log(`batch ${batch}: ${(tasks / took).toFixed(0)} tasks/s, ${(((processSeconds(service.pid) - before) * 1e6) / tasks).toFixed(1)} us CPU/task`);
}
await child.end();
await service.stop();
removeDir(service.dataDir);
