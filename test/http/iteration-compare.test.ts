// GET /api/job-iterations/{id}/compare/{other_id}/: two iterations side by side.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { createApiKey, createProject, memberWithProject } from '../helpers/fixtures.ts';
import { createIteration, createJob } from '../helpers/job-fixtures.ts';
import { withService } from '../helpers/service.ts';

const missingId = '00000000-0000-4000-8000-000000000000';
const comparePath = (from: { id: string }, to: { id: string }) => `/api/job-iterations/${from.id}/compare/${to.id}/`;
const side = (iteration: any) => ({
  id: iteration.id,
  iteration_name: iteration.iteration_name,
  job: iteration.job,
  order: iteration.order,
  status: iteration.status,
  avg_score: iteration.avg_score,
  created_at: iteration.created_at,
});

test('a comparison shows both iterations, the score delta, every numeric dimension and a unified diff of the code', () =>
  withService(async ({ client }) => {
    const { member } = await memberWithProject(client);
    const job = await createJob(member.client);
    const from = await createIteration(member.client, job.id, {
      iteration_name: 'baseline', order: 1, status: 'discard', avg_score: 0.5,
      agent_code: 'def run(q):\n    return model(q)\n',
      dimension_scores: { accuracy: 0.5, tone: 0.75, notes: 'terse' },
    });
    const to = await createIteration(member.client, job.id, {
      iteration_name: 'candidate-2', order: 2, status: 'keep', avg_score: 0.75,
      agent_code: 'def run(q):\n    return model(q, temperature=0)\n',
      dimension_scores: { accuracy: 1, safety: 0.25 },
    });
    const reply = await member.client.get(comparePath(from, to));
    assert.is(reply.status, 200, reply.text);
    assert.equal(reply.body, {
      from: side(from),
      to: side(to),
      avg_score: { from: 0.5, to: 0.75, delta: 0.25 },
      dimensions: [
        { name: 'accuracy', from: 0.5, to: 1, delta: 0.5 },
        { name: 'safety', from: null, to: 0.25, delta: null },
        { name: 'tone', from: 0.75, to: null, delta: null },
      ],
      // Text fields are trimmed, as DRF trims them: the code has no final newline.
      code_diff: [
        '--- a/baseline',
        '+++ b/candidate-2',
        '@@ -1,2 +1,2 @@',
        ' def run(q):',
        '-    return model(q)',
        '\\ No newline at end of file',
        '+    return model(q, temperature=0)',
        '\\ No newline at end of file',
        '',
      ].join('\n'),
      // Neither has results per datapoint: those are compared in results-compare.test.ts.
      results: { comparable: false, reason: 'neither iteration has results' },
    });
    // The other way round, every delta changes sign.
    const back = await member.client.get(comparePath(to, from));
    assert.equal(back.body.avg_score, { from: 0.75, to: 0.5, delta: -0.25 });
    assert.equal(back.body.dimensions[0], { name: 'accuracy', from: 1, to: 0.5, delta: -0.5 });
    assert.match(back.body.code_diff, /^--- a\/candidate-2\n\+\+\+ b\/baseline\n/);
  }));

test('missing and non-numeric dimensions, dimension_scores that are not objects, and null scores', () =>
  withService(async ({ client }) => {
    const { member } = await memberWithProject(client);
    const job = await createJob(member.client);
    const unscored = await createIteration(member.client, job.id, { dimension_scores: null });
    const listed = await createIteration(member.client, job.id, { avg_score: 0.5, dimension_scores: [0.1, 0.2] });
    const mixed = await createIteration(member.client, job.id, { avg_score: 0.25, dimension_scores: { a: 'high', b: true, c: { d: 1 }, e: 2 } });
    const reply = await member.client.get(comparePath(unscored, listed));
    assert.equal(reply.body.avg_score, { from: null, to: 0.5, delta: null });
    assert.equal(reply.body.dimensions, []);
    const third = await member.client.get(comparePath(listed, mixed));
    assert.equal(third.body.avg_score, { from: 0.5, to: 0.25, delta: -0.25 });
    assert.equal(third.body.dimensions, [{ name: 'e', from: null, to: 2, delta: null }]);
    assert.equal((await member.client.get(comparePath(unscored, unscored))).body.avg_score, { from: null, to: null, delta: null });
  }));

test('equal code diffs to "" (a null code is empty), and iterations of different jobs compare', () =>
  withService(async ({ client }) => {
    const { member } = await memberWithProject(client);
    const [first, second] = [await createJob(member.client), await createJob(member.client)];
    const a = await createIteration(member.client, first.id, { agent_code: 'same\n' });
    const b = await createIteration(member.client, second.id, { agent_code: 'same\n' });
    const reply = await member.client.get(comparePath(a, b));
    assert.is(reply.status, 200, reply.text);
    assert.is(reply.body.code_diff, '');
    assert.is(reply.body.from.job, first.id);
    assert.is(reply.body.to.job, second.id);
    const empty = await createIteration(member.client, first.id);
    const none = await createIteration(member.client, first.id, { agent_code: null });
    assert.is((await member.client.get(comparePath(empty, none))).body.code_diff, '');
    const added = `--- a/${none.iteration_name}\n+++ b/${a.iteration_name}\n@@ -0,0 +1,1 @@\n+same\n\\ No newline at end of file\n`;
    assert.is((await member.client.get(comparePath(none, a))).body.code_diff, added);
  }));

test('codeDiffCharsMax and codeDiffEditsMax: past either, code_diff is null and the rest is answered', () =>
  withService(
    async ({ client }) => {
      const { member } = await memberWithProject(client);
      const job = await createJob(member.client);
      const lines = (prefix: string, count: number) => Array.from({ length: count }, (_, i) => `${prefix}${i}\n`).join('');
      const short = await createIteration(member.client, job.id, { agent_code: lines('a', 3), avg_score: 1 });
      const long = await createIteration(member.client, job.id, { agent_code: 'x'.repeat(101), avg_score: 2 });
      const rewritten = await createIteration(member.client, job.id, { agent_code: lines('b', 3) });
      const tooLong = await member.client.get(comparePath(short, long));
      assert.is(tooLong.status, 200, tooLong.text);
      assert.is(tooLong.body.code_diff, null);
      assert.equal(tooLong.body.avg_score, { from: 1, to: 2, delta: 1 });
      // Six lines changed (three removed, three added) is more than five.
      assert.is((await member.client.get(comparePath(short, rewritten))).body.code_diff, null);
      const twoChanged = await createIteration(member.client, job.id, { agent_code: lines('a', 3).replace('a1\n', 'one\n') });
      assert.match((await member.client.get(comparePath(short, twoChanged))).body.code_diff, /^-a1\n\+one$/m);
    },
    { limits: { codeDiffCharsMax: 100, codeDiffEditsMax: 5 } },
  ));

test('either iteration invisible, unknown or malformed is 404', () =>
  withService(async ({ client }) => {
    const { member } = await memberWithProject(client);
    const mine = await createIteration(member.client, (await createJob(member.client)).id);
    const stranger = await memberWithProject(client);
    const theirs = await createIteration(stranger.member.client, (await createJob(stranger.member.client)).id);
    const notFound = { detail: 'Not found.', code: 'not_found' };
    for (const path of [comparePath(mine, theirs), comparePath(theirs, mine), comparePath(mine, { id: missingId }), `/api/job-iterations/${mine.id}/compare/42/`]) {
      const reply = await member.client.get(path);
      assert.is(reply.status, 404, path);
      assert.equal(reply.body, notFound);
    }
    assert.is((await stranger.member.client.get(comparePath(theirs, theirs))).status, 200);
    const otherProject = await createProject(member.client);
    const key = await createApiKey(member.client, otherProject.id);
    assert.is((await client.as({ apiKey: key.key }).get(comparePath(mine, mine))).status, 404);
    assert.is((await client.get(comparePath(mine, mine))).status, 401);
  }));

test.run();
