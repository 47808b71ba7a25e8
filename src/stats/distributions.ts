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

export const normalCdf: (x: number, mu: number, sigma: number) => number = onFirstCall('@stdlib/stats-base-dists-normal-cdf');
export const normalQuantile: (p: number, mu: number, sigma: number) => number = onFirstCall('@stdlib/stats-base-dists-normal-quantile');
export const tCdf: (x: number, v: number) => number = onFirstCall('@stdlib/stats-base-dists-t-cdf');
export const tQuantile: (p: number, v: number) => number = onFirstCall('@stdlib/stats-base-dists-t-quantile');
export const signrankCdf: (x: number, n: number) => number = onFirstCall('@stdlib/stats-base-dists-signrank-cdf');
export const binomialCdf: (x: number, n: number, p: number) => number = onFirstCall('@stdlib/stats-base-dists-binomial-cdf');
export const binomialPmf: (x: number, n: number, p: number) => number = onFirstCall('@stdlib/stats-base-dists-binomial-pmf');
export const padjust: (pvals: number[], method: 'holm') => number[] = onFirstCall('@stdlib/stats-padjust');
