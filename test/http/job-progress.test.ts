// GET /api/jobs/{id}/progress/: a job's run as a chart draws it.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { createApiKey, createProject, memberWithProject } from '../helpers/fixtures.ts';
import { idsByCreation } from '../helpers/creation-order.ts';
import { createIteration, createJob } from '../helpers/job-fixtures.ts';
import { withService } from '../helpers/service.ts';

const missingId = '00000000-0000-4000-8000-000000000000';
const progressPath = (job: { id: string }) => `/api/jobs/${job.id}/progress/`;
const pointFields = ['id', 'order', 'iteration_name', 'avg_score', 'status', 'created_at', 'best_so_far'];

test('iterations come in the job\'s order with the best score so far; counts and the best iteration cover the job', () =>
  withService(async ({ client }) => {
    const { member } = await memberWithProject(client);
    const job = await createJob(member.client);
    const made = [];
    // Posted out of order: the answer follows order, then created_at, with no order last.
    for (const fields of [
      { order: 3, avg_score: 0.5, status: 'keep' },
      { order: null, avg_score: 0.99 },
      { order: 1, avg_score: null, status: 'discard' },
      { order: 2, avg_score: 0.25 },
      { order: 3, avg_score: 0.75, status: 'keep' },
      { order: 4, avg_score: 0.75, status: 'discard' },
      { order: 5, avg_score: null },
    ]) {
      made.push(await createIteration(member.client, job.id, { ...fields, agent_code: 'long code nobody charts' }));
    }
    const reply = await member.client.get(progressPath(job));
    assert.is(reply.status, 200, reply.text);
    assert.equal(Object.keys(reply.body), ['count', 'next', 'previous', 'results', 'counts', 'best_iteration', 'best_score', 'job']);
    assert.is(reply.body.count, 7);
    assert.equal(Object.keys(reply.body.results[0]), pointFields);
    // The two of order 3 by created_at (then id: they can share a millisecond).
    const inOrder = [made[2].id, made[3].id, ...idsByCreation([made[0], made[4]], 'oldest first'), made[5].id, made[6].id, made[1].id];
    assert.equal(reply.body.results.map((point: any) => point.id), inOrder);
    assert.equal(reply.body.results.map((point: any) => point.id), (await member.client.get(`/api/jobs/${job.id}/`)).body.iterations.map((it: any) => it.id));
    const first = reply.body.results[0];
    assert.equal(first, { id: made[2].id, order: 1, iteration_name: made[2].iteration_name, avg_score: null, status: 'discard', created_at: made[2].created_at, best_so_far: null });
    // [null, 0.25, 0.5, 0.75, 0.75, 0.75, 0.99], or 0.75 third when the 0.75 of order 3 comes first.
    const scoreOf = new Map<string, number | null>(made.map((iteration) => [iteration.id, iteration.avg_score]));
    const bestSoFar: (number | null)[] = [];
    for (const id of inOrder) {
      const score = scoreOf.get(id) ?? null;
      const before = bestSoFar.at(-1) ?? null;
      bestSoFar.push(score === null ? before : before === null ? score : Math.max(before, score));
    }
    assert.equal(reply.body.results.map((point: any) => point.best_so_far), bestSoFar);
    assert.equal(reply.body.counts, { keep: 2, discard: 2, unset: 3 });
    assert.is(reply.body.best_iteration, made[1].id);
    assert.is(reply.body.best_score, 0.99);
    // Without the 0.99, two share 0.75: the earlier in order is the best.
    assert.is((await member.client.delete(`/api/job-iterations/${made[1].id}/`)).status, 204);
    const tied = await member.client.get(progressPath(job));
    assert.is(tied.body.best_iteration, made[4].id);
    assert.is(tied.body.best_score, 0.75);
  }));

test('a job without iterations, or without scores, has no best', () =>
  withService(async ({ client }) => {
    const { member } = await memberWithProject(client);
    const job = await createJob(member.client);
    const empty = await member.client.get(progressPath(job));
    const { job: listed, ...progress } = empty.body;
    assert.equal(progress, { count: 0, next: null, previous: null, results: [], counts: { keep: 0, discard: 0, unset: 0 }, best_iteration: null, best_score: null });
    const [asListed] = (await member.client.get('/api/jobs/', { project: job.project })).body.results;
    assert.equal(listed, asListed, 'the job as its list shows it');
    await createIteration(member.client, job.id, { status: 'keep' });
    const unscored = await member.client.get(progressPath(job));
    assert.equal(unscored.body.results.map((point: any) => point.best_so_far), [null]);
    assert.equal([unscored.body.best_iteration, unscored.body.best_score], [null, null]);
    assert.equal(unscored.body.counts, { keep: 1, discard: 0, unset: 0 });
  }));

test('progressPageSizeDefault and progressPageSizeMax: pages of their own sizes, best so far carried across pages', () =>
  withService(
    async ({ client }) => {
      const { member } = await memberWithProject(client);
      const job = await createJob(member.client);
      const scores = [0.1, 0.9, 0.2, null, 0.3, 0.95, 0.4, 0.5];
      for (const [order, avg_score] of scores.entries()) await createIteration(member.client, job.id, { order, avg_score });
      const first = await member.client.get(progressPath(job));
      assert.is(first.body.results.length, 3, 'the progress default, not the lists\' 25');
      assert.match(first.body.next, /\/api\/jobs\/[^/]+\/progress\/\?page=2$/);
      const clamped = await member.client.get(progressPath(job), { page_size: 100 });
      assert.is(clamped.body.results.length, 5, 'clamped to the progress maximum');
      assert.match(clamped.body.next, /\?page=2&page_size=100$/);
      const second = await member.client.get(progressPath(job), { page_size: 4, page: 2 });
      assert.equal(second.body.results.map((point: any) => [point.avg_score, point.best_so_far]), [[0.3, 0.9], [0.95, 0.95], [0.4, 0.95], [0.5, 0.95]]);
      assert.match(second.body.previous, /\?page_size=4$/);
      const last = await member.client.get(progressPath(job), { page: 'last', page_size: 5 });
      assert.equal(last.body.results.map((point: any) => point.best_so_far), [0.95, 0.95, 0.95]);
      assert.equal(last.body.counts, first.body.counts);
      assert.is(last.body.best_score, 0.95);
      assert.is((await member.client.get(progressPath(job), { page: 4 })).status, 404);
    },
    { limits: { progressPageSizeDefault: 3, progressPageSizeMax: 5 } },
  ));

test('a job that is not visible, unknown or malformed is 404', () =>
  withService(async ({ client }) => {
    const { member } = await memberWithProject(client);
    const job = await createJob(member.client);
    const stranger = await memberWithProject(client);
    const notFound = { detail: 'Not found.', code: 'not_found' };
    for (const [who, path] of [[stranger.member.client, progressPath(job)], [member.client, progressPath({ id: missingId })], [member.client, '/api/jobs/nope/progress/']] as const) {
      const reply = await who.get(path);
      assert.is(reply.status, 404, path);
      assert.equal(reply.body, notFound);
    }
    const otherProject = await createProject(member.client);
    const key = await createApiKey(member.client, otherProject.id);
    assert.is((await client.as({ apiKey: key.key }).get(progressPath(job))).status, 404);
    assert.is((await client.get(progressPath(job))).status, 401);
  }));

test.run();
