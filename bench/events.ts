// The live event stream under load: 100 open streams (bench/event-readers.ts, a process of its
// own) follow a job while autocannon posts iterations to it, and a prober posts one marked
// iteration at a time. Figures: events delivered per second over all streams, and how long after
// its commit an event reaches a client. A write's reply and its event both leave only after the
// commit, so the event's lag is measured from the moment the prober holds the reply (the commit
// is acknowledged) to the moment each stream holds the event; the time from sending the POST to
// holding the event (commit included) is reported beside it.
import { load, percentile, type Row, sendJson, signUp, startLineChild, startService } from './harness.ts';

const streams = 100;
const probePrefix = 'probe-';
const probeIntervalMs = 20;
const lagP99MsMax = 50;

export async function run(): Promise<Row[]> {
  // Every post goes to one job, two 10-second loads of them: more than a job's default 10,000.
  const service = await startService({ env: { LIMIT_EVENT_STREAMS_PER_USER_MAX: String(streams), LIMIT_ITERATIONS_PER_JOB_MAX: '1000000' } });
  try {
    const { token, job } = await setUp(service.url);
    const loadOptions = {
      url: `${service.url}/api/job-iterations/`,
      method: 'POST' as const,
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      bodies: Array.from({ length: 1000 }, (_, i) => JSON.stringify({ job, iteration_name: `load-${i}`, avg_score: (i % 100) / 100 })),
      connections: 20,
      serverPid: service.pid,
    };
    // The same load with no stream open first, to show what following costs the writers.
    const alone = await load(loadOptions);
    if (alone.errors + alone.non2xx > 0) throw new Error(`posting with no stream open failed ${alone.errors + alone.non2xx} times`);
    const readers = await startReaders(service.url, token);
    const acks = new Map<string, { sent: number; acked: number }>();
    let probing = true;
    const prober = (async () => {
      for (let n = 0; probing; n++) {
        const sent = epochMs();
        const id = await postIteration(service.url, token, job, `${probePrefix}${n}`);
        acks.set(id, { sent, acked: epochMs() });
        await new Promise((resolve) => setTimeout(resolve, probeIntervalMs));
      }
    })();
    const started = epochMs();
    const posted = await load(loadOptions);
    probing = false;
    await prober;
    // Let the last events arrive before the readers report.
    await new Promise((resolve) => setTimeout(resolve, 500));
    const elapsedSeconds = (epochMs() - started) / 1000;
    const received = await readers.finish();
    const lags: number[] = [];
    const sinceSent: number[] = [];
    let missing = 0;
    for (const [id, { sent, acked }] of acks) {
      const arrivals = received.arrivals[id] ?? [];
      missing += streams - arrivals.length;
      for (const at of arrivals) {
        lags.push(Math.max(0, at - acked));
        sinceSent.push(at - sent);
      }
    }
    const perSecond = received.events / elapsedSeconds;
    const lagP99 = percentile(lags, 0.99);
    return [
      {
        name: `events delivered to ${streams} streams while iterations are posted`,
        value: perSecond,
        unit: 'events/s',
        target: 'reported',
        pass: missing === 0 && posted.errors + posted.non2xx === 0,
        note:
          `${Math.round(posted.requestsPerSecond)} iterations/s posted by 20 connections (${Math.round(alone.requestsPerSecond)}/s with no stream open), ` +
          `${received.events.toLocaleString('en-US')} events in ${elapsedSeconds.toFixed(1)} s${missing ? `, ${missing} probe events missing` : ''}`,
      },
      {
        name: 'event lag after the commit is acknowledged, p50 / p99',
        value: percentile(lags, 0.5),
        unit: 'ms (p50)',
        target: `p99 <= ${lagP99MsMax} ms`,
        pass: lagP99 <= lagP99MsMax,
        note: `p99 ${lagP99.toFixed(1)} ms over ${lags.length.toLocaleString('en-US')} deliveries; POST sent -> event held p50 ${percentile(sinceSent, 0.5).toFixed(1)} ms, p99 ${percentile(sinceSent, 0.99).toFixed(1)} ms`,
      },
    ];
  } finally {
    await service.stop();
  }
}

const epochMs = () => performance.timeOrigin + performance.now();

async function setUp(url: string): Promise<{ token: string; job: string }> {
  const { access, projectId } = await signUp(url, 'events');
  const job = await sendJson(url, 'POST', '/api/jobs/', { project: projectId, status: 'running' }, access);
  return { token: access, job: job.id as string };
}

async function postIteration(url: string, token: string, job: string, name: string): Promise<string> {
  return (await sendJson(url, 'POST', '/api/job-iterations/', { job, iteration_name: name, avg_score: 0.5 }, token)).id as string;
}

interface Received {
  events: number;
  arrivals: Record<string, number[]>;
}

/** Starts the readers' process and resolves once every stream is open. */
async function startReaders(url: string, token: string): Promise<{ finish(): Promise<Received> }> {
  const readers = await startLineChild(['bench/event-readers.ts', url, String(streams), token, probePrefix]);
  return {
    async finish() {
      const [report] = await readers.end();
      if (report === undefined) throw new Error('the event readers ended without a report');
      return JSON.parse(report) as Received;
    },
  };
}
