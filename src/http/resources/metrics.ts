// Placeholder until these routes land (issue 5).
import type { Deps } from '../deps.ts';
import type { Route } from '../route.ts';

export function metricsRoutes(_deps: Deps): Route[] {
  return [];
}
