// How a run that the service scores turns an output into a result's score, passed and dimensions:
// its `scoring` (the agent's eval spec, or a list of simple scorers) made into one function, once
// per run and spec. Pure: the eval spec, the schema compiler and the trace's tool calls come in.
import type { FieldErrors } from '../domain/rejection.ts';
import type { RunScoringConfig } from '../domain/run.ts';
import { fieldPointsMax, numberOr } from './field-points.ts';
import { compileScorers, scorersConfigErrors, type ScorerDeps } from './scorers.ts';
import { fieldsOf, scoreWithSpec, type EvalSpecLike, type ToolCall } from './spec-score.ts';
import { consistencyPointsMax } from './consistency.ts';
import { toolScore } from './tool-usage.ts';

/** A run's `scoring` (schemas/scoring/fields.json); a spec's pass_threshold is in points (default 70, as the original reported). */
export type RunScoring = RunScoringConfig;

/** What the service writes into a result row it scores. */
export interface ScoredFields {
  score: number;
  passed: boolean;
  dimension_scores: Record<string, number>;
}

export interface RunScorer {
  /** Whether scoring reads the trace's tool calls (the spec's tool config asks for some). */
  readonly readsToolCalls: boolean;
  /** The bounds a score can take: [0, the spec's points at most], or [0, 1] for scorers. */
  readonly scoreRange: readonly [number, number];
  /** `toolCalls`: the trace's tool calls in start order, or null when there is no trace to read. */
  score(output: unknown, expected: unknown, toolCalls: readonly ToolCall[] | null): ScoredFields;
}

export const specPassThresholdDefault = 70;
/**
 * A score and each dimension score lie within ± this, as a result row's do when a client sends
 * them (schemas/results/fields.json `score`): the sums and squares the summaries, comparisons and
 * races take over a version's datapoints then stay finite.
 */
export const scoreMagnitudeMax = 1e100;
/** A spec total on the text path is at most this; on the object path, at most its weights' sum. */
const specTextTotalMax = 100;
/** Dimensions a spec's result has besides its fields (structure, type and consistency penalties, tool usage). */
const specComponentCount = 4;

/** What is wrong with a scoring for this spec (DRF's shape, under `scoring`), or null. */
export function scoringErrors(scoring: RunScoring, spec: EvalSpecLike, deps: ScorerDeps, dimensionsMax: number): FieldErrors | null {
  if (scoring.method === 'scorers') {
    const errors = scorersConfigErrors(scoring, deps);
    return errors && { scoring: errors };
  }
  const dimensions = specComponentCount + fieldsOf(spec.output_fields).size;
  if (dimensions > dimensionsMax) {
    return { scoring: [`The agent's eval spec would give each result ${dimensions} dimensions (its output fields and 4 components); a result holds at most ${dimensionsMax}.`] };
  }
  const tooMany = specPointsError(spec);
  return tooMany === null ? null : { scoring: [tooMany] };
}

/** Why a spec's scores would not fit a result row: its most points beyond scoreMagnitudeMax (or no number at all); else null. */
function specPointsError(spec: EvalSpecLike): string | null {
  const most = specPointsMax(spec);
  if (most <= scoreMagnitudeMax) return null;
  const points = Number.isFinite(most) ? `up to ${most} points` : 'more points than a number holds';
  return `The agent's eval spec can give a result ${points}; a score lies within ±1e100: lower its weights.`;
}

/**
 * Why a scored result would not fit a result row (a dimension beyond ±scoreMagnitudeMax: a spec
 * with huge negative weights), or null. Its score is already within the spec's range.
 */
export function scoredFieldsError(scored: ScoredFields): string | null {
  for (const [name, value] of Object.entries(scored.dimension_scores)) {
    if (!(Math.abs(value) <= scoreMagnitudeMax)) return `Scoring gave dimension "${name}" ${value} points; a dimension score lies within ±1e100: lower the eval spec's weights.`;
  }
  if (!(Math.abs(scored.score) <= scoreMagnitudeMax)) return `Scoring gave a score of ${scored.score}; a score lies within ±1e100: lower the eval spec's weights.`;
  return null;
}

/** The scoring function of a run; the scoring must be free of scoringErrors (a spec whose points would not fit a row: RangeError). */
export function runScorerOf(scoring: RunScoring, spec: EvalSpecLike, deps: ScorerDeps): RunScorer {
  if (scoring.method === 'scorers') {
    const scorers = compileScorers(scoring, deps);
    return {
      readsToolCalls: false,
      scoreRange: scoreRangeOf(scoring, spec),
      score: (output, expected) => {
        const { score, passed, dimensions } = scorers(output, expected);
        return { score, passed, dimension_scores: dimensions };
      },
    };
  }
  const tooMany = specPointsError(spec);
  if (tooMany !== null) throw new RangeError(tooMany);
  const threshold = scoring.pass_threshold ?? specPassThresholdDefault;
  return {
    readsToolCalls: asksForTools(spec.tool_config),
    scoreRange: scoreRangeOf(scoring, spec),
    score: (output, expected, toolCalls) => {
      const { total, dimensions } = scoreWithSpec(spec, output, expected, toolCalls);
      return { score: total, passed: total >= threshold, dimension_scores: dimensions };
    },
  };
}

/** The bounds a score of this scoring can take: [0, the spec's most points], or [0, 1] for scorers. */
export function scoreRangeOf(scoring: RunScoring, spec: EvalSpecLike): [number, number] {
  return scoring.method === 'scorers' ? [0, 1] : [0, specPointsMax(spec)];
}

/**
 * The most points a spec gives: its structure and tool weights, each field's most, and what its
 * consistency rules can add (a negative penalty), or the text path's 100.
 */
function specPointsMax(spec: EvalSpecLike): number {
  const fields = fieldsOf(spec.output_fields);
  let points = Math.max(0, numberOr(spec.structure_weight, 20)) + Math.max(0, numberOr(spec.tool_usage_weight, 0));
  for (const config of fields.values()) points += fieldPointsMax(config);
  points += consistencyPointsMax(fields, spec.consistency_rules);
  return Math.max(specTextTotalMax, points);
}

/** Whether a tool config asks for anything (else its points are free and no trace is read): toolScore's own test. */
function asksForTools(toolConfig: unknown): boolean {
  return toolScore(toolConfig, null) === null;
}
