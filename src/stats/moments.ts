// Means and spreads computed so that equal values have exactly no spread: every value is taken
// relative to the first one, so constant data sums exact zeros and its mean is that value
// (a plain sum of ten 0.1s is 0.9999999999999999, and the deviations from its mean are not 0).
// Pure.

/** The mean of `values` (at least one), as the first value plus the mean offset from it. */
export function meanOf(values: ArrayLike<number>): number {
  const first = values[0]!;
  let offsets = 0;
  for (let i = 0; i < values.length; i++) offsets += values[i]! - first;
  return first + offsets / values.length;
}

/** The sum of squared deviations of `values` from `mean` (the second pass of a two-pass variance). */
export function squaredDeviations(values: ArrayLike<number>, mean: number): number {
  let sum = 0;
  for (let i = 0; i < values.length; i++) {
    const deviation = values[i]! - mean;
    sum += deviation * deviation;
  }
  return sum;
}

/** The sample standard deviation (n - 1 degrees of freedom) of at least two values around `mean`. */
export function sampleSd(values: ArrayLike<number>, mean: number): number {
  return Math.sqrt(squaredDeviations(values, mean) / (values.length - 1));
}
