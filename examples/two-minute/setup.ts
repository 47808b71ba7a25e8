// The two-minute evaluation's setup: against a running service, it registers a user (or signs in),
// makes a project with an API key, the example agent with its eval spec (spec.json), its dataset
// (dataset.json: 40 support tickets with the expected category and urgency), a job with two
// candidates (baseline.json and candidate.json, each the agent's rules as its agent_code) and a
// run of both on every ticket, scored by the service from the eval spec. It prints what to run
// next: the worker command and the console page of the comparison.
//
//   node --import tsx examples/two-minute/setup.ts [URL]      (default http://127.0.0.1:8000)
//
// The printed lines are also its result when imported (setupTwoMinute), which the test uses.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const here = (name: string) => fileURLToPath(new URL(name, import.meta.url));
const readJson = (name: string): any => JSON.parse(readFileSync(here(name), 'utf8'));

export interface TwoMinute {
  apiKey: string;
  run: string;
  baseline: string;
  candidate: string;
  /** The worker command to start, as a shell line. */
  workerCommand: string;
  /** The console page comparing the two candidates. */
  comparePage: string;
}

/** A JSON call that must succeed; throws with the answer otherwise. */
async function call(url: string, method: string, path: string, auth: Record<string, string>, body?: unknown): Promise<any> {
  const response = await fetch(url + path, {
    method,
    headers: { 'content-type': 'application/json', ...auth },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  if (!response.ok) throw new Error(`${method} ${path}: ${response.status} ${text}`);
  return text ? JSON.parse(text) : null;
}

/** An access token for the demo user: registered the first time, signed in after. */
async function signIn(url: string, email: string, password: string): Promise<string> {
  try {
    return (await call(url, 'POST', '/api/auth/register/', {}, { email, password, password_confirm: password })).access;
  } catch {
    return (await call(url, 'POST', '/api/auth/token/', {}, { email, password })).access;
  }
}

export async function setupTwoMinute(url: string, email = 'demo@example.com', password = 'two minutes'): Promise<TwoMinute> {
  const token = { authorization: `Bearer ${await signIn(url, email, password)}` };
  const slug = `two-minute-${Date.now().toString(36)}`;
  const project = await call(url, 'POST', '/api/projects/', token, { name: 'Two-minute evaluation', slug });
  const key = (await call(url, 'POST', '/api/auth/api-keys/', token, { project: project.id, name: 'worker' })).key as string;
  const auth = { 'x-api-key': key };
  const agent = await call(url, 'POST', '/api/agents/', auth, { name: 'Ticket triage', slug: 'ticket-triage', project: project.id, ...readJson('spec.json') });
  const dataset = await call(url, 'POST', '/api/datasets/', auth, { agent: agent.id, datapoints: readJson('dataset.json') });
  const job = await call(url, 'POST', '/api/jobs/', auth, { agent: agent.id, job_type: 'prompt_tuning' });
  const iteration = (order: number, name: string, file: string) =>
    call(url, 'POST', '/api/job-iterations/', auth, { job: job.id, order, iteration_name: name, agent_code: readFileSync(here(file), 'utf8') });
  const baseline = await iteration(0, 'baseline', 'baseline.json');
  const candidate = await iteration(1, 'more keywords', 'candidate.json');
  const run = await call(url, 'POST', `/api/jobs/${job.id}/runs/`, auth, {
    dataset: dataset.id,
    iterations: [baseline.id, candidate.id],
    scoring: { method: 'spec' },
  });
  const agentCommand = `node ${here('agent.mjs')}`;
  return {
    apiKey: key,
    run: run.id,
    baseline: baseline.id,
    candidate: candidate.id,
    // In this repository; where the package is installed, `npx overmind-eval-service worker ...`.
    workerCommand: `npm run worker -- --url ${url} --api-key ${key} --run ${run.id} --command '${agentCommand}'`,
    comparePage: `${url}/console/job-iterations/${baseline.id}/compare/${candidate.id}`,
  };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const url = (process.argv[2] ?? process.env.API_URL ?? 'http://127.0.0.1:8000').replace(/\/+$/, '');
  const made = await setupTwoMinute(url);
  process.stdout.write(
    `A run of 2 candidates x 40 tickets is waiting (run ${made.run}).\n\n` +
      `Start a worker on it (it exits when the run has ended):\n  ${made.workerCommand}\n\n` +
      `Then open the comparison (sign in with the API key ${made.apiKey}):\n  ${made.comparePage}\n`,
  );
}
