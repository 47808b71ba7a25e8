// GET /api/datasets/{id}/diff/{other_id}/: what one version of an agent's dataset removes,
// changes and adds against another, datapoints matched by canonical input.
import canonicalize from 'canonicalize';
import { createHash } from 'node:crypto';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { createAgent } from '../helpers/agent-fixtures.ts';
import type { Client } from '../helpers/client.ts';
import { createApiKey, createProject, memberWithProject } from '../helpers/fixtures.ts';
import { start, withService } from '../helpers/service.ts';

const missingId = '00000000-0000-4000-8000-000000000000';

async function postVersion(client: Client, agent: string, datapoints: Record<string, unknown>[]): Promise<any> {
  const reply = await client.post('/api/datasets/', { agent, datapoints });
  assert.is(reply.status, 201, reply.text);
  return reply.body;
}

/** A member, an agent, and a function posting versions of its dataset. */
async function agentOfNewMember(client: Client) {
  const { member, project } = await memberWithProject(client);
  const agent = await createAgent(member.client, project.id);
  return { member, project, agent, version: (datapoints: Record<string, unknown>[]) => postVersion(member.client, agent.id, datapoints) };
}

const diffPath = (from: { id: string }, to: { id: string }) => `/api/datasets/${from.id}/diff/${to.id}/`;

test('identical versions list nothing: every datapoint is unchanged and the content hashes are equal', () =>
  withService(async ({ client }) => {
    const { member, version } = await agentOfNewMember(client);
    const points = [
      { input: { q: 'one' }, expected_output: 'a', persona: 'p', tags: ['x'] },
      { input: { q: 'two' }, expected_output: { nested: [1, 2] } },
    ];
    const first = await version(points);
    const second = await version(points);
    const reply = await member.client.get(diffPath(first, second));
    assert.is(reply.status, 200, reply.text);
    assert.equal(Object.keys(reply.body), ['count', 'next', 'previous', 'results', 'summary']);
    assert.equal({ ...reply.body, summary: undefined }, { count: 0, next: null, previous: null, results: [], summary: undefined });
    const { summary } = reply.body;
    assert.equal(summary.from, { id: first.id, version: 1, content_hash: summary.from.content_hash, num_datapoints: 2 });
    assert.equal(summary.to, { id: second.id, version: 2, content_hash: summary.from.content_hash, num_datapoints: 2 });
    assert.equal({ ...summary, from: undefined, to: undefined }, { from: undefined, to: undefined, added: 0, removed: 0, changed: 0, unchanged: 2 });
    // A version against itself is the same.
    assert.equal((await member.client.get(diffPath(first, first))).body.summary.unchanged, 2);
  }));

test('content_hash is sha256 of the canonical JSON (RFC 8785) of the datapoints\' content in stored order, ids and times left out', () =>
  withService(async ({ client }) => {
    const { member, version } = await agentOfNewMember(client);
    const dataset = await version([
      { input: { z: 1, a: [true, null, 'é'] }, expected_output: 2.5, tags: { b: 1, a: 2 }, order: 2 },
      // Its order defaults to its index, 1: it is stored first.
      { input: 'first', persona: 'novice' },
    ]);
    const canonical =
      '[{"expected_output":null,"input":"first","order":1,"persona":"novice","tags":null},' +
      '{"expected_output":2.5,"input":{"a":[true,null,"é"],"z":1},"order":2,"persona":"","tags":{"a":2,"b":1}}]';
    const expected = `sha256:${createHash('sha256').update(canonical, 'utf8').digest('hex')}`;
    const reply = await member.client.get(diffPath(dataset, dataset));
    assert.is(reply.body.summary.from.content_hash, expected);
  }));

test('a client recomputes content_hash from the datapoints listing with an RFC 8785 implementation and SHA-256', () =>
  withService(async ({ client }) => {
    const { member, agent } = await agentOfNewMember(client);
    // Sent as text, so that the numbers arrive as written.
    const body =
      '{"agent":"' + agent.id + '","datapoints":[' +
      '{"input":{"\\ufffd":1,"\\ud83d\\ude00":2,"\\u00e9":3,"\\ue000":[0.1,-0,1e21,1E-7]},"expected_output":{"10":1,"9":2,"\\udbff\\udfff":9007199254740993},"order":3},' +
      '{"input":[123456789012345678901234567890,-9223372036854775808,5e-324,0.30000000000000004],"persona":"na\\u00efve \\ud83d\\ude00","tags":["\\u2028"],"order":1},' +
      '{"input":"plain","expected_output":{"":null,"\\u0000":true,"a\\\\b":"\\"quoted\\""},"order":2}]}';
    const dataset = await member.client.request('POST', '/api/datasets/', body, { 'content-type': 'application/json' });
    assert.is(dataset.status, 201, dataset.text);
    const listed = await member.client.get(`/api/datasets/${dataset.body.id}/datapoints/`, { page_size: 100 });
    assert.equal(listed.body.results.map((point: { order: number }) => point.order), [1, 2, 3], 'stored order');
    const content = listed.body.results.map(({ expected_output, input, order, persona, tags }: Record<string, unknown>) => ({ expected_output, input, order, persona, tags }));
    const expected = `sha256:${createHash('sha256').update(canonicalize(content)!, 'utf8').digest('hex')}`;
    const reply = await member.client.get(diffPath(dataset.body, dataset.body));
    assert.is(reply.body.summary.from.content_hash, expected);
    // Keys in UTF-16 code unit order: the astral key comes before U+E000..U+FFFF.
    assert.match(canonicalize(content)!, /"input":\{"\u00e9":3,"\u{1F600}":2,"\uE000":\[0\.1,0,1e\+21,1e-7\],"\uFFFD":1\}/u);
  }));

test('the content hash is the same after a restart', async () => {
  const first = await start({ lmdb: true });
  let hash: string;
  let path: string;
  let access: string;
  try {
    const { member, version } = await agentOfNewMember(first.client);
    const dataset = await version([{ input: { b: 1, a: 2 }, expected_output: 'x' }]);
    path = diffPath(dataset, dataset);
    access = member.access;
    hash = (await member.client.get(path)).body.summary.from.content_hash;
  } finally {
    await first.stop({ keepData: true });
  }
  await withService(async ({ client }) => {
    const reply = await client.as({ token: access }).get(path);
    assert.is(reply.status, 200, reply.text);
    assert.is(reply.body.summary.to.content_hash, hash);
  }, { lmdb: true, dataDir: first.dataDir });
});

test('empty versions: nothing against nothing, everything added to or removed from nothing', () =>
  withService(async ({ client }) => {
    const { member, version } = await agentOfNewMember(client);
    const empty = await version([]);
    const alsoEmpty = await version([]);
    const full = await version([{ input: 'a' }, { input: 'b' }]);
    const none = await member.client.get(diffPath(empty, alsoEmpty));
    assert.is(none.body.count, 0);
    assert.equal(none.body.summary.from.content_hash, none.body.summary.to.content_hash);
    assert.is(none.body.summary.from.content_hash, `sha256:${createHash('sha256').update('[]').digest('hex')}`);
    const grown = await member.client.get(diffPath(empty, full));
    assert.equal(grown.body.results.map((entry: any) => [entry.change, entry.before, entry.after.input]), [['added', null, 'a'], ['added', null, 'b']]);
    assert.equal(grown.body.results.map((entry: any) => entry.after), full.datapoints);
    const emptied = await member.client.get(diffPath(full, empty));
    assert.equal(emptied.body.results.map((entry: any) => [entry.change, entry.before, entry.after]), full.datapoints.map((point: any) => ['removed', point, null]));
    assert.equal({ ...emptied.body.summary, from: 0, to: 0 }, { from: 0, to: 0, added: 0, removed: 2, changed: 0, unchanged: 0 });
  }));

test('inputs match whatever their key order, and reordered keys elsewhere change nothing either', () =>
  withService(async ({ client }) => {
    const { member, version } = await agentOfNewMember(client);
    const first = await version([{ input: { a: 1, b: { c: [1, { x: 1, y: 2 }], d: 'e' } }, expected_output: { ok: true, score: 1 }, tags: [{ k: 1, j: 2 }] }]);
    const second = await version([{ input: { b: { d: 'e', c: [1, { y: 2, x: 1 }] }, a: 1 }, expected_output: { score: 1, ok: true }, tags: [{ j: 2, k: 1 }] }]);
    const reply = await member.client.get(diffPath(first, second));
    assert.is(reply.body.count, 0);
    assert.is(reply.body.summary.unchanged, 1);
    assert.is(reply.body.summary.from.content_hash, reply.body.summary.to.content_hash);
    // Array order is content: a reordered array is another input.
    const third = await version([{ input: { a: 1, b: { c: [{ x: 1, y: 2 }, 1], d: 'e' } }, expected_output: { ok: true, score: 1 }, tags: [{ k: 1, j: 2 }] }]);
    const changed = await member.client.get(diffPath(first, third));
    assert.equal(changed.body.results.map((entry: any) => entry.change), ['removed', 'added']);
  }));

test('repeated inputs pair in order: the k-th with the k-th, the extras removed or added', () =>
  withService(async ({ client }) => {
    const { member, version } = await agentOfNewMember(client);
    const first = await version([
      { input: 'same', expected_output: 1 },
      { input: 'other', expected_output: 'kept' },
      { input: 'same', expected_output: 2 },
      { input: 'twice', expected_output: 'x' },
      { input: 'twice', expected_output: 'y' },
    ]);
    const second = await version([
      { input: 'same', expected_output: 1 },
      { input: 'other', expected_output: 'kept' },
      { input: 'same', expected_output: 3 },
      { input: 'same', expected_output: 4 },
      { input: 'twice', expected_output: 'x' },
    ]);
    const reply = await member.client.get(diffPath(first, second));
    const rows = reply.body.results.map((entry: any) => [entry.change, entry.before?.expected_output ?? null, entry.after?.expected_output ?? null]);
    // The second "same" pairs with the second (its output changed), the third is new; the one
    // "twice" left pairs with the first (its order moved from 3 to 4), the second is gone.
    assert.equal(rows, [['changed', 2, 3], ['added', null, 4], ['removed', 'y', null], ['changed', 'x', 'x']]);
    assert.equal(reply.body.results[3].before.order, 3);
    assert.equal(reply.body.results[3].after.order, 4);
    assert.equal({ ...reply.body.summary, from: 0, to: 0 }, { from: 0, to: 0, added: 1, removed: 1, changed: 2, unchanged: 2 });
  }));

test('every kind of change, by the order of its datapoint, removed before changed before added at one order', () =>
  withService(async ({ client }) => {
    const { member, version } = await agentOfNewMember(client);
    const first = await version([
      { input: 'output', expected_output: 'old', order: 0 },
      { input: 'persona', persona: 'old', order: 1 },
      { input: 'tags', tags: ['old'], order: 2 },
      { input: 'moved', order: 3 },
      { input: 'gone', order: 5 },
      { input: 'same', order: 6 },
    ]);
    const second = await version([
      { input: 'output', expected_output: 'new', order: 0 },
      { input: 'persona', persona: 'new', order: 1 },
      { input: 'tags', tags: ['new'], order: 2 },
      { input: 'new at 5', order: 5 },
      { input: 'also new at 5', order: 5 },
      { input: 'same', order: 6 },
      { input: 'moved', order: 9 },
    ]);
    const reply = await member.client.get(diffPath(first, second));
    assert.is(reply.status, 200, reply.text);
    const rows = reply.body.results.map((entry: any) => [entry.change, (entry.after ?? entry.before).input, (entry.after ?? entry.before).order]);
    assert.equal(rows, [
      ['changed', 'output', 0],
      ['changed', 'persona', 1],
      ['changed', 'tags', 2],
      ['removed', 'gone', 5],
      ['added', 'new at 5', 5],
      ['added', 'also new at 5', 5],
      ['changed', 'moved', 9],
    ]);
    // Each side is the datapoint as the datapoints listing answers it.
    const listed = async (dataset: any) => (await member.client.get(`/api/datasets/${dataset.id}/datapoints/`)).body.results;
    const [before, after] = [await listed(first), await listed(second)];
    for (const entry of reply.body.results) {
      if (entry.before) assert.ok(before.some((point: any) => JSON.stringify(point) === JSON.stringify(entry.before)));
      if (entry.after) assert.ok(after.some((point: any) => JSON.stringify(point) === JSON.stringify(entry.after)));
    }
    assert.equal({ ...reply.body.summary, from: 0, to: 0 }, { from: 0, to: 0, added: 2, removed: 1, changed: 4, unchanged: 1 });
  }));

test('at one order a removed datapoint comes before a changed one, and that before an added one', () =>
  withService(async ({ client }) => {
    const { member, version } = await agentOfNewMember(client);
    const first = await version([{ input: 'changed', expected_output: 1, order: 7 }, { input: 'removed', order: 7 }]);
    const second = await version([{ input: 'added', order: 7 }, { input: 'changed', expected_output: 2, order: 7 }]);
    const reply = await member.client.get(diffPath(first, second));
    // The kind decides before the position: the added datapoint is stored first.
    assert.equal(reply.body.results.map((entry: any) => [entry.change, (entry.after ?? entry.before).input]), [
      ['removed', 'removed'], ['changed', 'changed'], ['added', 'added'],
    ]);
  }));

test('changes are paginated like every list, and `change` keeps one kind while the summary counts all', () =>
  withService(async ({ client }) => {
    const { member, version } = await agentOfNewMember(client);
    const range = (count: number, make: (i: number) => Record<string, unknown>) => Array.from({ length: count }, (_, i) => make(i));
    const first = await version([...range(30, (i) => ({ input: `kept ${i}`, order: i })), ...range(20, (i) => ({ input: `dropped ${i}`, order: 100 + i }))]);
    const second = await version([...range(30, (i) => ({ input: `kept ${i}`, order: i, persona: i % 2 ? 'odd' : '' })), ...range(40, (i) => ({ input: `new ${i}`, order: 200 + i }))]);
    const path = diffPath(first, second);
    const page1 = await member.client.get(path);
    assert.is(page1.body.count, 75);
    assert.is(page1.body.results.length, 25);
    assert.is(page1.body.previous, null);
    assert.match(page1.body.next, /\/api\/datasets\/[^/]+\/diff\/[^/]+\/\?page=2$/);
    const all = await member.client.listAll(path);
    assert.is(all.length, 75);
    assert.equal(all.map((entry: any) => entry.change), [...Array(15).fill('changed'), ...Array(20).fill('removed'), ...Array(40).fill('added')]);
    const last = await member.client.get(path, { page: 'last', page_size: 10 });
    assert.equal(last.body.results, all.slice(70));
    assert.is((await member.client.get(path, { page: 9, page_size: 10 })).status, 404);

    const removed = await member.client.get(path, { change: 'removed', page_size: 15, page: 2 });
    assert.is(removed.body.count, 20);
    assert.equal(removed.body.results, all.filter((entry: any) => entry.change === 'removed').slice(15));
    assert.match(removed.body.previous, /\?change=removed&page_size=15$/);
    assert.equal(removed.body.summary, page1.body.summary);
    assert.equal({ ...page1.body.summary, from: 0, to: 0 }, { from: 0, to: 0, added: 40, removed: 20, changed: 15, unchanged: 15 });
    for (const change of ['added', 'changed']) {
      const only = await member.client.listAll(path, { change });
      assert.equal(only, all.filter((entry: any) => entry.change === change), change);
    }
    const bad = await member.client.get(path, { change: 'moved' });
    assert.is(bad.status, 400);
    assert.equal(bad.body, { change: ['Select a valid choice. moved is not one of the available choices.'] });
  }));

test('versions of two agents are 400; an unknown, malformed or invisible version is 404', () =>
  withService(async ({ client }) => {
    const { member, project, version } = await agentOfNewMember(client);
    const mine = await version([{ input: 'a' }]);
    const otherAgent = await createAgent(member.client, project.id);
    const theirs = await postVersion(member.client, otherAgent.id, [{ input: 'a' }]);
    const mixed = await member.client.get(diffPath(mine, theirs));
    assert.is(mixed.status, 400);
    assert.equal(mixed.body, { non_field_errors: ['Both dataset versions must belong to the same agent.'] });

    const notFound = { detail: 'Not found.', code: 'not_found' };
    for (const path of [diffPath(mine, { id: missingId }), diffPath({ id: missingId }, mine), `/api/datasets/${mine.id}/diff/not-a-uuid/`]) {
      const reply = await member.client.get(path);
      assert.is(reply.status, 404, path);
      assert.equal(reply.body, notFound);
    }
    // Another tenant sees neither version, whichever side it names, even with a version of its own.
    const stranger = await agentOfNewMember(client);
    const strangers = await stranger.version([{ input: 'a' }]);
    for (const path of [diffPath(mine, mine), diffPath(strangers, mine), diffPath(mine, strangers)]) {
      const reply = await stranger.member.client.get(path);
      assert.is(reply.status, 404, path);
      assert.equal(reply.body, notFound);
    }
    // An API key sees its own project only.
    const otherProject = await createProject(member.client);
    const key = await createApiKey(member.client, otherProject.id);
    assert.is((await client.as({ apiKey: key.key }).get(diffPath(mine, mine))).status, 404);
    assert.is((await client.get(diffPath(mine, mine))).status, 401);
  }));

test('datasets of a soft-deleted agent can still be compared', () =>
  withService(async ({ client }) => {
    const { member, agent, version } = await agentOfNewMember(client);
    const first = await version([{ input: 'a' }]);
    const second = await version([{ input: 'b' }]);
    assert.is((await member.client.delete(`/api/agents/${agent.id}/`)).status, 204);
    const reply = await member.client.get(diffPath(first, second));
    assert.is(reply.status, 200, reply.text);
    assert.is(reply.body.count, 2);
  }));

test('diffCacheEntriesMax: diffs past the limit are forgotten and computed again, with the same answers', () =>
  withService(
    async ({ client }) => {
      const { member, version } = await agentOfNewMember(client);
      const versions = [await version([{ input: 'a' }]), await version([{ input: 'b' }]), await version([{ input: 'a', persona: 'p' }])];
      const first = await member.client.get(diffPath(versions[0], versions[1]));
      // Two more diffs push the first out of a cache of one.
      await member.client.get(diffPath(versions[1], versions[2]));
      await member.client.get(diffPath(versions[0], versions[2]));
      assert.equal((await member.client.get(diffPath(versions[0], versions[1]))).body, first.body);
    },
    { limits: { diffCacheEntriesMax: 1 } },
  ));

test.run();
