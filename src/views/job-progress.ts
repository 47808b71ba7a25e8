// A job's run as a chart draws it: its iterations in order with the best score reached so far,
// how many were kept or discarded, and the best one. One pass over the iterations, without
// copying them: a job may have a hundred thousand. Pure.
import type { JobIteration } from '../domain/records.ts';

export interface ProgressPoint {
  iteration: JobIteration;
  /** The highest avg_score of this and every earlier iteration; null until one has a score. */
  bestSoFar: number | null;
}

export interface ProgressSummary {
  counts: { keep: number; discard: number; unset: number };
  /** The iteration with the highest avg_score (the earliest on a tie); null when none has one. */
  best: JobIteration | null;
}

/** Iterations `offset` to `offset + limit` (of `iterations`, in the job's order) with their best so far. */
export function progressPage(iterations: readonly JobIteration[], offset: number, limit: number): ProgressPoint[] {
  let bestSoFar: number | null = null;
  const page: ProgressPoint[] = [];
  const end = Math.min(iterations.length, offset + limit);
  for (let i = 0; i < end; i++) {
    const iteration = iterations[i]!;
    const score = iteration.avg_score;
    if (score !== null && (bestSoFar === null || score > bestSoFar)) bestSoFar = score;
    if (i >= offset) page.push({ iteration, bestSoFar });
  }
  return page;
}

export function progressSummary(iterations: readonly JobIteration[]): ProgressSummary {
  const counts = { keep: 0, discard: 0, unset: 0 };
  let best: JobIteration | null = null;
  for (const iteration of iterations) {
    if (iteration.status === null) counts.unset++;
    else counts[iteration.status]++;
    const score = iteration.avg_score;
    if (score !== null && (best === null || score > best.avg_score!)) best = iteration;
  }
  return { counts, best };
}
