// The distributions and the p-value adjustment the statistics use, from @stdlib, each loaded the
// first time it is called. Loading them all takes about 550 files and a third of a second here,
// which the service would otherwise pay at every start, before any statistic is asked for; loaded
// on first use they cost one synchronous require (the @stdlib packages are CommonJS) inside the
// first summary or comparison, and the functions stay synchronous.
import { createRequire } from 'node:module';

const load = createRequire(import.meta.url);

/** A function exported by an @stdlib package, loaded on its first call. */
function onFirstCall<F extends (...args: never[]) => unknown>(name: string): F {
  let loaded: F | undefined;
  return ((...args: Parameters<F>) => (loaded ??= load(name) as F)(...args)) as F;
}

export const normalCdf = onFirstCall<typeof import('@stdlib/stats-base-dists-normal-cdf')>('@stdlib/stats-base-dists-normal-cdf');
export const normalQuantile = onFirstCall<typeof import('@stdlib/stats-base-dists-normal-quantile')>('@stdlib/stats-base-dists-normal-quantile');
export const tCdf = onFirstCall<typeof import('@stdlib/stats-base-dists-t-cdf')>('@stdlib/stats-base-dists-t-cdf');
export const tQuantile = onFirstCall<typeof import('@stdlib/stats-base-dists-t-quantile')>('@stdlib/stats-base-dists-t-quantile');
export const signrankCdf = onFirstCall<typeof import('@stdlib/stats-base-dists-signrank-cdf')>('@stdlib/stats-base-dists-signrank-cdf');
export const binomialCdf = onFirstCall<typeof import('@stdlib/stats-base-dists-binomial-cdf')>('@stdlib/stats-base-dists-binomial-cdf');
export const binomialPmf = onFirstCall<typeof import('@stdlib/stats-base-dists-binomial-pmf')>('@stdlib/stats-base-dists-binomial-pmf');
export const padjust = onFirstCall<typeof import('@stdlib/stats-padjust')>('@stdlib/stats-padjust');
