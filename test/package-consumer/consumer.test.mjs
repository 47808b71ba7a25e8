// A project that installed the packed tarball (`npm install overmind-eval-service-0.1.0.tgz`) and
// tests against the service, in plain JavaScript with node:test: `.ci/run` copies this file into
// a temporary project outside the repository, installs the tarball there and runs
// `node --test consumer.test.mjs`. Not an uvu test (test/run.ts runs *.test.ts only).
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { createService } from 'overmind-eval-service';

const options = { storage: 'memory', logLevel: 'silent', passwordHashCost: 1024 };
const running = [];
after(() => Promise.all(running.map((service) => service.close())));

/** A fresh in-memory service listening on a free port; closed after the tests. */
async function freshService() {
  const service = await createService(options);
  running.push(service);
  const { port } = await service.listen(0, '127.0.0.1');
  return `http://127.0.0.1:${port}`;
}

async function call(base, method, path, body, token) {
  const response = await fetch(base + path, {
    method,
    headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  return { status: response.status, body: text ? JSON.parse(text) : undefined };
}

async function signUp(base) {
  const password = 'correct horse';
  const reply = await call(base, 'POST', '/api/auth/register/', { email: 'team@example.com', password, password_confirm: password });
  assert.equal(reply.status, 201, JSON.stringify(reply.body));
  return reply.body.access;
}

test('two fresh in-memory services are independent', async () => {
  const [a, b] = await Promise.all([freshService(), freshService()]);
  const [tokenA, tokenB] = [await signUp(a), await signUp(b)];
  const inA = await call(a, 'POST', '/api/projects/', { name: 'Team A', slug: 'team-a' }, tokenA);
  const inB = await call(b, 'POST', '/api/projects/', { name: 'Team B', slug: 'team-b' }, tokenB);
  assert.equal(inA.status, 201);
  assert.equal(inB.status, 201);
  const listA = await call(a, 'GET', '/api/projects/', undefined, tokenA);
  const listB = await call(b, 'GET', '/api/projects/', undefined, tokenB);
  assert.deepEqual(listA.body.results.map((project) => project.slug), ['team-a']);
  assert.deepEqual(listB.body.results.map((project) => project.slug), ['team-b']);
  assert.equal((await call(b, 'GET', '/api/projects/', undefined, tokenA)).status, 401, "A's token means nothing to B");
});

test('the start command prints its address first and answers /health/ there', async () => {
  const bin = fileURLToPath(new URL('./node_modules/.bin/overmind-eval-service', import.meta.url));
  assert.ok(existsSync(bin), `the package's bin is installed at ${bin}`);
  const child = spawn(bin, ['--memory', '--port', '0'], { stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (chunk) => (stderr += chunk));
  const exited = new Promise((resolve) => child.once('close', (code, signal) => resolve(code ?? signal)));
  try {
    const lines = createInterface({ input: child.stdout });
    const url = await new Promise((resolve, reject) => {
      lines.once('line', resolve);
      exited.then((code) => reject(new Error(`the command ended (${code}) before printing its address:\n${stderr}`)));
    });
    assert.match(url, /^http:\/\/127\.0\.0\.1:\d+$/);
    const health = await fetch(`${url}/health/`);
    assert.equal(health.status, 200);
    assert.equal((await health.json()).status, 'healthy');
    child.kill('SIGTERM');
    assert.equal(await exited, 0, stderr);
  } finally {
    child.kill('SIGKILL');
  }
});
