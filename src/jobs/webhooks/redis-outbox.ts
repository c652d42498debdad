import { Queue, Worker } from 'bullmq';
import type { Redis } from 'ioredis';
import type { Config } from '../../config.js';
import { WEBHOOK_ATTEMPTS } from './delivery.js';
import type { DeliveryAttempts, OutboxLogger, PendingDelivery, WebhookOutbox } from './outbox.js';
import { closeRedis, connectQueueRedis, within } from '../redis/connection.js';

/** Thrown by an attempt that may succeed later: BullMQ runs the job again after `delayMs` (the backoff, or Retry-After). */
class RetryLater extends Error {
  constructor(readonly delayMs: number) {
    super(`webhook attempt failed; next in ${delayMs} ms`);
  }
}

/** How long a delivered or given-up delivery's record stays in Redis (a repeat of its id within it is not queued again). */
const KEEP_SECONDS = 24 * 3600;
/** A delivery's lock: a process killed mid-attempt loses it to another within about this. */
const LOCK_MS = 30_000;

/** The queue of deliveries beside the job queue: `<QUEUE_NAME>-webhooks` (a hash tag in QUEUE_NAME keeps it in the same slot). */
function webhookQueueName(queueName: string): string {
  return `${queueName}-webhooks`;
}

/**
 * Deliveries as BullMQ jobs, so that what one process promised any process keeps: a worker that stops, is killed
 * or restarts leaves its deliveries in Redis, and another worker makes them, each attempt after the backoff (or
 * the receiver's Retry-After). The job id is the delivery id: a repeat (a job's follow-up run twice after a
 * takeover) is not queued twice while the first is kept. API processes only add; workers deliver.
 */
export class RedisOutbox implements WebhookOutbox {
  private constructor(
    private readonly queue: Queue<PendingDelivery>,
    private readonly worker: Worker<PendingDelivery> | undefined,
    private readonly connection: Redis,
  ) {}

  static async open(
    config: Config & { redisUrl: string },
    options: { attempts: DeliveryAttempts; logger: OutboxLogger & { error(obj: object, msg: string): void }; deliver: boolean },
  ): Promise<RedisOutbox> {
    const connection = await connectQueueRedis(config.redisUrl, options.logger);
    const name = webhookQueueName(config.queueName);
    const queue = new Queue<PendingDelivery>(name, { connection });
    queue.on('error', (err) => options.logger.warn({ err }, 'webhook queue error'));
    const worker = options.deliver
      ? new Worker<PendingDelivery>(
          name,
          async (job, _token, signal) => {
            const result = await options.attempts.attempt(job.data, job.attemptsMade + 1, signal);
            if (!result.done) throw new RetryLater(result.retryInMs);
          },
          {
            connection,
            concurrency: config.webhooks.concurrency,
            lockDuration: LOCK_MS,
            settings: { backoffStrategy: (_attempts, _type, err) => (err instanceof RetryLater ? err.delayMs : 1000) },
          },
        )
      : undefined;
    worker?.on('error', (err) => options.logger.warn({ err }, 'webhook worker error'));
    return new RedisOutbox(queue, worker, connection);
  }

  async add(delivery: PendingDelivery): Promise<void> {
    await this.queue.add('deliver', delivery, {
      jobId: delivery.deliveryId,
      attempts: WEBHOOK_ATTEMPTS,
      backoff: { type: 'webhook' },
      removeOnComplete: { age: KEEP_SECONDS },
      removeOnFail: { age: KEEP_SECONDS },
    });
  }

  async close(): Promise<void> {
    // An attempt in flight may finish (10 s at most); one still running when the wait ends is left to its lock.
    if (this.worker) await within(this.worker.close());
    await within(this.queue.close());
    await closeRedis(this.connection);
  }
}
