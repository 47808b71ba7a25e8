// Holm's step-down adjustment of a family of p-values, as statsmodels' multipletests(method=
// 'holm'): sorted ascending, the i-th (from 0) of m is multiplied by m - i, made non-decreasing
// and capped at 1. Missing p-values (null) are not tests: they stay null and do not count in m.
// Pure; the adjustment comes from @stdlib.
import { padjust } from './distributions.ts';

/** Holm step-down adjusted p-values, in the input order; nulls stay null and are not counted. */
export function holm(pValues: readonly (number | null)[]): (number | null)[] {
  const tested: number[] = [];
  const places: number[] = [];
  pValues.forEach((p, place) => {
    if (p === null) return;
    tested.push(p);
    places.push(place);
  });
  const adjusted = pValues.slice();
  if (tested.length === 0) return adjusted;
  padjust(tested, 'holm').forEach((p, i) => (adjusted[places[i]!] = p));
  return adjusted;
}
