import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import type { Config } from '../../config.js';
import { Limiter } from '../../jobs/admission/limiter.js';
import { ClientQuota } from '../../jobs/admission/quota.js';
import { JobSlots } from '../../jobs/admission/slots.js';
import { SentenceCache } from '../../speech/sentence-cache.js';
import { Metrics } from '../../jobs/metrics.js';

declare module 'fastify' {
  interface FastifyInstance {
    /** The bounded work of this process: CONCURRENCY at once, QUEUE_LENGTH waiting (jobs and uploads' checks). */
    limiter: Limiter;
    /** Jobs run here: admission (quota, room), a limiter slot, their lifecycle. */
    jobs: JobSlots;
    /** Per-client shares (CLIENT_MAX_JOBS, CLIENT_CHARACTERS_PER_WINDOW), kept by the process a client came to. */
    quota: ClientQuota;
    sentenceCache: SentenceCache;
    metrics: Metrics;
  }
}

/** What bounds and measures the work of this process; everything that runs a job waits here. */
async function workPlugin(app: FastifyInstance, { config }: { config: Config }): Promise<void> {
  const limiter = new Limiter({ concurrency: config.concurrency, queueLength: config.queueLength });
  const sentenceCache = new SentenceCache(config.cache.sentenceBytes);
  const metrics = new Metrics(() => limiter.stats, { sentenceCache });
  const quota = new ClientQuota({ ...config.clientQuota, windowMs: config.rateLimit.windowMs });
  app.decorate('limiter', limiter);
  app.decorate('sentenceCache', sentenceCache);
  app.decorate('metrics', metrics);
  app.decorate('quota', quota);
  app.decorate('jobs', new JobSlots(limiter, config, metrics, quota));
}

export default fp(workPlugin, { name: 'work' });
