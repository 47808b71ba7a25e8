import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { createAgent } from '../helpers/agent-fixtures.ts';
import { idsByCreation } from '../helpers/creation-order.ts';
import { createApiKey, createProject, memberWithProject, registerUser } from '../helpers/fixtures.ts';
import { createIteration, createJob, jobFields, jobListItemFields } from '../helpers/job-fixtures.ts';
import { withService } from '../helpers/service.ts';

const statuses = ['pending', 'running', 'completed', 'failed', 'cancelled'] as const;
const allowedMoves: Record<string, string[]> = {
  pending: ['running', 'completed', 'failed', 'cancelled'],
  running: ['completed', 'failed', 'cancelled'],
  completed: [],
  failed: [],
  cancelled: [],
};

const ids = (reply: { body: { results: { id: string }[] } }) => reply.body.results.map((item) => item.id);

test('a job created with no fields is pending, triggered by the caller, in their only project', () =>
  withService(async ({ client }) => {
    const { member, project } = await memberWithProject(client);
    const job = await createJob(member.client);
    assert.equal(Object.keys(job), jobFields);
    assert.is(job.status, 'pending');
    assert.is(job.project, project.id);
    assert.is(job.triggered_by, member.id);
    assert.equal(job.iterations, []);
    const text = ['analyzer_model', 'best_agent_code', 'worker_task_id', 'data_source', 'prompt_slug', 'report_markdown'];
    for (const field of jobFields.filter((name) => !['id', 'created_at', 'updated_at', 'iterations', 'project', 'status', 'triggered_by'].includes(name))) {
      assert.is(job[field], text.includes(field) ? '' : null, field);
    }
    assert.is(job.created_at, job.updated_at);
  }));

test('every job field round-trips exactly; read-only, unknown and triggered_by fields are ignored', () =>
  withService(async ({ client }) => {
    const { member, project } = await memberWithProject(client);
    const result = { nested: [1, 2.5, { deep: null, 'ключ': 'значение' }], flag: true, big: 9007199254740991 };
    const fields = {
      analyzer_model: 'gpt-judge',
      backtest_results: [{ model: 'a', score: 0.5 }, 'text', null],
      baseline_score: 0.25,
      best_agent_code: 'def run():\n    return 1',
      best_score: 0.75,
      candidates_per_iteration: 4,
      worker_task_id: 'celery-123',
      data_source: 'production',
      improvement: 0.1,
      job_type: 'prompt_tuning',
      num_iterations: 12,
      project: project.id,
      prompt_slug: 'summarise',
      report_markdown: '# Report',
      result,
      status: 'running',
    };
    const job = await createJob(member.client, {
      ...fields,
      id: '00000000-0000-0000-0000-000000000000',
      created_at: '2000-01-01T00:00:00Z',
      iterations: [{ iteration_name: 'ignored' }],
      triggered_by: 999,
      unknown_field: 'ignored',
    });
    for (const [field, value] of Object.entries(fields)) assert.equal(job[field], value, field);
    assert.is.not(job.id, '00000000-0000-0000-0000-000000000000');
    assert.is.not(job.created_at, '2000-01-01T00:00:00Z');
    assert.equal(job.iterations, []);
    assert.is(job.triggered_by, member.id);
    const read = await member.client.get(`/api/jobs/${job.id}/`);
    assert.equal(read.body, job);
  }));

test('job string fields accept their maximum length and refuse one more', () =>
  withService(async ({ client }) => {
    const { member } = await memberWithProject(client);
    const bounds: [string, number][] = [['analyzer_model', 128], ['worker_task_id', 255], ['data_source', 20], ['prompt_slug', 255]];
    for (const [field, max] of bounds) {
      const fits = await member.client.post('/api/jobs/', { [field]: 'x'.repeat(max) });
      assert.is(fits.status, 201, field);
      assert.is(fits.body[field], 'x'.repeat(max));
      const over = await member.client.post('/api/jobs/', { [field]: 'x'.repeat(max + 1) });
      assert.is(over.status, 400, field);
      assert.equal(over.body, { [field]: [`Ensure this field has no more than ${max} characters.`] });
    }
  }));

test('data_source may not be blank; the other strings may', () =>
  withService(async ({ client }) => {
    const { member } = await memberWithProject(client);
    const blank = await member.client.post('/api/jobs/', { data_source: '   ' });
    assert.is(blank.status, 400);
    assert.equal(blank.body, { data_source: ['This field may not be blank.'] });
    const others = await createJob(member.client, { analyzer_model: '', prompt_slug: '', worker_task_id: '', report_markdown: '' });
    assert.is(others.analyzer_model, '');
    assert.is(others.prompt_slug, '');
  }));

test('job int64 fields accept the int64 range and refuse beyond it', () =>
  withService(async ({ client }) => {
    const { member } = await memberWithProject(client);
    for (const field of ['candidates_per_iteration', 'num_iterations']) {
      const edges = await member.client.request('POST', '/api/jobs/', `{"${field}": 9223372036854775807}`, { 'content-type': 'application/json' });
      assert.is(edges.status, 201, field);
      const low = await member.client.request('POST', '/api/jobs/', `{"${field}": -9223372036854775808}`, { 'content-type': 'application/json' });
      assert.is(low.status, 201, field);
      const high = await member.client.post('/api/jobs/', { [field]: 2 ** 64 });
      assert.equal(high.body, { [field]: ['Ensure this value is less than or equal to 9223372036854775807.'] });
      const under = await member.client.post('/api/jobs/', { [field]: -(2 ** 64) });
      assert.equal(under.body, { [field]: ['Ensure this value is greater than or equal to -9223372036854775808.'] });
      const fraction = await member.client.post('/api/jobs/', { [field]: 1.5 });
      assert.equal(fraction.body, { [field]: ['A valid integer is required.'] });
    }
  }));

test('job fields refuse values of the wrong type with DRF wording', () =>
  withService(async ({ client }) => {
    const { member } = await memberWithProject(client);
    const reply = await member.client.post('/api/jobs/', {
      best_score: 'high',
      baseline_score: true,
      improvement: [],
      prompt_slug: 5,
      job_type: 'training',
      status: 'paused',
      agent: 'not-a-uuid',
      project: 12,
    });
    assert.is(reply.status, 400);
    assert.equal(reply.body, {
      best_score: ['A valid number is required.'],
      baseline_score: ['A valid number is required.'],
      improvement: ['A valid number is required.'],
      prompt_slug: ['Not a valid string.'],
      job_type: ['"training" is not a valid choice.'],
      status: ['"paused" is not a valid choice.'],
      agent: ['Must be a valid UUID.'],
      project: ['Incorrect type. Expected pk value, received int.'],
    });
    const nullStatus = await member.client.post('/api/jobs/', { status: null });
    assert.equal(nullStatus.body, { status: ['This field may not be null.'] });
    const notObject = await member.client.post('/api/jobs/', [1, 2]);
    assert.equal(notObject.body, { non_field_errors: ['Invalid data. Expected a dictionary, but got list.'] });
    const nulls = await createJob(member.client, { job_type: null, best_score: null, agent: null, project: null, result: null });
    assert.is(nulls.job_type, null);
  }));

test('every job_type value is accepted', () =>
  withService(async ({ client }) => {
    const { member } = await memberWithProject(client);
    for (const jobType of ['inference', 'uploaded_outputs_setup', 'judge_scoring', 'prompt_tuning', 'model_backtesting']) {
      assert.is((await createJob(member.client, { job_type: jobType })).job_type, jobType);
    }
  }));

test('a new job takes the project sent in the body', () =>
  withService(async ({ client }) => {
    const { member } = await memberWithProject(client);
    const second = await createProject(member.client);
    assert.is((await createJob(member.client, { project: second.id })).project, second.id);
  }));

test("a new job without a project takes its agent's project", () =>
  withService(async (running) => {
    const { member } = await memberWithProject(running.client);
    const second = await createProject(member.client);
    const agent = await createAgent(member.client, second.id);
    const job = await createJob(member.client, { agent: agent.id });
    assert.is(job.project, second.id);
    assert.is(job.agent, agent.id);
  }));

test("a new job made with an API key takes the key's project, even when the user has others", () =>
  withService(async ({ client }) => {
    const { member } = await memberWithProject(client);
    const second = await createProject(member.client);
    const key = await createApiKey(member.client, second.id);
    const job = await createJob(client.as({ apiKey: key.key }));
    assert.is(job.project, second.id);
    assert.is(job.triggered_by, member.id);
  }));

test('a new job without a project is refused when the caller has several projects or none', () =>
  withService(async ({ client }) => {
    const { member } = await memberWithProject(client);
    await createProject(member.client);
    const several = await member.client.post('/api/jobs/', { prompt_slug: 'x' });
    assert.is(several.status, 400);
    assert.equal(several.body, { project: ['This field is required.'] });
    const loner = await registerUser(client);
    const none = await loner.client.post('/api/jobs/', {});
    assert.equal(none.body, { project: ['This field is required.'] });
  }));

test('an agent of another project than the one sent is refused', () =>
  withService(async (running) => {
    const { member, project } = await memberWithProject(running.client);
    const second = await createProject(member.client);
    const agent = await createAgent(member.client, second.id);
    const reply = await member.client.post('/api/jobs/', { project: project.id, agent: agent.id });
    assert.is(reply.status, 400);
    assert.equal(reply.body, { agent: ['This agent belongs to another project than the job.'] });
    assert.is((await member.client.get('/api/jobs/')).body.count, 0);
  }));

test('references to missing, invisible or deleted records are "Invalid pk"', () =>
  withService(async (running) => {
    const { member, project } = await memberWithProject(running.client);
    const stranger = await memberWithProject(running.client);
    const strangerAgent = await createAgent(stranger.member.client, stranger.project.id);
    const missing = '6f1c2a7e-0000-4000-8000-000000000000';
    const cases: [Record<string, unknown>, Record<string, string[]>][] = [
      [{ project: missing }, { project: [`Invalid pk "${missing}" - object does not exist.`] }],
      [{ project: stranger.project.id }, { project: [`Invalid pk "${stranger.project.id}" - object does not exist.`] }],
      [{ agent: missing }, { agent: [`Invalid pk "${missing}" - object does not exist.`] }],
      [{ agent: strangerAgent.id }, { agent: [`Invalid pk "${strangerAgent.id}" - object does not exist.`] }],
    ];
    for (const [body, errors] of cases) {
      const reply = await member.client.post('/api/jobs/', body);
      assert.is(reply.status, 400);
      assert.equal(reply.body, errors);
    }
    const ownAgent = await createAgent(member.client, project.id);
    assert.is((await member.client.delete(`/api/agents/${ownAgent.id}/`)).status, 204);
    const deleted = await member.client.post('/api/jobs/', { agent: ownAgent.id });
    assert.equal(deleted.body, { agent: [`Invalid pk "${ownAgent.id}" - object does not exist.`] });
  }));

test('an API key cannot put a job in another project of its user', () =>
  withService(async ({ client }) => {
    const { member, project } = await memberWithProject(client);
    const second = await createProject(member.client);
    const key = await createApiKey(member.client, second.id);
    const reply = await client.as({ apiKey: key.key }).post('/api/jobs/', { project: project.id });
    assert.is(reply.status, 400);
    assert.equal(reply.body, { project: [`Invalid pk "${project.id}" - object does not exist.`] });
  }));

test('improvement is derived from the scores unless it is sent', () =>
  withService(async ({ client }) => {
    const { member } = await memberWithProject(client);
    const derived = await createJob(member.client, { best_score: 0.75, baseline_score: 0.5 });
    assert.is(derived.improvement, 0.25);
    const sent = await createJob(member.client, { best_score: 0.75, baseline_score: 0.5, improvement: 3 });
    assert.is(sent.improvement, 3);
    const sentNull = await createJob(member.client, { best_score: 0.75, baseline_score: 0.5, improvement: null });
    assert.is(sentNull.improvement, null);
    const oneScore = await createJob(member.client, { best_score: 0.75 });
    assert.is(oneScore.improvement, null);
    const completed = await member.client.patch(`/api/jobs/${oneScore.id}/`, { baseline_score: 0.25 });
    assert.is(completed.body.improvement, 0.5);
    const raised = await member.client.patch(`/api/jobs/${derived.id}/`, { best_score: 1 });
    assert.is(raised.body.improvement, 0.5);
    const kept = await member.client.patch(`/api/jobs/${sent.id}/`, { prompt_slug: 'other' });
    assert.is(kept.body.improvement, 3);
    const overridden = await member.client.patch(`/api/jobs/${derived.id}/`, { best_score: 2, improvement: 7 });
    assert.is(overridden.body.improvement, 7);
  }));

test('status moves follow the table: forward moves pass, same status is a no-op, others are 409', () =>
  withService(async ({ client }) => {
    const { member } = await memberWithProject(client);
    for (const from of statuses) {
      for (const to of statuses) {
        const job = await createJob(member.client, { status: from });
        const reply = await member.client.patch(`/api/jobs/${job.id}/`, { status: to });
        if (from === to) {
          assert.is(reply.status, 200, `${from} -> ${to}`);
          assert.equal(reply.body, job, `${from} -> ${to} changes nothing`);
        } else if (allowedMoves[from]!.includes(to)) {
          assert.is(reply.status, 200, `${from} -> ${to}`);
          assert.is(reply.body.status, to);
        } else {
          assert.is(reply.status, 409, `${from} -> ${to}`);
          assert.equal(reply.body, { detail: `A job cannot move from "${from}" to "${to}".`, code: 'conflict' });
          assert.is((await member.client.get(`/api/jobs/${job.id}/`)).body.status, from);
        }
      }
    }
  }));

test('an illegal move refuses the whole update', () =>
  withService(async ({ client }) => {
    const { member } = await memberWithProject(client);
    const job = await createJob(member.client, { status: 'failed', prompt_slug: 'before' });
    const reply = await member.client.patch(`/api/jobs/${job.id}/`, { status: 'running', prompt_slug: 'after' });
    assert.is(reply.status, 409);
    assert.is((await member.client.get(`/api/jobs/${job.id}/`)).body.prompt_slug, 'before');
  }));

test('a job in a final status still takes updates of its other fields', () => {
  let now = Date.parse('2026-03-01T00:00:00Z');
  return withService(
    async ({ client }) => {
      const { member } = await memberWithProject(client);
      const job = await createJob(member.client, { status: 'completed' });
      now += 1000;
      const reply = await member.client.patch(`/api/jobs/${job.id}/`, { report_markdown: '# Done', result: { ok: true } });
      assert.is(reply.status, 200);
      assert.is(reply.body.report_markdown, '# Done');
      assert.is(reply.body.status, 'completed');
      assert.is(reply.body.updated_at, '2026-03-01T00:00:01.000Z');
      assert.is(reply.body.created_at, '2026-03-01T00:00:00.000Z');
    },
    { clock: { nowMs: () => now } },
  );
});

test('an update that changes nothing keeps updated_at', () => {
  let now = Date.parse('2026-03-01T00:00:00Z');
  return withService(
    async ({ client }) => {
      const { member } = await memberWithProject(client);
      const job = await createJob(member.client, { status: 'running', result: { a: [1, { b: 2 }] }, best_score: 0.5 });
      now += 1000;
      const same = await member.client.patch(`/api/jobs/${job.id}/`, { status: 'running', result: { a: [1, { b: 2 }] }, best_score: 0.5 });
      assert.equal(same.body, job);
      const changed = await member.client.patch(`/api/jobs/${job.id}/`, { result: { a: [1, { b: 3 }] } });
      assert.is(changed.body.updated_at, '2026-03-01T00:00:01.000Z');
    },
    { clock: { nowMs: () => now } },
  );
});

test('PUT keeps the fields it leaves out, as DRF does when nothing is required', () =>
  withService(async ({ client }) => {
    const { member } = await memberWithProject(client);
    const job = await createJob(member.client, { prompt_slug: 'kept', best_score: 0.5, result: [1] });
    const reply = await member.client.put(`/api/jobs/${job.id}/`, { analyzer_model: 'new' });
    assert.is(reply.status, 200);
    assert.is(reply.body.analyzer_model, 'new');
    assert.is(reply.body.prompt_slug, 'kept');
    assert.equal(reply.body.result, [1]);
    assert.is((await member.client.put(`/api/jobs/${job.id}/`, {})).status, 200);
    const invalid = await member.client.put(`/api/jobs/${job.id}/`, { data_source: 'x'.repeat(21) });
    assert.is(invalid.status, 400);
  }));

test('an update can set or clear the agent; an agent of another project is refused', () =>
  withService(async (running) => {
    const { member, project } = await memberWithProject(running.client);
    const agent = await createAgent(member.client, project.id);
    const second = await createProject(member.client);
    const elsewhere = await createAgent(member.client, second.id);
    const job = await createJob(member.client, { project: project.id });
    const set = await member.client.patch(`/api/jobs/${job.id}/`, { agent: agent.id });
    assert.is(set.body.agent, agent.id);
    const refused = await member.client.patch(`/api/jobs/${job.id}/`, { agent: elsewhere.id });
    assert.is(refused.status, 400);
    assert.equal(refused.body, { agent: ['This agent belongs to another project than the job.'] });
    const cleared = await member.client.patch(`/api/jobs/${job.id}/`, { agent: null });
    assert.is(cleared.body.agent, null);
  }));

test('a job moved to another project takes its iterations along', () =>
  withService(async ({ client }) => {
    const { member, project } = await memberWithProject(client);
    const second = await createProject(member.client);
    const job = await createJob(member.client, { project: project.id });
    const iteration = await createIteration(member.client, job.id);
    const moved = await member.client.patch(`/api/jobs/${job.id}/`, { project: second.id });
    assert.is(moved.status, 200);
    assert.is(moved.body.project, second.id);
    assert.equal(moved.body.iterations.map((item: any) => item.id), [iteration.id]);
    const secondKey = await createApiKey(member.client, second.id);
    const asKey = client.as({ apiKey: secondKey.key });
    assert.equal(ids(await asKey.get('/api/job-iterations/')), [iteration.id]);
    assert.equal(ids(await asKey.get('/api/jobs/')), [job.id]);
    const firstKey = await createApiKey(member.client, project.id);
    assert.is((await client.as({ apiKey: firstKey.key }).get(`/api/job-iterations/${iteration.id}/`)).status, 404);
  }));

test("moving a job refuses a project its agent is not in, an invisible project, and null", () =>
  withService(async (running) => {
    const { member, project } = await memberWithProject(running.client);
    const second = await createProject(member.client);
    const stranger = await memberWithProject(running.client);
    const agent = await createAgent(member.client, project.id);
    const job = await createJob(member.client, { agent: agent.id });
    const away = await member.client.patch(`/api/jobs/${job.id}/`, { project: second.id });
    assert.is(away.status, 400);
    assert.equal(away.body, { project: ["The job's agent belongs to another project."] });
    const invisible = await member.client.patch(`/api/jobs/${job.id}/`, { project: stranger.project.id });
    assert.equal(invisible.body, { project: [`Invalid pk "${stranger.project.id}" - object does not exist.`] });
    const cleared = await member.client.patch(`/api/jobs/${job.id}/`, { project: null });
    assert.equal(cleared.body, { project: ['This field may not be null.'] });
    const both = await member.client.patch(`/api/jobs/${job.id}/`, { project: second.id, agent: null });
    assert.is(both.status, 200);
    assert.is(both.body.project, second.id);
  }));

test('a job embeds its iterations by order, then created_at, with unordered ones last', () => {
  let now = Date.parse('2026-03-01T00:00:00Z');
  return withService(
    async ({ client }) => {
      const { member } = await memberWithProject(client);
      const job = await createJob(member.client);
      for (const [name, order] of [['c', 2], ['none', null], ['a', 1], ['b', 2], ['first', -5]] as const) {
        now += 1000;
        await createIteration(member.client, job.id, { iteration_name: name, order });
      }
      const read = await member.client.get(`/api/jobs/${job.id}/`);
      assert.equal(read.body.iterations.map((item: any) => item.iteration_name), ['first', 'a', 'c', 'b', 'none']);
    },
    { clock: { nowMs: () => now } },
  );
});

test('deleting a job answers 204 and removes its iterations', () =>
  withService(async ({ client }) => {
    const { member } = await memberWithProject(client);
    const job = await createJob(member.client);
    const kept = await createJob(member.client);
    const iteration = await createIteration(member.client, job.id);
    const other = await createIteration(member.client, kept.id);
    const reply = await member.client.delete(`/api/jobs/${job.id}/`);
    assert.is(reply.status, 204);
    assert.is(reply.text, '');
    assert.is((await member.client.get(`/api/jobs/${job.id}/`)).status, 404);
    assert.is((await member.client.get(`/api/job-iterations/${iteration.id}/`)).status, 404);
    assert.equal(ids(await member.client.get('/api/job-iterations/')), [other.id]);
    assert.equal(ids(await member.client.get('/api/jobs/')), [kept.id]);
    assert.is((await member.client.delete(`/api/jobs/${job.id}/`)).status, 404);
  }));

test("deleting a project deletes its jobs and their iterations, and only those", () =>
  withService(async ({ client }) => {
    const { member, project } = await memberWithProject(client);
    const second = await createProject(member.client);
    const doomed = await createJob(member.client, { project: second.id });
    const doomedIteration = await createIteration(member.client, doomed.id);
    const kept = await createJob(member.client, { project: project.id });
    const keptIteration = await createIteration(member.client, kept.id);
    assert.is((await member.client.delete(`/api/projects/${second.id}/`)).status, 204);
    assert.is((await member.client.get(`/api/jobs/${doomed.id}/`)).status, 404);
    assert.is((await member.client.get(`/api/job-iterations/${doomedIteration.id}/`)).status, 404);
    assert.equal(ids(await member.client.get('/api/jobs/')), [kept.id]);
    assert.equal(ids(await member.client.get('/api/job-iterations/')), [keptIteration.id]);
  }));

test("other projects' jobs answer 404 to every method and never list", () =>
  withService(async ({ client }) => {
    const owner = await memberWithProject(client);
    const job = await createJob(owner.member.client);
    const { member } = await memberWithProject(client);
    for (const [method, body] of [['GET', undefined], ['PATCH', { prompt_slug: 'x' }], ['PUT', {}], ['DELETE', undefined]] as const) {
      const reply = await member.client.request(method, `/api/jobs/${job.id}/`, body);
      assert.is(reply.status, 404, method);
      assert.equal(reply.body, { detail: 'Not found.', code: 'not_found' });
    }
    assert.is((await member.client.get('/api/jobs/')).body.count, 0);
    assert.is((await member.client.get('/api/jobs/', { project: owner.project.id })).body.count, 0);
    assert.is((await owner.member.client.get(`/api/jobs/${job.id}/`)).body.prompt_slug, '');
  }));

test("an API key sees only its project's jobs", () =>
  withService(async ({ client }) => {
    const { member, project } = await memberWithProject(client);
    const second = await createProject(member.client);
    const here = await createJob(member.client, { project: project.id });
    const there = await createJob(member.client, { project: second.id });
    const key = await createApiKey(member.client, second.id);
    const asKey = client.as({ apiKey: key.key });
    assert.equal(ids(await asKey.get('/api/jobs/')), [there.id]);
    assert.is((await asKey.get(`/api/jobs/${here.id}/`)).status, 404);
    assert.is((await asKey.delete(`/api/jobs/${here.id}/`)).status, 404);
    assert.equal(ids(await member.client.get('/api/jobs/')).sort(), [here.id, there.id].sort());
  }));

test('job routes need credentials, take no trailing slash too, and answer 405 to other methods', () =>
  withService(async ({ client }) => {
    assert.is((await client.get('/api/jobs/')).status, 401);
    assert.is((await client.post('/api/jobs/', {})).status, 401);
    const { member } = await memberWithProject(client);
    const job = await createJob(member.client);
    assert.is((await member.client.get(`/api/jobs/${job.id}`)).status, 200);
    assert.is((await member.client.get('/api/jobs')).body.count, 1);
    const wrong = await member.client.post(`/api/jobs/${job.id}/`, {});
    assert.is(wrong.status, 405);
    assert.is(wrong.body.code, 'method_not_allowed');
    assert.is((await member.client.get('/api/jobs/not-a-uuid/')).status, 404);
  }));

test('the job list item carries exactly the listed fields, newest first by default', () => {
  let now = Date.parse('2026-03-01T00:00:00Z');
  return withService(
    async ({ client }) => {
      const { member } = await memberWithProject(client);
      const made: string[] = [];
      for (let i = 0; i < 3; i++) {
        now += 1000;
        made.push((await createJob(member.client, { result: { i } })).id);
      }
      const list = await member.client.get('/api/jobs/');
      assert.equal(Object.keys(list.body), ['count', 'next', 'previous', 'results']);
      assert.equal(Object.keys(list.body.results[0]), jobListItemFields);
      assert.equal(ids(list), made.reverse());
    },
    { clock: { nowMs: () => now } },
  );
});

test('jobs filter by agent, analyzer_model, data_source, prompt_slug, job_type, status and project', () =>
  withService(async (running) => {
    const { member, project } = await memberWithProject(running.client);
    const second = await createProject(member.client);
    const agent = await createAgent(member.client, project.id);
    const a = await createJob(member.client, {
      project: project.id, agent: agent.id, analyzer_model: 'judge-a', data_source: 'seed', prompt_slug: 'p1', job_type: 'inference', status: 'running',
    });
    const b = await createJob(member.client, {
      project: second.id, analyzer_model: 'judge-b', data_source: 'prod', prompt_slug: 'p2', job_type: 'judge_scoring', status: 'completed',
    });
    const cases: [Record<string, string>, string[]][] = [
      [{ agent: agent.id }, [a.id]],
      [{ agent: agent.id.toUpperCase() }, [a.id]],
      [{ analyzer_model: 'judge-b' }, [b.id]],
      [{ analyzer_model: 'judge' }, []],
      [{ data_source: 'seed' }, [a.id]],
      [{ prompt_slug: 'p2' }, [b.id]],
      [{ job_type: 'inference' }, [a.id]],
      [{ job_type: 'prompt_tuning' }, []],
      [{ status: 'completed' }, [b.id]],
      [{ project: second.id }, [b.id]],
      [{ project: project.id, status: 'completed' }, []],
      [{ status: '', agent: '' }, idsByCreation([a, b], 'newest first')],
    ];
    for (const [query, expected] of cases) assert.equal(ids(await member.client.get('/api/jobs/', query)), expected, JSON.stringify(query));
  }));

test('jobs filter by created_after and created_before, both inclusive, dates meaning midnight', () => {
  let now = Date.parse('2026-03-01T23:00:00Z');
  return withService(
    async ({ client }) => {
      const { member } = await memberWithProject(client);
      const first = await createJob(member.client);
      now = Date.parse('2026-03-02T12:00:00Z');
      const second = await createJob(member.client);
      const cases: [Record<string, string>, string[]][] = [
        [{ created_after: '2026-03-01T23:00:00Z' }, [second.id, first.id]],
        [{ created_after: '2026-03-01T23:00:00.001Z' }, [second.id]],
        [{ created_before: '2026-03-01T23:00:00Z' }, [first.id]],
        [{ created_before: '2026-03-01T22:59:59.999Z' }, []],
        [{ created_before: '2026-03-02' }, [first.id]],
        [{ created_after: '2026-03-02', created_before: '2026-03-02T13:00:00+01:00' }, [second.id]],
        [{ created_after: '2026-03-03' }, []],
      ];
      for (const [query, expected] of cases) assert.equal(ids(await member.client.get('/api/jobs/', query)), expected, JSON.stringify(query));
    },
    { clock: { nowMs: () => now } },
  );
});

test('score_min and score_max bound best_score inclusively and skip jobs without one', () =>
  withService(async ({ client }) => {
    const { member } = await memberWithProject(client);
    const low = await createJob(member.client, { best_score: 0.2, baseline_score: 0.9 });
    const high = await createJob(member.client, { best_score: 0.8, baseline_score: 0.1 });
    await createJob(member.client, { baseline_score: 0.5 });
    const both = idsByCreation([low, high], 'newest first');
    const cases: [Record<string, string>, string[]][] = [
      [{ score_min: '0.2' }, both],
      [{ score_min: '0.21' }, [high.id]],
      [{ score_max: '0.8' }, both],
      [{ score_max: '0.79' }, [low.id]],
      [{ score_min: '0.2', score_max: '0.2' }, [low.id]],
      [{ score_min: '-1e3' }, both],
      [{ score_min: ' .2 ', score_max: '+0.20' }, [low.id]],
      [{ score_min: '2E-1', score_max: '1.' }, both],
    ];
    for (const [query, expected] of cases) assert.equal(ids(await member.client.get('/api/jobs/', query)), expected, JSON.stringify(query));
  }));

test('unusable job filter values are 400 in django-filter wording', () =>
  withService(async ({ client }) => {
    const { member } = await memberWithProject(client);
    const cases: [Record<string, string>, Record<string, string[]>][] = [
      [{ score_min: 'abc' }, { score_min: ['Enter a number.'] }],
      [{ score_max: '0.5x' }, { score_max: ['Enter a number.'] }],
      [{ score_min: 'NaN' }, { score_min: ['Enter a number.'] }],
      // JavaScript's Number reads these; Python's Decimal does not.
      [{ score_min: '0x10' }, { score_min: ['Enter a number.'] }],
      [{ score_max: '0b1' }, { score_max: ['Enter a number.'] }],
      [{ score_max: '0o7' }, { score_max: ['Enter a number.'] }],
      [{ score_min: ' ' }, { score_min: ['Enter a number.'] }],
      [{ score_min: 'Infinity', score_max: '-1e400' }, { score_min: ['Enter a number.'], score_max: ['Enter a number.'] }],
      [{ score_min: '0x10', agent: 'x' }, { score_min: ['Enter a number.'], agent: ['Enter a valid UUID.'] }],
      [{ agent: 'x' }, { agent: ['Enter a valid UUID.'] }],
      [{ project: '123' }, { project: ['Enter a valid UUID.'] }],
      [{ created_after: 'yesterday' }, { created_after: ['Enter a valid date/time.'] }],
      [{ created_before: '2026-02-30' }, { created_before: ['Enter a valid date/time.'] }],
      [{ status: 'paused' }, { status: ['Select a valid choice. paused is not one of the available choices.'] }],
      [{ job_type: 'training' }, { job_type: ['Select a valid choice. training is not one of the available choices.'] }],
    ];
    for (const [query, errors] of cases) {
      const reply = await member.client.get('/api/jobs/', query);
      assert.is(reply.status, 400, JSON.stringify(query));
      assert.equal(reply.body, errors);
    }
  }));

test('job search matches prompt_slug, analyzer_model, job_type and status; every term must match', () =>
  withService(async ({ client }) => {
    const { member } = await memberWithProject(client);
    const a = await createJob(member.client, { prompt_slug: 'Summarise-Emails', analyzer_model: 'judge-large', job_type: 'inference' });
    const b = await createJob(member.client, { prompt_slug: 'classify', analyzer_model: 'judge small', status: 'running', job_type: 'prompt_tuning' });
    const cases: [string, string[]][] = [
      ['summarise', [a.id]],
      ['SMALL', [b.id]],
      ['tuning', [b.id]],
      ['runn', [b.id]],
      ['judge', idsByCreation([a, b], 'newest first')],
      ['judge pending', [a.id]],
      ['judge,large', [a.id]],
      ['"judge small" running', [b.id]],
      ['judge nothing', []],
    ];
    for (const [search, expected] of cases) assert.equal(ids(await member.client.get('/api/jobs/', { search })), expected, search);
    const notSearched = await member.client.get('/api/jobs/', { search: a.id });
    assert.is(notSearched.body.count, 0);
  }));

test('jobs order by whitelisted fields with ties broken by id; unknown fields are ignored', () => {
  let now = Date.parse('2026-03-01T00:00:00Z');
  return withService(
    async ({ client }) => {
      const { member } = await memberWithProject(client);
      const made: any[] = [];
      for (const score of [0.5, null, 0.9, 0.5]) {
        now += 1000;
        made.push(await createJob(member.client, { best_score: score, num_iterations: 3 }));
      }
      const [half, none, top, halfAgain] = made;
      const byScore = [half.id, halfAgain.id].sort();
      assert.equal(ids(await member.client.get('/api/jobs/', { ordering: 'best_score' })), [...byScore, top.id, none.id]);
      assert.equal(ids(await member.client.get('/api/jobs/', { ordering: '-best_score' })), [none.id, top.id, ...byScore.reverse()]);
      assert.equal(ids(await member.client.get('/api/jobs/', { ordering: 'created_at' })), made.map((job) => job.id));
      assert.equal(ids(await member.client.get('/api/jobs/', { ordering: 'report_markdown' })), made.map((job) => job.id).reverse());
      const byCount = ids(await member.client.get('/api/jobs/', { ordering: 'num_iterations' }));
      assert.equal(byCount, made.map((job) => job.id).sort());
    },
    { clock: { nowMs: () => now } },
  );
});

test('job lists are paginated with absolute links that keep the other parameters', () =>
  withService(async ({ client, url }) => {
    const { member } = await memberWithProject(client);
    for (let i = 0; i < 5; i++) await createJob(member.client, { status: 'running' });
    const first = await member.client.get('/api/jobs/', { status: 'running', page_size: 2 });
    assert.is(first.body.count, 5);
    assert.is(first.body.results.length, 2);
    assert.is(first.body.next, `${url}/api/jobs/?page=2&page_size=2&status=running`);
    const last = await member.client.get('/api/jobs/', { status: 'running', page_size: 2, page: 3 });
    assert.is(last.body.results.length, 1);
    assert.is(last.body.previous, `${url}/api/jobs/?page=2&page_size=2&status=running`);
    assert.is((await member.client.get('/api/jobs/', { page: 4, page_size: 2 })).status, 404);
  }));

test.run();
