import type { Redis } from 'ioredis';
import { JobResults, type ResultCacheObserver } from '../jobs/results/job-results.js';
import { MemoryRequestCache, RedisRequestCache, type RequestCache } from '../jobs/results/request-cache.js';
import type { Config } from '../config.js';
import type { Services } from './services.js';
import { JobFollowUp } from '../jobs/follow-up.js';
import { JobExecutor } from '../jobs/executor.js';
import type { WebhookOutbox, OutboxLogger } from '../jobs/webhooks/outbox.js';
import type { JobPipeline } from '../jobs/pipeline.js';

/** The executor, the results (the request cache) and what follows each job (webhooks), wired as the API process and a worker both run them. */
export function jobPipeline(
  config: Config,
  services: Pick<Services, 'synthesizer' | 'maker' | 'assets' | 'lexicons' | 'storage'>,
  redis: Redis | undefined,
  observer: ResultCacheObserver | undefined,
  outbox: WebhookOutbox,
  logger: OutboxLogger,
): JobPipeline {
  // CACHE_SCOPE=tenant: each client's results and sentences apart, so a hit tells nobody what another client asked for.
  const partition = (tenant: string) => (config.cache.scope === 'tenant' ? tenant : undefined);
  const executor = new JobExecutor({
    synthesizer: services.synthesizer,
    maker: services.maker,
    assets: services.assets,
    lexicons: services.lexicons,
    pricing: config.pricing,
    partition,
    checkpoints: services.storage.checkpoints,
  });
  const results = new JobResults(requestCache(config, redis), services.storage, resultTtlMs(config), partition, observer);
  return { executor, results, followUp: new JobFollowUp(results, config.webhooks, outbox, logger) };
}

function requestCache(config: Config, redis: Redis | undefined): RequestCache | undefined {
  if (config.cache.maxEntries === 0) return undefined;
  return redis ? new RedisRequestCache(redis, config.queueName, config.cache.maxEntries) : new MemoryRequestCache(config.cache.maxEntries);
}

/** Longest an answer is remembered when files are kept for ever: a Redis that holds the queue must not fill up (noeviction). */
const MAX_RESULT_TTL_MS = 30 * 24 * 3_600_000;

/** An answer is kept as long as its files (retention), and no longer than its presigned URLs work. */
function resultTtlMs(config: Config): number {
  // A margin under retention: a file answered from the cache is not swept a moment later.
  const retention = config.retentionMs > 0 ? config.retentionMs * 0.9 : MAX_RESULT_TTL_MS;
  const presigned = config.storage.kind === 's3' && config.storage.presignSeconds > 0 ? config.storage.presignSeconds * 1000 * 0.9 : Infinity;
  return Math.min(retention, presigned);
}
