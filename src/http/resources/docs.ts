// Placeholder until these routes land (issue 6).
import type { Deps } from '../deps.ts';
import type { Route } from '../route.ts';

export function docsRoutes(_deps: Deps): Route[] {
  return [];
}
