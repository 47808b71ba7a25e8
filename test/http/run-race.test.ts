// Races over HTTP on the real store: a run's candidates against an incumbent, each candidate's
// paired differences fed in the run's seeded order to its confidence sequence at alpha over the
// candidates, a candidate stopped (worse, cannot_win, better) has its queued tasks skipped while
// its leased ones finish, and its iteration marked discard; the bounds are exactly those of the
// sequence fed the same pairs, before and after a restart.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { confidenceSequenceBounds, initialRaceSequence, updateConfidenceSequence, type ConfidenceSequenceState } from '../../src/stats/index.ts';
import type { Client } from '../helpers/client.ts';
import { memberWithProject, registerUser } from '../helpers/fixtures.ts';
import { complete, completeAll, createRun, lease, registerWorker, runOf, runSetup, tasksOf, type RunSetup } from '../helpers/run-fixtures.ts';
import { start, withService } from '../helpers/service.ts';

/** Scores by iteration name order: the incumbent (0) scores by datapoint, the others by their own rule. */
type Scorer = (iteration: number, order: number) => number;

/** Leases everything ready and completes it with `score`, in lease order (the run's order), in batches of `batch`. */
async function runTasks(client: Client, worker: { id: string }, setup: RunSetup, score: Scorer, batch = 1000): Promise<any[]> {
  const index = (task: any) => setup.iterations.findIndex((it) => it.id === task.iteration.id);
  const tasks = await lease(client, worker, { max: 1000 });
  for (let i = 0; i < tasks.length; i += batch) {
    const reply = await complete(client, worker, tasks.slice(i, i + batch).map((task) => ({ task: task.id, lease: task.lease, score: score(index(task), task.datapoint.order) })));
    assert.is(reply.status, 200, reply.text);
  }
  return tasks;
}

/** The bounds an independent feed of the same pairs gives: differences in the run's datapoint order. */
function expectedBounds(settings: Parameters<typeof initialRaceSequence>[0], differences: number[]): { low: number; high: number; sequence: ConfidenceSequenceState } {
  let sequence = initialRaceSequence(settings);
  for (const difference of differences) sequence = updateConfidenceSequence(sequence, difference);
  return { ...confidenceSequenceBounds(sequence), sequence };
}

/** The datapoints' orders as leases handed them out (the run's seeded order), each once. */
function handOutOrder(leased: readonly any[]): number[] {
  const seen: number[] = [];
  for (const task of leased) if (!seen.includes(task.datapoint.order)) seen.push(task.datapoint.order);
  return seen;
}

test('a clearly worse candidate is stopped once its upper bound is below 0: its queued tasks skipped, its iteration discarded; an equal one runs to the end', () =>
  withService(async ({ client }) => {
    const { member, project } = await memberWithProject(client);
    const setup = await runSetup(member.client, project.id, 40, 3);
    const [incumbent, worse, equal] = setup.iterations;
    const run = await createRun(member.client, setup, { race: { incumbent: incumbent.id, score_range: [0, 1] }, max_in_flight: 3 });
    assert.equal([run.order, run.race.alpha, run.race.min_pairs, run.race.stop_better, run.race.score_range], ['shuffled', 0.05, 10, false, [0, 1]]);
    assert.equal(run.race.candidates.map((c: any) => [c.iteration, c.state, c.pairs]), [[worse.id, 'live', 0], [equal.id, 'live', 0]]);
    const worker = await registerWorker(member.client);
    const score: Scorer = (iteration, order) => (iteration === 1 ? 0.1 : 0.6 + (order % 4) / 10);
    // Three tasks at a time: one datapoint's incumbent, worse and equal tasks.
    const leased: any[] = [];
    for (let round = 0; round < 40; round++) {
      const tasks = await lease(member.client, worker, { max: 3 });
      if (tasks.length === 0) break;
      leased.push(...tasks);
      await completeAll(member.client, worker, tasks, (task) => ({ score: score(setup.iterations.findIndex((it) => it.id === task.iteration.id), task.datapoint.order) }));
    }
    const ended = await runOf(member.client, run);
    const [worseState, equalState] = ended.race.candidates;
    assert.is(worseState.state, 'worse');
    assert.ok(worseState.stopped_at >= 10 && worseState.stopped_at < 40, `stopped at ${worseState.stopped_at}`);
    assert.ok(worseState.high < 0);
    assert.equal(worseState.stop.method, 'confidence_sequence');
    assert.equal([worseState.stop.alpha, worseState.stop.datapoints, worseState.stop.bound], [0.05 / 2, 40, worseState.high]);
    assert.equal([equalState.state, equalState.pairs, equalState.stopped_at], ['finished', 40, null]);
    assert.is(equalState.low, equalState.high, 'every datapoint paired: the bounds are the exact mean');
    assert.equal([ended.status, ended.reason], ['completed', 'all_done']);
    assert.is(ended.counts.skipped, 40 - worseState.stopped_at, 'the worse candidate\'s tasks after its stop were not run');
    assert.is(ended.race.tasks_saved, ended.counts.skipped);
    assert.is((await member.client.get(`/api/job-iterations/${worse.id}/`)).body.status, 'discard');
    assert.is((await member.client.get(`/api/job-iterations/${equal.id}/`)).body.status, null);
    // The bounds are the sequence's, fed the same differences in the run's order at alpha / 2.
    const order = handOutOrder(leased);
    assert.not.equal(order, [...order].sort((a, b) => a - b), 'shuffled');
    const settings = { alpha: 0.05, candidates: 2, pairsMin: 10, stopBetter: false, low: 0, high: 1, datapoints: 40 };
    const fed = order.slice(0, worseState.stopped_at).map((o) => score(1, o) - score(0, o));
    const expected = expectedBounds(settings, fed);
    assert.equal([worseState.low, worseState.high], [expected.low, expected.high]);
    const before = expectedBounds(settings, fed.slice(0, -1));
    assert.ok(before.high >= 0 || fed.length - 1 < 10, 'it stopped at the first pair whose bound fell below 0');
    // Its comparison with the incumbent says it was stopped early, with the race's bound, either way round.
    const forward = (await member.client.get(`/api/job-iterations/${incumbent.id}/compare/${worse.id}/`)).body.results.stopped_early;
    assert.equal([forward.run, forward.iteration, forward.state, forward.pairs, forward.low, forward.high], [run.id, worse.id, 'worse', worseState.stopped_at, worseState.low, worseState.high]);
    assert.match(forward.note, /do not apply/);
    const backward = (await member.client.get(`/api/job-iterations/${worse.id}/compare/${incumbent.id}/`)).body.results.stopped_early;
    assert.equal([backward.low, backward.high], [-worseState.high, -worseState.low]);
    assert.is((await member.client.get(`/api/job-iterations/${incumbent.id}/compare/${equal.id}/`)).body.results.stopped_early, null, 'a finished candidate was not stopped');
    const history = (await member.client.get(`/api/runs/${run.id}/race/`)).body;
    assert.equal([history.datapoints, history.tasks_total, history.tasks_saved], [40, 120, ended.race.tasks_saved]);
    const worseHistory = history.candidates[0];
    assert.equal(worseHistory.pairs, Array.from({ length: worseState.stopped_at }, (_, i) => i + 1), 'a point a pair (fewer than 256)');
    assert.equal([worseHistory.low.at(-1), worseHistory.high.at(-1)], [worseState.low, worseState.high]);
    assert.is(worseHistory.high[9], expectedBounds(settings, fed.slice(0, 10)).high);
  }));

test('no stop before min_pairs, however clear; the exact rule stops a candidate that cannot win even with the maximum on every datapoint left', () =>
  withService(async ({ client }) => {
    const { member, project } = await memberWithProject(client);
    const setup = await runSetup(member.client, project.id, 20, 2);
    const [incumbent, candidate] = setup.iterations;
    // The incumbent's results already cover the version: they are fixed in the run.
    const written = await member.client.post(`/api/job-iterations/${incumbent.id}/results/`, {
      dataset: setup.dataset.id,
      results: Array.from({ length: 20 }, (_, order) => ({ datapoint_order: order, score: 0.875 })),
    });
    assert.is(written.status, 200, written.text);
    const run = await createRun(member.client, { ...setup, iterations: [candidate] }, { race: { incumbent: incumbent.id, score_range: [0, 1], min_pairs: 3 } });
    const worker = await registerWorker(member.client);
    const tasks = await lease(member.client, worker, { max: 20 });
    assert.is(tasks.length, 20, 'only the candidate runs');
    await completeAll(member.client, worker, tasks.slice(0, 2), () => ({ score: 0 }));
    assert.is((await runOf(member.client, run)).race.candidates[0].state, 'live', 'two pairs: below min_pairs');
    await completeAll(member.client, worker, tasks.slice(2, 3), () => ({ score: 0 }));
    const stopped = await runOf(member.client, run);
    const [standing] = stopped.race.candidates;
    // After 3 zeros its best total is 17 against the incumbent's 17.5 (scores in eighths: the totals are exact): it cannot win.
    assert.equal([standing.state, standing.stopped_at, standing.stop.method], ['cannot_win', 3, 'exact_maximum']);
    assert.is(standing.stop.bound, (17 - 17.5) / 20);
    assert.equal([stopped.status, stopped.reason], ['completed', 'decided'], 'its only candidate decided: the run ends');
    const late = await complete(member.client, worker, [{ task: tasks[3].id, lease: tasks[3].lease, score: 1 }]);
    assert.is(late.body.results[0].outcome, 'cancelled', 'a task leased when the race ended is told so');
    assert.is((await member.client.get(`/api/job-iterations/${candidate.id}/`)).body.status, 'discard');
  }));

test('a candidate stopped while some of its tasks are leased: those finish and are accepted, its queued ones are skipped', () =>
  withService(async ({ client }) => {
    const { member, project } = await memberWithProject(client);
    const setup = await runSetup(member.client, project.id, 30, 3);
    const [incumbent] = setup.iterations;
    const run = await createRun(member.client, setup, { race: { incumbent: incumbent.id, score_range: [0, 1], min_pairs: 1, stop_better: true } });
    const worker = await registerWorker(member.client);
    const index = (task: any) => setup.iterations.findIndex((it) => it.id === task.iteration.id);
    const tasks = await lease(member.client, worker, { max: 60 });
    // Candidate 1 is far better, candidate 2 equal: complete all but the last candidate-1 tasks.
    const held = tasks.filter((task) => index(task) === 1).slice(-3);
    const first = tasks.filter((task) => !held.includes(task));
    await completeAll(member.client, worker, first, (task) => ({ score: index(task) === 1 ? 1 : 0 }));
    const mid = await runOf(member.client, run);
    const [better] = mid.race.candidates;
    assert.is(better.state, 'better');
    assert.ok(better.low > 0);
    const states = await tasksOf(member.client, run, { iteration: setup.iterations[1].id });
    assert.ok(states.some((task: any) => task.state === 'skipped'), 'its queued tasks were skipped');
    assert.is(states.filter((task: any) => task.state === 'leased').length, 3, 'its leased ones were not');
    const beat = await member.client.post(`/api/workers/${worker.id}/heartbeat/`, { tasks: held.map((task) => task.id) });
    assert.equal(beat.body.stop, [], 'they may finish');
    await completeAll(member.client, worker, held, () => ({ score: 1 }));
    assert.is((await tasksOf(member.client, run, { iteration: setup.iterations[1].id, state: 'leased' })).length, 0);
    assert.is((await member.client.get(`/api/job-iterations/${setup.iterations[1].id}/`)).body.status, null, 'a better candidate is not discarded');
  }));

test("a stopped candidate's leased tasks never go back to the queue: one answered with an error, rate limited, or whose worker leaves is skipped and saved", () =>
  withService(async ({ client }) => {
    const { member, project } = await memberWithProject(client);
    const setup = await runSetup(member.client, project.id, 4, 3);
    const [incumbent, worse, equal] = setup.iterations;
    const perfect = Array.from({ length: 4 }, (_, order) => ({ datapoint_order: order, score: 1 }));
    assert.is((await member.client.post(`/api/job-iterations/${incumbent.id}/results/`, { dataset: setup.dataset.id, results: perfect })).status, 200);
    const run = await createRun(member.client, { ...setup, iterations: [worse, equal] }, { race: { incumbent: incumbent.id, score_range: [0, 1], min_pairs: 1 } });
    const leaving = await registerWorker(member.client);
    const worker = await registerWorker(member.client);
    const mine = await lease(member.client, worker, { max: 6 });
    const theirs = await lease(member.client, leaving, { max: 2 });
    const [first, second, third] = mine.filter((task) => task.iteration.id === worse.id);
    // A score of 0 against an incumbent at 1 everywhere: it cannot win, with three of its tasks leased.
    await completeAll(member.client, worker, [first], () => ({ score: 0 }));
    const stopped = await runOf(member.client, run);
    assert.equal([stopped.status, stopped.race.candidates[0].state, stopped.counts.leased], ['running', 'cannot_win', 7]);
    const answers = await complete(member.client, worker, [
      { task: second.id, lease: second.lease, status: 'error', error: 'boom' },
      { task: third.id, lease: third.lease, status: 'rate_limited' },
    ]);
    assert.equal(answers.body.results.map((result: { outcome: string }) => result.outcome), ['accepted', 'accepted']);
    const after = await runOf(member.client, run);
    assert.equal([after.counts.skipped, after.counts.queued, after.race.tasks_saved], [2, 0, 2], 'skipped, not queued again');
    // A worker leaves holding one task of each: the stopped candidate's is skipped, the other's goes back.
    assert.equal(theirs.map((task) => task.iteration.id).sort(), [worse.id, equal.id].sort());
    assert.is((await member.client.delete(`/api/workers/${leaving.id}/`)).status, 204);
    const given = await runOf(member.client, run);
    assert.equal([given.counts.skipped, given.counts.queued, given.race.tasks_saved], [3, 1, 3]);
    const ofWorse = await tasksOf(member.client, run, { iteration: worse.id });
    assert.equal(ofWorse.map((task: { state: string }) => task.state).sort(), ['done', 'skipped', 'skipped', 'skipped'], 'none of it queued or leased again');
  }));

test('a race is refused whole when: its order is the dataset\'s, it declares no score range for worker scores, its incumbent has no results, or it has no candidate; a score outside the range is invalid; a race takes no retry', () =>
  withService(async ({ client }) => {
    const { member, project } = await memberWithProject(client);
    const setup = await runSetup(member.client, project.id, 4, 2);
    const [incumbent, candidate] = setup.iterations;
    const post = (fields: Record<string, unknown>, iterations = setup.iterations) =>
      member.client.post(`/api/jobs/${setup.job.id}/runs/`, { dataset: setup.dataset.id, iterations: iterations.map((it) => it.id), ...fields });
    const cases: [Record<string, unknown>, any, any[]?][] = [
      [{ order: 'dataset', race: { incumbent: incumbent.id, score_range: [0, 1] } }, { order: ['A race hands its datapoints out in a seeded random order: leave order out, or send "shuffled".'] }],
      [{ race: { incumbent: incumbent.id } }, { race: { score_range: ['Declare the bounds scores can take, [low, high]: the workers report the scores of this run.'] } }],
      [{ race: { incumbent: incumbent.id, score_range: [1, 1] } }, { race: { score_range: ['The low bound must be below the high bound.'] } }],
      [{ race: { incumbent: incumbent.id, score_range: [-1e308, 1e308] } }, { race: { score_range: ['The bounds are too far apart: their difference must be a finite number.'] } }],
      [{ race: { incumbent: incumbent.id, score_range: [0, 1], alpha: 1e-10 } }, { race: { alpha: ['Ensure this value is greater than or equal to 1e-09.'] } }],
      [{ race: { incumbent: incumbent.id, score_range: [0, 1], min_pairs: 2 ** 53 } }, { race: { min_pairs: ['Ensure this value is less than or equal to 1000000.'] } }],
      [{ race: { incumbent: incumbent.id, score_range: [0, 1] } }, { race: { incumbent: ['It has no results on this dataset version: name it among the iterations to run it in the race.'] } }, [candidate]],
      [{ race: { incumbent: incumbent.id, score_range: [0, 1] } }, { race: { incumbent: ['A race needs at least one candidate: an iteration of the run other than its incumbent.'] } }, [incumbent]],
    ];
    for (const [fields, errors, iterations] of cases) {
      const reply = await post(fields, iterations);
      assert.equal([reply.status, reply.body], [400, errors], JSON.stringify(fields));
    }
    assert.is((await member.client.get(`/api/jobs/${setup.job.id}/runs/`)).body.count, 0, 'nothing written');
    const run = await createRun(member.client, setup, { race: { incumbent: incumbent.id, score_range: [0, 1] }, max_tries: 1 });
    const worker = await registerWorker(member.client);
    const [task] = await lease(member.client, worker, { max: 1 });
    const reply = await complete(member.client, worker, [{ task: task.id, lease: task.lease, score: 1.5 }]);
    assert.equal(reply.body.results[0].errors, { score: ["Ensure this value is within the race's score_range [0, 1]."] });
    await completeAll(member.client, worker, [task], () => ({ status: 'error', error: 'boom' }));
    const retry = await member.client.post(`/api/runs/${run.id}/retry/`, {});
    assert.is(retry.status, 409, retry.text);
  }));

test('a race scored by the service takes its range from the scoring; another project sees none of it', () =>
  withService(async ({ client }) => {
    const { member, project } = await memberWithProject(client);
    const setup = await runSetup(member.client, project.id, 4, 2);
    const scoring = { method: 'scorers', scorers: [{ type: 'exact', name: 'exact' }] };
    const run = await createRun(member.client, setup, { scoring, race: { incumbent: setup.iterations[0].id } });
    assert.equal(run.race.score_range, [0, 1]);
    const clash = await member.client.post(`/api/jobs/${setup.job.id}/runs/`, {
      dataset: setup.dataset.id, iterations: [setup.iterations[1].id], scoring, race: { incumbent: setup.iterations[0].id, score_range: [0, 10] },
    });
    assert.is(clash.status, 400, clash.text);
    const stranger = await registerUser(client);
    assert.is((await stranger.client.get(`/api/runs/${run.id}/`)).status, 404);
    const other = await runSetup(member.client, project.id, 4, 1);
    const foreign = await member.client.post(`/api/jobs/${other.job.id}/runs/`, {
      dataset: other.dataset.id, iterations: [other.iterations[0].id], race: { incumbent: setup.iterations[0].id, score_range: [0, 1] },
    });
    assert.equal([foreign.status, foreign.body], [400, { race: { incumbent: ['Must be an iteration of this job.'] } }]);
    // Another project's iteration is named as one that does not exist: its existence is not told.
    const { member: outsider, project: theirs } = await memberWithProject(client);
    const outside = await runSetup(outsider.client, theirs.id, 4, 1);
    for (const incumbent of [setup.iterations[0].id, '00000000-0000-4000-8000-000000000000']) {
      const named = await outsider.client.post(`/api/jobs/${outside.job.id}/runs/`, {
        dataset: outside.dataset.id, iterations: [outside.iterations[0].id], race: { incumbent, score_range: [0, 1] },
      });
      assert.equal([named.status, named.body], [400, { race: { incumbent: [`Invalid pk "${incumbent}" - object does not exist.`] } }]);
    }
  }));

test("attempts averaged to an ulp past the range (three scores of 0.1 make 0.10000000000000002) are taken as the range's edge: the completion is accepted, the race goes on", () =>
  withService(async ({ client }) => {
    const { member, project } = await memberWithProject(client);
    const setup = await runSetup(member.client, project.id, 4, 2);
    const [incumbent, candidate] = setup.iterations;
    const run = await createRun(member.client, setup, { attempts: 3, race: { incumbent: incumbent.id, score_range: [0, 0.1], min_pairs: 1 } });
    const worker = await registerWorker(member.client);
    const tasks = await lease(member.client, worker, { max: 100 });
    const first = tasks.filter((task) => task.datapoint.order === tasks[0].datapoint.order);
    assert.is(first.length, 6, 'both iterations, three attempts');
    const reply = await complete(member.client, worker, first.map((task) => ({ task: task.id, lease: task.lease, score: task.iteration.id === candidate.id ? 0.1 : 0 })));
    assert.is(reply.status, 200, reply.text);
    assert.ok(reply.body.results.every((result: { outcome: string }) => result.outcome === 'accepted'));
    const [standing] = (await runOf(member.client, run)).race.candidates;
    assert.equal([standing.pairs, standing.state], [1, 'live']);
    assert.ok(standing.low >= -0.1 && standing.high <= 0.1, `its bounds lie within the range's width: [${standing.low}, ${standing.high}]`);
  }));

test('restarted mid-race: the decisions and the bounds continue exactly as without the restart', async () => {
  const first = await start({ lmdb: true });
  const { member, project } = await memberWithProject(first.client);
  const setup = await runSetup(member.client, project.id, 30, 2);
  const [incumbent] = setup.iterations;
  const run = await createRun(member.client, setup, { race: { incumbent: incumbent.id, score_range: [0, 1], min_pairs: 5 } });
  const worker = await registerWorker(member.client);
  const score: Scorer = (iteration, order) => (iteration === 0 ? 0.5 + (order % 3) / 10 : 0.45 + (order % 5) / 10);
  const tasks = await lease(member.client, worker, { max: 24 });
  await completeAll(member.client, worker, tasks, (task) => ({ score: score(setup.iterations.findIndex((it) => it.id === task.iteration.id), task.datapoint.order) }));
  const before = (await runOf(member.client, run)).race.candidates[0];
  assert.is(before.pairs, 12);
  await first.stop({ keepData: true });
  const second = await start({ lmdb: true, dataDir: first.dataDir });
  try {
    const client = member.client.at(second.url);
    assert.equal((await runOf(client, run)).race.candidates[0], before, 'the same standing after the restart');
    const again = await registerWorker(client);
    const rest = await runTasks(client, again, setup, score);
    const ended = (await runOf(client, run)).race.candidates[0];
    const order = handOutOrder([...tasks, ...rest]);
    const settings = { alpha: 0.05, candidates: 1, pairsMin: 5, stopBetter: false, low: 0, high: 1, datapoints: 30 };
    const expected = expectedBounds(settings, order.slice(0, ended.pairs).map((o) => score(1, o) - score(0, o)));
    assert.equal([ended.low, ended.high], [expected.low, expected.high], 'bit for bit');
    // Its history (the chart's points) has each pair once: the read model's copy shares nothing with the actor's.
    const history = (await client.get(`/api/runs/${run.id}/race/`)).body.candidates[0];
    assert.equal(history.pairs, Array.from({ length: ended.pairs }, (_, i) => i + 1));
  } finally {
    await second.stop();
  }
});

test.run();
