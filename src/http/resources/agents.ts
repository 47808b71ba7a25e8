// Placeholder until the agents routes land (issue 3).
import type { Deps } from '../deps.ts';
import type { Route } from '../route.ts';

export function agentRoutes(_deps: Deps): Route[] {
  return [];
}
