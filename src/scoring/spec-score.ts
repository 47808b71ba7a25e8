// A datapoint's score from the agent's eval spec, as the original evaluator computed it
// (/work/shared/spec/spec-scoring.md): the same spec, output, expected output and tool calls give
// the same total, in points on the scale of the spec's weights (about 0-100), unrounded. Pure:
// checked case by case against test/data/scoring/reference.json, which an independent Python
// script writes from the spec's rules.
//
// Spec keys, and their values when absent (or not of their type): output_fields {},
// structure_weight 20, tool_config {}, tool_usage_weight 0, consistency_rules [] (then the
// inferred rules). A field whose settings are not an object is left out; a field's weight is 0
// when absent; total_points plays no part.
//
// Output: a string is the agent's printed text, read as JSON where it holds some (agent-output.ts);
// any other value is the JSON value the agent returned. An object output against an object
// expected output is scored field by field; anything else takes the text path.
//
// Dimensions, each in points (their sum, in this order, is the total before its bounds):
// - object path: `structure`; one per scored field, named by the field (a field of another type
//   than enum, number, boolean and text has none); `type_penalty` (0 or below, at least -10);
//   `consistency_penalty` (0 or below); `tool_usage`. Total: at least 0, no upper bound.
// - text path: `structure`; one score named by the first field, or `text_similarity` with no
//   fields; `tool_usage`. Total: clamped to [0, 100].
// - `tool_usage` is left out when the tool config asks for something and there is no tool call to
//   judge (no trace, or a trace without tool calls): its points cannot be reached.
// - A field named like a component (structure, type_penalty, consistency_penalty, tool_usage), or
//   whose name starts with "field:", is reported as "field:<name>", so that no dimension hides
//   another. The original wrote both into one map, the later key overwriting the earlier, and
//   summed what was left (a field named "structure" replaced the structure points); here every
//   component is counted, so such a spec's total differs from the original's by the lost part.
//
// Where the spec leaves a choice, the original evaluator's own behaviour decided:
// - Text read with str() reads every falsy value as empty (`str(x or "")`): a missing text field,
//   null, 0, false, "", [] and {} are empty for non_empty, sim, kw and the text path (never the
//   text "None" or "0").
// - Tool usage is the mean of the parts the config asks for (a part whose list or map is empty is
//   left out), so completeness with no expected_tools is never 0 / 0.
// - enum's partial credit compares the actual value's `lower(strip(str(v or "")))` with each of
//   `values` lowered (not stripped), and its type check `lower(strip(str(v)))` likewise.
// And by choice, where neither says:
// - An ordering rule is violated when `a OP b` is false, as the spec says, so a NaN ("nan")
//   violates it; an unknown operator never does.
// - In chaining, a list result is looked up by an integer index first (negative from the end, as
//   Python indexes), else by the first item that is an object with that key.
// - Malformed settings fall back to their defaults rather than fail (the original raised): a
//   non-number tolerance, penalty, range or partial_score, a band that is not {within, score_pct}.
//   A boolean is a number there (1 or 0), as Python's arithmetic reads it; a numeric string is
//   not (the original's arithmetic raised on it, though its float(weight) read it in places).
import type { Json } from '../domain/records.ts';
import { parsedAgentOutput } from './agent-output.ts';
import { consistencyPenalty, type Fields } from './consistency.ts';
import { fieldPoints, isTypeError, numberOr, weightOf, type FieldConfig } from './field-points.ts';
import { pyText } from './python-values.ts';
import { similarity } from './text-similarity.ts';
import { toolScore, type ToolCall } from './tool-usage.ts';

export type { ToolCall } from './tool-usage.ts';

/** The object `GET /api/agents/{id}/eval_spec/` serves (keys read defensively, defaults as above). */
export type EvalSpecLike = Readonly<Record<string, unknown>>;

export interface SpecScore {
  /** The result's score, in points. */
  total: number;
  /** Each component in points, by the names above. */
  dimensions: Record<string, number>;
}

const structureWeightDefault = 20;
const toolUsageWeightDefault = 0;
const typePenaltyMin = -10;
const typeErrorPoints = 2;
/** The text path's score weight when the fields' weights add up to 0. */
const textWeightDefault = 100;
const textTotalMax = 100;
const importanceWeights: ReadonlyMap<unknown, number> = new Map([['critical', 3], ['important', 2], ['minor', 1]]);
const importanceWeightDefault = 2;
const components: ReadonlySet<string> = new Set(['structure', 'type_penalty', 'consistency_penalty', 'tool_usage']);

/**
 * The score of `output` against `expected` by `spec`. `toolCalls`: the tool calls of the run's
 * trace in start order (tool-calls.ts), or null when no trace was available.
 */
export function scoreWithSpec(spec: EvalSpecLike, output: unknown, expected: unknown, toolCalls: readonly ToolCall[] | null): SpecScore {
  const value = typeof output === 'string' ? parsedAgentOutput(output) : output;
  const fields = fieldsOf(spec.output_fields);
  const tools = toolScore(spec.tool_config, toolCalls);
  const toolPoints = tools === null ? null : tools * numberOr(spec.tool_usage_weight, toolUsageWeightDefault);
  const structureWeight = numberOr(spec.structure_weight, structureWeightDefault);
  return isObject(value) && isObject(expected)
    ? objectScore(spec, fields, structureWeight, value, expected, toolPoints)
    : textScore(fields, structureWeight, value, expected, toolPoints);
}

/** A field's dimension name: its own, unless that is (or could pass for) a component's. */
export function fieldDimension(name: string): string {
  return components.has(name) || name.startsWith('field:') ? `field:${name}` : name;
}

function objectScore(
  spec: EvalSpecLike,
  fields: Fields,
  structureWeight: number,
  output: Readonly<Record<string, unknown>>,
  expected: Readonly<Record<string, unknown>>,
  toolPoints: number | null,
): SpecScore {
  const dimensions: Record<string, number> = {};
  let total = (dimensions.structure = structure(fields, output) * structureWeight);
  let typeErrors = 0;
  for (const [name, config] of fields) {
    const actual = own(output, name);
    const points = fieldPoints(config, actual, own(expected, name));
    if (points !== undefined) total += setDimension(dimensions, fieldDimension(name), points);
    if (actual !== null && actual !== undefined && isTypeError(config, actual)) typeErrors++;
  }
  total += dimensions.type_penalty = Math.max(typePenaltyMin, -typeErrorPoints * typeErrors);
  total += dimensions.consistency_penalty = consistencyPenalty(fields, spec.consistency_rules, output);
  if (toolPoints !== null) total += dimensions.tool_usage = toolPoints;
  return { total: Math.max(0, total), dimensions };
}

/** The share of the fields' importance whose output value is present (not null, not ""). */
function structure(fields: Fields, output: Readonly<Record<string, unknown>>): number {
  let present = 0;
  let all = 0;
  for (const [name, config] of fields) {
    const importance = importanceWeights.get(config.importance === undefined ? 'important' : config.importance) ?? importanceWeightDefault;
    all += importance;
    const value = own(output, name);
    if (value !== undefined && value !== null && value !== '') present += importance;
  }
  return present / Math.max(all, 1);
}

function textScore(fields: Fields, structureWeight: number, output: unknown, expected: unknown, toolPoints: number | null): SpecScore {
  const dimensions: Record<string, number> = {};
  const outputText = pyText(output) !== '';
  let total = (dimensions.structure = outputText ? structureWeight : 0);
  let weight = 0;
  for (const config of fields.values()) weight += weightOf(config);
  if (weight === 0) weight = textWeightDefault;
  const first = fields.keys().next();
  const key = first.done ? 'text_similarity' : fieldDimension(first.value);
  const points = pyText(expected) !== '' ? similarity(output, expected) * weight : outputText ? weight : 0;
  total += setDimension(dimensions, key, points);
  if (toolPoints !== null) total += dimensions.tool_usage = toolPoints;
  return { total: Math.max(0, Math.min(textTotalMax, total)), dimensions };
}

/** output_fields' entries whose settings are objects, in order. */
export function fieldsOf(outputFields: unknown): Fields {
  const fields = new Map<string, FieldConfig>();
  if (!isObject(outputFields)) return fields;
  for (const [name, config] of Object.entries(outputFields)) if (isObject(config)) fields.set(name, config);
  return fields;
}

/** Sets a dimension, "__proto__" included (as an own key, not the object's prototype); returns the points. */
function setDimension(dimensions: Record<string, number>, key: string, points: number): number {
  Object.defineProperty(dimensions, key, { value: points, enumerable: true, writable: true, configurable: true });
  return points;
}

/** An own key's value (none for inherited names such as "constructor"). */
function own(record: Readonly<Record<string, unknown>>, key: string): unknown {
  return Object.hasOwn(record, key) ? record[key] : undefined;
}

function isObject(value: unknown): value is Readonly<Record<string, Json>> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
