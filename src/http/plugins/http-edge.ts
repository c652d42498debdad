import { randomUUID } from 'node:crypto';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyHttpOptions, FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { FILES_PREFIX, type Config } from '../../config.js';
import { AppError } from '../../errors.js';
import { clientErrorHandler, frameworkErrors, rawErrorResponse, writeRawError } from './error-handler.js';

/** What a caller may choose as its request id: short, and safe in logs and headers. */
const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** The caller's `x-request-id` when it is a sensible id, else a fresh one. */
export function requestId(request: IncomingMessage): string {
  const given = request.headers['x-request-id'];
  return typeof given === 'string' && REQUEST_ID.test(given) ? given : randomUUID();
}

/**
 * Fastify's options for the edge of the server: how long a request may take to arrive (Fastify's default is
 * forever), request ids, which proxies to believe, and the documented error body for what fails before routing.
 */
export function serverOptions(config: Config) {
  const { requestTimeoutMs, headersTimeoutMs, keepAliveTimeoutMs } = config.connections;
  const hops = config.trustProxy;
  return {
    requestTimeout: requestTimeoutMs,
    keepAliveTimeout: keepAliveTimeoutMs,
    http: {
      headersTimeout: headersTimeoutMs,
      // Node looks for late requests this often (30 s by default), so a timeout is kept to within a tenth of itself.
      connectionsCheckingInterval: Math.min(1_000, Math.max(50, Math.floor(headersTimeoutMs / 10))),
      // Node answers a missing Host with an empty 400; the hook below answers it in the documented body.
      requireHostHeader: false,
    },
    requestIdHeader: false,
    genReqId: requestId,
    // Fastify trusts no one for a bare hop count; this trusts that many hops, nearest first, as Express does.
    trustProxy: typeof hops === 'number' ? (_address: string, hop: number) => hop < hops : hops,
    // Closing, new requests get SHUTTING_DOWN below instead of Fastify's own 503 body.
    return503OnClosing: false,
    clientErrorHandler,
    frameworkErrors,
  } satisfies FastifyHttpOptions<Server>;
}

/** Refuses a connection beyond `max` open ones from the same address. */
function capConnections(server: Server, max: number): void {
  const open = new Map<string, number>();
  server.on('connection', (socket: Socket) => {
    const address = socket.remoteAddress ?? '';
    const count = (open.get(address) ?? 0) + 1;
    if (count > max) {
      writeRawError(socket, new AppError('RATE_LIMITED', { message: 'Too many open connections from this address.', retryAfter: 1 }), '', randomUUID());
      return;
    }
    open.set(address, count);
    socket.once('close', () => {
      const left = (open.get(address) ?? 1) - 1;
      if (left > 0) open.set(address, left);
      else open.delete(address);
    });
  });
}

/** Node answers an `Expect` other than 100-continue with an empty 417 unless someone listens for it. */
function refuseExpectation(request: IncomingMessage, response: ServerResponse): void {
  const { status, headers, body } = rawErrorResponse(new AppError('EXPECTATION_FAILED'), request.url ?? '', requestId(request));
  response.writeHead(status, headers).end(body);
}

/** Request ids on every answer, connections closed when they should be, and the checks Node would answer itself. */
async function httpEdgePlugin(app: FastifyInstance, options: { config: Config }): Promise<void> {
  const { maxPerAddress } = options.config.connections;
  if (maxPerAddress > 0) capConnections(app.server, maxPerAddress);
  app.server.on('checkExpectation', refuseExpectation);

  let closing = false;
  app.addHook('preClose', async () => {
    closing = true;
  });
  app.addHook('onRequest', async (request) => {
    if (closing) throw new AppError('SHUTTING_DOWN');
    // RFC 9112 §3.2: a server must answer 400 to an HTTP/1.1 request without Host.
    if (request.raw.httpVersion === '1.1' && request.headers.host === undefined) {
      throw new AppError('BAD_REQUEST', { message: 'An HTTP/1.1 request needs a Host header.' });
    }
  });
  app.addHook('onSend', async (request, reply) => {
    reply.header('x-request-id', request.id);
    // Every answer is what its Content-Type says; a generated file, served from the origin whose storage holds the
    // playground's key, is never a page either (a sandbox with nothing allowed, should one ever be taken for HTML).
    reply.header('x-content-type-options', 'nosniff');
    if (request.url.startsWith(`${FILES_PREFIX}/`)) reply.header('content-security-policy', "default-src 'none'; sandbox");
    // Closing, a keep-alive connection would hold the server open; answered before its body arrived (401, 413),
    // the rest of the body is not worth waiting for.
    if (closing || request.raw.complete === false) reply.header('connection', 'close');
  });
}

export default fp(httpEdgePlugin, { name: 'http-edge' });
