import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { cancelReason } from '../../errors.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** Aborts when the client disconnects before its response is complete. */
    clientSignal: AbortSignal;
  }
}

/**
 * Fastify's `request.signal` listens for the request stream's 'close', which Node emits as soon as the body
 * has been read, so it aborted every POST on a real socket. The response's 'close' before it finished is
 * what a disconnect looks like.
 */
async function clientSignalPlugin(app: FastifyInstance): Promise<void> {
  app.decorateRequest('clientSignal', undefined as unknown as AbortSignal);
  app.addHook('onRequest', async (request, reply) => {
    const controller = new AbortController();
    request.clientSignal = controller.signal;
    reply.raw.once('close', () => {
      if (!reply.raw.writableFinished) controller.abort(cancelReason('CLIENT_CLOSED'));
    });
  });
}

export default fp(clientSignalPlugin, { name: 'client-signal' });
