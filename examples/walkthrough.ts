// A walk through the API with the typed client: register a user, create a project, an agent, a
// dataset of a few datapoints and a prompt-tuning job with scored iterations, then read it all
// back. Run it against a running service:
//
//   npx tsx examples/walkthrough.ts http://localhost:8000     (or API_URL=... ; default http://localhost:8000)
//
// It prints a summary and exits with 1 on any unexpected answer.
import { randomUUID } from 'node:crypto';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ApiClient, ApiError } from './client.ts';

export interface Summary {
  user: { id: number; email: string };
  project: { id: string; slug: string };
  agent: { id: string; slug: string; activeDataset: string | null };
  dataset: { id: string; version: number; datapoints: number; datapointIds: string[] };
  job: {
    id: string;
    status: string;
    baselineScore: number | null;
    bestScore: number | null;
    improvement: number | null;
    iterations: { id: string; name: string; avgScore: number | null; status: string | null }[];
  };
  /** Iteration names from GET /api/job-iterations/?job=<id>&ordering=-avg_score. */
  iterationsByScore: string[];
}

export async function walkthrough(baseUrl: string): Promise<Summary> {
  const unique = randomUUID().slice(0, 8);
  let api = new ApiClient(baseUrl.replace(/\/+$/, ''));

  // 1. A new user; registering answers with a token pair.
  const email = `walkthrough-${unique}@example.com`;
  const password = `correct-horse-${unique}`;
  const registered = await api.post('/api/auth/register/', { body: { email, password, password_confirm: password } });
  api = api.withToken(registered.access);

  // 2. A project (the caller becomes its first member) and an agent in it.
  const project = await api.post('/api/projects/', {
    body: { name: `Walkthrough ${unique}`, slug: `walkthrough-${unique}`, description: 'Made by examples/walkthrough.ts' },
  });
  const agent = await api.post('/api/agents/', {
    body: {
      name: 'Support assistant',
      slug: 'support-assistant',
      project: project.id,
      model: 'gpt-4o-mini',
      description: 'Answers customer questions.',
      evaluation_criteria: { accuracy: 'The answer matches the expected output.' },
    },
  });

  // 3. A dataset of three datapoints, made the agent's active dataset.
  const dataset = await api.post('/api/datasets/', {
    body: {
      agent: agent.id,
      name: 'Seed questions',
      source: 'seed',
      make_active: true,
      datapoints: [
        { order: 0, persona: 'new customer', input: { question: 'How do I reset my password?' }, expected_output: 'Use "Forgot password" on the sign-in page.' },
        { order: 1, persona: 'admin', input: { question: 'How do I add a teammate?' }, expected_output: 'Settings, Members, Invite.' },
        { order: 2, persona: 'new customer', input: { question: 'Is there a free plan?' }, expected_output: 'Yes, up to three projects.' },
      ],
    },
  });

  // 4. A prompt-tuning job, three scored candidates, the best one kept, the job completed.
  const job = await api.post('/api/jobs/', {
    body: { project: project.id, agent: agent.id, job_type: 'prompt_tuning', status: 'running', baseline_score: 0.61, num_iterations: 3 },
  });
  const candidates: [name: string, score: number, prompt: string][] = [
    ['baseline-rewrite', 0.64, 'Answer briefly.'],
    ['add-examples', 0.78, 'Answer briefly; follow the examples.'],
    ['strict-format', 0.71, 'Answer in one sentence.'],
  ];
  const created = [];
  for (const [order, [name, score, prompt]] of candidates.entries()) {
    const iteration = await api.post('/api/job-iterations/', {
      body: { job: job.id, iteration_name: name, order, avg_score: score, agent_code: `prompt = ${JSON.stringify(prompt)}`, dimension_scores: { accuracy: score } },
    });
    created.push(iteration);
  }
  const best = created.reduce((a, b) => ((b.avg_score ?? 0) > (a.avg_score ?? 0) ? b : a));
  for (const iteration of created) {
    await api.patch('/api/job-iterations/{id}/', { path: { id: iteration.id }, body: { status: iteration === best ? 'keep' : 'discard' } });
  }
  await api.patch('/api/jobs/{id}/', {
    path: { id: job.id },
    body: { status: 'completed', best_score: best.avg_score, best_agent_code: best.agent_code, report_markdown: `Kept **${best.iteration_name}**.` },
  });

  // 5. Read everything back.
  const agentRead = await api.get('/api/agents/{id}/', { path: { id: agent.id } });
  const datasetRead = await api.get('/api/datasets/{id}/', { path: { id: dataset.id } });
  const datapoints = await api.get('/api/datasets/{id}/datapoints/', { path: { id: dataset.id }, query: { ordering: 'order' } });
  const jobRead = await api.get('/api/jobs/{id}/', { path: { id: job.id } });
  const byScore = await api.get('/api/job-iterations/', { query: { job: job.id, ordering: '-avg_score' } });

  return {
    user: { id: registered.user.id, email: registered.user.email },
    project: { id: project.id, slug: project.slug },
    agent: { id: agentRead.id, slug: agentRead.slug, activeDataset: agentRead.active_dataset },
    dataset: {
      id: datasetRead.id,
      version: datasetRead.version,
      datapoints: datasetRead.num_datapoints,
      datapointIds: datapoints.results.map((datapoint) => datapoint.id),
    },
    job: {
      id: jobRead.id,
      status: jobRead.status,
      baselineScore: jobRead.baseline_score,
      bestScore: jobRead.best_score,
      improvement: jobRead.improvement,
      iterations: jobRead.iterations.map((it) => ({ id: it.id, name: it.iteration_name, avgScore: it.avg_score, status: it.status })),
    },
    iterationsByScore: byScore.results.map((iteration) => iteration.iteration_name),
  };
}

function printSummary(summary: Summary): void {
  const { user, project, agent, dataset, job } = summary;
  console.log(`user      ${user.email} (id ${user.id})`);
  console.log(`project   ${project.slug} ${project.id}`);
  console.log(`agent     ${agent.slug} ${agent.id} (active dataset ${agent.activeDataset})`);
  console.log(`dataset   ${dataset.id} version ${dataset.version}, ${dataset.datapoints} datapoints`);
  console.log(`job       ${job.id} ${job.status}: baseline ${job.baselineScore}, best ${job.bestScore}, improvement ${job.improvement?.toFixed(2)}`);
  for (const iteration of job.iterations) {
    console.log(`  ${iteration.name.padEnd(18)} ${String(iteration.avgScore).padEnd(5)} ${iteration.status}`);
  }
  console.log(`by score  ${summary.iterationsByScore.join(', ')}`);
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const baseUrl = process.argv[2] ?? process.env.API_URL ?? 'http://localhost:8000';
  try {
    printSummary(await walkthrough(baseUrl));
  } catch (error) {
    console.error(error instanceof ApiError ? `unexpected answer: ${error.message}` : error);
    process.exitCode = 1;
  }
}
