// Placeholder until the jobs routes land (issue 3).
import type { Deps } from '../deps.ts';
import type { Route } from '../route.ts';

export function jobRoutes(_deps: Deps): Route[] {
  return [];
}
