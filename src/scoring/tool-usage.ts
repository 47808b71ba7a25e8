// The tool score in [0, 1] from the spec's tool_config and the tool calls of the run's trace:
// 1 when the config asks for nothing (expected_tools, param_constraints and dependencies all
// empty: the weight is given for free, with or without a trace); otherwise none when there is no
// call to judge (no trace, or a trace without tool calls); otherwise the mean of the parts the
// config asks for: completeness, arguments, chaining. Pure.
import { pyInt, pyLower, pyStr, pyStrip, pyTruthy } from './python-values.ts';

export interface ToolCall {
  name: string;
  args: Record<string, unknown>;
  result: unknown;
}

type JsonObject = Readonly<Record<string, unknown>>;

/** The tool score, or null when it cannot be given (the tool usage dimension is then left out). */
export function toolScore(toolConfig: unknown, calls: readonly ToolCall[] | null): number | null {
  const config: JsonObject = isObject(toolConfig) ? toolConfig : {};
  const { expected_tools: expectedTools, param_constraints: constraints, dependencies } = config;
  if (!pyTruthy(expectedTools) && !pyTruthy(constraints) && !pyTruthy(dependencies)) return 1;
  if (calls === null || calls.length === 0) return null;
  let sum = 0;
  let parts = 0;
  if (Array.isArray(expectedTools) && expectedTools.length > 0) {
    sum += completeness(expectedTools, calls);
    parts++;
  }
  if (isObject(constraints) && pyTruthy(constraints)) {
    sum += argumentsShare(constraints, calls);
    parts++;
  }
  if (Array.isArray(dependencies) && dependencies.length > 0) {
    sum += chaining(dependencies, calls);
    parts++;
  }
  return parts === 0 ? 0 : sum / parts;
}

/** The distinct called names among expected_tools, over the length of expected_tools as given. */
function completeness(expectedTools: readonly unknown[], calls: readonly ToolCall[]): number {
  const expected = new Set(expectedTools);
  const called = new Set(calls.map((call) => call.name));
  let found = 0;
  for (const name of called) if (expected.has(name)) found++;
  return found / expectedTools.length;
}

/**
 * Over every call of a tool in param_constraints and every constrained parameter it passed, the
 * share whose `lower(strip(str(value)))` is among the allowed values (`str(v).lower()`; a
 * constraint that is not a list allows nothing); 0 when there is nothing to check.
 */
function argumentsShare(constraints: JsonObject, calls: readonly ToolCall[]): number {
  let checks = 0;
  let valid = 0;
  for (const call of calls) {
    const params = Object.hasOwn(constraints, call.name) ? constraints[call.name] : undefined;
    if (!isObject(params)) continue;
    for (const [param, allowed] of Object.entries(params)) {
      if (!Object.hasOwn(call.args, param)) continue;
      checks++;
      const value = pyStrip(pyLower(pyStr(call.args[param])));
      if (Array.isArray(allowed) && loweredSet(allowed).has(value)) valid++;
    }
  }
  return checks === 0 ? 0 : valid / checks;
}

/** An allowed list lowered (`str(v).lower()`), made once per list: it is looked in once per call, and calls can be many. */
const loweredSets = new WeakMap<readonly unknown[], ReadonlySet<string>>();

function loweredSet(allowed: readonly unknown[]): ReadonlySet<string> {
  let lowered = loweredSets.get(allowed);
  if (!lowered) {
    lowered = new Set(allowed.map((item) => pyLower(pyStr(item))));
    loweredSets.set(allowed, lowered);
  }
  return lowered;
}

/**
 * Over the dependencies `{from_tool, from_field, to_tool, to_param}` whose tools were both called:
 * the share where from_field of the last from_tool call's result is not null and
 * `lower(str(value)) == lower(str(arg or ""))` for to_param of the first to_tool call; 0 when
 * there is nothing to check.
 */
function chaining(dependencies: readonly unknown[], calls: readonly ToolCall[]): number {
  const lastResults = new Map<string, unknown>();
  /** Each tool's first call (a lookup per dependency: a search of the calls for each made dependencies x calls work). */
  const firstCalls = new Map<string, ToolCall>();
  for (const call of calls) {
    lastResults.set(call.name, call.result);
    if (!firstCalls.has(call.name)) firstCalls.set(call.name, call);
  }
  let checks = 0;
  let passed = 0;
  for (const dependency of dependencies) {
    if (!isObject(dependency)) continue;
    const { from_tool: fromTool = '', from_field: fromField = '', to_tool: toTool = '', to_param: toParam = '' } = dependency;
    const target = typeof toTool === 'string' ? firstCalls.get(toTool) : undefined;
    if (typeof fromTool !== 'string' || !lastResults.has(fromTool) || target === undefined) continue;
    checks++;
    const value = lookedUp(lastResults.get(fromTool), fromField);
    const argument = typeof toParam === 'string' && Object.hasOwn(target.args, toParam) ? target.args[toParam] : undefined;
    if (value !== null && value !== undefined && pyLower(pyStr(value)) === pyLower(pyTruthy(argument) ? pyStr(argument) : '')) passed++;
  }
  return checks === 0 ? 0 : passed / checks;
}

/**
 * `from_field` of a result: a dict's key; on a list, an integer index (a JSON integer or a string
 * int() reads, negative from the end) when in range, else the first item that is an object with
 * that key; anything else: none.
 */
function lookedUp(result: unknown, field: unknown): unknown {
  if (Array.isArray(result)) {
    const index = typeof field === 'boolean' ? undefined : pyInt(field);
    if (index !== undefined && index >= -result.length && index < result.length) return result[index < 0 ? result.length + index : index];
    if (typeof field !== 'string') return undefined;
    return result.find((item): item is JsonObject => isObject(item) && Object.hasOwn(item, field))?.[field];
  }
  if (isObject(result) && typeof field === 'string' && Object.hasOwn(result, field)) return result[field];
  return undefined;
}

function isObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
