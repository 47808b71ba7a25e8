// The dimension names that completions in flight bring their iterations. A posted batch of results
// is held to an iteration's bound on dimension names when its writer decides it (decideResults);
// a run's results are written by the job's commit instead, so a completion's names are counted
// here from when its items are resolved until its commit settles: an iteration's names (its
// table's and those in flight) stay within the bound, and a result that would pass it is invalid.
import { tooManyDimensions, type IterationLimits } from '../domain/result-batch.ts';

export class DimensionNamesInFlight {
  /** Per iteration, each name in flight and how many results in flight carry it. */
  private readonly byIteration = new Map<string, Map<string, number>>();

  constructor(
    /** The names an iteration's stored results have. */
    private readonly storedNames: (iteration: string) => readonly string[],
    private readonly limits: IterationLimits,
  ) {}

  /** Counts a result's names in flight for its iteration, or answers why they would pass the bound (nothing counted). */
  take(iteration: string, names: readonly string[]): string | undefined {
    if (names.length === 0) return undefined;
    const inFlight = this.byIteration.get(iteration);
    const after = new Set([...this.storedNames(iteration), ...(inFlight?.keys() ?? []), ...names]);
    if (after.size > this.limits.resultDimensionsPerIterationMax) return tooManyDimensions(this.limits, after.size, 'result');
    const counts = inFlight ?? new Map<string, number>();
    for (const name of names) counts.set(name, (counts.get(name) ?? 0) + 1);
    this.byIteration.set(iteration, counts);
    return undefined;
  }

  /** A result taken before has settled (written or not): its names are no longer in flight. */
  release(iteration: string, names: readonly string[]): void {
    const counts = this.byIteration.get(iteration);
    if (!counts) return;
    for (const name of names) {
      const left = (counts.get(name) ?? 0) - 1;
      if (left > 0) counts.set(name, left);
      else counts.delete(name);
    }
    if (counts.size === 0) this.byIteration.delete(iteration);
  }
}
