import { performance } from 'node:perf_hooks';
import { WaitingError, Worker, type Job } from 'bullmq';
import type { Redis } from 'ioredis';
import type { Config } from '../config.js';
import { AppError, abortError, cancelReason, deadlineSignal, isAppError, type ErrorCode } from '../errors.js';
import type { JobPipeline } from './pipeline.js';
import { jobError } from './local-queue.js';
import { connectRedis } from './redis-connection.js';
import { finishedView, JOB_ATTEMPTS, queueKeys, type QueuedJobData, type QueuedJobResult } from './redis-queue.js';
import type { JobOutcome } from './spec.js';

export interface WorkerLog {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
}

/** Failures of the machine rather than of the request: run again (elsewhere) while attempts are left. */
const RETRIED: ReadonlySet<ErrorCode> = new Set(['INTERNAL_ERROR', 'STORAGE_FAILED']);
/**
 * A job's lock lasts this long and is renewed at half of it: a worker killed mid-job loses its jobs to another
 * worker within about this (BullMQ's stalled-job check), not the default 30 s.
 */
const LOCK_MS = 10_000;
/** Weight of the newest job in the shared moving average of job times. */
const AVERAGE_WEIGHT = 0.2;


/**
 * A `voxreel worker`: takes jobs from the Redis queue (short speech first), `CONCURRENCY` at once, and runs them
 * with the same executor as the API. A job keeps the deadline its first run set; it is run again only for an
 * infrastructure failure or a dead worker, never once its files were published (it answers what it published).
 */
export class RedisJobWorker {
  private readonly shutdown = new AbortController();
  private readonly keys: ReturnType<typeof queueKeys>;

  private constructor(
    private readonly config: Config,
    private readonly pipeline: JobPipeline,
    private readonly redis: Redis,
    private readonly log: WorkerLog,
    private readonly worker: Worker<QueuedJobData, QueuedJobResult>,
    private readonly subscriber: Redis,
  ) {
    this.keys = queueKeys(config.queueName);
  }

  static async start(options: { config: Config; pipeline: JobPipeline; redis: Redis; log: WorkerLog }): Promise<RedisJobWorker> {
    const { config } = options;
    const url = config.redisUrl as string;
    // The processor needs the object that needs the worker: it is filled in before the worker runs.
    const started: { self?: RedisJobWorker } = {};
    const worker = new Worker<QueuedJobData, QueuedJobResult>(config.queueName, (job, token, signal) => (started.self as RedisJobWorker).process(job, token, signal), {
      connection: connectRedis(url),
      concurrency: config.concurrency,
      lockDuration: LOCK_MS,
      stalledInterval: LOCK_MS / 2,
      maxStalledCount: 1,
      autorun: false,
    });
    worker.on('error', (err) => options.log.error({ err }, 'Redis worker error'));
    worker.on('failed', (job, err) => options.log.error({ err, job: job?.id }, 'job failed in its worker'));
    const subscriber = connectRedis(url);
    const self = new RedisJobWorker(config, options.pipeline, options.redis, options.log, worker, subscriber);
    started.self = self;
    await subscriber.subscribe(self.keys.cancelChannel);
    subscriber.on('message', (_channel, id: string) => worker.cancelJob(id, 'JOB_CANCELLED'));
    void worker.run();
    await worker.waitUntilReady();
    return self;
  }

  private async process(job: Job<QueuedJobData, QueuedJobResult>, token: string | undefined, cancelled: AbortSignal | undefined): Promise<QueuedJobResult> {
    const data = job.data;
    if (data.published) return { ok: true, outcome: data.published };
    const deadlineAt = data.deadlineAt ?? Date.now() + data.timeoutMs;
    if (data.deadlineAt === undefined) await job.updateData({ ...data, deadlineAt });
    const started = performance.now();
    this.log.info({ job: job.id, operation: data.spec.operation, attempt: job.attemptsMade + 1, stalled: job.stalledCounter }, 'job started');
    const deadline = deadlineSignal(Math.max(0, deadlineAt - Date.now()));
    const stop = new AbortController();
    const onCancel = () => stop.abort(cancelReason('JOB_CANCELLED'));
    if (cancelled?.aborted) onCancel();
    cancelled?.addEventListener('abort', onCancel, { once: true });
    const signal = AbortSignal.any([stop.signal, deadline.signal, this.shutdown.signal]);
    let result: QueuedJobResult;
    let outcome: JobOutcome | undefined;
    try {
      outcome = await this.pipeline.executor.execute(data.spec, {
        signal,
        name: job.id,
        onProgress: (fraction) => void job.updateProgress(Math.round(fraction * 100)).catch(() => undefined),
        onWarning: (message, err) => this.log.warn({ err, job: job.id }, message),
      });
      await job.updateData({ ...data, deadlineAt, published: outcome });
      result = { ok: true, outcome };
    } catch (thrown) {
      // A stopped job fails for why it was stopped, whatever a killed process reported on its way down.
      const reason = signal.aborted ? abortError(signal.reason) : thrown;
      const error = isAppError(reason) ? reason : new AppError('INTERNAL_ERROR', { cause: thrown });
      if (error.code === 'SHUTTING_DOWN' && token) {
        // This worker is stopping, not the job failing: back to the queue for another, no attempt counted.
        this.log.warn({ job: job.id }, 'worker stopping: job goes back to the queue');
        await job.moveToWait(token);
        throw new WaitingError();
      }
      if (RETRIED.has(error.code) && job.attemptsMade + 1 < JOB_ATTEMPTS) {
        this.log.warn({ err: thrown, job: job.id }, 'job failed for a reason of this machine: it will run again');
        throw thrown;
      }
      if (error.code === 'INTERNAL_ERROR') this.log.error({ err: thrown, job: job.id }, 'job failed');
      result = { ok: false, error: jobError(error) };
    } finally {
      deadline.clear();
      cancelled?.removeEventListener('abort', onCancel);
    }
    const seconds = (performance.now() - started) / 1000;
    this.log.info({ job: job.id, outcome: result.ok ? 'success' : result.error.code, seconds }, 'job finished');
    await this.recordSeconds(data.spec.operation, seconds);
    const view = finishedView({ ...job, finishedOn: Date.now() }, data.spec.operation, result, this.config.jobRetentionMs);
    await this.pipeline.completion.finished({ spec: data.spec, view, outcome, cacheKey: data.cacheKey, webhookUrl: data.webhookUrl });
    return result;
  }

  /** Keeps the shared moving average the API processes read for ETAs. */
  private async recordSeconds(operation: string, seconds: number): Promise<void> {
    const previous = Number(await this.redis.hget(this.keys.jobSeconds, operation));
    const next = Number.isFinite(previous) && previous > 0 ? previous + AVERAGE_WEIGHT * (seconds - previous) : seconds;
    await this.redis.hset(this.keys.jobSeconds, operation, next.toFixed(3));
  }

  /** Stops taking jobs; running ones get `graceMs`, then stop and go back to the queue for another worker. */
  async close(graceMs: number): Promise<void> {
    const stopRunning = setTimeout(() => this.shutdown.abort(cancelReason('SHUTTING_DOWN')), graceMs);
    stopRunning.unref();
    await this.worker.close();
    clearTimeout(stopRunning);
    await this.subscriber.quit().catch(() => undefined);
  }
}
