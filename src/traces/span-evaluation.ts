// The result a span reports about itself: an evaluation harness that traces each case can say, on
// the span of the case, which iteration ran which datapoint and how it scored, and the service
// records that result with no call of its own (pure: attributes in, a result row out). The row is
// checked afterwards exactly as a posted row is; one that cannot be applied leaves the span as it
// is (stored and counted, never refused).
import type { ResultInput } from '../domain/result-row.ts';
import type { JsonValue } from './json-text.ts';
import type { Attributes } from './span-type.ts';

/** The attributes a span reports its result with (the iteration is its `overmind.iteration.id` link). */
export const evaluationAttributes = {
  datapoint: 'overmind.datapoint.id',
  /** The datapoint's `order` in the version, when the harness counts cases rather than naming datapoints. */
  caseIndex: 'overmind.run.case.index',
  /** The version the iteration is pinned to when it is not yet. */
  dataset: 'overmind.dataset.id',
  score: 'overmind.eval.score',
  attempt: 'overmind.eval.attempt',
  passed: 'overmind.eval.passed',
  /** A JSON object of numbers, as a string attribute. */
  dimensionScores: 'overmind.eval.dimension_scores',
  error: 'overmind.eval.error',
  cost: 'overmind.eval.cost',
} as const;

/** A span's result: the row as a client would post it, and the version it names. */
export interface SpanEvaluation {
  dataset: string | null;
  row: ResultInput;
}

export interface EvaluatedSpan {
  attributes: Attributes;
  resourceAttributes: Attributes;
  traceId: string;
  spanId: string;
  /** OTLP's status code: 2 is an error. */
  statusCode: number;
  statusMessage: string;
  durationNs: number;
}

const errorStatus = 2;

/** The result a span reports, or null when it reports none (it has no `overmind.eval.score`). */
export function evaluationOf(span: EvaluatedSpan): SpanEvaluation | null {
  const { attributes } = span;
  const score = attributes[evaluationAttributes.score];
  if (score === undefined) return null;
  const failed = span.statusCode === errorStatus;
  const error = attributes[evaluationAttributes.error];
  const errorText = typeof error === 'string' && error !== '' ? error : failed ? span.statusMessage : '';
  const row: ResultInput = {
    datapoint: stringOrNull(attributes[evaluationAttributes.datapoint]),
    datapoint_order: exact(attributes[evaluationAttributes.caseIndex]) as number | null,
    attempt: exact(attributes[evaluationAttributes.attempt]) as number | null,
    score: exact(score) as number | null,
    passed: (attributes[evaluationAttributes.passed] ?? null) as boolean | null,
    dimension_scores: parsedJson(attributes[evaluationAttributes.dimensionScores]) as ResultInput['dimension_scores'],
    status: failed || errorText !== '' ? 'error' : 'ok',
    error: errorText,
    trace_id: span.traceId,
    span_id: span.spanId,
    latency_ms: span.durationNs / 1e6,
    cost: exact(attributes[evaluationAttributes.cost] ?? null) as number | null,
  };
  const dataset = attributes[evaluationAttributes.dataset] ?? span.resourceAttributes[evaluationAttributes.dataset];
  return { dataset: stringOrNull(dataset ?? null), row };
}

function stringOrNull(value: JsonValue | undefined): string | null {
  return typeof value === 'string' ? value : null;
}

/** A 64-bit integer attribute as a number when it is one exactly; anything else as it came (checked later). */
function exact(value: JsonValue | undefined): unknown {
  if (typeof value === 'bigint') return Number.isSafeInteger(Number(value)) ? Number(value) : String(value);
  return value ?? null;
}

/**
 * A JSON string attribute parsed; one that is not JSON is kept as the string (and refused later),
 * and so is one with an object key named __proto__, as a request body's is.
 */
function parsedJson(value: JsonValue | undefined): unknown {
  if (typeof value !== 'string') return value ?? null;
  try {
    return JSON.parse(value, (key, parsed: unknown) => {
      if (key === '__proto__') throw new SyntaxError('an object key named __proto__');
      return parsed;
    }) as unknown;
  } catch {
    return value;
  }
}
