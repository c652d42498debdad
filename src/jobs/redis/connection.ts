// ioredis (0.2 s to load) is imported by the first connection: /readyz imports this file whatever the configuration.
import type { Redis } from 'ioredis';
import { ConfigError } from '../../config.js';

/** How long a command of the shared state (limits, cache, job views) may take before it fails: Redis down must not hang requests. */
const STATE_COMMAND_TIMEOUT_MS = 1000;
/** How long start-up waits for Redis before it gives up with a message. */
export const REDIS_START_TIMEOUT_MS = 10_000;

interface ErrorLog {
  error(obj: object, msg: string): void;
}

/**
 * A connection for BullMQ's queue, events and worker: its commands wait through reconnects instead of failing
 * (BullMQ requires it). Its errors are logged once per reason, not left to ioredis' "Unhandled error event".
 */
export async function connectQueueRedis(url: string, log: ErrorLog): Promise<Redis> {
  const { Redis } = await import('ioredis');
  return watched(new Redis(url, { maxRetriesPerRequest: null, enableReadyCheck: true }), log);
}

/**
 * A connection for what answers a request (rate limits, the request cache, admission): a command fails after a
 * second or one reconnect, so an unreachable Redis makes requests pass the limiter and miss the cache rather than hang.
 */
export async function connectStateRedis(url: string, log: ErrorLog): Promise<Redis> {
  const { Redis } = await import('ioredis');
  return watched(new Redis(url, { maxRetriesPerRequest: 1, commandTimeout: STATE_COMMAND_TIMEOUT_MS, enableReadyCheck: true }), log);
}

function watched(redis: Redis, log: ErrorLog): Redis {
  let last = '';
  redis.on('error', (err: Error) => {
    if (err.message === last) return;
    last = err.message;
    log.error({ err }, 'Redis connection error');
  });
  redis.on('ready', () => (last = ''));
  return redis;
}

/** Waits until Redis answers, or fails start-up with a message naming REDIS_URL. */
export async function untilReachable(redis: Redis, url: string): Promise<void> {
  const timeout = new Promise<never>((_, reject) =>
    setTimeout(() => reject(new ConfigError(`Redis at REDIS_URL (${redactedUrl(url)}) did not answer within ${REDIS_START_TIMEOUT_MS / 1000} s`)), REDIS_START_TIMEOUT_MS).unref(),
  );
  await Promise.race([waitForReady(redis), timeout]);
}

/** Resolves once the connection is ready (a command would fail fast before, on the state connection). */
function waitForReady(redis: Redis): Promise<void> {
  if (redis.status === 'ready') return Promise.resolve();
  return new Promise((resolve) => redis.once('ready', () => resolve()));
}

/** How long closing waits for Redis to take a QUIT (or BullMQ to close) before the socket is just dropped. */
const CLOSE_WAIT_MS = 1000;

/** Closes a connection politely when Redis answers, at once when it does not (a QUIT would wait for it for ever). */
export async function closeRedis(redis: Redis): Promise<void> {
  await within(redis.quit().catch(() => undefined), CLOSE_WAIT_MS);
  redis.disconnect();
}

/** Waits for `closing` at most `ms` (BullMQ's close waits for a Redis that may never come back). */
export async function within(closing: Promise<unknown>, ms = CLOSE_WAIT_MS): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([closing.catch(() => undefined), new Promise((resolve) => (timer = setTimeout(resolve, ms)))]);
  clearTimeout(timer);
}

/** The URL without its password, for messages. */
function redactedUrl(url: string): string {
  return url.replace(/\/\/([^:@/]*):[^@/]*@/, '//$1:***@');
}

/** How long Redis has to answer a readiness PING. */
const REDIS_PING_MS = 1000;

/** Whether Redis answers a PING in time (the queue, limits and cache all live there). */
export async function answersPing(redis: Redis): Promise<boolean> {
  const timeout = new Promise<boolean>((resolve) => setTimeout(resolve, REDIS_PING_MS, false).unref());
  return Promise.race([redis.ping().then((reply) => reply === 'PONG', () => false), timeout]);
}
