// A graceful stop under keep-alive load: clients that keep sending on their connections do not
// hold the service open until its grace runs out; each connection is answered at most what was in
// flight and one more request, then closed.
import { Agent, request } from 'node:http';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { registerUser } from '../helpers/fixtures.ts';
import { start } from '../helpers/service.ts';

const connections = 4;

/** A project created over `agent`'s connections: a write, in flight until its commit is durable. */
function createProject(url: string, agent: Agent, access: string, slug: string): Promise<number> {
  const body = JSON.stringify({ name: slug, slug });
  return new Promise((resolve, reject) => {
    const headers = { authorization: `Bearer ${access}`, 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) };
    const outgoing = request(`${url}/api/projects/`, { method: 'POST', agent, headers }, (response) => {
      response.resume();
      response.on('end', () => resolve(response.statusCode!));
    });
    outgoing.on('error', reject);
    outgoing.end(body);
  });
}

test('a stop with clients sending on keep-alive connections ends as soon as their requests in flight are answered, not at the grace deadline', async () => {
  const running = await start({ lmdb: true });
  const { access } = await registerUser(running.client);
  const agent = new Agent({ keepAlive: true, maxSockets: connections });
  let stopping = false;
  let answeredAfterStop = 0;
  let answered = 0;
  const loops = Array.from({ length: connections }, async (_, connection) => {
    for (let i = 0; ; i++) {
      try {
        const status = await createProject(running.url, agent, access, `stop-${connection}-${i}`);
        assert.is(status, 201);
        answered++;
        if (stopping) answeredAfterStop++;
      } catch {
        return; // the connection was closed, and no new one is accepted
      }
    }
  });
  try {
    while (answered < 200) await new Promise((resolve) => setTimeout(resolve, 10));
    stopping = true;
    const began = performance.now();
    await running.stop();
    const took = performance.now() - began;
    await Promise.all(loops);
    assert.ok(took < 3000, `the stop took ${took.toFixed(0)} ms (the grace is 10 s)`);
    assert.ok(answeredAfterStop <= 2 * connections, `${answeredAfterStop} requests were answered after the stop began`);
  } finally {
    agent.destroy();
  }
});

test.run();
