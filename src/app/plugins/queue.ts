import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import type { Redis } from 'ioredis';
import type { Config } from '../../config.js';
import type { JobExecutor } from '../../jobs/executor.js';
import type { JobResults } from '../../jobs/results/job-results.js';
import { LocalJobQueue } from '../../jobs/local-queue.js';
import { jobPipeline } from '../job-pipeline.js';
import type { JobQueue } from '../../jobs/queue.js';
import type { RedisJobQueue } from '../../jobs/redis/queue.js';
import type { SharedQueueSource } from '../../jobs/metrics.js';
import { DeliveryAttempts, DiskOutbox } from '../../jobs/webhooks/outbox.js';

declare module 'fastify' {
  interface FastifyInstance {
    executor: JobExecutor;
    results: JobResults;
    queue: JobQueue;
    /** Shared state of several instances (REDIS_URL); undefined when this process keeps it alone. */
    redis: Redis | undefined;
    /** The shared queue's counts and live workers (REDIS_URL): metrics and /readyz. */
    sharedQueue: SharedQueueSource | undefined;
  }
}

/** Where jobs wait: in this process, or in Redis for `voxreel worker` processes (REDIS_URL); and what follows each. */
async function queuePlugin(app: FastifyInstance, { config }: { config: Config }): Promise<void> {
  const shared = config.redisUrl ? await connectShared(config.redisUrl, app.log) : undefined;
  const redis = shared?.redis;
  // Webhooks promised here: in Redis for the workers to deliver, or on disk, resumed by the next process.
  const attempts = new DeliveryAttempts(config.webhooks, app.log);
  const outbox = shared ? await shared.openOutbox(config, attempts) : new DiskOutbox(config.webhooks.outboxDir, attempts, app.log);
  if (outbox instanceof DiskOutbox) await outbox.open();
  const { executor, results, followUp } = jobPipeline(config, app, redis, app.metrics, outbox, app.log);
  const onWarning = (message: string, err: unknown) => app.log.warn({ err }, message);
  const sharedQueue = shared && (await shared.openQueue({ config, log: app.log, followUp }));
  if (sharedQueue) app.metrics.watchSharedQueue(sharedQueue);
  const queue: JobQueue =
    sharedQueue ?? new LocalJobQueue(app.jobs, executor, { retentionMs: config.jobRetentionMs, onFinished: (job) => void followUp.finished(job),
      progressReporter: (job) => followUp.progressReporter(job),
      onWarning,
    });
  app.decorate('sharedQueue', sharedQueue);
  app.decorate('executor', executor);
  app.decorate('results', results);
  app.decorate('queue', queue);
  app.decorate('redis', redis);
  // Closing: queued and new jobs answer SHUTTING_DOWN at once; running ones finish (server.ts stops them at the end of the grace).
  app.addHook('preClose', async () => {
    app.jobs.refuseNew();
    queue.refuseNew();
  });
  app.addHook('onClose', async () => {
    await queue.close();
    await followUp.close();
    await shared?.close();
  });
}

/**
 * Redis for the state several instances share, reachable; its modules (BullMQ, ioredis) are loaded only here, with
 * REDIS_URL: a quicker start without them.
 */
async function connectShared(url: string, log: FastifyInstance['log']) {
  const { closeRedis, connectStateRedis, untilReachable } = await import('../../jobs/redis/connection.js');
  const redis = await connectStateRedis(url, log);
  await untilReachable(redis, url);
  return {
    redis,
    openQueue: async (options: Omit<Parameters<typeof RedisJobQueue.open>[0], 'redis'>) => (await import('../../jobs/redis/queue.js')).RedisJobQueue.open({ ...options, redis }),
    // This process only adds deliveries: the workers make them.
    openOutbox: async (config: Config, attempts: DeliveryAttempts) =>
      (await import('../../jobs/webhooks/redis-outbox.js')).RedisOutbox.open({ ...config, redisUrl: url }, { attempts, logger: log, deliver: false }),
    close: () => closeRedis(redis),
  };
}

export default fp(queuePlugin, { name: 'queue', dependencies: ['work', 'services'] });
