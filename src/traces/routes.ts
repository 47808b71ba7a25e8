// Placeholder until the trace routes land (issue 4).
import type { Deps } from '../http/deps.ts';
import type { Route } from '../http/route.ts';

export function traceRoutes(_deps: Deps): Route[] {
  return [];
}
