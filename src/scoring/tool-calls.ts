// A trace's tool calls, as the spec scoring reads them: every child span (one with a parent) that
// the service classifies as a tool call, in the order given (the caller passes spans in start
// order). The original SDK records a tool's name as the span's name (and `tool.name`), its
// arguments and result as the attributes `inputs` and `outputs` (JSON text); OpenTelemetry's GenAI
// conventions use `gen_ai.tool.name`, `gen_ai.tool.call.arguments` and `gen_ai.tool.call.result`,
// which win where both are sent. Pure.
import type { Attributes } from '../traces/span-type.ts';
import { spanTypeOf } from '../traces/span-type.ts';
import type { ToolCall } from './tool-usage.ts';

/** The span fields read here. */
export interface SpanLike {
  span_id: string;
  parent_span_id: string | null;
  name: string;
  operation: string;
  attributes: Attributes;
}

const nameAttributes = ['gen_ai.tool.name', 'tool.name'];
const argumentAttributes = ['gen_ai.tool.call.arguments', 'inputs'];
const resultAttributes = ['gen_ai.tool.call.result', 'outputs'];

export function toolCallsOf(spans: readonly SpanLike[]): ToolCall[] {
  const calls: ToolCall[] = [];
  for (const span of spans) {
    if (!span.parent_span_id || spanTypeOf(span.operation, span.attributes) !== 'tool_call') continue;
    const args = decoded(first(span.attributes, argumentAttributes));
    calls.push({
      name: toolName(span),
      args: typeof args === 'object' && args !== null && !Array.isArray(args) ? (args as Record<string, unknown>) : {},
      result: decoded(first(span.attributes, resultAttributes)) ?? null,
    });
  }
  return calls;
}

/** `gen_ai.tool.name`, else `tool.name` (each when a non-empty string), else the span's name. */
function toolName(span: SpanLike): string {
  for (const key of nameAttributes) {
    const value = span.attributes[key];
    if (typeof value === 'string' && value !== '') return value;
  }
  return span.name;
}

/** The first of `keys` the attributes hold. */
function first(attributes: Attributes, keys: readonly string[]): unknown {
  for (const key of keys) if (Object.hasOwn(attributes, key)) return attributes[key];
  return undefined;
}

/** JSON text parsed when it parses; any other value as it is. */
function decoded(value: unknown): unknown {
  if (typeof value !== 'string') return value;
  try {
    return JSON.parse(value) as unknown;
  } catch {
    return value;
  }
}
