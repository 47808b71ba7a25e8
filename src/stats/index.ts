// Statistics for summarizing evaluation results and comparing candidates. Pure: no I/O, no
// clock, no Math.random; checked figure by figure against test/data/statistics/reference.json
// and test/data/race/reference.json.
export { meanWithInterval, wilsonInterval, type Interval, type MeanEstimate } from './intervals.ts';
export { pairedEstimate, type PairedEstimate } from './paired.ts';
export { mcnemar } from './mcnemar.ts';
export { holm } from './holm.ts';
export { bootstrapChunkMeans, bootstrapChunkResamples, bootstrapChunkSizes, bootstrapMeanInterval, percentileInterval, percentileOfChunks } from './bootstrap.ts';
export {
  confidenceSequenceBounds,
  initialConfidenceSequence,
  updateConfidenceSequence,
  type ConfidenceSequenceSettings,
  type ConfidenceSequenceState,
} from './confidence-sequence.ts';
export {
  decideCandidate,
  initialRaceSequence,
  pairsMinDefault,
  type RaceDecision,
  type RaceScores,
  type RaceSettings,
  type RaceStanding,
} from './race-rule.ts';
