// Two job iterations side by side: their scores, every numeric dimension either one reports, and
// a unified diff of their agent code (made by jsdiff). Pure.
import { createTwoFilesPatch, FILE_HEADERS_ONLY } from 'diff';
import type { Json } from '../domain/records.ts';
import { compareCodePoints } from './canonical-json.ts';

export interface Comparison {
  from: number | null;
  to: number | null;
  /** to - from, when both are numbers. */
  delta: number | null;
}

export interface DimensionComparison extends Comparison {
  name: string;
}

/** The configured limits a code diff reads (src/config.ts describes them). */
export interface CodeDiffLimits {
  /** Characters of either code beyond which no diff is made. */
  codeDiffCharsMax: number;
  /** Lines added plus removed beyond which the diff is given up (its cost grows with their square). */
  codeDiffEditsMax: number;
}

export function compareNumbers(from: number | null, to: number | null): Comparison {
  return { from, to, delta: from !== null && to !== null ? to - from : null };
}

/**
 * Every top-level key of either side's dimension_scores (when it is an object) whose value is a
 * number on at least one side, sorted by name; a side without a number there is null.
 */
export function compareDimensions(from: Json, to: Json): DimensionComparison[] {
  const before = numericMembers(from);
  const after = numericMembers(to);
  const names = [...new Set([...before.keys(), ...after.keys()])].sort(compareCodePoints);
  return names.map((name) => ({ name, ...compareNumbers(before.get(name) ?? null, after.get(name) ?? null) }));
}

function numericMembers(scores: Json): Map<string, number> {
  const members = new Map<string, number>();
  if (typeof scores !== 'object' || scores === null || Array.isArray(scores)) return members;
  for (const [name, value] of Object.entries(scores)) {
    if (typeof value === 'number' && Number.isFinite(value)) members.set(name, value);
  }
  return members;
}

/** One side of a code diff: the iteration's name (the file's) and its agent_code. */
export interface CodeDiffSide {
  name: string;
  code: string | null;
}

/**
 * A unified diff of `from.code` into `to.code` (a null code is empty): "" when they are equal,
 * null when either is too long or they differ in too many lines to diff in reasonable time.
 */
export function codeDiff(from: CodeDiffSide, to: CodeDiffSide, limits: CodeDiffLimits): string | null {
  const [before, after] = [from.code ?? '', to.code ?? ''];
  if (before.length > limits.codeDiffCharsMax || after.length > limits.codeDiffCharsMax) return null;
  if (before === after) return '';
  const patch = createTwoFilesPatch(`a/${from.name}`, `b/${to.name}`, before, after, undefined, undefined, {
    context: 3,
    headerOptions: FILE_HEADERS_ONLY,
    maxEditLength: limits.codeDiffEditsMax,
  });
  return patch ?? null;
}
