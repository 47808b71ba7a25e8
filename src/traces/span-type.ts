// What the original service's trace views show beside OTLP's own fields: a span's product type
// (llm_call, tool_call, retrieval, workflow) and its token count, both derived from what the span
// carries (pure: attributes and operation in, a value out).
import type { JsonValue } from './json-text.ts';

/** Attributes (OTLP key-values) as a JSON object. */
export type Attributes = { [key: string]: JsonValue };

export type SpanType = string;

/** An explicit type wins: the instrumentation knows best. */
const typeAttributes = ['overmind.span_type', 'overclaw.span_type'];

/** `gen_ai.operation.name` (or `overmind.operation`) values, by the type they mean. */
const typesByOperation: ReadonlyMap<string, SpanType> = new Map([
  ...['chat', 'text_completion', 'generate_content', 'completion', 'embeddings', 'llm', 'llm_call'].map((op) => [op, 'llm_call'] as const),
  ...['execute_tool', 'tool', 'tool_call'].map((op) => [op, 'tool_call'] as const),
  ...['retrieval', 'retrieve', 'search'].map((op) => [op, 'retrieval'] as const),
  ...['invoke_agent', 'create_agent', 'workflow', 'chain'].map((op) => [op, 'workflow'] as const),
]);

const toolAttributes = ['gen_ai.tool.name', 'gen_ai.tool.call.id'];
const retrievalAttributes = ['db.system', 'gen_ai.data_source.id', 'retrieval.documents'];
const modelAttributes = ['gen_ai.request.model', 'gen_ai.response.model', 'gen_ai.system', 'llm.model', 'genai.model'];

/** A span's token count: a total when one is sent, else input plus output. */
const totalTokenAttributes = ['gen_ai.usage.total_tokens', 'llm.usage.total_tokens', 'genai.usage.total_tokens', 'genai.total_tokens'];
const inputTokenAttributes = ['gen_ai.usage.input_tokens', 'gen_ai.usage.prompt_tokens', 'llm.usage.prompt_tokens', 'genai.prompt_tokens'];
const outputTokenAttributes = ['gen_ai.usage.output_tokens', 'gen_ai.usage.completion_tokens', 'llm.usage.completion_tokens', 'genai.completion_tokens'];

/**
 * The span's type: its `overmind.span_type` attribute; else what its operation names; else a tool
 * or retrieval attribute; else llm_call when it names a model or counts tokens; else workflow.
 */
export function spanTypeOf(operation: string, attributes: Attributes): SpanType {
  for (const key of typeAttributes) {
    const value = attributes[key];
    if (typeof value === 'string' && value.trim() !== '') return value.trim();
  }
  const byOperation = typesByOperation.get(operation.toLowerCase());
  if (byOperation) return byOperation;
  if (toolAttributes.some((key) => key in attributes)) return 'tool_call';
  if (retrievalAttributes.some((key) => key in attributes)) return 'retrieval';
  if (modelAttributes.some((key) => key in attributes) || tokensOf(attributes) > 0) return 'llm_call';
  return 'workflow';
}

/** The tokens a span reports using, 0 when it reports none. */
export function tokensOf(attributes: Attributes): number {
  const total = firstCount(attributes, totalTokenAttributes);
  if (total !== null) return total;
  return (firstCount(attributes, inputTokenAttributes) ?? 0) + (firstCount(attributes, outputTokenAttributes) ?? 0);
}

/** The first of `keys` holding a non-negative whole number (a numeric string counts too). */
function firstCount(attributes: Attributes, keys: readonly string[]): number | null {
  for (const key of keys) {
    const value = attributes[key];
    const count = typeof value === 'bigint' ? Number(value) : typeof value === 'string' && value.trim() !== '' ? Number(value) : value;
    if (typeof count === 'number' && Number.isSafeInteger(count) && count >= 0) return count;
  }
  return null;
}
