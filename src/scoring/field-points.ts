// One output field against its expected value, by the field's type in the eval spec, and whether
// its value is of the wrong type: the original evaluator's rules, in points. Pure.
import { pyEquals, pyFloat, pyLower, pyRound, pyStr, pyStrip, pyText, pyTruthy } from './python-values.ts';
import { keywordCoverage, similarity } from './text-similarity.ts';

/** A field's settings in `output_fields` (a JSON object; keys read defensively). */
export type FieldConfig = Readonly<Record<string, unknown>>;

/** `weight`, 0 when absent or not a number. */
export function weightOf(config: FieldConfig): number {
  return numberOr(config.weight, 0);
}

/**
 * A numeric setting (a weight, a tolerance, a penalty) as the original's arithmetic reads it: a
 * number, or a boolean as 1 or 0 (Python's bool is an int); anything else is `fallback` (where
 * the original raised, or read a numeric string with float() in some places and not in others).
 */
export function numberOr(value: unknown, fallback: number): number {
  return numberSetting(value) ?? fallback;
}

/** A number, or a boolean as 1 or 0; else undefined. */
export function numberSetting(value: unknown): number | undefined {
  if (typeof value === 'number') return value;
  return typeof value === 'boolean' ? Number(value) : undefined;
}

/** The field's points, or undefined for a type the original did not score (no dimension). */
export function fieldPoints(config: FieldConfig, actual: unknown, expected: unknown): number | undefined {
  switch (config.type) {
    case 'enum':
      return enumPoints(config, actual, expected);
    case 'number':
      return numberPoints(config, actual, expected);
    case 'boolean':
      return pyEquals(actual, expected) ? weightOf(config) : 0;
    case 'text':
      return textPoints(config, actual, expected);
    default:
      return undefined;
  }
}

/**
 * The most points a field can give (0 at least), for a score's range: its weight, unless its
 * settings give more than that elsewhere (an enum's partial_score, a tolerance band's score_pct
 * above 1, or both negative with a negative weight).
 */
export function fieldPointsMax(config: FieldConfig): number {
  const weight = weightOf(config);
  let most = Math.max(0, weight);
  if (config.type === 'enum' && pyTruthy(config.partial_credit)) most = Math.max(most, partialScore(config, weight));
  if (config.type === 'number' && Array.isArray(config.tolerance_bands)) {
    for (const band of bandsOf(config.tolerance_bands)) most = Math.max(most, weight * band.score_pct);
  }
  return config.type === 'enum' || config.type === 'number' || config.type === 'boolean' || config.type === 'text' ? most : 0;
}

/** Equal lowered text: the weight; else, with partial credit, a value among `values`: partial_score. */
function enumPoints(config: FieldConfig, actual: unknown, expected: unknown): number {
  const weight = weightOf(config);
  const chosen = enumText(actual);
  if (chosen === enumText(expected)) return weight;
  if (pyTruthy(config.partial_credit) && loweredValues(config).firstIndex.has(chosen)) {
    return partialScore(config, weight);
  }
  return 0;
}

/** An enum's partial credit: partial_score, else max(1, round(0.2 x weight)). */
function partialScore(config: FieldConfig, weight: number): number {
  return numberSetting(config.partial_score) ?? Math.max(1, pyRound(0.2 * weight));
}

/** `lower(strip(str(x or "")))`. */
function enumText(value: unknown): string {
  return pyLower(pyText(value));
}

/** An enum's `values` lowered (`str(v).lower()`; not a list: none), and each one's first position. */
export interface LoweredValues {
  readonly count: number;
  readonly firstIndex: ReadonlyMap<string, number>;
}

/**
 * Made once per field config (a spec's records are replaced, never changed in place): a spec's
 * consistency rules look an enum's values up once per rule, and a list rebuilt and searched each
 * time made rules x values work (28 s for a 0.5 MB spec).
 */
const loweredByConfig = new WeakMap<FieldConfig, LoweredValues>();

export function loweredValues(config: FieldConfig): LoweredValues {
  let lowered = loweredByConfig.get(config);
  if (!lowered) {
    const values = Array.isArray(config.values) ? config.values : [];
    const firstIndex = new Map<string, number>();
    values.forEach((value, index) => {
      const text = pyLower(pyStr(value));
      if (!firstIndex.has(text)) firstIndex.set(text, index);
    });
    lowered = { count: values.length, firstIndex };
    loweredByConfig.set(config, lowered);
  }
  return lowered;
}

/**
 * `|float(actual or 0) - float(expected or 0)|` against the tolerance bands (ascending `within`,
 * the first that holds gives weight x score_pct, none 0), else within `tolerance` (default 10) the
 * weight and within twice it half. A value that does not convert scores 0.
 */
function numberPoints(config: FieldConfig, actual: unknown, expected: unknown): number {
  const weight = weightOf(config);
  const a = pyFloat(pyTruthy(actual) ? actual : 0);
  const e = pyFloat(pyTruthy(expected) ? expected : 0);
  if (a === undefined || e === undefined) return 0;
  const diff = Math.abs(a - e);
  if (Array.isArray(config.tolerance_bands) && config.tolerance_bands.length > 0) return bandPoints(config.tolerance_bands, diff, weight);
  const tolerance = numberOr(config.tolerance, 10);
  if (diff <= tolerance) return weight;
  if (diff <= 2 * tolerance) return 0.5 * weight;
  return 0;
}

interface Band {
  within: number;
  score_pct: number;
}

/** Bands that are not `{within: number, score_pct: number}` (numberSetting) are passed over. */
function bandPoints(bands: readonly unknown[], diff: number, weight: number): number {
  const valid = bandsOf(bands).sort((a, b) => a.within - b.within);
  for (const band of valid) if (diff <= band.within) return weight * band.score_pct;
  return 0;
}

function bandsOf(bands: readonly unknown[]): Band[] {
  const valid: Band[] = [];
  for (const value of bands) {
    if (typeof value !== 'object' || value === null) continue;
    const band = value as Record<string, unknown>;
    const within = numberSetting(band.within);
    const scorePct = numberSetting(band.score_pct);
    if (within !== undefined && scorePct !== undefined) valid.push({ within, score_pct: scorePct });
  }
  return valid;
}

/** By `eval_mode` (non_empty when absent); llm_judge, which needs a model, falls back to similarity. */
function textPoints(config: FieldConfig, actual: unknown, expected: unknown): number {
  const weight = weightOf(config);
  switch (config.eval_mode === undefined ? 'non_empty' : config.eval_mode) {
    case 'non_empty':
      return pyText(actual) === '' ? 0 : weight;
    case 'similarity':
    case 'llm_judge':
      return weight * similarity(actual, expected);
    case 'keyword_coverage':
      return weight * keywordCoverage(actual, expected);
    default:
      return 0;
  }
}

/**
 * Whether a non-null value is of the wrong type: a number that float() refuses; a boolean that is
 * neither a boolean nor a number equal to 0 or 1; an enum whose lowered, stripped text is not
 * among the lowered `values`; a text that is not a string.
 */
export function isTypeError(config: FieldConfig, actual: unknown): boolean {
  switch (config.type) {
    case 'number':
      return pyFloat(actual) === undefined;
    case 'boolean':
      return typeof actual !== 'boolean' && actual !== 0 && actual !== 1;
    case 'enum':
      return !loweredValues(config).firstIndex.has(pyStrip(pyLower(pyStr(actual))));
    case 'text':
      return typeof actual !== 'string';
    default:
      return false;
  }
}
