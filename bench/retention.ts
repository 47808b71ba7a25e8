// Retention beside ingest: the span store's decisions while retention removes most of a store's
// traces, a batch at a time, each followed by an ingest decision as the span writer interleaves
// them. Decisions run on the event loop, inside the write transaction, so a decision's length is
// how long it holds every request: an ingest decision's is held to the event-lag target (50 ms),
// and a removal's (LIMIT_TRACE_PRUNE_SPANS_MAX spans) is reported. Measured on the span store and
// an LMDB store directly: retention runs in the background, not over HTTP.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '../src/config.ts';
import { LmdbKv } from '../src/store/lmdb-kv.ts';
import { nanosToHex } from '../src/traces/nanos.ts';
import { pack, type SpanRecord } from '../src/traces/span-record.ts';
import { SpanStore } from '../src/traces/span-store.ts';
import { median, quick, removeDir, type Row } from './harness.ts';

const traces = quick ? 20_000 : 200_000;
/** Spans per removal decision, as the service prunes (LIMIT_TRACE_PRUNE_SPANS_MAX), and the share of traces removed. */
const removalLimit = loadConfig().limits.tracePruneSpansMax;
const removedShare = 0.8;
const decisionMsMax = 50;
const project = 'project-a';
const detail = pack({ status_message: '', attributes: {}, events: [], links: [], scope_name: '', scope_version: '' });
const resource = pack({});

/** One root span per trace, trace n starting at n microseconds; trace ids in no order. */
function span(n: number): SpanRecord {
  const start = nanosToHex(BigInt(n) * 1000n);
  return {
    trace_id: `${((n * 2654435761) % 4294967296).toString(16).padStart(8, '0')}${n.toString(16).padStart(24, '0')}`,
    span_id: n.toString(16).padStart(16, '0'), parent_span_id: '', project, agent: null, job: null, iteration: null,
    name: 'step', kind: 1, operation: '', service_name: 'bench', start_time_ns: start, end_time_ns: start,
    duration_ns: 0, status_code: 0, tokens: 0, received_at: 0, detail, resource,
  };
}

export async function run(): Promise<Row[]> {
  const dir = mkdtempSync(join(tmpdir(), 'overmind-retention-'));
  const kv = new LmdbKv(dir);
  try {
    const seeding = new SpanStore(kv);
    for (let first = 0; first < traces; first += 5_000) {
      const batch = Array.from({ length: 5_000 }, (_, i) => span(first + i));
      await kv.write(() => seeding.ingestOps([batch]));
    }
    // Opened again, as a service starting on the store would.
    const store = new SpanStore(kv);
    const before = nanosToHex(BigInt(Math.round(traces * removedShare)) * 1000n);
    const removals: number[] = [];
    const ingests: number[] = [];
    let removed = 0;
    const timed = <T>(times: number[], decide: () => T) => () => {
      const started = performance.now();
      const decided = decide();
      times.push(performance.now() - started);
      return decided;
    };
    for (let last = -1; last !== 0; ) {
      await kv.write(timed(removals, () => {
        const decided = store.removalOps(project, before, removalLimit);
        last = decided.removed;
        removed += decided.removed;
        return decided;
      }));
      await kv.write(timed(ingests, () => store.ingestOps([])));
    }
    const round = (ms: number) => Math.round(ms * 10) / 10;
    const longestIngest = round(Math.max(...ingests));
    const perRemoval = `${removalLimit.toLocaleString('en-US')} spans`;
    return [
      {
        name: `longest ingest decision between retention's removals (${removed.toLocaleString('en-US')} of ${traces.toLocaleString('en-US')} traces removed)`,
        value: longestIngest, unit: 'ms', target: `<= ${decisionMsMax} ms`, pass: longestIngest <= decisionMsMax,
        note: `p50 ${round(median(ingests))} ms over ${ingests.length} decisions`,
      },
      {
        name: `a removal decision of ${perRemoval} (retention's commit)`,
        value: round(median(removals)), unit: 'ms p50', target: 'reported', pass: true,
        note: `longest ${round(Math.max(...removals))} ms, ${round((median(removals) * 1000) / removalLimit)} us per span`,
      },
    ];
  } finally {
    await kv.close();
    removeDir(dir);
  }
}
