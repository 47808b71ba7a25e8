import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { createApiKey, createProject, memberWithProject } from '../helpers/fixtures.ts';
import { createIteration, createJob, iterationFields } from '../helpers/job-fixtures.ts';
import { withService } from '../helpers/service.ts';

const ids = (reply: { body: { results: { id: string }[] } }) => reply.body.results.map((item) => item.id);
const iterationIds = (job: { iterations: { id: string }[] }) => job.iterations.map((item) => item.id);

test('an iteration is created with its name and job; omitted text reads back "", the rest null', () =>
  withService(async ({ client }) => {
    const { member } = await memberWithProject(client);
    const job = await createJob(member.client);
    const reply = await member.client.post('/api/job-iterations/', { iteration_name: 'baseline', job: job.id });
    assert.is(reply.status, 201);
    assert.equal(Object.keys(reply.body), iterationFields);
    assert.is(reply.body.iteration_name, 'baseline');
    assert.is(reply.body.job, job.id);
    for (const field of ['agent_code', 'description']) assert.is(reply.body[field], '', field);
    for (const field of ['avg_score', 'dimension_scores', 'order', 'status']) assert.is(reply.body[field], null, field);
    assert.equal((await member.client.get(`/api/job-iterations/${reply.body.id}/`)).body, reply.body);
  }));

test('every iteration field round-trips, status included on create; read-only and unknown fields are ignored', () =>
  withService(async ({ client }) => {
    const { member } = await memberWithProject(client);
    const job = await createJob(member.client);
    const fields = {
      iteration_name: 'candidate 7',
      job: job.id.toUpperCase(),
      agent_code: 'print("hi")',
      avg_score: 0.875,
      description: 'tighter prompt',
      dimension_scores: { accuracy: 0.9, tone: [1, 2, { x: null }] },
      order: 7,
      status: 'keep',
    };
    const made = await createIteration(member.client, job.id, { ...fields, id: 'ignored', created_at: 'ignored', project: 'ignored', extra: 1 });
    assert.equal({ ...made, id: undefined, created_at: undefined }, { ...fields, job: job.id, id: undefined, created_at: undefined });
    assert.is((await createIteration(member.client, job.id, { status: 'discard' })).status, 'discard');
  }));

test('iteration fields are checked with DRF wording', () =>
  withService(async ({ client }) => {
    const { member } = await memberWithProject(client);
    const job = await createJob(member.client);
    const missing = await member.client.post('/api/job-iterations/', {});
    assert.is(missing.status, 400);
    assert.equal(missing.body, { iteration_name: ['This field is required.'], job: ['This field is required.'] });
    const bad = await member.client.post('/api/job-iterations/', {
      iteration_name: '  ',
      job: 'nope',
      avg_score: '0.5',
      order: 1.5,
      status: 'maybe',
      agent_code: 3,
    });
    assert.equal(bad.body, {
      iteration_name: ['This field may not be blank.'],
      job: ['Must be a valid UUID.'],
      avg_score: ['A valid number is required.'],
      order: ['A valid integer is required.'],
      status: ['"maybe" is not a valid choice.'],
      agent_code: ['Not a valid string.'],
    });
    const nullJob = await member.client.post('/api/job-iterations/', { iteration_name: 'x', job: null });
    assert.equal(nullJob.body, { job: ['This field may not be null.'] });
    const nulls = await createIteration(member.client, job.id, { status: null, order: null, avg_score: null });
    assert.is(nulls.status, null);
  }));

test('iteration_name takes 64 characters and refuses 65; order takes the int64 range', () =>
  withService(async ({ client }) => {
    const { member } = await memberWithProject(client);
    const job = await createJob(member.client);
    assert.is((await createIteration(member.client, job.id, { iteration_name: 'n'.repeat(64) })).iteration_name, 'n'.repeat(64));
    const long = await member.client.post('/api/job-iterations/', { job: job.id, iteration_name: 'n'.repeat(65) });
    assert.equal(long.body, { iteration_name: ['Ensure this field has no more than 64 characters.'] });
    const edge = await member.client.request('POST', '/api/job-iterations/', `{"job": "${job.id}", "iteration_name": "x", "order": -9223372036854775808}`, {
      'content-type': 'application/json',
    });
    assert.is(edge.status, 201);
    const over = await member.client.post('/api/job-iterations/', { job: job.id, iteration_name: 'x', order: 2 ** 64 });
    assert.equal(over.body, { order: ['Ensure this value is less than or equal to 9223372036854775807.'] });
  }));

test("a job that is missing or another project's is an invalid pk for an iteration", () =>
  withService(async ({ client }) => {
    const { member } = await memberWithProject(client);
    const stranger = await memberWithProject(client);
    const foreign = await createJob(stranger.member.client);
    const missing = 'a3b4c5d6-0000-4000-8000-000000000000';
    for (const id of [missing, foreign.id]) {
      const reply = await member.client.post('/api/job-iterations/', { iteration_name: 'x', job: id });
      assert.is(reply.status, 400);
      assert.equal(reply.body, { job: [`Invalid pk "${id}" - object does not exist.`] });
    }
    assert.equal((await stranger.member.client.get(`/api/jobs/${foreign.id}/`)).body.iterations, []);
  }));

test('PATCH updates some fields, status included, and the job embeds the change', () =>
  withService(async ({ client }) => {
    const { member } = await memberWithProject(client);
    const job = await createJob(member.client);
    const iteration = await createIteration(member.client, job.id, { avg_score: 0.5, description: 'first' });
    const reply = await member.client.patch(`/api/job-iterations/${iteration.id}/`, { status: 'keep', avg_score: 0.75 });
    assert.is(reply.status, 200);
    assert.equal(reply.body, { ...iteration, status: 'keep', avg_score: 0.75 });
    const again = await member.client.patch(`/api/job-iterations/${iteration.id}/`, { status: 'discard', job: job.id });
    assert.is(again.body.status, 'discard');
    assert.equal((await member.client.get(`/api/jobs/${job.id}/`)).body.iterations, [again.body]);
    const bad = await member.client.patch(`/api/job-iterations/${iteration.id}/`, { iteration_name: '' });
    assert.equal(bad.body, { iteration_name: ['This field may not be blank.'] });
  }));

test('PUT requires iteration_name and job and keeps the optional fields it leaves out', () =>
  withService(async ({ client }) => {
    const { member } = await memberWithProject(client);
    const job = await createJob(member.client);
    const iteration = await createIteration(member.client, job.id, { description: 'kept', order: 3 });
    const missing = await member.client.put(`/api/job-iterations/${iteration.id}/`, { description: 'x' });
    assert.is(missing.status, 400);
    assert.equal(missing.body, { iteration_name: ['This field is required.'], job: ['This field is required.'] });
    const reply = await member.client.put(`/api/job-iterations/${iteration.id}/`, { iteration_name: 'renamed', job: job.id, avg_score: 1 });
    assert.is(reply.status, 200);
    assert.equal(reply.body, { ...iteration, iteration_name: 'renamed', avg_score: 1 });
  }));

test('deleting an iteration answers 204; it is then gone from its job and the list', () =>
  withService(async ({ client }) => {
    const { member } = await memberWithProject(client);
    const job = await createJob(member.client);
    const gone = await createIteration(member.client, job.id);
    const kept = await createIteration(member.client, job.id);
    const reply = await member.client.delete(`/api/job-iterations/${gone.id}/`);
    assert.is(reply.status, 204);
    assert.is(reply.text, '');
    assert.is((await member.client.get(`/api/job-iterations/${gone.id}/`)).status, 404);
    assert.is((await member.client.delete(`/api/job-iterations/${gone.id}/`)).status, 404);
    assert.equal(iterationIds((await member.client.get(`/api/jobs/${job.id}/`)).body), [kept.id]);
    assert.equal(ids(await member.client.get('/api/job-iterations/')), [kept.id]);
  }));

test('iterations of a job in a final status can still be created, read, updated and deleted', () =>
  withService(async ({ client }) => {
    const { member } = await memberWithProject(client);
    for (const status of ['completed', 'failed', 'cancelled']) {
      const job = await createJob(member.client, { status });
      const iteration = await createIteration(member.client, job.id);
      assert.is((await member.client.get(`/api/job-iterations/${iteration.id}/`)).status, 200);
      assert.is((await member.client.patch(`/api/job-iterations/${iteration.id}/`, { status: 'keep' })).status, 200);
      assert.is((await member.client.delete(`/api/job-iterations/${iteration.id}/`)).status, 204);
    }
  }));

test('sending another job moves the iteration there with its other changes', () =>
  withService(async ({ client }) => {
    const { member } = await memberWithProject(client);
    const source = await createJob(member.client);
    const target = await createJob(member.client);
    const moving = await createIteration(member.client, source.id, { order: 1 });
    const staying = await createIteration(member.client, source.id, { order: 2 });
    const reply = await member.client.patch(`/api/job-iterations/${moving.id}/`, { job: target.id, description: 'moved' });
    assert.is(reply.status, 200);
    assert.equal(reply.body, { ...moving, job: target.id, description: 'moved' });
    assert.equal(iterationIds((await member.client.get(`/api/jobs/${source.id}/`)).body), [staying.id]);
    assert.equal(iterationIds((await member.client.get(`/api/jobs/${target.id}/`)).body), [moving.id]);
    assert.equal(ids(await member.client.get('/api/job-iterations/', { job: target.id })), [moving.id]);
    const back = await member.client.put(`/api/job-iterations/${moving.id}/`, { iteration_name: 'back', job: source.id });
    assert.is(back.body.job, source.id);
    assert.equal(iterationIds((await member.client.get(`/api/jobs/${source.id}/`)).body), [moving.id, staying.id]);
  }));

test('an iteration moves to a job of another visible project and follows its tenancy', () =>
  withService(async ({ client }) => {
    const { member, project } = await memberWithProject(client);
    const second = await createProject(member.client);
    const source = await createJob(member.client, { project: project.id });
    const target = await createJob(member.client, { project: second.id });
    const iteration = await createIteration(member.client, source.id);
    assert.is((await member.client.patch(`/api/job-iterations/${iteration.id}/`, { job: target.id })).status, 200);
    const firstKey = client.as({ apiKey: (await createApiKey(member.client, project.id)).key });
    const secondKey = client.as({ apiKey: (await createApiKey(member.client, second.id)).key });
    assert.is((await firstKey.get(`/api/job-iterations/${iteration.id}/`)).status, 404);
    assert.is((await secondKey.get(`/api/job-iterations/${iteration.id}/`)).status, 200);
    assert.equal(ids(await secondKey.get('/api/job-iterations/')), [iteration.id]);
  }));

test('moving to a job the caller cannot see is an invalid pk and changes nothing', () =>
  withService(async ({ client }) => {
    const { member, project } = await memberWithProject(client);
    const second = await createProject(member.client);
    const stranger = await memberWithProject(client);
    const foreign = await createJob(stranger.member.client);
    const source = await createJob(member.client, { project: project.id });
    const hidden = await createJob(member.client, { project: second.id });
    const iteration = await createIteration(member.client, source.id);
    const missing = '0b0e0f00-0000-4000-8000-000000000000';
    for (const target of [foreign.id, missing]) {
      const reply = await member.client.patch(`/api/job-iterations/${iteration.id}/`, { job: target, description: 'no' });
      assert.is(reply.status, 400);
      assert.equal(reply.body, { job: [`Invalid pk "${target}" - object does not exist.`] });
    }
    const asKey = client.as({ apiKey: (await createApiKey(member.client, project.id)).key });
    const keyReply = await asKey.patch(`/api/job-iterations/${iteration.id}/`, { job: hidden.id });
    assert.equal(keyReply.body, { job: [`Invalid pk "${hidden.id}" - object does not exist.`] });
    assert.equal((await member.client.get(`/api/job-iterations/${iteration.id}/`)).body, iteration);
    assert.equal((await stranger.member.client.get(`/api/jobs/${foreign.id}/`)).body.iterations, []);
  }));

test("other projects' iterations answer 404 to every method and never list", () =>
  withService(async ({ client }) => {
    const owner = await memberWithProject(client);
    const job = await createJob(owner.member.client);
    const iteration = await createIteration(owner.member.client, job.id);
    const { member } = await memberWithProject(client);
    const own = await createJob(member.client);
    const cases = [['GET', undefined], ['PATCH', { status: 'keep' }], ['PUT', { iteration_name: 'x', job: own.id }], ['DELETE', undefined]] as const;
    for (const [method, body] of cases) {
      const reply = await member.client.request(method, `/api/job-iterations/${iteration.id}/`, body);
      assert.is(reply.status, 404, method);
    }
    assert.is((await member.client.get('/api/job-iterations/')).body.count, 0);
    assert.is((await member.client.get('/api/job-iterations/', { job: job.id })).body.count, 0);
    assert.equal(iterationIds((await owner.member.client.get(`/api/jobs/${job.id}/`)).body), [iteration.id]);
    assert.is((await client.get('/api/job-iterations/')).status, 401);
  }));

test('iterations filter by iteration_name, job, status and avg_score bounds', () =>
  withService(async ({ client }) => {
    const { member } = await memberWithProject(client);
    const first = await createJob(member.client);
    const second = await createJob(member.client);
    const a = await createIteration(member.client, first.id, { iteration_name: 'alpha', status: 'keep', avg_score: 0.2, order: 1 });
    const b = await createIteration(member.client, first.id, { iteration_name: 'beta', status: 'discard', avg_score: 0.6, order: 2 });
    const c = await createIteration(member.client, second.id, { iteration_name: 'alpha', order: 3 });
    const cases: [Record<string, string>, string[]][] = [
      [{ iteration_name: 'alpha' }, [a.id, c.id]],
      [{ iteration_name: 'alph' }, []],
      [{ job: first.id }, [a.id, b.id]],
      [{ job: second.id, iteration_name: 'alpha' }, [c.id]],
      [{ status: 'keep' }, [a.id]],
      [{ status: 'discard' }, [b.id]],
      [{ score_min: '0.2' }, [a.id, b.id]],
      [{ score_min: '0.3' }, [b.id]],
      [{ score_max: '0.6' }, [a.id, b.id]],
      [{ score_max: '0.59' }, [a.id]],
      [{ job: '', status: '' }, [a.id, b.id, c.id]],
    ];
    for (const [query, expected] of cases) assert.equal(ids(await member.client.get('/api/job-iterations/', query)), expected, JSON.stringify(query));
  }));

test('unusable iteration filter values are 400 in django-filter wording', () =>
  withService(async ({ client }) => {
    const { member } = await memberWithProject(client);
    const cases: [Record<string, string>, Record<string, string[]>][] = [
      [{ job: 'abc' }, { job: ['Enter a valid UUID.'] }],
      [{ score_min: 'high' }, { score_min: ['Enter a number.'] }],
      [{ score_max: '1,5' }, { score_max: ['Enter a number.'] }],
      [{ status: 'maybe' }, { status: ['Select a valid choice. maybe is not one of the available choices.'] }],
    ];
    for (const [query, errors] of cases) {
      const reply = await member.client.get('/api/job-iterations/', query);
      assert.is(reply.status, 400, JSON.stringify(query));
      assert.equal(reply.body, errors);
    }
  }));

test('iteration search matches iteration_name and description, case-insensitively, every term', () =>
  withService(async ({ client }) => {
    const { member } = await memberWithProject(client);
    const job = await createJob(member.client);
    const a = await createIteration(member.client, job.id, { iteration_name: 'Shorter-Prompt', description: 'fewer tokens', order: 1 });
    const b = await createIteration(member.client, job.id, { iteration_name: 'longer', description: 'More Examples', agent_code: 'shorter', order: 2 });
    const cases: [string, string[]][] = [
      ['shorter', [a.id]],
      ['examples', [b.id]],
      ['er', [a.id, b.id]],
      ['longer examples', [b.id]],
      ['longer tokens', []],
    ];
    for (const [search, expected] of cases) assert.equal(ids(await member.client.get('/api/job-iterations/', { search })), expected, search);
  }));

test('iterations order by order then created_at by default, and by whitelisted fields on request', () => {
  let now = Date.parse('2026-04-01T00:00:00Z');
  return withService(
    async ({ client }) => {
      const { member } = await memberWithProject(client);
      const job = await createJob(member.client);
      const made: any[] = [];
      for (const [order, score] of [[2, 0.1], [1, 0.9], [2, null], [null, 0.5]] as const) {
        now += 1000;
        made.push(await createIteration(member.client, job.id, { order, avg_score: score }));
      }
      const [twoEarly, one, twoLate, unordered] = made;
      assert.equal(ids(await member.client.get('/api/job-iterations/')), [one.id, twoEarly.id, twoLate.id, unordered.id]);
      assert.equal(ids(await member.client.get('/api/job-iterations/', { ordering: '-order,-created_at' })), [unordered.id, twoLate.id, twoEarly.id, one.id]);
      assert.equal(ids(await member.client.get('/api/job-iterations/', { ordering: '-avg_score' })), [twoLate.id, one.id, unordered.id, twoEarly.id]);
      assert.equal(ids(await member.client.get('/api/job-iterations/', { ordering: 'created_at' })), made.map((item) => item.id));
      assert.equal(ids(await member.client.get('/api/job-iterations/', { ordering: 'agent_code' })), [one.id, twoEarly.id, twoLate.id, unordered.id]);
    },
    { clock: { nowMs: () => now } },
  );
});

test('many iterations posted at once to one job all land', () =>
  withService(
    async ({ client }) => {
      const { member } = await memberWithProject(client);
      const job = await createJob(member.client);
      const replies = await Promise.all(
        Array.from({ length: 300 }, (_, i) => member.client.post('/api/job-iterations/', { job: job.id, iteration_name: `c${i}`, order: i })),
      );
      assert.equal(replies.map((reply) => reply.status), replies.map(() => 201));
      const read = await member.client.get(`/api/jobs/${job.id}/`);
      assert.is(read.body.iterations.length, 300);
      assert.equal(read.body.iterations.map((item: any) => item.order), Array.from({ length: 300 }, (_, i) => i));
      assert.is((await member.client.get('/api/job-iterations/', { job: job.id })).body.count, 300);
    },
    { lmdb: true },
  ));

test('a job holds at most iterationsPerJobMax iterations, whether posted or moved in', () =>
  withService(
    async ({ client }) => {
      const { member } = await memberWithProject(client);
      const full = await createJob(member.client);
      const other = await createJob(member.client);
      for (let i = 0; i < 3; i++) await createIteration(member.client, full.id);
      const refused = await member.client.post('/api/job-iterations/', { job: full.id, iteration_name: 'fourth' });
      assert.is(refused.status, 400);
      assert.equal(refused.body, { non_field_errors: ['A job may have at most 3 iterations.'] });
      const outside = await createIteration(member.client, other.id);
      const moved = await member.client.patch(`/api/job-iterations/${outside.id}/`, { job: full.id });
      assert.equal(moved.body, { non_field_errors: ['A job may have at most 3 iterations.'] });
      assert.equal(iterationIds((await member.client.get(`/api/jobs/${other.id}/`)).body), [outside.id]);
    },
    { limits: { iterationsPerJobMax: 3 } },
  ));

test.run();
