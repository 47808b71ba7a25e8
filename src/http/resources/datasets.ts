// Placeholder until the datasets routes land (issue 3).
import type { Deps } from '../deps.ts';
import type { Route } from '../route.ts';

export function datasetRoutes(_deps: Deps): Route[] {
  return [];
}
