// Health: open to everyone. Healthy while the store takes writes; when a write has failed, each
// check probes the store again, so the answer recovers as soon as the store does.
import type { Clock } from '../../clock.ts';
import type { StorageKind } from '../../config.ts';
import type { StoreHealth } from '../../store/health.ts';
import { reply, type ApiContext, type Route } from '../route.ts';

/** What these routes use. */
export interface HealthCollaborators {
  health: StoreHealth;
  clock: Clock;
  /** Which store the service runs on, as the answer names it. */
  storage: StorageKind;
}

export function healthRoutes({ health, clock, storage }: HealthCollaborators): Route[] {
  const startedMs = clock.nowMs();
  const handle = async (ctx: ApiContext) => {
    const healthy = health.isHealthy || (await health.probe(clock.nowMs()));
    const body = {
      status: healthy ? 'healthy' : 'unhealthy',
      storage,
      uptime_seconds: Math.floor((clock.nowMs() - startedMs) / 1000),
      ...(healthy ? {} : { detail: `The store cannot take writes: ${health.reason ?? 'unknown error'}` }),
    };
    if (!healthy) ctx.set('Retry-After', '5');
    reply(ctx, healthy ? 200 : 503, body);
  };
  return [
    { method: 'GET', path: '/health', auth: false, summary: 'Service health.', responses: { 200: 'responses.health', 503: 'responses.health' }, handle },
    { method: 'GET', path: '/api/health', auth: false, summary: 'Service health.', responses: { 200: 'responses.health', 503: 'responses.health' }, handle },
  ];
}
