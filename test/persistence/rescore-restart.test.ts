// A rescoring stopped by a restart resumes after its last chunk and finishes: every result scored
// with the scoring it was started with, none twice in a way that shows (rows are replaced whole,
// keeping their ids).
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { memberWithProject } from '../helpers/fixtures.ts';
import { completeAll, createRun, lease, registerWorker, runOf, runSetup } from '../helpers/run-fixtures.ts';
import { start } from '../helpers/service.ts';
import { until } from '../helpers/wait.ts';

test('a rescoring interrupted by a stop resumes at the next start and completes', async () => {
  const first = await start({ lmdb: true });
  const { member, project } = await memberWithProject(first.client);
  const size = 3500;
  const setup = await runSetup(member.client, project.id, size, 1);
  const run = await createRun(member.client, setup, { scoring: { method: 'scorers', scorers: [{ type: 'contains', name: 'contains' }] } });
  const worker = await registerWorker(member.client);
  for (;;) {
    const tasks = await lease(member.client, worker, { max: 1000 });
    if (tasks.length === 0) break;
    // The datapoints expect "answer i": every other output holds it.
    await completeAll(member.client, worker, tasks, (task) => ({ output: task.datapoint.order % 2 === 0 ? `the answer ${task.datapoint.order}` : 'no idea' }));
  }
  assert.is((await runOf(member.client, run)).status, 'completed');
  const started = await member.client.post(`/api/runs/${run.id}/rescore/`, { scoring: { method: 'scorers', scorers: [{ type: 'similarity', name: 'similar' }] } });
  assert.is(started.status, 202, started.text);
  // Stopped at once: the chunk being written finishes, the rest waits for the next start.
  await first.stop({ keepData: true });
  const second = await start({ lmdb: true, dataDir: first.dataDir });
  try {
    const client = member.client.at(second.url);
    const stopped = (await runOf(client, run)).rescore;
    assert.ok(stopped.done < size, `interrupted at ${stopped.done} of ${size}`);
    await until(async () => (await runOf(client, run)).rescore.status === 'completed', 'the rescoring completes after the restart', 20_000);
    const rescore = (await runOf(client, run)).rescore;
    assert.equal([rescore.done, rescore.total], [size, size]);
    const rows = await client.listAll(`/api/job-iterations/${setup.iterations[0].id}/results/`);
    assert.is(rows.length, size);
    assert.ok(rows.every((row: any) => Object.keys(row.dimension_scores).join() === 'similar'), 'every row scored by the new scoring');
  } finally {
    await second.stop();
  }
});

test.run();
