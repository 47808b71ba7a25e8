// GET /metrics: Prometheus text format, open like health. Scrapers are operators' tools, and no
// credential of this service stands for an operator: users and API keys belong to tenants, and
// a tenant must not read service-wide figures. So the route is open and shows only aggregates
// that name no tenant and no record (src/http/metrics.ts).
import type { Uses } from '../deps.ts';
import type { Route } from '../route.ts';

/** What these routes use. */
type MetricsDeps = Uses<'metrics'>;

export function metricsRoutes(deps: MetricsDeps): Route[] {
  return [
    {
      method: 'GET',
      path: '/metrics',
      auth: false,
      summary: 'Service and process metrics in Prometheus text format.',
      responses: { 200: { media: { 'text/plain': null } } },
      async handle(ctx) {
        const text = await deps.metrics.text();
        ctx.status = 200;
        ctx.type = deps.metrics.contentType;
        ctx.body = text;
      },
    },
  ];
}
