// Statistics for summarizing evaluation results and comparing candidates. Pure: no I/O, no
// clock, no Math.random; checked figure by figure against test/data/statistics/reference.json.
export { meanWithInterval, wilsonInterval, type Interval, type MeanEstimate } from './intervals.ts';
export { pairedEstimate, type PairedEstimate } from './paired.ts';
export { mcnemar } from './mcnemar.ts';
export { holm } from './holm.ts';
export { bootstrapChunkMeans, bootstrapChunkResamples, bootstrapChunkSizes, bootstrapMeanInterval, percentileInterval, percentileOfChunks } from './bootstrap.ts';
