// Health: open to everyone. Healthy while the store takes writes; when a write has failed, each
// check probes the store again, so the answer recovers as soon as the store does.
import type { Uses } from '../deps.ts';
import { reply, type ApiContext, type Route } from '../route.ts';

/** What these routes use. */
type HealthDeps = Uses<'health' | 'clock' | 'config'>;

export function healthRoutes(deps: HealthDeps): Route[] {
  const startedMs = deps.clock.nowMs();
  const handle = async (ctx: ApiContext) => {
    const healthy = deps.health.isHealthy || (await deps.health.probe(deps.clock.nowMs()));
    const body = {
      status: healthy ? 'healthy' : 'unhealthy',
      storage: deps.config.storage,
      uptime_seconds: Math.floor((deps.clock.nowMs() - startedMs) / 1000),
      ...(healthy ? {} : { detail: `The store cannot take writes: ${deps.health.reason ?? 'unknown error'}` }),
    };
    if (!healthy) ctx.set('Retry-After', '5');
    reply(ctx, healthy ? 200 : 503, body);
  };
  return [
    { method: 'GET', path: '/health', auth: false, summary: 'Service health.', responses: { 200: 'responses.health', 503: 'responses.health' }, handle },
    { method: 'GET', path: '/api/health', auth: false, summary: 'Service health.', responses: { 200: 'responses.health', 503: 'responses.health' }, handle },
  ];
}
