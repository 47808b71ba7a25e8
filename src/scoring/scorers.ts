// A run's simple scorers: `{"method": "scorers", "scorers": [...], "pass_threshold": 0.7}`. Each
// scorer `{type, name, weight (default 1), ...options}` gives a dimension in [0, 1] under its
// name; the score is their mean weighted by `weight`, and passed = score >= pass_threshold. The
// config's shape is checked by schemas/scoring/fields.json; scorersConfigErrors checks what a
// schema cannot (patterns that compile, schemas that compile, unique names, a positive weight),
// and compileScorers turns a valid config into a scoring function, compiled once. Pure: the JSON
// Schema compiler is handed in.
//
// The output's text: a string as it is, any other value as its JSON text (JSON.stringify). A
// printed output is read as JSON (agent-output.ts) where a scorer compares JSON: exact against an
// expected output that is not a string, json_fields, numeric with a `field`, json_schema.
// Types:
// - exact: canonical JSON equality (key order ignored; true is not 1); two strings compared after
//   the options `trim` and `case_insensitive`.
// - contains: the expected output's text (or the option `value`) occurs in the output's text;
//   option `case_insensitive`. No expected output and no value: 0.
// - regex: the output's text matches `pattern` anywhere, with `flags` among i, m, s, u. Patterns
//   are RE2 syntax, run by re2js (RE2's port to JavaScript: linear-time matching, so no pattern
//   can backtrack catastrophically; no backreferences or lookarounds, which RE2 leaves out for
//   that reason). A heuristic checker such as safe-regex2 passes some exponential patterns and
//   refuses some safe ones, and would still leave V8's backtracking engine to run them.
// - json_fields: the share of the expected object's fields (or the option `fields`) whose values
//   equal the output object's as canonical JSON, a missing value reading as null; no fields: 1; an
//   output or expected output that is not an object: 0.
// - numeric: the output (or its `field`) as a number equals the expected one (or its `field`)
//   within `abs_tolerance` or `rel_tolerance` x |expected| (each default 0): 1 or 0. A number, or
//   a string of decimal digits; anything else: 0.
// - json_schema: 1 when the output is valid against `schema`, or the agent's output_schema, else 0.
// - similarity: 1 - Levenshtein distance / the longer length, between the output's and the
//   expected output's text, in UTF-16 code units, by fastest-levenshtein (Myers' bit-parallel
//   algorithm, O(n m / 32); @stdlib's is the plain O(n m) table, ten times slower here). Each text
//   is cut to its first `similarityCharsMax` units first. Both empty: 1; no expected output: 0.
import { distance } from 'fastest-levenshtein';
import { RE2JS } from 're2js';
import type { Json } from '../domain/records.ts';
import type { FieldErrors } from '../domain/rejection.ts';
import { sameJson } from '../views/canonical-json.ts';
import { parsedAgentOutput } from './agent-output.ts';
import { pyLength } from './python-values.ts';

export interface ScorerConfig {
  type: string;
  name: string;
  weight?: number;
  [option: string]: unknown;
}

export interface ScorersConfig {
  method: 'scorers';
  scorers: readonly ScorerConfig[];
  pass_threshold?: number;
}

/** A compiled JSON Schema: whether a value is valid. */
export type SchemaCheck = (value: unknown) => boolean;

export interface ScorerDeps {
  /** Compiles a JSON Schema (e.g. with an Ajv instance); throws when the schema is invalid. Needed by json_schema scorers. */
  compileSchema?: (schema: object | boolean) => SchemaCheck;
  /** The agent's output_schema, for json_schema scorers without a schema of their own. */
  outputSchema?: unknown;
}

export interface ScorersResult {
  score: number;
  passed: boolean;
  dimensions: Record<string, number>;
}

export type ScoreFunction = (output: unknown, expected: unknown) => ScorersResult;

/** Limits, also stated in schemas/scoring/fields.json. */
export const patternCharsMax = 1000;
export const similarityCharsMax = 4000;
export const passThresholdDefault = 0.7;
const weightDefault = 1;
const regexFlags: ReadonlyMap<string, number> = new Map([['i', RE2JS.CASE_INSENSITIVE], ['m', RE2JS.MULTILINE], ['s', RE2JS.DOTALL], ['u', 0]]);

type Dimension = (output: unknown, expected: unknown) => number;

/**
 * What is wrong with a config of the schema's shape, as DRF writes it: `{"scorers": [{}, {"pattern":
 * ["..."]}]}` (one object per scorer, `{}` for a good one), or `{"scorers": ["..."]}` for the list
 * as a whole; null when nothing is.
 */
export function scorersConfigErrors(config: ScorersConfig, deps: ScorerDeps): FieldErrors | null {
  const seen = new Set<string>();
  const perScorer = config.scorers.map((scorer) => {
    const errors = optionErrors(scorer, deps);
    if (seen.has(scorer.name)) errors.name = ['Another scorer has this name.'];
    seen.add(scorer.name);
    return errors;
  });
  if (perScorer.some((errors) => Object.keys(errors).length > 0)) return { scorers: perScorer };
  if (!config.scorers.some((scorer) => weightOf(scorer) > 0)) return { scorers: ['At least one scorer must have a weight above 0.'] };
  return null;
}

/** The scoring function of a config; throws when scorersConfigErrors finds something wrong. */
export function compileScorers(config: ScorersConfig, deps: ScorerDeps): ScoreFunction {
  const errors = scorersConfigErrors(config, deps);
  if (errors) throw new Error(`invalid scorers: ${JSON.stringify(errors)}`);
  const names = config.scorers.map((scorer) => scorer.name);
  const weights = config.scorers.map(weightOf);
  const dimensions = config.scorers.map((scorer) => dimensionOf(scorer, deps));
  const weightSum = weights.reduce((sum, weight) => sum + weight, 0);
  const threshold = config.pass_threshold ?? passThresholdDefault;
  return (output, expected) => {
    const scores: Record<string, number> = {};
    let weighted = 0;
    for (let i = 0; i < dimensions.length; i++) {
      const value = dimensions[i]!(output, expected);
      Object.defineProperty(scores, names[i]!, { value, enumerable: true, writable: true, configurable: true });
      weighted += weights[i]! * value;
    }
    const score = weighted / weightSum;
    return { score, passed: score >= threshold, dimensions: scores };
  };
}

function weightOf(scorer: ScorerConfig): number {
  return scorer.weight ?? weightDefault;
}

function optionErrors(scorer: ScorerConfig, deps: ScorerDeps): Record<string, string[]> {
  if (scorer.type === 'regex') return regexErrors(scorer);
  if (scorer.type === 'json_schema') return schemaErrors(scorer, deps);
  return {};
}

function regexErrors(scorer: ScorerConfig): Record<string, string[]> {
  const { pattern, flags = '' } = scorer;
  if (typeof pattern !== 'string') return { pattern: ['This field is required.'] };
  if (pyLength(pattern) > patternCharsMax) return { pattern: [`Ensure this field has no more than ${patternCharsMax} characters.`] };
  if (typeof flags !== 'string' || ![...flags].every((flag) => regexFlags.has(flag)) || new Set(flags).size !== flags.length) {
    return { flags: ['Use each of the flags i, m, s and u at most once.'] };
  }
  try {
    RE2JS.compile(pattern, flagBits(flags));
    return {};
  } catch (error) {
    return { pattern: [`Not a pattern RE2 accepts: ${(error as Error).message}.`] };
  }
}

function schemaErrors(scorer: ScorerConfig, deps: ScorerDeps): Record<string, string[]> {
  const schema = schemaOf(scorer, deps);
  if (schema === undefined) return { schema: ['Give a schema, or set the agent\'s output_schema.'] };
  if (!deps.compileSchema) throw new Error('json_schema scorers need deps.compileSchema');
  try {
    deps.compileSchema(schema);
    return {};
  } catch (error) {
    return { schema: [`Not a valid JSON Schema: ${(error as Error).message}`] };
  }
}

/** The scorer's schema, else the agent's output_schema (an object or a boolean), else none. */
function schemaOf(scorer: ScorerConfig, deps: ScorerDeps): object | boolean | undefined {
  for (const schema of [scorer.schema, deps.outputSchema]) {
    if (typeof schema === 'boolean' || (typeof schema === 'object' && schema !== null && !Array.isArray(schema))) return schema;
  }
  return undefined;
}

function flagBits(flags: string): number {
  let bits = 0;
  for (const flag of flags) bits |= regexFlags.get(flag)!;
  return bits;
}

function dimensionOf(scorer: ScorerConfig, deps: ScorerDeps): Dimension {
  switch (scorer.type) {
    case 'exact':
      return exactDimension(scorer.trim === true, scorer.case_insensitive === true);
    case 'contains':
      return containsDimension(typeof scorer.value === 'string' ? scorer.value : undefined, scorer.case_insensitive === true);
    case 'regex': {
      const regex = RE2JS.compile(scorer.pattern as string, flagBits((scorer.flags as string | undefined) ?? ''));
      return (output) => (regex.test(textOf(output)) ? 1 : 0);
    }
    case 'json_fields':
      return jsonFieldsDimension(Array.isArray(scorer.fields) ? (scorer.fields as string[]) : undefined);
    case 'numeric':
      return numericDimension(scorer);
    case 'json_schema': {
      const check = deps.compileSchema!(schemaOf(scorer, deps)!);
      return (output) => (check(jsonOf(output)) ? 1 : 0);
    }
    case 'similarity':
      return similarityDimension;
    default:
      throw new Error(`unknown scorer type "${scorer.type}"`);
  }
}

function exactDimension(trim: boolean, caseInsensitive: boolean): Dimension {
  return (output, expected) => {
    if (typeof output === 'string' && typeof expected === 'string') {
      let a = trim ? output.trim() : output;
      let e = trim ? expected.trim() : expected;
      if (caseInsensitive) [a, e] = [a.toLowerCase(), e.toLowerCase()];
      return a === e ? 1 : 0;
    }
    return sameJson(jsonOf(output), (expected ?? null) as Json) ? 1 : 0;
  };
}

function containsDimension(value: string | undefined, caseInsensitive: boolean): Dimension {
  return (output, expected) => {
    if (value === undefined && (expected === null || expected === undefined)) return 0;
    const needle = value ?? textOf(expected);
    const haystack = textOf(output);
    return (caseInsensitive ? haystack.toLowerCase().includes(needle.toLowerCase()) : haystack.includes(needle)) ? 1 : 0;
  };
}

function jsonFieldsDimension(fields: readonly string[] | undefined): Dimension {
  return (output, expected) => {
    const actual = jsonOf(output);
    if (!isObject(actual) || !isObject(expected)) return 0;
    const names = fields ?? Object.keys(expected);
    if (names.length === 0) return 1;
    let equal = 0;
    for (const name of names) if (sameJson(ownJson(actual, name), ownJson(expected, name))) equal++;
    return equal / names.length;
  };
}

function numericDimension(scorer: ScorerConfig): Dimension {
  const field = typeof scorer.field === 'string' ? scorer.field : undefined;
  const absolute = typeof scorer.abs_tolerance === 'number' ? scorer.abs_tolerance : 0;
  const relative = typeof scorer.rel_tolerance === 'number' ? scorer.rel_tolerance : 0;
  return (output, expected) => {
    const a = numberOf(field === undefined ? output : fieldOf(jsonOf(output), field));
    const e = numberOf(field === undefined || !isObject(expected) ? expected : ownJson(expected, field));
    if (a === undefined || e === undefined) return 0;
    if (a === e) return 1;
    const diff = Math.abs(a - e);
    return diff <= absolute || diff <= relative * Math.abs(e) ? 1 : 0;
  };
}

const similarityDimension: Dimension = (output, expected) => {
  if (expected === null || expected === undefined) return 0;
  const a = textOf(output).slice(0, similarityCharsMax);
  const e = textOf(expected).slice(0, similarityCharsMax);
  const longest = Math.max(a.length, e.length);
  return longest === 0 ? 1 : 1 - distance(a, e) / longest;
};

const decimalText = /^\s*[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?\s*$/;

function numberOf(value: unknown): number | undefined {
  if (typeof value === 'number') return value;
  return typeof value === 'string' && decimalText.test(value) ? Number(value) : undefined;
}

function fieldOf(value: Json, field: string): unknown {
  return isObject(value) ? ownJson(value, field) : undefined;
}

/** A string as it is, anything else as its JSON text. */
function textOf(value: unknown): string {
  return typeof value === 'string' ? value : (JSON.stringify(value) ?? 'null');
}

/** A printed output read as JSON where it holds some; any other value as it is. */
function jsonOf(value: unknown): Json {
  return typeof value === 'string' ? parsedAgentOutput(value) : ((value ?? null) as Json);
}

function ownJson(record: Readonly<Record<string, unknown>>, key: string): Json {
  return Object.hasOwn(record, key) ? ((record[key] ?? null) as Json) : null;
}

function isObject(value: unknown): value is Readonly<Record<string, Json>> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
