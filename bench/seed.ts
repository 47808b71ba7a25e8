// Seeds a store for the benchmarks in its own process: one user, one project, `agents` agents with
// one dataset of `datapoints` datapoints each, and `jobs` jobs of `iterations` iterations each,
// written through the registry (HTTP would make seeding a million records take longer than the
// benchmark itself). The service is closed at the end, so the store holds a snapshot of every
// stream. Prints one JSON line: the login and the project.
//   node --import tsx bench/seed.ts <dataDir> <jobs> <iterations per job> [<agents> <datapoints per agent>]
import { randomUUID } from 'node:crypto';
import { pino } from 'pino';
import { hashPassword } from '../src/auth/passwords.ts';
import { newAgent, newDataset } from '../src/domain/agent.ts';
import { newIteration, newJob } from '../src/domain/job.ts';
import { newMembership, newProject } from '../src/domain/project.ts';
import { jobStatuses, jobTypes } from '../src/domain/records.ts';
import { createService } from '../src/service.ts';

/** Writes in flight at once: enough for LMDB to share commits, few enough to stay in the mailboxes. */
const writesInFlight = 2000;
const started = Date.parse('2026-01-01T00:00:00Z');

const [dataDir, jobsArg, iterationsArg, agentsArg = '0', datapointsArg = '0'] = process.argv.slice(2);
if (!dataDir || !jobsArg || !iterationsArg) throw new Error('usage: seed.ts <dataDir> <jobs> <iterations per job> [<agents> <datapoints per agent>]');
const jobCount = Number(jobsArg);
const iterationsPerJob = Number(iterationsArg);
const agentCount = Number(agentsArg);
const datapointsPerAgent = Number(datapointsArg);

const service = await createService({ storage: 'lmdb', dataDir, logger: pino({ level: 'silent' }) });
const { registry, config } = service.deps;
const email = 'bench-jobs@example.com';
const password = 'bench password';
const at = (offsetMs: number) => new Date(started + offsetMs).toISOString();

const [registered] = await registry.identity.ask({
  type: 'RegisterUser', email, passwordHash: await hashPassword(password, config.passwordHashCost), now: at(0),
});
if (registered?.type !== 'UserRegistered') throw new Error('registration failed');
const user = registered.user;
const project = newProject({ id: randomUUID(), now: at(0), name: 'Bench jobs', slug: 'bench-jobs' }, { is_active: true });
await registry.create('project', project.id, [], {
  type: 'CreateProject',
  project,
  creator: newMembership({ id: randomUUID(), project: project.id, now: at(0) }, user),
});

for (let first = 0; first < agentCount; first += 100) {
  const writes = [];
  for (let a = first; a < Math.min(first + 100, agentCount); a++) writes.push(seedAgent(a));
  await Promise.all(writes);
}

/** An agent with one dataset of `datapointsPerAgent` datapoints (written once, as a snapshot part). */
async function seedAgent(index: number): Promise<void> {
  const agent = newAgent(
    { id: randomUUID(), now: at(index), project: project.id, name: `Agent ${index}`, slug: `agent-${index}` },
    { model: 'claude', description: `seeded agent ${index}`, input_schema: { type: 'object' } },
  );
  await registry.create('agent', agent.id, [project.id], { type: 'CreateAgent', agent });
  const points = Array.from({ length: datapointsPerAgent }, (_, i) => ({
    input: { question: `Question ${i} for agent ${index}?` },
    expected_output: `Answer ${i}`,
    persona: i % 2 === 0 ? 'customer' : 'agent',
    tags: ['seed'],
  }));
  const dataset = newDataset(
    { id: randomUUID(), agent: agent.id, project: project.id, now: at(index), datapointIds: points.map(() => randomUUID()) },
    { name: 'seed', source: 'seed' },
    points,
  );
  await registry.actor('agent', agent.id)!.ask({ type: 'CreateDataset', dataset, makeActive: true });
}

const jobIds: string[] = [];
for (let first = 0; first < jobCount; first += writesInFlight) {
  const writes = [];
  for (let i = first; i < Math.min(first + writesInFlight, jobCount); i++) {
    const fields = {
      analyzer_model: 'judge-large',
      baseline_score: 0.5,
      best_score: 0.5 + (i % 50) / 100,
      data_source: 'seed',
      job_type: jobTypes[i % jobTypes.length]!,
      num_iterations: iterationsPerJob,
      prompt_slug: `prompt-${i % 50}`,
      status: jobStatuses[i % jobStatuses.length]!,
      result: { summary: `job ${i} finished`, candidates: iterationsPerJob },
    };
    const job = newJob({ id: randomUUID(), now: at(i * 1000), project: project.id, triggeredBy: user.id }, fields);
    jobIds.push(job.id);
    writes.push(registry.create('job', job.id, [project.id], { type: 'CreateJob', job, sent: fields }));
  }
  await Promise.all(writes);
}

const jobsPerRound = Math.max(1, Math.floor(writesInFlight / iterationsPerJob));
for (let first = 0; first < jobCount; first += jobsPerRound) {
  const writes = [];
  for (let j = first; j < Math.min(first + jobsPerRound, jobCount); j++) {
    const job = jobIds[j]!;
    const actor = registry.actor('job', job)!;
    for (let n = 0; n < iterationsPerJob; n++) {
      const iteration = newIteration(
        { id: randomUUID(), now: at(j * 1000 + n + 1), job, project: project.id, iterationName: `iteration-${n}` },
        {
          agent_code: `def run(question):\n    return model.answer(question, temperature=0.${n})`,
          avg_score: (n + 1) / (iterationsPerJob + 1),
          description: `candidate ${n} of job ${j}`,
          dimension_scores: { accuracy: n / 10, tone: 1 - n / 10 },
          order: n,
          status: n % 2 === 0 ? 'keep' : 'discard',
        },
      );
      writes.push(actor.ask({ type: 'AddIteration', iteration }));
    }
  }
  await Promise.all(writes);
}

await service.close();
process.stdout.write(`${JSON.stringify({ email, password, projectId: project.id })}\n`);
