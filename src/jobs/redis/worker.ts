import { WaitingError, Worker, type Job } from 'bullmq';
import type { Redis } from 'ioredis';
import type { Config } from '../../config.js';
import { AppError, cancelReason, isAppError } from '../../errors.js';
import { movingAverage, runJob } from '../lifecycle.js';
import type { JobPipeline } from '../pipeline.js';
import type { JobObserver } from '../admission/slots.js';
import { storageDown, type Storage } from '../../storage/storage.js';
import { SharedAdmission, admissionKeys, admissionLimits } from './admission.js';
import { setTimeout as delay } from 'node:timers/promises';
import { cancelledResult, finishedView, jobError, jobProgress, type JobResult } from '../queue.js';
import { closeRedis, connectQueueRedis } from './connection.js';
import { randomBytes } from 'node:crypto';
import os from 'node:os';
import { JOB_ATTEMPTS, LOST_RESULT, WORKER_BEAT_MS, queueKeys, timesOf, type QueuedJobData } from './queue.js';
import { isLongJob } from '../spec.js';

export interface WorkerLog {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
}

/** Network errors of Node and the AWS SDK: a dependency out of reach for a moment. */
const NETWORK_ERRORS = new Set(['ECONNRESET', 'ECONNREFUSED', 'ETIMEDOUT', 'EPIPE', 'EAI_AGAIN', 'ENOTFOUND', 'EHOSTUNREACH']);

/**
 * Failures of the machine rather than of the request, worth running again (elsewhere) while attempts are left:
 * storage that could not take the file, a dependency out of reach. A bug (any other internal error) is not.
 */
function isInfrastructureFailure(error: AppError, thrown: unknown): boolean {
  if (error.code === 'STORAGE_FAILED' || error.code === 'STORAGE_UNAVAILABLE') return true;
  const code = (thrown as { code?: unknown } | undefined)?.code;
  return !isAppError(thrown) && typeof code === 'string' && NETWORK_ERRORS.has(code);
}

/** How often a worker waiting for storage asks it again (its readiness check is cached this long too). */
const STORAGE_POLL_MS = 2_000;

/** A run's fence failed: this worker no longer holds the job's lock. */
class LockLost extends Error {
  constructor() {
    super('this worker no longer holds the job\'s lock');
  }
}

/**
 * A job's lock lasts this long and is renewed at half of it: a worker killed mid-job loses its jobs to another
 * worker within about this (BullMQ's stalled-job check), not the default 30 s.
 */
const LOCK_MS = 10_000;


/**
 * A `voxreel worker`: takes jobs from the Redis queue (short speech first), `CONCURRENCY` at once, and runs them
 * with the same executor as the API. A job keeps the deadline its first run set; it is run again only for an
 * infrastructure failure or a dead worker, never once its files were published (it answers what it published).
 */
export class RedisJobWorker {
  private readonly shutdown = new AbortController();
  private readonly keys: ReturnType<typeof queueKeys>;
  /** This worker in the heartbeat set: host, process and a random part (a restarted process is a new worker). */
  private readonly id = `${os.hostname()}:${process.pid}:${randomBytes(4).toString('hex')}`;
  private heartbeat: NodeJS.Timeout | undefined;
  private runningJobs = 0;
  /** Each running job's stop, by id: a lost lock stops it. */
  private readonly runs = new Map<string, AbortController>();
  /** Jobs whose lock this worker lost while running them. */
  private readonly lost = new Set<string>();
  /** Where each job's client share is given back when it ends. */
  private readonly admission: SharedAdmission;

  private constructor(
    private readonly config: Config,
    private readonly pipeline: JobPipeline,
    private readonly redis: Redis,
    private readonly log: WorkerLog,
    private readonly worker: Worker<QueuedJobData, JobResult>,
    /** The worker's connection (BullMQ leaves a given one open) and the cancel subscriber's; closed here. */
    private readonly connections: Redis[],
    private readonly observer: JobObserver | undefined,
    private readonly storage: Pick<Storage, 'unavailable' | 'writable'>,
  ) {
    this.keys = queueKeys(config.queueName);
    this.admission = new SharedAdmission(redis, admissionKeys(config.queueName), admissionLimits(config));
  }

  static async start(options: {
    config: Config;
    pipeline: JobPipeline;
    redis: Redis;
    log: WorkerLog;
    observer?: JobObserver;
    storage: Pick<Storage, 'unavailable' | 'writable'>;
  }): Promise<RedisJobWorker> {
    const { config } = options;
    const url = config.redisUrl as string;
    // The processor needs the object that needs the worker: it is filled in before the worker runs.
    const started: { self?: RedisJobWorker } = {};
    const connection = await connectQueueRedis(url, options.log);
    const worker = new Worker<QueuedJobData, JobResult>(config.queueName, (job, token, signal) => (started.self as RedisJobWorker).process(job, token, signal), {
      connection,
      concurrency: config.concurrency,
      lockDuration: LOCK_MS,
      stalledInterval: LOCK_MS / 2,
      // Taken over twice at most: a Redis stall that costs a run its lock leaves the job a takeover for a real death.
      maxStalledCount: 2,
      autorun: false,
    });
    worker.on('error', (err) => options.log.error({ err }, 'Redis worker error'));
    worker.on('failed', (job, err) => {
      options.log.error({ err, job: job?.id }, 'job failed in its worker');
      void started.self?.failedForGood(job).catch((error: unknown) => options.log.error({ err: error, job: job?.id }, 'reporting a failed job failed'));
    });
    // Its lock lost (a stall longer than LOCK_MS): another worker may run the job now, so this run stops and publishes nothing.
    worker.on('lockRenewalFailed', (ids) => started.self?.lockLost(ids));
    const subscriber = await connectQueueRedis(url, options.log);
    const self = new RedisJobWorker(config, options.pipeline, options.redis, options.log, worker, [connection, subscriber], options.observer, options.storage);
    started.self = self;
    await subscriber.subscribe(self.keys.cancelChannel);
    subscriber.on('message', (_channel, id: string) => worker.cancelJob(id, 'JOB_CANCELLED'));
    void worker.run();
    await worker.waitUntilReady();
    self.beat();
    return self;
  }

  /** Jobs running here now (metrics). */
  get running(): number {
    return this.runningJobs;
  }

  private lockLost(ids: string[]): void {
    for (const id of ids) {
      this.lost.add(id);
      this.runs.get(id)?.abort(cancelReason('SHUTTING_DOWN'));
    }
  }

  /**
   * The fence of a run: throws LockLost unless this worker still holds the job's lock (renewing it). Checked before
   * the files are published, before the published outcome is recorded, and before the job's follow-up.
   */
  private async fence(job: Job<QueuedJobData, JobResult>, token: string | undefined): Promise<void> {
    if (token === undefined) return;
    const held = this.lost.has(job.id as string) ? 0 : await job.extendLock(token, LOCK_MS).catch(() => 0);
    if (held !== 1) {
      this.lost.add(job.id as string);
      throw new LockLost();
    }
  }

  /** Tells the API processes this worker is alive (their ETAs and /readyz), every WORKER_BEAT_MS until it closes. */
  private beat(): void {
    void this.redis.zadd(this.keys.workers, Date.now(), this.id).catch(() => undefined);
    this.heartbeat = setTimeout(() => this.beat(), WORKER_BEAT_MS);
    this.heartbeat.unref();
  }

  private async process(job: Job<QueuedJobData, JobResult>, token: string | undefined, cancelled: AbortSignal | undefined): Promise<JobResult> {
    const data = job.data;
    // Published by an earlier run that died before it could say so: answer that, never render again.
    if (data.published) return this.finish(job, { ok: true, outcome: data.published });
    if (await this.redis.exists(this.keys.cancelMarker(job.id as string))) return this.finish(job, cancelledResult());
    await this.untilStorageAnswers(job);
    const deadlineAt = data.deadlineAt ?? Date.now() + data.timeoutMs;
    if (data.deadlineAt === undefined) await job.updateData({ ...data, deadlineAt });
    this.log.info({ job: job.id, operation: data.spec.operation, attempt: job.attemptsMade + 1, stalled: job.stalledCounter }, 'job started');
    const stop = new AbortController();
    this.runs.set(job.id as string, stop);
    const onCancel = () => stop.abort(cancelReason('JOB_CANCELLED'));
    if (cancelled?.aborted) onCancel();
    cancelled?.addEventListener('abort', onCancel, { once: true });
    const onFinished = (seconds: number, outcome: string) => {
      this.log.info({ job: job.id, outcome, seconds }, 'job finished');
      this.observer?.jobFinished(data.spec.operation, seconds, outcome);
      // A long job's hours would stand for every job's in the ETAs: its own pace gives its ETA.
      if (!isLongJob(data.spec)) void this.recordSeconds(data.spec.operation, seconds).catch(() => undefined);
    };
    const run = { deadlineMs: deadlineAt - Date.now(), stoppedBy: [stop.signal, this.shutdown.signal], onFinished };
    const { webhookUrl, webhookProgress } = data;
    const report = this.pipeline.followUp.progressReporter({ id: job.id as string, operation: data.spec.operation, createdAt: job.timestamp, startedAt: job.processedOn ?? Date.now(), webhookUrl, webhookProgress });
    let result: JobResult;
    this.runningJobs += 1;
    try {
      const outcome = await runJob(run, (signal) =>
        this.pipeline.executor.execute(data.spec, {
          signal,
          tenant: data.clientId,
          name: job.id,
          beforePublish: () => this.fence(job, token),
          onProgress: (fraction, spoken) => {
            const progress = jobProgress(fraction, spoken);
            void job.updateProgress({ ...progress }).catch(() => undefined);
            report?.(progress);
          },
          onWarning: (message, err) => this.log.warn({ err, job: job.id }, message),
          onResumed: (sentences) => this.log.info({ job: job.id, sentences }, 'job resumed: sentences spoken by an earlier run read back from its checkpoints'),
        }),
      );
      result = { ok: true, outcome };
    } catch (thrown) {
      if (this.lost.has(job.id as string)) return this.abandon(job);
      const error = isAppError(thrown) ? thrown : new AppError('INTERNAL_ERROR', { cause: thrown });
      if (error.code === 'SHUTTING_DOWN' && token) {
        // This worker is stopping, not the job failing: back to the queue for another, no attempt counted.
        this.log.warn({ job: job.id }, 'worker stopping: job goes back to the queue');
        await job.moveToWait(token);
        throw new WaitingError();
      }
      if (isInfrastructureFailure(error, thrown) && job.attemptsMade + 1 < JOB_ATTEMPTS) {
        this.log.warn({ err: thrown, job: job.id }, 'job failed for a reason of this machine: it will run again');
        throw thrown;
      }
      if (error.code === 'INTERNAL_ERROR') this.log.error({ err: thrown, job: job.id }, 'job failed');
      result = { ok: false, error: jobError(error) };
    } finally {
      this.runningJobs -= 1;
      this.runs.delete(job.id as string);
      cancelled?.removeEventListener('abort', onCancel);
    }
    // Outside the render's try: if this fails, BullMQ runs the job again and the first line above answers.
    try {
      await this.fence(job, token);
      if (result.ok) await job.updateData({ ...data, deadlineAt, published: result.outcome });
      await this.fence(job, token);
    } catch (thrown) {
      if (thrown instanceof LockLost) return this.abandon(job);
      throw thrown;
    }
    return this.finish(job, result);
  }

  /**
   * While storage is out of reach (a run's upload found it so, and it still does not answer), a job taken waits
   * here before it starts (its deadline has not begun) rather than run into a failure: intake pauses until it is back.
   */
  private async untilStorageAnswers(job: Job<QueuedJobData, JobResult>): Promise<void> {
    let told = false;
    while (!this.shutdown.signal.aborted && (await storageDown(this.storage))) {
      if (!told) this.log.warn({ job: job.id }, 'storage does not answer: the job waits for it before it starts');
      told = true;
      await delay(STORAGE_POLL_MS);
    }
  }

  /** A run that lost its lock: it leaves the job, unrecorded, to the worker that holds it now (BullMQ is told it moved). */
  private abandon(job: Job<QueuedJobData, JobResult>): never {
    this.lost.delete(job.id as string);
    this.log.warn({ job: job.id }, 'lost the job\'s lock (Redis stalled or this worker was too slow): this run publishes and records nothing');
    throw new WaitingError();
  }

  /** What follows every job that ends here: the cache, the webhook; then its result goes to BullMQ. */
  private async finish(job: Job<QueuedJobData, JobResult>, result: JobResult): Promise<JobResult> {
    const { spec, cacheKey, webhookUrl, clientId } = job.data;
    const view = finishedView({ ...timesOf(job), finishedAt: Date.now() }, spec.operation, result, this.config.jobRetentionMs);
    await this.pipeline.followUp.finished({ spec, clientId, view, outcome: result.ok ? result.outcome : undefined, cacheKey, webhookUrl });
    await this.admission.release(job.id as string, clientId).catch(() => undefined);
    return result;
  }

  /** A job BullMQ failed for good (its worker lost twice, or an error outside the job's own handling): its webhook still goes. */
  private async failedForGood(job: Job<QueuedJobData, JobResult> | undefined): Promise<void> {
    if (!job || (await job.getState()) !== 'failed') return;
    const view = finishedView(timesOf(job), job.data.spec.operation, LOST_RESULT, this.config.jobRetentionMs);
    await this.pipeline.followUp.finished({ spec: job.data.spec, clientId: job.data.clientId, view, webhookUrl: job.data.webhookUrl });
    await this.admission.release(job.id as string, job.data.clientId).catch(() => undefined);
  }

  /** Keeps the shared moving average the API processes read for ETAs. */
  private async recordSeconds(operation: string, seconds: number): Promise<void> {
    const previous = Number(await this.redis.hget(this.keys.jobSeconds, operation));
    const next = movingAverage(Number.isFinite(previous) && previous > 0 ? previous : undefined, seconds);
    await this.redis.hset(this.keys.jobSeconds, operation, next.toFixed(3));
  }

  /** Stops taking jobs; running ones get `graceMs`, then stop and go back to the queue for another worker. */
  async close(graceMs: number): Promise<void> {
    clearTimeout(this.heartbeat);
    await this.redis.zrem(this.keys.workers, this.id).catch(() => undefined);
    const stopRunning = setTimeout(() => this.shutdown.abort(cancelReason('SHUTTING_DOWN')), graceMs);
    stopRunning.unref();
    await this.worker.close();
    clearTimeout(stopRunning);
    await Promise.all(this.connections.map(closeRedis));
  }
}
