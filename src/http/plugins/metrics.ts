import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';

/** Request counts and latencies, and GET /metrics; the gauges and counters of the work itself are fed by `work`. */
async function metricsPlugin(app: FastifyInstance): Promise<void> {
  const { metrics } = app;
  app.addHook('onResponse', async (request, reply) => {
    const route = request.routeOptions.url ?? 'unknown';
    metrics.requests.inc({ route, method: request.method, status: String(reply.statusCode) });
    metrics.latency.observe({ route, method: request.method }, reply.elapsedTime / 1000);
  });
  app.get('/metrics', { schema: { tags: ['operations'], summary: 'Prometheus metrics', hide: false } }, async (_request, reply) => {
    reply.type(metrics.registry.contentType);
    return metrics.registry.metrics();
  });
}

export default fp(metricsPlugin, { name: 'metrics', dependencies: ['work'] });
