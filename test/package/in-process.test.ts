// The service as another project's tests use it (docs/TESTING.md): through the package's entry
// (src/index.ts, `overmind-eval-service`), several fresh in-memory services in one process, each
// independent of the others, opening no port until asked and leaving nothing running once closed;
// and the package's start command (src/cli/start.ts, compiled under dist/ as the package ships it),
// which prints the address it listens on as its first line and stops cleanly on a signal.
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { createService, type Service } from '../../src/index.ts';
import { root } from '../../scripts/service-process.ts';

const quiet = { storage: 'memory', logLevel: 'silent', passwordHashCost: 1024 } as const;

/** Resources keeping the event loop alive, counted by kind. */
function activeResources(): Map<string, number> {
  const counts = new Map<string, number>();
  for (const kind of process.getActiveResourcesInfo()) counts.set(kind, (counts.get(kind) ?? 0) + 1);
  return counts;
}

/** Kinds of which there are more now than in `before`. */
function grownSince(before: Map<string, number>): string[] {
  return [...activeResources()].filter(([kind, count]) => count > (before.get(kind) ?? 0)).map(([kind, count]) => `${kind} x${count - (before.get(kind) ?? 0)}`);
}

async function settled(before: Map<string, number>): Promise<string[]> {
  for (let waited = 0; ; waited += 20) {
    const grown = grownSince(before);
    if (grown.length === 0 || waited >= 1000) return grown;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

async function call(base: string, method: string, path: string, body?: unknown, token?: string) {
  const response = await fetch(base + path, {
    method,
    headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await response.text();
  return { status: response.status, body: text ? JSON.parse(text) : undefined };
}

test('two in-memory services in one process are independent: users, secrets and records', async () => {
  const services: Service[] = [await createService(quiet), await createService(quiet)];
  try {
    const [a, b] = await Promise.all(services.map(async (service) => `http://127.0.0.1:${(await service.listen(0, '127.0.0.1')).port}`));
    const credentials = { email: 'same@example.com', password: 'correct horse', password_confirm: 'correct horse' };
    const inA = await call(a!, 'POST', '/api/auth/register/', credentials);
    const inB = await call(b!, 'POST', '/api/auth/register/', credentials);
    assert.is(inA.status, 201, 'the email registers in the first');
    assert.is(inB.status, 201, 'and again in the second: they share no users');
    // Each generated its own signing secret: a token of one is not accepted by the other.
    assert.is((await call(b!, 'GET', '/api/projects/', undefined, inA.body.access)).status, 401);
    assert.is((await call(a!, 'GET', '/api/projects/', undefined, inB.body.access)).status, 401);
    const project = await call(a!, 'POST', '/api/projects/', { name: 'Only in A', slug: 'only-in-a' }, inA.body.access);
    assert.is(project.status, 201);
    assert.is((await call(a!, 'GET', '/api/projects/', undefined, inA.body.access)).body.count, 1);
    assert.is((await call(b!, 'GET', '/api/projects/', undefined, inB.body.access)).body.count, 0, 'the project is not in the second');
    assert.is((await call(b!, 'GET', `/api/projects/${project.body.id}/`, undefined, inB.body.access)).status, 404);
    // The same slug is free in the other.
    assert.is((await call(b!, 'POST', '/api/projects/', { name: 'Only in A', slug: 'only-in-a' }, inB.body.access)).status, 201);
  } finally {
    await Promise.all(services.map((service) => service.close()));
  }
});

test('an embedded service writes nothing on stdout unless asked (warnings and errors only); asked, it logs each request', async () => {
  const script = (options: string) => `
    const { createService } = await import(${JSON.stringify(`${root}/dist/src/index.js`)});
    const service = await createService({ storage: 'memory', ${options} });
    const { port } = await service.listen(0, '127.0.0.1');
    await fetch('http://127.0.0.1:' + port + '/api/health/');
    await fetch('http://127.0.0.1:' + port + '/api/projects/');
    await service.close();`;
  const stdout = (options: string) =>
    new Promise<string>((resolve, reject) => {
      const child = spawn(process.execPath, ['--input-type=module', '-e', script(options)], { stdio: ['ignore', 'pipe', 'inherit'] });
      let text = '';
      child.stdout.on('data', (chunk) => (text += chunk));
      child.on('error', reject);
      child.on('exit', (code) => (code === 0 ? resolve(text) : reject(new Error(`exited ${code}`))));
    });
  assert.is(await stdout(''), '', 'quiet by default');
  const asked = await stdout("logLevel: 'info'");
  assert.ok(asked.includes('"path":"/api/projects/"'), asked);
});

test('createService opens no port until listen, and close() leaves nothing running', async () => {
  // The servers of the test before end their handles a moment after they close.
  await settled(new Map());
  const before = activeResources();
  const service = await createService(quiet);
  assert.equal(await settled(before), [], 'created: nothing keeps the process alive (no server, no timer, no worker)');
  const answer = await new Promise<{ status: number; body: string }>((resolve) => {
    // The handler answers without a server: a request and a response of Node's own, unconnected.
    void import('node:http').then(({ IncomingMessage, ServerResponse }) => {
      const request = new IncomingMessage(null as never);
      request.method = 'GET';
      request.url = '/health/';
      request.headers = { host: 'in-process' };
      const response = new ServerResponse(request);
      const chunks: Buffer[] = [];
      response.write = ((chunk: Buffer | string) => (chunks.push(Buffer.from(chunk)), true)) as never;
      response.end = ((chunk?: Buffer | string) => {
        if (chunk) chunks.push(Buffer.from(chunk));
        resolve({ status: response.statusCode, body: Buffer.concat(chunks).toString() });
        return response;
      }) as never;
      service.handler(request, response);
      request.push(null);
    });
  });
  assert.is(answer.status, 200);
  assert.is(JSON.parse(answer.body).storage, 'memory');
  const address = await service.listen(0, '127.0.0.1');
  assert.ok(address.port > 0);
  assert.ok(grownSince(before).some((kind) => kind.startsWith('TCPServerWrap')), 'listening holds a server');
  assert.is((await fetch(`http://127.0.0.1:${address.port}/health/`)).status, 200);
  await service.close();
  assert.equal(await settled(before), [], 'closed: nothing left running');
});

/** The start command as the package installs it (dist/, which npm test builds first). */
function startCommand(args: string[], env: Record<string, string> = {}, nodeArgs: string[] = []) {
  const child = spawn(process.execPath, [...nodeArgs, join(root, 'dist/src/cli/start.js'), ...args], {
    env: { ...process.env, LOG_LEVEL: 'info', PASSWORD_HASH_COST: '1024', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  const stderrWaits: { text: string; resolve: () => void }[] = [];
  child.stderr!.on('data', (chunk) => {
    stderr += chunk;
    for (const wait of stderrWaits) if (stderr.includes(wait.text)) wait.resolve();
  });
  const lines = createInterface({ input: child.stdout! });
  const stdout: string[] = [];
  lines.on('line', (line) => stdout.push(line));
  const exited = new Promise<number | string>((resolve) => child.once('close', (code, signal) => resolve(code ?? signal!)));
  const firstLine = new Promise<string>((resolve, reject) => {
    lines.once('line', resolve);
    void exited.then((code) => reject(new Error(`the command ended (${code}) before printing a line:\n${stderr}`)));
  });
  firstLine.catch(() => {}); // awaited only by the tests that expect a line
  /** Resolves once stderr holds `text`. */
  const stderrShows = (text: string) =>
    new Promise<void>((resolve, reject) => {
      if (stderr.includes(text)) return resolve();
      stderrWaits.push({ text, resolve });
      void exited.then((code) => reject(new Error(`the command ended (${code}) before writing "${text}":\n${stderr}`)));
    });
  return { child, exited, firstLine, stdout, stderr: () => stderr, stderrShows };
}

for (const signal of ['SIGTERM', 'SIGINT'] as const) {
  test(`the start command prints its address first, answers there, and stops on ${signal} with 0`, async () => {
    // Flags override the environment: STORAGE and PORT here would not start.
    const command = startCommand(['--memory', '--port', '0'], { STORAGE: 'lmdb', DATA_DIR: '/nonexistent/overmind', PORT: '1' });
    try {
      const url = await command.firstLine;
      assert.match(url, /^http:\/\/127\.0\.0\.1:\d+$/);
      const health = await fetch(`${url}/health/`);
      assert.is(health.status, 200);
      assert.is(((await health.json()) as { storage: string }).storage, 'memory');
      command.child.kill(signal);
      assert.is(await command.exited, 0, command.stderr());
      assert.equal(command.stdout, [url], 'stdout holds the address only; logs went to stderr');
      assert.match(command.stderr(), /stopped cleanly/);
    } finally {
      command.child.kill('SIGKILL');
    }
  });
}

test('a signal at any moment of the start ends the command with 0, and the store opens after it', async () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'overmind-start-signal-'));
  // Says on stderr when the command's code first listens for SIGTERM: Node's own start, before any
  // script runs, cannot, and a signal then ends any Node process with 143.
  const marker = `--import=data:text/javascript,process.on('newListener',(event)=>{if(event==='SIGTERM')process.stderr.write('${listening}\\n')})`;
  try {
    // Each signal is sent that long after the command first listened for it: at once, while its
    // modules load (so it never listens on its port: nothing printed); later, while the store
    // opens, the port is bound, or after. Before the command listened for the signals from its
    // first line, it listened only once serving: these ended it with 143 or 130, or after it
    // printed its address.
    for (const [delayMs, signal] of [[0, 'SIGTERM'], [0, 'SIGINT'], [30, 'SIGTERM'], [80, 'SIGINT'], [150, 'SIGTERM'], [300, 'SIGTERM']] as const) {
      const command = startCommand(['--data-dir', dataDir, '--port', '0'], {}, [marker]);
      try {
        await command.stderrShows(listening);
        await new Promise((resolve) => setTimeout(resolve, delayMs));
        command.child.kill(signal);
        assert.is(await command.exited, 0, `${signal} after ${delayMs} ms: ${command.stderr()}`);
        if (delayMs === 0) assert.equal(command.stdout, [], 'stopped while loading: it never listened on its port');
      } finally {
        command.child.kill('SIGKILL');
      }
    }
    const command = startCommand(['--data-dir', dataDir, '--port', '0']);
    try {
      assert.is((await fetch(`${await command.firstLine}/health/`)).status, 200);
      command.child.kill('SIGTERM');
      assert.is(await command.exited, 0, command.stderr());
    } finally {
      command.child.kill('SIGKILL');
    }
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
});

const listening = '[test] the command listens for SIGTERM';

test('the start command with --data-dir keeps its store there (LMDB), over STORAGE=memory', async () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'overmind-start-command-'));
  const command = startCommand(['--data-dir', dataDir, '--host', '127.0.0.1', '--port', '0'], { STORAGE: 'memory' });
  try {
    const url = await command.firstLine;
    const health = await fetch(`${url}/health/`);
    assert.is(((await health.json()) as { storage: string }).storage, 'lmdb');
    assert.ok(readdirSync(dataDir).length > 0, 'the store is in the directory given');
    command.child.kill('SIGTERM');
    assert.is(await command.exited, 0, command.stderr());
  } finally {
    command.child.kill('SIGKILL');
    rmSync(dataDir, { recursive: true, force: true });
  }
});

test('the start command: --help prints usage and exits 0; a bad flag exits 2 with what was wrong; npm start\'s entry refuses any argument', async () => {
  const help = startCommand(['--help']);
  assert.is(await help.exited, 0);
  assert.match(help.stdout.join('\n'), /^Usage: overmind-eval-service/);
  assert.match(help.stdout.join('\n'), /--data-dir/);
  for (const [args, message] of [
    [['--bogus'], /Unknown option '--bogus'/],
    [['--port', 'eighty'], /--port must be an integer from 0 to 65535/],
    [['--port', '70000'], /--port must be an integer/],
    [['--memory', '--data-dir', '/tmp/x'], /cannot be used together/],
    [['serve'], /Unexpected argument 'serve'/],
  ] as const) {
    const bad = startCommand([...args]);
    assert.is(await bad.exited, 2, args.join(' '));
    assert.equal(bad.stdout, [], 'nothing on stdout');
    assert.match(bad.stderr(), message);
  }
  // npm start's entry takes no argument: `worker` or a flag there is refused, not ignored while a service starts.
  for (const args of [['worker', '--url', 'http://127.0.0.1:1'], ['--port', '0']]) {
    const refused = spawnSync(process.execPath, [join(root, 'dist/src/main.js'), ...args], { env: { ...process.env, PORT: '1' }, encoding: 'utf8', timeout: 20_000 });
    assert.is(refused.status, 2, args.join(' '));
    assert.match(refused.stderr, /npm start takes no arguments \(given: /);
    assert.match(refused.stderr, /npm run worker/);
  }
  const badEnv = startCommand(['--memory'], { LOG_LEVEL: 'loud' });
  assert.is(await badEnv.exited, 2);
  assert.match(badEnv.stderr(), /LOG_LEVEL "loud" is not a pino level/);
});

test.run();
