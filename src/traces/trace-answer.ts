// A trace's answer (GET /api/traces/{id}/): up to traceDetailSpansMax spans, 10,000 by default,
// about 9 MB of JSON. Read and made at once it held the event loop ~0.25 s (~0.1 s more on LMDB,
// ~10 us a span read), every other request waiting; its spans are read, and past a slice of spans
// its JSON made, a slice at a time, the event loop free between slices.
import { setImmediate as turn } from 'node:timers/promises';
import { jsonBytes, type JsonValue } from './json-text.ts';
import type { Key } from '../store/kv.ts';
import { spanJson, type SpanRecord } from './span-record.ts';
import type { SpanStore } from './span-store.ts';

/** Spans made into JSON in one turn of the event loop (~10 ms of it). */
export const spansPerSlice = 500;

export interface TraceAnswer {
  /** The answer's fields before `spans`. */
  head: { [key: string]: JsonValue };
  spans: readonly SpanRecord[];
}

/** The spans at a trace's keys (SpanStore.spanKeysOfTrace), a slice a turn; those removed meanwhile by retention left out. */
export async function traceSpansInTurns(store: SpanStore, keys: readonly Key[]): Promise<SpanRecord[]> {
  const spans: SpanRecord[] = [];
  for (let from = 0; from < keys.length; from += spansPerSlice) {
    if (from > 0) await turn();
    for (const key of keys.slice(from, from + spansPerSlice)) {
      const span = store.spanAt(key);
      if (span) spans.push(span);
    }
  }
  return spans;
}

/** The whole answer at once, for a trace of one slice or less. */
export function traceAnswerBytes({ head, spans }: TraceAnswer): Buffer {
  return jsonBytes({ ...head, spans: spans.map((span) => spanJson(span)) });
}

/**
 * The same bytes as traceAnswerBytes, a slice of spans a chunk, each slice made in a turn of the
 * event loop of its own: `{...head,"spans":[`, the slices joined by commas, then `]}`.
 */
export async function* traceAnswerChunks({ head, spans }: TraceAnswer): AsyncGenerator<Buffer> {
  const opening = jsonBytes({ ...head, spans: [] });
  yield opening.subarray(0, opening.length - ']}'.length);
  for (let from = 0; from < spans.length; from += spansPerSlice) {
    await turn();
    const slice = jsonBytes(spans.slice(from, from + spansPerSlice).map((span) => spanJson(span)));
    // The slice's own brackets dropped; from the second slice on, its `[` becomes the comma before it.
    if (from === 0) yield slice.subarray(1, slice.length - 1);
    else {
      slice[0] = 0x2c;
      yield slice.subarray(0, slice.length - 1);
    }
  }
  yield Buffer.from(']}');
}
