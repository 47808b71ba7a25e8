// The consistency penalty: minus the penalty of every consistency rule the output's values break.
// An empty or missing rule list means the inferred rules: a correlation rule (penalty 3) for every
// (number field, enum field) pair of output_fields, number fields in order, each with every enum
// field in order. Pure.
import { loweredValues, numberOr, numberSetting, type FieldConfig } from './field-points.ts';
import { pyFloat, pyLower, pyStr, pyStrip } from './python-values.ts';

export type Fields = ReadonlyMap<string, FieldConfig>;
type Rule = Readonly<Record<string, unknown>>;

const penaltyDefault = 3;
/** A correlation's number (as a share of its range) and enum position count as high above one, low below the other. */
const highShareMin = 0.7;
const lowShareMax = 0.3;

const holds: ReadonlyMap<unknown, (a: number, b: number) => boolean> = new Map([
  ['<=', (a: number, b: number) => a <= b],
  ['<', (a: number, b: number) => a < b],
  ['>=', (a: number, b: number) => a >= b],
  ['>', (a: number, b: number) => a > b],
]);

/** Minus the sum of the violated rules' penalties (0 when none is violated). */
export function consistencyPenalty(fields: Fields, rules: unknown, output: Readonly<Record<string, unknown>>): number {
  let penalty = 0;
  for (const rule of rulesOf(fields, rules)) {
    const a = valueAt(output, rule.field_a);
    const b = valueAt(output, rule.field_b);
    if (a === null || a === undefined || b === null || b === undefined) continue;
    if (violates(fields, rule, a, b)) penalty -= numberOr(rule.penalty, penaltyDefault);
  }
  return penalty;
}

/** The most a spec's rules can add (0 at least): a rule with a negative penalty adds its size when broken. */
export function consistencyPointsMax(fields: Fields, rules: unknown): number {
  let most = 0;
  for (const rule of rulesOf(fields, rules)) most += Math.max(0, -numberOr(rule.penalty, penaltyDefault));
  return most;
}

/** The spec's rules (entries that are not objects passed over), or the inferred ones when there are none. */
function rulesOf(fields: Fields, rules: unknown): readonly Rule[] {
  if (Array.isArray(rules) && rules.length > 0) return rules.filter((rule): rule is Rule => typeof rule === 'object' && rule !== null && !Array.isArray(rule));
  const inferred: Rule[] = [];
  for (const [numberName, numberConfig] of fields) {
    if (numberConfig.type !== 'number') continue;
    for (const [enumName, enumConfig] of fields) {
      if (enumConfig.type === 'enum') inferred.push({ field_a: numberName, field_b: enumName, type: 'correlation', penalty: penaltyDefault });
    }
  }
  return inferred;
}

function valueAt(output: Readonly<Record<string, unknown>>, key: unknown): unknown {
  const name = key === undefined ? '' : key;
  return typeof name === 'string' && Object.hasOwn(output, name) ? output[name] : undefined;
}

function violates(fields: Fields, rule: Rule, a: unknown, b: unknown): boolean {
  const type = rule.type === undefined ? 'correlation' : rule.type;
  if (type === 'correlation') return contradicts(fields, rule, a, b);
  if (type !== 'ordering') return false;
  const x = pyFloat(a);
  const y = pyFloat(b);
  const holdsFor = holds.get(rule.operator === undefined ? '<=' : rule.operator);
  // Violated when `a OP b` is false, so a NaN breaks any ordering; an unknown operator never does.
  return x !== undefined && y !== undefined && holdsFor !== undefined && !holdsFor(x, y);
}

/**
 * A number field_a high in its `range` (default [0, 100]) with field_b among the last values of
 * its enum (the first value is the best), or low with one among the first: n = (v - lo) /
 * max(hi - lo, 1), pos = index / (len(values) - 1), violated when both exceed 0.7 or both fall
 * below 0.3. Only for a number field_a and an enum field_b with at least two values, the actual
 * enum value among them.
 */
function contradicts(fields: Fields, rule: Rule, a: unknown, b: unknown): boolean {
  const numberConfig = typeof rule.field_a === 'string' ? fields.get(rule.field_a) : undefined;
  const enumConfig = typeof rule.field_b === 'string' ? fields.get(rule.field_b) : undefined;
  if (numberConfig?.type !== 'number' || enumConfig?.type !== 'enum') return false;
  const value = pyFloat(a);
  if (value === undefined) return false;
  const [lo, hi] = rangeOf(numberConfig);
  const share = (value - lo) / Math.max(hi - lo, 1);
  const values = loweredValues(enumConfig);
  const index = values.firstIndex.get(pyStrip(pyLower(pyStr(b))));
  if (values.count < 2 || index === undefined) return false;
  const position = index / (values.count - 1);
  return (share > highShareMin && position > highShareMin) || (share < lowShareMax && position < lowShareMax);
}

/** `range` as [lo, hi] when it is two numbers (numberSetting), else [0, 100]. */
function rangeOf(config: FieldConfig): [number, number] {
  const range = config.range;
  if (!Array.isArray(range) || range.length !== 2) return [0, 100];
  const low = numberSetting(range[0]);
  const high = numberSetting(range[1]);
  return low === undefined || high === undefined ? [0, 100] : [low, high];
}
