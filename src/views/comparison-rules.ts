// The rules a comparison of two iterations' results is made by, stated once: the comparison
// (result-comparison.ts), the answers that spread its bootstrap over worker threads
// (src/results/result-answers.ts) and the worker's warm-up read them from here, and the answer
// carries `paired_min` so that a reader (the console) need not restate it. The confidence a
// comparison is asked at, and its default, are its query schema's (iterations.compare-query).
export const comparisonRules = {
  /** Fewer paired datapoints than this is insufficient data for a verdict. */
  pairedMin: 10,
  /** The largest drops and rises a comparison lists, each. */
  listedMax: 20,
  /** Resamples of the percentile bootstrap of the mean difference. */
  bootstrapResamples: 10_000,
  /** Its seed: the same request gives the same interval. */
  bootstrapSeed: 20_240_101,
} as const;
