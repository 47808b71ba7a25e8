// A fresh W3C trace context per task (https://www.w3.org/TR/trace-context/): the command gets it
// as TRACEPARENT, so the spans its agent sends to the service land in one new trace, and the
// result names that trace and the parent span, so the result links to them.
import { randomBytes } from 'node:crypto';

export interface TraceContext {
  /** 32 lowercase hex digits, never all zero. */
  traceId: string;
  /** 16 lowercase hex digits, never all zero. */
  spanId: string;
  /** `00-<trace id>-<span id>-01` (version 00, sampled). */
  traceparent: string;
}

/** The context made of 24 random bytes (16 for the trace id, 8 for the span id). */
export function traceContextOf(bytes: Uint8Array): TraceContext {
  if (bytes.length !== 24) throw new RangeError('a trace context needs 24 bytes');
  const hex = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('hex');
  // An all-zero id is invalid: its last digit is made 1 (one draw in 2^64 or 2^128).
  const nonZero = (id: string) => (/^0+$/.test(id) ? `${id.slice(0, -1)}1` : id);
  const traceId = nonZero(hex.slice(0, 32));
  const spanId = nonZero(hex.slice(32));
  return { traceId, spanId, traceparent: `00-${traceId}-${spanId}-01` };
}

/** Contexts drawn at once: one call for random bytes per this many tasks (a call per task cost more than the rest of a handler task). */
const contextsPerDraw = 256;
let pool = new Uint8Array(0);
let next = 0;

export function freshTraceContext(): TraceContext {
  if (next + 24 > pool.length) {
    pool = randomBytes(24 * contextsPerDraw);
    next = 0;
  }
  next += 24;
  return traceContextOf(pool.subarray(next - 24, next));
}
