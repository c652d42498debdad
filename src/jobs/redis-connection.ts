import { Redis } from 'ioredis';

/** A Redis connection as BullMQ wants it: commands wait through reconnects instead of failing after a few retries. */
export function connectRedis(url: string): Redis {
  return new Redis(url, { maxRetriesPerRequest: null, enableReadyCheck: true });
}
