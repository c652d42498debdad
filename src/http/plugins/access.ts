import { createHash, timingSafeEqual } from 'node:crypto';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import cors from '@fastify/cors';
import rateLimit from '@fastify/rate-limit';
import type { Redis } from 'ioredis';
import { FILES_PREFIX, type Config } from '../../config.js';
import { AppError } from '../../errors.js';
import { clientId } from '../job-client.js';

/** Routes anyone may call, keys or not: health, metrics, API docs, the playground's files and the generated files. */
const PUBLIC_ROUTES = ['/healthz', '/readyz', '/metrics', '/docs', '/playground', `${FILES_PREFIX}/`];

export function isPublicRoute(request: FastifyRequest): boolean {
  const route = request.routeOptions.url;
  if (route === undefined) return true; // unknown routes answer 404 whoever asks
  if (route === '/') return true; // the playground's page: it asks for the key itself
  return PUBLIC_ROUTES.some((prefix) => route === prefix || route.startsWith(prefix.endsWith('/') ? prefix : `${prefix}/`));
}

/** Addresses whose refused keys are counted at once; past it the oldest count is forgotten (a flood of addresses costs memory, not a block). */
const MAX_TRACKED_ADDRESSES = 10_000;

/**
 * Refused API keys per address, in fixed windows: an address that has had `limit` refused in the current window
 * is refused outright until the window ends, so keys cannot be guessed at the speed of the network.
 */
export class FailedKeys {
  private readonly windows = new Map<string, { refused: number; endsAt: number }>();

  constructor(
    private readonly limit: number,
    private readonly windowMs: number,
    private readonly now: () => number = Date.now,
  ) {}

  /** Seconds until the address may try again, or undefined when it may try now. */
  retryAfter(address: string): number | undefined {
    const current = this.windows.get(address);
    const left = current ? current.endsAt - this.now() : 0;
    return left > 0 && current && current.refused >= this.limit ? Math.ceil(left / 1000) : undefined;
  }

  refused(address: string): void {
    const now = this.now();
    const current = this.windows.get(address);
    if (current && current.endsAt > now) {
      current.refused += 1;
      return;
    }
    this.windows.delete(address);
    if (this.windows.size >= MAX_TRACKED_ADDRESSES) this.forgetEnded(now);
    this.windows.set(address, { refused: 1, endsAt: now + this.windowMs });
  }

  private forgetEnded(now: number): void {
    for (const [address, { endsAt }] of this.windows) if (endsAt <= now) this.windows.delete(address);
    for (const address of this.windows.keys()) {
      if (this.windows.size < MAX_TRACKED_ADDRESSES) break;
      this.windows.delete(address);
    }
  }
}

/** Refused keys per address, wherever they are counted: in this process, or in Redis for every instance. */
interface RefusedKeys {
  retryAfter(address: string): Promise<number | undefined>;
  refused(address: string): Promise<void>;
}

/**
 * FailedKeys in Redis, so an address cannot try N times the keys by spreading its guesses over N instances: a
 * counter per address with the window as its expiry. Redis out of reach counts nothing, as the rate limit does.
 */
function sharedRefusedKeys(redis: Redis, prefix: string, limit: number, windowMs: number): RefusedKeys {
  const key = (address: string) => `${prefix}:auth-failures:${address}`;
  return {
    retryAfter: async (address) => {
      const [count, left] = await Promise.all([redis.get(key(address)), redis.pttl(key(address))]).catch(() => [null, -1] as const);
      return Number(count) >= limit && left > 0 ? Math.ceil(left / 1000) : undefined;
    },
    refused: async (address) => {
      const count = await redis.incr(key(address)).catch(() => 0);
      if (count === 1) await redis.pexpire(key(address), windowMs).catch(() => undefined);
    },
  };
}

function localRefusedKeys(limit: number, windowMs: number): RefusedKeys {
  const failed = new FailedKeys(limit, windowMs);
  return { retryAfter: async (address) => failed.retryAfter(address), refused: async (address) => failed.refused(address) };
}

function digest(value: string): Buffer {
  return createHash('sha256').update(value).digest();
}

/** The headers a key may come in: `Authorization: Bearer <key>`, `xi-api-key` (ElevenLabs' clients) or `x-api-key`. */
const KEY_HEADERS = ['authorization', 'xi-api-key', 'x-api-key'] as const;

/** The key headers a request sent, as sent: what an MCP tool call carries on, so that it is made as the same caller. */
export function keyHeadersOf(request: FastifyRequest): Record<string, string> {
  const sent: Record<string, string> = {};
  for (const name of KEY_HEADERS) {
    const value = request.headers[name];
    if (typeof value === 'string') sent[name] = value;
  }
  return sent;
}

/** Every key a request presents, one a header, Bearer first. */
function apiKeysOf(request: FastifyRequest): string[] {
  const { authorization, ...others } = keyHeadersOf(request);
  const bearer = /^Bearer\s+(\S+)\s*$/i.exec(authorization ?? '')?.[1];
  const plain = Object.values(others).map((value) => value.trim());
  return [bearer, ...plain].filter((key): key is string => key !== undefined && key !== '');
}

/** API keys (Bearer, xi-api-key or x-api-key) with a limit on refused ones per address, per-key rate limits and CORS. */
async function accessPlugin(app: FastifyInstance, options: { config: Config; redis?: Redis }): Promise<void> {
  const { config } = options;
  const keyDigests = config.apiKeys.map(digest);
  if (keyDigests.length === 0) {
    if (config.personal) {
      app.log.info('No API keys and listening on loopback only: a personal service, so no rate limits or per-client caps unless set (docs/api.md, Access).');
    } else {
      app.log.warn('No API keys are configured (API_KEYS, API_KEYS_FILE): the service is open to anyone who can reach it.');
    }
  }

  if (config.corsOrigins.length > 0) {
    await app.register(cors, {
      origin: config.corsOrigins.includes('*') ? '*' : config.corsOrigins,
      methods: ['GET', 'POST', 'HEAD', 'OPTIONS'],
      allowedHeaders: [...KEY_HEADERS, 'content-type', 'x-request-id'],
      exposedHeaders: ['x-request-id', 'retry-after', 'content-range', 'content-length'],
      maxAge: 600,
    });
  }

  const { authFailures, windowMs } = config.rateLimit;
  const failed =
    authFailures <= 0
      ? undefined
      : options.redis
        ? sharedRefusedKeys(options.redis, config.queueName, authFailures, windowMs)
        : localRefusedKeys(authFailures, windowMs);
  app.decorateRequest('apiKeyId', undefined);
  app.addHook('onRequest', async (request) => {
    if (keyDigests.length === 0 || request.method === 'OPTIONS' || isPublicRoute(request)) return;
    const retryAfter = await failed?.retryAfter(request.ip);
    if (retryAfter !== undefined) {
      throw new AppError('RATE_LIMITED', { message: 'Too many requests with a wrong API key from this address; retry later.', retryAfter });
    }
    // Any header's key will do: a wrong one beside a right one is not a refused key.
    // Each is compared against every key in constant time, so timing reveals neither which key nor how much matched.
    const matched = apiKeysOf(request)
      .map(digest)
      .find((candidate) => keyDigests.reduce((found, key) => timingSafeEqual(key, candidate) || found, false));
    if (matched === undefined) {
      await failed?.refused(request.ip);
      throw new AppError('UNAUTHORIZED');
    }
    request.apiKeyId = matched.toString('hex').slice(0, 16);
  });

  if (config.rateLimit.max > 0) {
    await app.register(rateLimit, {
      max: config.rateLimit.max,
      timeWindow: config.rateLimit.windowMs,
      hook: 'onRequest',
      allowList: (request) => isPublicRoute(request),
      keyGenerator: clientId,
      errorResponseBuilder: (_request, context) =>
        new AppError('RATE_LIMITED', { retryAfter: Math.max(1, Math.ceil(context.ttl / 1000)) }),
      // Several instances behind one balancer count together in Redis; a Redis that does not answer lets requests through.
      ...(options.redis ? { redis: options.redis, nameSpace: `${config.queueName}:rate-limit:`, skipOnError: true } : {}),
    });
  }
}

declare module 'fastify' {
  interface FastifyRequest {
    /** A short, non-reversible id of the API key the request came with. */
    apiKeyId: string | undefined;
  }
}

export default fp(accessPlugin, { name: 'access' });
