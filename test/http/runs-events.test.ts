// A run on /api/events/: run.created and run.finished carry the run as GET /api/runs/{id}/ answers
// it; run.progress (done of total, the rate, the time left) is coalesced to a few a second however
// many tasks complete; only callers who may see the run's project hear of it.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { EventStreamReader } from '../helpers/event-stream.ts';
import { memberWithProject, type Member } from '../helpers/fixtures.ts';
import { completeAll, createRun, lease, registerWorker, runOf, runSetup } from '../helpers/run-fixtures.ts';
import { withService, type Running } from '../helpers/service.ts';

const runTypes = 'run.created,run.progress,run.finished';

async function openStream(running: Running, member: Member, query = `?types=${runTypes}`): Promise<EventStreamReader> {
  const reader = await EventStreamReader.open(`${running.url}/api/events/${query}`, { authorization: `Bearer ${member.access}` });
  assert.is(reader.status, 200);
  return reader;
}

/** Progress data fields, each of its type. */
function assertProgressShape(data: any, run: any): void {
  for (const key of ['run', 'job', 'status', 'counts', 'finished', 'total', 'rate', 'eta_seconds']) assert.ok(key in data, `run.progress carries ${key}`);
  assert.equal([data.run, data.job], [run.id, run.job]);
  assert.is(data.total, data.counts.total);
  assert.is(data.finished, data.counts.done + data.counts.dead + data.counts.skipped + data.counts.cancelled);
  assert.ok(data.rate === null || (typeof data.rate === 'number' && data.rate >= 0), `rate ${data.rate}`);
  assert.ok(data.eta_seconds === null || (typeof data.eta_seconds === 'number' && data.eta_seconds >= 0), `eta ${data.eta_seconds}`);
}

test('run.created, then run.progress, then run.finished: the run as the API answers it, and its last progress all done', () =>
  withService(async (running) => {
    const { member, project } = await memberWithProject(running.client);
    const stream = await openStream(running, member);
    try {
      const setup = await runSetup(member.client, project.id, 3, 1);
      const run = await createRun(member.client, setup);
      await stream.waitFor(() => stream.ofType('run.created').length === 1, 'run.created', 10_000);
      assert.equal(stream.ofType('run.created')[0]!.data, run);
      const worker = await registerWorker(member.client);
      await completeAll(member.client, worker, await lease(member.client, worker, { max: 3 }));
      await stream.waitFor(() => stream.ofType('run.finished').length === 1, 'run.finished', 10_000);
      assert.equal(stream.ofType('run.finished')[0]!.data, await runOf(member.client, run));
      assert.equal([stream.ofType('run.finished')[0]!.data.status, stream.ofType('run.finished')[0]!.data.reason], ['completed', 'all_done']);
      await stream.waitFor(() => stream.ofType('run.progress').some((event) => event.data.finished === 3), 'the last progress', 10_000);
      const progress = stream.ofType('run.progress');
      for (const event of progress) assertProgressShape(event.data, run);
      const last = progress.at(-1)!.data;
      assert.equal([last.status, last.finished, last.total, last.counts.done, last.eta_seconds], ['completed', 3, 3, 3, 0]);
      assert.is(stream.events[0]!.event, 'run.created');
      assert.equal(new Set(stream.events.map((event) => event.event)), new Set(['run.created', 'run.progress', 'run.finished']));
    } finally {
      stream.close();
    }
  }));

test('run.progress is coalesced: forty completions one by one make a few events, each later one with a rate and the time left at that rate', () =>
  withService(async (running) => {
    const { member, project } = await memberWithProject(running.client);
    const setup = await runSetup(member.client, project.id, 40, 1);
    const worker = await registerWorker(member.client);
    const stream = await openStream(running, member, `?types=run.progress&job=${setup.job.id}`);
    try {
      const started = performance.now();
      const run = await createRun(member.client, setup);
      const tasks = await lease(member.client, worker, { max: 40 });
      for (const task of tasks.slice(0, 20)) await completeAll(member.client, worker, [task]);
      // A pause longer than the coalescing interval: the next event has two samples to measure a rate.
      await new Promise((resolve) => setTimeout(resolve, 400));
      for (const task of tasks.slice(20, 30)) await completeAll(member.client, worker, [task]);
      await stream.waitFor(() => stream.events.some((event) => event.data.finished === 30), 'progress at 30 done', 10_000);
      const elapsed = performance.now() - started;
      const events = stream.events.map((event) => event.data);
      // At most one event per 250 ms (the creation's, the lease's and the completions' coalesced).
      assert.ok(events.length <= Math.ceil(elapsed / 250) + 2, `${events.length} events in ${Math.round(elapsed)} ms`);
      assert.ok(events.length >= 2, 'before and after the pause');
      for (const data of events) assertProgressShape(data, run);
      assert.equal(events.map((data) => data.finished), [...events.map((data) => data.finished)].sort((a, b) => a - b), 'finished only grows');
      const last = events.at(-1)!;
      assert.equal([last.status, last.finished, last.total, last.counts.leased, last.counts.queued], ['running', 30, 40, 10, 0]);
      assert.ok(last.rate > 0, `a rate once two samples are in (${last.rate})`);
      assert.ok(Math.abs(last.eta_seconds - 10 / last.rate) < 1e-9, 'the time left is what is left at that rate');
      assert.is(events[0]!.rate, null, 'no rate from one sample');
    } finally {
      stream.close();
    }
  }));

test("a cancel is run.finished with its reason; another project's member hears nothing of the run", () =>
  withService(async (running) => {
    const { member, project } = await memberWithProject(running.client);
    const stranger = await memberWithProject(running.client);
    const watching = await openStream(running, member);
    const outside = await openStream(running, stranger.member, '');
    try {
      const setup = await runSetup(member.client, project.id, 2, 1);
      const run = await createRun(member.client, setup);
      const cancelled = await member.client.post(`/api/runs/${run.id}/cancel/`, {});
      await watching.waitFor(() => watching.ofType('run.finished').length === 1, 'run.finished', 10_000);
      assert.equal(watching.ofType('run.finished')[0]!.data, cancelled.body);
      assert.equal([cancelled.body.status, cancelled.body.reason, cancelled.body.counts.cancelled], ['cancelled', 'cancelled', 2]);
      // The run's last progress is out (a quarter second after the cancel); then the stranger's own
      // write: when it arrives, the stranger's stream has caught up with everything before it.
      await watching.waitFor(() => watching.ofType('run.progress').some((event) => event.data.status === 'cancelled'), "the cancelled run's progress", 10_000);
      await stranger.member.client.patch(`/api/projects/${stranger.project.id}/`, { description: 'later' });
      await outside.waitFor(() => outside.events.some((event) => event.event === 'project.updated'), "the stranger's own event", 10_000);
      assert.equal(outside.events.map((event) => event.event), ['project.updated']);
    } finally {
      watching.close();
      outside.close();
    }
  }));

test.run();
