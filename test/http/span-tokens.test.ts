// Span tokens: what an agent under test may hold to export its spans (the worker command hands one
// to every command it runs, instead of the API key it keeps to itself): good for span export to
// one project, and nothing else; spans sent with one never write results.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { createAgent } from '../helpers/agent-fixtures.ts';
import { createApiKey, createProject, memberWithProject, registerUser } from '../helpers/fixtures.ts';
import { evaluated, resultsPath } from '../helpers/result-fixtures.ts';
import { withService } from '../helpers/service.ts';
import { baseNs, ms, otlpJson, postJson, spanId, traceId } from '../traces/helpers.ts';

test('an API key issues a span token for its project: spans go there with it, and it opens nothing else', () =>
  withService(async ({ client, url }) => {
    const { member, project } = await memberWithProject(client);
    const other = await createProject(member.client);
    const key = await createApiKey(member.client, project.id);
    const issued = await client.as({ apiKey: key.key }).post('/api/auth/span-tokens/', {});
    assert.is(issued.status, 201, issued.text);
    assert.equal(Object.keys(issued.body).sort(), ['expires_at', 'project', 'token']);
    assert.is(issued.body.project, project.id);
    const hours = (Date.parse(issued.body.expires_at) - Date.now()) / 3_600_000;
    assert.ok(hours > 23.9 && hours <= 24, `${hours} hours`);
    const spanClient = client.as({ token: issued.body.token });
    // Its resource names another project of the member's: a span token's spans go to its own.
    const exported = await postJson(spanClient, otlpJson({ 'service.name': 'agent', 'overmind.project.id': other.id }, [
      { traceId: traceId(1), spanId: spanId(1), name: 'tool.search', start: baseNs, end: baseNs + ms(5) },
    ]));
    assert.is(exported.status, 200, exported.text);
    const trace = await member.client.get(`/api/traces/${traceId(1)}/`);
    assert.equal([trace.status, trace.body.root.project], [200, project.id]);
    for (const path of ['/api/agents/', '/api/auth/me/', `/api/traces/${traceId(1)}/`, '/api/events/']) {
      const refused = await spanClient.get(path);
      assert.equal([refused.status, refused.body.code], [401, 'token_not_valid'], path);
    }
    const again = await spanClient.post('/api/auth/span-tokens/', {});
    assert.is(again.status, 401, 'a span token issues nothing');
    const apiPath = await fetch(`${url}/api/v1/traces`, {
      method: 'POST',
      headers: { authorization: `Bearer ${issued.body.token}`, 'content-type': 'application/json' },
      body: JSON.stringify(otlpJson({ 'service.name': 'agent' }, [{ traceId: traceId(2), spanId: spanId(2), start: baseNs, end: baseNs }])),
    });
    assert.is(apiPath.status, 200, 'the API path of span export takes it too');

    assert.is((await member.client.delete(`/api/auth/api-keys/${key.id}/`)).status, 204);
    const revoked = await postJson(spanClient, otlpJson({ 'service.name': 'agent' }, [{ traceId: traceId(3), spanId: spanId(3), start: baseNs, end: baseNs }]));
    assert.equal([revoked.status, revoked.body.code], [401, 'token_not_valid'], 'its key revoked, it stops');
    const tampered = await postJson(client.as({ token: `${issued.body.token.slice(0, -2)}xx` }), otlpJson({ 'service.name': 'agent' }, []));
    assert.is(tampered.status, 401);
  }));

test('a user names the project (or has only one); a project the caller cannot see is refused as any reference is', () =>
  withService(async ({ client }) => {
    const { member, project } = await memberWithProject(client);
    const only = await member.client.post('/api/auth/span-tokens/', {});
    assert.equal([only.status, only.body.project], [201, project.id]);
    const second = await createProject(member.client);
    const ambiguous = await member.client.post('/api/auth/span-tokens/', {});
    assert.equal([ambiguous.status, ambiguous.body], [400, { project: ['This field is required.'] }]);
    assert.equal((await member.client.post('/api/auth/span-tokens/', { project: second.id })).body.project, second.id);
    const stranger = await registerUser(client);
    const refused = await stranger.client.post('/api/auth/span-tokens/', { project: project.id });
    assert.equal([refused.status, refused.body], [400, { project: [`Invalid pk "${project.id}" - object does not exist.`] }]);
    const key = await createApiKey(member.client, project.id);
    const elsewhere = await client.as({ apiKey: key.key }).post('/api/auth/span-tokens/', { project: second.id });
    assert.is(elsewhere.status, 400, 'an API key names only its own project');

    // A user's span token stops when its user leaves the project, as a key's stops when it is revoked.
    const membership = await member.client.post(`/api/projects/${second.id}/memberships/`, { user_id: stranger.id });
    assert.is(membership.status, 201, membership.text);
    const joined = await stranger.client.post('/api/auth/span-tokens/', { project: second.id });
    assert.is(joined.status, 201, joined.text);
    const spans = (n: number) => otlpJson({ 'service.name': 'agent' }, [{ traceId: traceId(n), spanId: spanId(n), start: baseNs, end: baseNs }]);
    assert.is((await postJson(client.as({ token: joined.body.token }), spans(4))).status, 200);
    assert.is((await member.client.delete(`/api/projects/${second.id}/memberships/${membership.body.id}/`)).status, 204);
    const left = await postJson(client.as({ token: joined.body.token }), spans(5));
    assert.equal([left.status, left.body.code], [401, 'token_not_valid'], left.text);
  }));

test('spans sent with a span token never write results, though they report one', () =>
  withService(async ({ client }) => {
    const { member, project } = await memberWithProject(client);
    const { dataset, iteration } = await evaluated(member.client, project.id, 2);
    const token = (await member.client.post('/api/auth/span-tokens/', {})).body.token as string;
    const reporting = (n: number) => otlpJson({ 'service.name': 'agent', 'overmind.dataset.id': dataset.id }, [
      { traceId: traceId(n), spanId: spanId(n), name: 'case', start: baseNs, end: baseNs + ms(1),
        attributes: { 'overmind.iteration.id': iteration.id, 'overmind.datapoint.id': dataset.datapoints[0].id, 'overmind.eval.score': 1 } },
    ]);
    assert.is((await postJson(client.as({ token }), reporting(1))).status, 200);
    assert.is((await member.client.get(`/api/traces/${traceId(1)}/`)).body.span_count, 1, 'the span is stored');
    assert.is((await member.client.get(resultsPath(iteration))).body.count, 0, 'no result written');
    const key = await createApiKey(member.client, project.id);
    assert.is((await postJson(client.as({ apiKey: key.key }), reporting(2))).status, 200);
    assert.is((await member.client.get(resultsPath(iteration))).body.count, 1, 'the same span sent with the key writes its result');
  }));

test('a span token links spans to an agent by name only when the agent exists: it creates none', () =>
  withService(async ({ client }) => {
    const { member, project } = await memberWithProject(client);
    const existing = await createAgent(member.client, project.id, { name: 'Support Bot', slug: 'support-bot' });
    const token = (await member.client.post('/api/auth/span-tokens/', {})).body.token as string;
    const named = (n: number, name: string) => otlpJson({ 'service.name': 'agent', 'overmind.agent.name': name }, [{ traceId: traceId(n), spanId: spanId(n), start: baseNs, end: baseNs }]);
    assert.is((await postJson(client.as({ token }), named(1, 'Support Bot'))).status, 200);
    assert.is((await postJson(client.as({ token }), named(2, 'Invented Agent'))).status, 200);
    assert.equal((await member.client.get('/api/agents/')).body.results.map((agent: any) => agent.id), [existing.id], 'no agent created');
    assert.is((await member.client.get(`/api/traces/${traceId(1)}/`)).body.root.agent, existing.id);
    assert.is((await member.client.get(`/api/traces/${traceId(2)}/`)).body.root.agent, null);
  }));

test.run();
