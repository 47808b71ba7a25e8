// A graceful stop under keep-alive load: clients that keep sending on their connections do not
// hold the service open until its grace runs out, and every request the service carries out is
// answered, pipelined ones too.
import { Agent, request } from 'node:http';
import { connect, type Socket } from 'node:net';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { createAgent } from '../helpers/agent-fixtures.ts';
import { memberWithProject, registerUser } from '../helpers/fixtures.ts';
import { start, type Running } from '../helpers/service.ts';

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
  const failures: string[] = [];
  const loops = Array.from({ length: connections }, async (_, connection) => {
    for (let i = 0; ; i++) {
      try {
        const status = await createProject(running.url, agent, access, `stop-${connection}-${i}`);
        assert.is(status, 201);
        answered++;
        if (stopping) answeredAfterStop++;
      } catch (error) {
        // The answer before closed the connection, and no new one is accepted: nothing sent was lost.
        failures.push((error as NodeJS.ErrnoException).code ?? String(error));
        return;
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
    assert.ok(took < 3000, `the stop took ${took.toFixed(0)} ms (the grace is 10 s), ${answeredAfterStop} answers after it began`);
    assert.ok(answeredAfterStop <= 2 * connections, `${answeredAfterStop} answers after the stop began: what was in flight and one more a connection`);
    assert.equal(failures, Array(connections).fill('ECONNREFUSED'), 'each client learned of the stop by a refused connection, not by a request sent and lost');
  } finally {
    agent.destroy();
  }
});

/** A raw TCP connection to the service: what it has received so far, and when it closes. */
async function rawConnection(url: string): Promise<{ socket: Socket; received: () => string; closed: Promise<unknown> }> {
  const socket = connect(Number(new URL(url).port), '127.0.0.1');
  await new Promise((resolve) => socket.once('connect', resolve));
  let received = '';
  socket.on('data', (chunk) => (received += chunk));
  socket.on('error', () => {});
  return { socket, received: () => received, closed: new Promise((resolve) => socket.once('close', resolve)) };
}

/** A project's POST as raw HTTP/1.1 text. */
function rawPost(access: string, slug: string): string {
  const body = JSON.stringify({ name: slug, slug });
  return `POST /api/projects/ HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${access}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;
}

/** Each answer's status and Connection header, in the order received. */
function answersOf(received: string): string[][] {
  return [...received.matchAll(/HTTP\/1\.1 (\d{3}) [^]*?connection: ([a-z-]+)/gi)].map((match) => [match[1]!, match[2]!.toLowerCase()]);
}

/** The slugs of the projects a stopped service's store holds, read by a service started again on it (then stopped). */
async function projectSlugsAfterRestart(stopped: Running, access: string): Promise<string[]> {
  const running = await start({ lmdb: true, dataDir: stopped.dataDir! });
  try {
    return (await running.client.as({ token: access }).get('/api/projects/')).body.results.map((project: any) => project.slug);
  } finally {
    await running.stop();
  }
}

test('a keep-alive connection idle when the stop begins is not cut: the request its client sends next is carried out and answered, closing it', async () => {
  const running = await start({ lmdb: true });
  const { access } = await registerUser(running.client);
  const { socket, received, closed } = await rawConnection(running.url);
  socket.write(rawPost(access, 'before'));
  while (!/\r\n\r\n\{/.test(received())) await new Promise((resolve) => setTimeout(resolve, 5));
  const stopping = running.service.close();
  await new Promise((resolve) => setTimeout(resolve, 100));
  socket.write(rawPost(access, 'after'));
  await closed;
  await stopping;
  assert.equal(answersOf(received()), [['201', 'keep-alive'], ['201', 'close']]);
  assert.equal((await projectSlugsAfterRestart(running, access)).sort(), ['after', 'before']);
});

test('pipelined writes on a connection whose first request is in flight as the stop begins: the first is carried out and answered, closing the connection; those behind it are not carried out', async () => {
  const running = await start({ lmdb: true });
  const { access } = await registerUser(running.client);
  const { socket, received, closed } = await rawConnection(running.url);
  // The first request half sent when the stop begins; the rest of it and two more behind it in one write.
  const first = rawPost(access, 'pipe-1');
  socket.write(first.slice(0, -5));
  await new Promise((resolve) => setTimeout(resolve, 100));
  const stopping = running.service.close();
  await new Promise((resolve) => setTimeout(resolve, 20));
  socket.write(first.slice(-5) + rawPost(access, 'pipe-2') + rawPost(access, 'pipe-3'));
  await closed;
  await stopping;
  const answered = [...received().matchAll(/HTTP\/1\.1 (\d{3}) /g)].map((match) => match[1]);
  const created = await projectSlugsAfterRestart(running, access);
  assert.is(answered.length, created.length, `${created.length} projects were created, ${answered.length} answers received`);
  assert.equal([answered, created], [['201'], ['pipe-1']], 'the first in flight (its headers read before the stop) answered, closing the connection; those behind it not carried out');
  assert.match(received(), /connection: close/i);
});

test('a request in flight for longer than the idle sweep waits at the stop: its answer closes the connection, so its client sends nothing more on it to be cut', async () => {
  const running = await start({ lmdb: true });
  const { access } = await registerUser(running.client);
  const { socket, received, closed } = await rawConnection(running.url);
  // Its headers read before the stop, its body's last bytes half a second after it.
  const first = rawPost(access, 'slow');
  socket.write(first.slice(0, -5));
  await new Promise((resolve) => setTimeout(resolve, 50));
  const stopping = running.service.close();
  await new Promise((resolve) => setTimeout(resolve, 500));
  socket.write(first.slice(-5));
  await closed;
  await stopping;
  assert.equal(answersOf(received()), [['201', 'close']]);
  assert.equal(await projectSlugsAfterRestart(running, access), ['slow']);
});

test('an answer of many megabytes to a client that reads it slowly is not cut by the sweep of idle connections: it arrives whole, then the stop ends', async () => {
  const running = await start({ lmdb: true });
  try {
    const { member, project } = await memberWithProject(running.client);
    const agent = await createAgent(member.client, project.id);
    // 24 MB of datapoints: more than the kernel's socket buffers hold, so the answer waits in the service.
    const datapoints = Array.from({ length: 24 }, (_, order) => ({ input: { text: 'x'.repeat(1_000_000) }, expected_output: String(order) }));
    const dataset = await member.client.post('/api/datasets/', { agent: agent.id, datapoints });
    assert.is(dataset.status, 201);
    const { socket, received, closed } = await rawConnection(running.url);
    socket.pause();
    socket.write(`GET /api/datasets/${dataset.body.id}/ HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${member.access}\r\n\r\n`);
    await new Promise((resolve) => setTimeout(resolve, 300));
    const began = performance.now();
    const stopping = running.service.close();
    // Longer than the first sweep and several after it.
    await new Promise((resolve) => setTimeout(resolve, 800));
    socket.resume();
    await closed;
    await stopping;
    const text = received();
    const length = Number(/content-length: (\d+)/i.exec(text)?.[1]);
    const bodyBytes = Buffer.byteLength(text.slice(text.indexOf('\r\n\r\n') + 4));
    assert.ok(length > 24_000_000, `content-length ${length}`);
    assert.is(bodyBytes, length, 'the whole answer arrived');
    assert.ok(performance.now() - began < 5000, 'the stop ended once it was read, not at the grace deadline');
  } finally {
    await running.stop();
  }
});

test.run();
