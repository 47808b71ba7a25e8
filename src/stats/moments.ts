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

/** The sum of squared deviations of `values` from their mean. */
export function squaredDeviations(values: ArrayLike<number>): number {
  let sum = 0;
  forEachDeviation(values, (deviation) => (sum += deviation * deviation));
  return sum;
}

/** The sum of products of the paired deviations of x and y from their means (equal lengths). */
export function crossDeviations(x: ArrayLike<number>, y: ArrayLike<number>): number {
  const deviationsOfY = new Float64Array(y.length);
  let i = 0;
  forEachDeviation(y, (deviation) => (deviationsOfY[i++] = deviation));
  let sum = 0;
  i = 0;
  forEachDeviation(x, (deviation) => (sum += deviation * deviationsOfY[i++]!));
  return sum;
}

function meanOffset(values: ArrayLike<number>): number {
  const first = values[0]!;
  let offsets = 0;
  for (let i = 0; i < values.length; i++) offsets += values[i]! - first;
  return offsets / values.length;
}

function forEachDeviation(values: ArrayLike<number>, each: (deviation: number) => void): void {
  const first = values[0]!;
  const center = meanOffset(values);
  for (let i = 0; i < values.length; i++) each(values[i]! - first - center);
}
