// Agents and datasets: retrieving one agent with a JWT (against the bare server, alternately), and
// posting 10,000-datapoint datasets, each one a new version of the same agent's dataset.
import { compareWithBare, comparisonNote, load, removeDir, sendJson, signUp, startBareAndService, type Row } from './harness.ts';

const getConnections = 50;
const getRatioMin = 0.6;
/** One client posting one dataset after another: the figure is the latency of a post, not queueing. */
const postConnections = 1;
const postDatapoints = 10_000;
const postP50MsMax = 150;

export async function run(): Promise<Row[]> {
  const { bare, service } = await startBareAndService();
  try {
    const { access, agentId } = await setUp(service.url);
    const auth = { authorization: `Bearer ${access}` };
    const get = await compareWithBare(bare, { url: `${service.url}/api/agents/${agentId}/`, serverPid: service.pid, headers: auth, connections: getConnections });
    const post = await load({
      url: `${service.url}/api/datasets/`,
      serverPid: service.pid,
      method: 'POST',
      headers: { ...auth, 'content-type': 'application/json' },
      body: JSON.stringify({ agent: agentId, datapoints: datapoints(postDatapoints) }),
      connections: postConnections,
    });
    const postFailures = post.errors + post.non2xx;
    return [
      {
        name: `GET /api/agents/{id}/ (JWT, ${getConnections} connections)`,
        value: get.serviceRps,
        unit: 'req/s',
        ratio: get.ratio,
        target: `>= ${getRatioMin}x bare`,
        pass: get.ratio >= getRatioMin && get.failures === 0,
        note: comparisonNote(get),
      },
      {
        name: `POST /api/datasets/ (${postDatapoints.toLocaleString('en-US')} datapoints, ${postConnections} connections)`,
        value: post.latencyP50Ms,
        unit: 'ms p50',
        target: `<= ${postP50MsMax} ms`,
        pass: post.latencyP50Ms <= postP50MsMax && postFailures === 0,
        note: `p99 ${post.latencyP99Ms} ms, ${post.requestsPerSecond.toFixed(1)} datasets/s${postFailures ? `, ${postFailures} failures` : ''}`,
      },
    ];
  } finally {
    await service.stop();
    await bare.stop();
    removeDir(service.dataDir);
  }
}

/** A user, a project and an agent, made over HTTP as a client would. */
async function setUp(url: string): Promise<{ access: string; agentId: string }> {
  const { access, projectId } = await signUp(url, 'bench');
  const agent = await sendJson(url, 'POST', '/api/agents/', {
    name: 'Bench agent', slug: 'bench-agent', project: projectId, model: 'claude', description: 'An agent to retrieve',
    input_schema: { type: 'object', properties: { question: { type: 'string' } } }, tags: ['bench'],
  }, access);
  return { access, agentId: agent.id as string };
}

function datapoints(count: number) {
  return Array.from({ length: count }, (_, i) => ({
    input: { question: `What is the status of ticket ${i}?` },
    expected_output: `Ticket ${i} is open.`,
    persona: i % 2 === 0 ? 'customer' : 'agent',
    tags: ['bench'],
  }));
}
