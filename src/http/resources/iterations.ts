// Placeholder until the iterations routes land (issue 3).
import type { Deps } from '../deps.ts';
import type { Route } from '../route.ts';

export function iterationRoutes(_deps: Deps): Route[] {
  return [];
}
