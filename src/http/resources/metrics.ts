// GET /metrics: Prometheus text format, open like health. Scrapers are operators' tools, and no
// credential of this service stands for an operator: users and API keys belong to tenants, and
// a tenant must not read service-wide figures. So the route is open and shows only aggregates
// that name no tenant and no record (src/http/metrics.ts).
import type { ServiceMetrics } from '../metrics.ts';
import type { Route } from '../route.ts';

export function metricsRoutes(metrics: ServiceMetrics): Route[] {
  return [
    {
      method: 'GET',
      path: '/metrics',
      auth: false,
      summary: 'Service and process metrics in Prometheus text format.',
      responses: { 200: { media: { 'text/plain': null } } },
      async handle(ctx) {
        const text = await metrics.text();
        ctx.status = 200;
        ctx.type = metrics.contentType;
        ctx.body = text;
      },
    },
  ];
}
