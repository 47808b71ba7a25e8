// What the span store's tests share: spans of one project, and a decision applied as one commit.
import type { MemoryKv } from '../../src/store/memory-kv.ts';
import { nanosToHex } from '../../src/traces/nanos.ts';
import { pack, type SpanRecord } from '../../src/traces/span-record.ts';
import type { SpanStore } from '../../src/traces/span-store.ts';

export const project = 'project-a';

export function span(n: number, fields: Partial<SpanRecord> = {}): SpanRecord {
  return {
    trace_id: 'trace-1', span_id: `span-${n}`, parent_span_id: 'parent', project, agent: null, job: 'job-1', iteration: null,
    name: `span ${n}`, kind: 1, operation: '', service_name: 'svc', start_time_ns: nanosToHex(BigInt(n)), end_time_ns: nanosToHex(BigInt(n)),
    duration_ns: 0, status_code: 0, tokens: 0, received_at: 0,
    detail: pack({ status_message: '', attributes: {}, events: [], links: [], scope_name: '', scope_version: '' }),
    resource: pack({}),
    ...fields,
  };
}

export async function apply(store: SpanStore, decided: { ops: Parameters<MemoryKv['write']>[0] }) {
  await store.kv.write(decided.ops);
}
