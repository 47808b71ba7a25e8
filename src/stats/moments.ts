// Means and spreads computed from each value's offset to the first one: constant data sums exact
// zeros, so its mean is that value and its spread exactly 0 (a plain sum of ten 0.1s is
// 0.9999999999999999, and the deviations from that mean are not 0); and deviations are taken
// from the mean offset before it is rounded back to a value, so two values a rounding step apart
// still deviate symmetrically (0.3 and 0.30000000000000004 have a mean of 0.3 once rounded, but
// deviations of -2.8e-17 and +2.8e-17). Pure.

/** The mean of at least one value, as the first value plus the mean offset from it. */
export function meanOf(values: ArrayLike<number>): number {
  return values[0]! + meanOffset(values);
}

/** The sample standard deviation (n - 1 degrees of freedom) of at least two values. */
export function sampleSd(values: ArrayLike<number>): number {
  return Math.sqrt(squaredDeviations(values) / (values.length - 1));
}

/** meanOf and sampleSd of at least two values, the same numbers, the mean offset computed once. */
export function meanAndSd(values: ArrayLike<number>): { mean: number; sd: number } {
  const center = meanOffset(values);
  return { mean: values[0]! + center, sd: Math.sqrt(squaredDeviationsAbout(values, center) / (values.length - 1)) };
}

/** The sum of squared deviations of `values` from their mean. */
export function squaredDeviations(values: ArrayLike<number>): number {
  return squaredDeviationsAbout(values, meanOffset(values));
}

/** The sum of products of the paired deviations of x and y from their means (equal lengths). */
export function crossDeviations(x: ArrayLike<number>, y: ArrayLike<number>): number {
  const firstX = x[0]!;
  const firstY = y[0]!;
  const centerX = meanOffset(x);
  const centerY = meanOffset(y);
  let sum = 0;
  for (let i = 0; i < x.length; i++) sum += (x[i]! - firstX - centerX) * (y[i]! - firstY - centerY);
  return sum;
}

/** The mean of the offsets of `values` from the first one. */
function meanOffset(values: ArrayLike<number>): number {
  const first = values[0]!;
  let offsets = 0;
  for (let i = 0; i < values.length; i++) offsets += values[i]! - first;
  return offsets / values.length;
}

/**
 * The sum of squared deviations from the mean, given the mean offset: each deviation is the
 * value's offset from the first one less the mean offset. Written out (no callback): these loops
 * run over every datapoint of a summary three times or more.
 */
function squaredDeviationsAbout(values: ArrayLike<number>, center: number): number {
  const first = values[0]!;
  let sum = 0;
  for (let i = 0; i < values.length; i++) {
    const deviation = values[i]! - first - center;
    sum += deviation * deviation;
  }
  return sum;
}
