// Results over the life of what they belong to: removed with their iteration, job, agent or
// project (answered no more at once, removed from the store in the background or at the next
// start), kept readable when their dataset version is deleted, durable across restarts, and
// announced once durable on the event feed.
import { rmSync } from 'node:fs';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { prefixEnd } from '../../src/store/kv.ts';
import type { Service } from '../../src/service.ts';
import { EventStreamReader } from '../helpers/event-stream.ts';
import { memberWithProject, type Member } from '../helpers/fixtures.ts';
import { createIteration } from '../helpers/job-fixtures.ts';
import { evaluated, resultsPath, summaryOf, writeResults } from '../helpers/result-fixtures.ts';
import { start, tempDataDir, withService } from '../helpers/service.ts';
import { until } from '../helpers/wait.ts';

/** Rows the store holds for an iteration, and whether its pin is stored. */
function stored(service: Service, iteration: string): { rows: number; pinned: boolean } {
  const { store } = service.deps.results;
  const rows = [...store.rows.keys({ start: [iteration], end: prefixEnd([iteration]) })].length;
  return { rows, pinned: store.pins.has([iteration]) };
}

async function withResults(member: Member, project: string, rows = 3) {
  const made = await evaluated(member.client, project, rows);
  await writeResults(member.client, made.iteration, {
    dataset: made.dataset.id,
    results: made.dataset.datapoints.map((point: any, i: number) => ({ datapoint: point.id, score: i / rows, output: { i } })),
  });
  return made;
}

test('deleting an iteration, a job, an agent or a project removes its results from the answers and the store', () =>
  withService(async ({ client, service }) => {
    const { member, project } = await memberWithProject(client);
    const gone = (iteration: string) => until(() => stored(service, iteration).rows === 0 && !stored(service, iteration).pinned, `the results of ${iteration} are removed`);

    const byIteration = await withResults(member, project.id);
    assert.equal(stored(service, byIteration.iteration.id), { rows: 3, pinned: true });
    await member.client.delete(`/api/job-iterations/${byIteration.iteration.id}/`);
    assert.is((await member.client.get(resultsPath(byIteration.iteration))).status, 404);
    await gone(byIteration.iteration.id);

    const byJob = await withResults(member, project.id);
    await member.client.delete(`/api/jobs/${byJob.job.id}/`);
    await gone(byJob.iteration.id);

    const byAgent = await withResults(member, project.id);
    const unrelated = await withResults(member, project.id);
    await member.client.delete(`/api/agents/${byAgent.agent.id}/`);
    // The agent's job and iteration stay (an agent's delete is soft), without results.
    assert.is((await member.client.get(`/api/job-iterations/${byAgent.iteration.id}/`)).status, 200);
    assert.is((await member.client.get(resultsPath(byAgent.iteration))).body.count, 0);
    await gone(byAgent.iteration.id);

    const other = await memberWithProject(client);
    const byProject = await withResults(other.member, other.project.id);
    await other.member.client.delete(`/api/projects/${other.project.id}/`);
    await gone(byProject.iteration.id);
    assert.equal(stored(service, unrelated.iteration.id), { rows: 3, pinned: true }, 'nothing else is touched');
    // The version's roster goes with the last pin to it.
    assert.is(service.deps.results.store.rosterDb.has([byIteration.dataset.id]), false);
    assert.is(service.deps.results.store.rosterDb.has([unrelated.dataset.id]), true);
  }));

test('results stay readable after their dataset version is deleted, and its version stays pinned', () =>
  withService(async ({ client }) => {
    const { member, project } = await memberWithProject(client);
    const { dataset, iteration } = await evaluated(member.client, project.id, 4);
    await writeResults(member.client, iteration, { dataset: dataset.id, results: [{ datapoint_order: 0, score: 1 }] });
    assert.is((await member.client.delete(`/api/datasets/${dataset.id}/`)).status, 204);
    const summary = await summaryOf(member.client, iteration);
    assert.equal([summary.dataset, summary.datapoints, summary.scored], [{ id: dataset.id, version: 1 }, 4, 1]);
    assert.equal(summary.missing.datapoints, dataset.datapoints.slice(1).map((point: any) => point.id));
    assert.is((await writeResults(member.client, iteration, { results: [{ datapoint: dataset.datapoints[2].id, score: 0 }] })).results_count, 2);
    assert.is((await member.client.get(resultsPath(iteration))).body.count, 2);
  }));

test('results survive a restart, and the removal of a deleted iteration resumes at the next start', async () => {
  const dataDir = tempDataDir();
  try {
    let running = await start({ lmdb: true, dataDir });
    const { member, project } = await memberWithProject(running.client);
    const kept = await withResults(member, project.id, 5);
    const doomed = await withResults(member, project.id, 5);
    const before = (await member.client.get(resultsPath(kept.iteration))).body;
    const detail = (await member.client.get(`${resultsPath(kept.iteration)}${before.results[1].id}/`)).body;
    const summary = await summaryOf(member.client, kept.iteration);
    // Deleted while the service is down: its rows are found at the next start and removed then.
    await running.stop({ keepData: true });
    running = await start({ lmdb: true, dataDir, limits: { resultPurgeRowsMax: 2 } });
    const again = running.client.as({ token: member.access });
    await again.delete(`/api/job-iterations/${doomed.iteration.id}/`);
    await running.service.close();
    running = await start({ lmdb: true, dataDir, limits: { resultPurgeRowsMax: 2 } });
    const third = running.client.as({ token: member.access });
    assert.equal((await third.get(resultsPath(kept.iteration))).body, before);
    assert.equal((await third.get(`${resultsPath(kept.iteration)}${before.results[1].id}/`)).body, detail);
    assert.equal(await summaryOf(third, kept.iteration), summary);
    await until(() => stored(running.service, doomed.iteration.id).rows === 0, 'the rows of the iteration deleted are removed');
    assert.is((await writeResults(third, kept.iteration, { results: [{ datapoint_order: 0, score: 0.5 }] })).replaced, 1);
    await running.stop({ keepData: true });
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
});

test('each durable batch is announced once on the event feed, with its counts, to those who may see it', () =>
  withService(async (running) => {
    const { member, project } = await memberWithProject(running.client);
    const stranger = await memberWithProject(running.client);
    const { dataset, job, iteration } = await evaluated(member.client, project.id, 3);
    const stream = await EventStreamReader.open(`${running.url}/api/events/?types=results.written`, { authorization: `Bearer ${member.access}` });
    const outsider = await EventStreamReader.open(`${running.url}/api/events/?types=results.written`, { authorization: `Bearer ${stranger.member.access}` });
    try {
      await writeResults(member.client, iteration, { dataset: dataset.id, results: [{ datapoint_order: 0, score: 1 }, { datapoint_order: 1, score: 0 }] });
      await writeResults(member.client, iteration, { results: [{ datapoint_order: 1, score: 1 }] });
      const refused = await member.client.post(resultsPath(iteration), { results: [{ datapoint_order: 9, score: 1 }] });
      assert.is(refused.status, 400);
      await stream.waitForCount(2);
      const events = stream.ofType('results.written').map((event) => event.data);
      const base = { iteration: iteration.id, job: job.id, project: project.id, dataset: dataset.id };
      assert.equal(events, [
        { ...base, created: 2, replaced: 0, results_count: 2 },
        { ...base, created: 0, replaced: 1, results_count: 2 },
      ]);
      assert.equal(outsider.ofType('results.written'), []);
    } finally {
      stream.close();
      outsider.close();
    }
  }));

test('a second iteration pinned to the same version keeps its roster when the first goes', () =>
  withService(async ({ client, service }) => {
    const { member, project } = await memberWithProject(client);
    const { dataset, job, iteration } = await evaluated(member.client, project.id, 2);
    const second = await createIteration(member.client, job.id);
    for (const one of [iteration, second]) await writeResults(member.client, one, { dataset: dataset.id, results: [{ datapoint_order: 0, score: 1 }] });
    await member.client.delete(`/api/job-iterations/${iteration.id}/`);
    await until(() => !stored(service, iteration.id).pinned, 'the first iteration is unpinned');
    assert.is(service.deps.results.store.rosterDb.has([dataset.id]), true);
    await member.client.delete(`/api/datasets/${dataset.id}/`);
    assert.is((await summaryOf(member.client, second)).datapoints, 2);
  }));

test.run();
