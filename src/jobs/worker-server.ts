import { createServer, type Server } from 'node:http';
import { once } from 'node:events';
import type { Registry } from 'prom-client';

export interface WorkerProbes {
  /** Whether the worker takes jobs: its queue connection answers and it is not closing. */
  ready(): Promise<boolean>;
  registry: Registry;
}

/**
 * A worker's own HTTP port (WORKER_PORT): `/healthz` (alive), `/readyz` (taking jobs: Redis answers, not closing)
 * and `/metrics` (its job durations, engines and caches), for an orchestrator's probes and a Prometheus scrape.
 */
export async function startWorkerServer(host: string, port: number, probes: WorkerProbes): Promise<{ port: number; close(): Promise<void> }> {
  const server: Server = createServer((request, response) => {
    const answer = (status: number, body: string, type = 'application/json; charset=utf-8') => {
      response.writeHead(status, { 'content-type': type, 'x-content-type-options': 'nosniff', 'cache-control': 'no-store' }).end(body);
    };
    const path = (request.url ?? '').split('?')[0];
    if (request.method !== 'GET' && request.method !== 'HEAD') return answer(405, JSON.stringify({ status: 'error', error: { code: 'METHOD_NOT_ALLOWED' } }));
    if (path === '/healthz') return answer(200, JSON.stringify({ status: 'ok' }));
    if (path === '/readyz') {
      void probes.ready().then(
        (ready) => answer(ready ? 200 : 503, JSON.stringify({ status: ready ? 'ok' : 'unavailable' })),
        () => answer(503, JSON.stringify({ status: 'unavailable' })),
      );
      return;
    }
    if (path === '/metrics') {
      void probes.registry.metrics().then(
        (text) => answer(200, text, probes.registry.contentType),
        () => answer(500, JSON.stringify({ status: 'error', error: { code: 'INTERNAL_ERROR' } })),
      );
      return;
    }
    answer(404, JSON.stringify({ status: 'error', error: { code: 'NOT_FOUND' } }));
  });
  server.listen(port, host);
  await once(server, 'listening');
  return {
    port: (server.address() as { port: number }).port,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
