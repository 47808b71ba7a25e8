// Runs being created: from the checks of a run's body to its job's decision. A creation first pins
// its iterations (durably, through the results' writer), then asks the job; while it does, its
// iterations and a place among its job's runs are held here, so that creations made together are
// checked as if one came after the other, and no batch of results lands on an iteration a run is
// being placed on (the results' writer asks, as it asks whether a live run writes it).
export class RunPlacements {
  /** The run each iteration is being placed in. */
  private readonly byIteration = new Map<string, string>();
  /** Runs being placed, per job. */
  private readonly byJob = new Map<string, number>();

  /** The run an iteration is being placed in, if any. */
  runOf(iteration: string): string | undefined {
    return this.byIteration.get(iteration);
  }

  /** Runs of a job being placed now. */
  placedIn(job: string): number {
    return this.byJob.get(job) ?? 0;
  }

  /** Holds a run's iterations and its place in its job; answers what lets them go. */
  place(run: string, job: string, iterations: readonly string[]): () => void {
    for (const iteration of iterations) this.byIteration.set(iteration, run);
    this.byJob.set(job, this.placedIn(job) + 1);
    return () => {
      for (const iteration of iterations) if (this.byIteration.get(iteration) === run) this.byIteration.delete(iteration);
      const left = this.placedIn(job) - 1;
      if (left > 0) this.byJob.set(job, left);
      else this.byJob.delete(job);
    };
  }
}
