// Hostile input against every route of the route table (new routes are covered as they are
// added): thousands of generated requests, each answered without a 5xx, every 4xx in one of the
// documented shapes (docs/API.md, "Error shapes": a field map, or {detail, code}), and no 4xx
// changing the store. The run is seeded: a failure prints its seed and request, and
// `FUZZ_SEED=<seed>` replays it.
import { Agent, request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { allRoutes } from '../../src/app.ts';
import { MemoryKv } from '../../src/store/memory-kv.ts';
import { FaultyKv } from '../helpers/faulty-kv.ts';
import { withService } from '../helpers/service.ts';
import { Fixtures } from './fixtures.ts';
import { generateRequest, type FuzzRequest } from './generate.ts';
import { Random, testSeed } from './random.ts';

const requestsTotal = 3000;
/** The caller's records are checked (and remade if fuzzing removed them) this often. */
const repairEvery = 40;

/** Small limits, so that exceeding them is cheap. */
const limits = {
  bodyBytesMax: 64 * 1024,
  datasetBodyBytesMax: 256 * 1024,
  traceBodyBytesMax: 64 * 1024,
  spanBatchMax: 50,
  datapointsPerDatasetMax: 50,
  apiKeysPerUserMax: 100_000,
};

interface Answer {
  status: number;
  headers: IncomingHttpHeaders;
  body: Buffer;
}

/** A new connection per request: a connection the service closed (after a 413) is never reused. */
const connections = new Agent({ keepAlive: false });

function send(baseUrl: string, fuzz: FuzzRequest): Promise<Answer> {
  const { hostname, port } = new URL(baseUrl);
  const headers: Record<string, string> = { ...fuzz.headers };
  if (fuzz.body && !fuzz.chunked) headers['content-length'] = String(fuzz.body.length);
  if (fuzz.body && fuzz.chunked) headers['transfer-encoding'] = 'chunked';
  return new Promise((resolve, reject) => {
    let answered = false;
    const request = httpRequest({ hostname, port, method: fuzz.method, path: fuzz.path, headers, agent: connections }, (response) => {
      answered = true;
      // An event stream that opened never ends by itself: its status and headers are the answer.
      if (response.statusCode === 200 && String(response.headers['content-type']).startsWith('text/event-stream')) {
        response.destroy();
        return resolve({ status: 200, headers: response.headers, body: Buffer.alloc(0) });
      }
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () => resolve({ status: response.statusCode!, headers: response.headers, body: Buffer.concat(chunks) }));
      response.on('error', reject);
    });
    // The service may answer (413) and close before the whole body is sent.
    request.on('error', (error) => {
      if (!answered) reject(error);
    });
    if (fuzz.body && fuzz.chunked) {
      for (let at = 0; at < fuzz.body.length; at += 16 * 1024) request.write(fuzz.body.subarray(at, at + 16 * 1024));
      request.end();
    } else {
      request.end(fuzz.body);
    }
  });
}

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/** What is wrong with a DRF field map (`{"field": ["message"]}`, nested maps and per-item lists), if anything. */
function fieldMapProblem(map: Record<string, unknown>): string | null {
  if (Object.keys(map).length === 0) return 'an empty field map';
  for (const [field, errors] of Object.entries(map)) {
    if (isObject(errors)) {
      const nested = fieldMapProblem(errors);
      if (nested) return `${field}: ${nested}`;
    } else if (Array.isArray(errors) && errors.length > 0) {
      if (errors.every((message) => typeof message === 'string')) continue;
      const items = errors.every((item) => isObject(item) && (Object.keys(item).length === 0 || fieldMapProblem(item) === null));
      if (!items || errors.every((item) => Object.keys(item as object).length === 0)) return `${field}: neither messages nor item errors`;
    } else {
      return `${field}: not a list of messages`;
    }
  }
  return null;
}

/** What is wrong with a 4xx answer, if anything (the error shapes of docs/API.md). */
function errorProblem(method: string, answer: Answer): string | null {
  if (method === 'HEAD') return null;
  if (!String(answer.headers['content-type']).startsWith('application/json')) return `content-type ${answer.headers['content-type']}`;
  let body: unknown;
  try {
    body = JSON.parse(answer.body.toString('utf8'));
  } catch {
    return 'a body that is not JSON';
  }
  if (!isObject(body)) return 'a body that is not a JSON object';
  if (answer.status === 401 && !answer.headers['www-authenticate']) return '401 without WWW-Authenticate';
  if (answer.status === 405 && !answer.headers.allow) return '405 without Allow';
  if (answer.status === 429 && !answer.headers['retry-after']) return '429 without Retry-After';
  if ('detail' in body) {
    const extra = Object.keys(body).filter((key) => key !== 'detail' && key !== 'code');
    if (typeof body.detail !== 'string' || typeof body.code !== 'string' || extra.length > 0) return 'a malformed {detail, code}';
    return null;
  }
  if (answer.status !== 400) return `a field map with status ${answer.status}`;
  return fieldMapProblem(body);
}

function report(seed: number, index: number, fuzz: FuzzRequest, answer: Answer | null, problem: string): string {
  const body = fuzz.body ? fuzz.body.subarray(0, 600).toString('latin1') : '';
  return [
    `fuzz request ${index} (FUZZ_SEED=${seed} replays it): ${problem}`,
    `  changes: ${fuzz.mutations.join('; ') || 'none'}`,
    `  ${fuzz.method} ${fuzz.path.slice(0, 300)}`,
    `  headers: ${JSON.stringify({ ...fuzz.headers, authorization: fuzz.headers.authorization?.slice(0, 30) })}`,
    `  body (${fuzz.body?.length ?? 0} bytes${fuzz.chunked ? ', chunked' : ''}): ${body}`,
    answer ? `  answer ${answer.status}: ${answer.body.subarray(0, 600).toString('utf8')}` : '  no answer',
  ].join('\n');
}

test(`${requestsTotal} generated hostile requests over every route: no 5xx, every 4xx documented and changing nothing`, async () => {
  const seed = testSeed();
  const random = new Random(seed);
  const kv = new FaultyKv(new MemoryKv());
  await withService(
    async ({ client, url, service }) => {
      const { deps } = service;
      const routes = allRoutes(deps);
      const fixtures = await Fixtures.create(client);
      const context = { random, validator: deps.validator, limits: deps.config.limits, fixtures };
      const statuses = new Map<number, number>();
      for (let index = 0; index < requestsTotal; index++) {
        if (index % repairEvery === 0) await fixtures.repair();
        const route = routes[index % routes.length]!;
        const fuzz = await generateRequest(route, context);
        const writesBefore = kv.writes;
        let answer: Answer;
        try {
          answer = await send(url, fuzz);
        } catch (error) {
          throw new Error(report(seed, index, fuzz, null, `the connection failed: ${(error as Error).message}`));
        }
        statuses.set(answer.status, (statuses.get(answer.status) ?? 0) + 1);
        if (answer.status >= 500) assert.unreachable(report(seed, index, fuzz, answer, `status ${answer.status}`));
        if (answer.status >= 400) {
          const problem = errorProblem(fuzz.method, answer);
          if (problem) assert.unreachable(report(seed, index, fuzz, answer, problem));
          if (kv.writes !== writesBefore) assert.unreachable(report(seed, index, fuzz, answer, `${kv.writes - writesBefore} store writes on a ${answer.status}`));
        }
      }
      // The run reached the handlers (successes) as well as every kind of refusal.
      for (const status of [200, 201, 204, 400, 401, 404, 405, 413, 415]) {
        assert.ok((statuses.get(status) ?? 0) > 0, `no ${status} in ${JSON.stringify([...statuses])} (seed ${seed})`);
      }
    },
    { kv, limits },
  );
});

test.run();
