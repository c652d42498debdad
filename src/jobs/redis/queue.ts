import { setImmediate as nextTurn } from 'node:timers/promises';
import { Queue, QueueEvents, type Job } from 'bullmq';
import type { Redis } from 'ioredis';
import type { Config } from '../../config.js';
import { AppError, abortError, isAppError } from '../../errors.js';
import type { JobFollowUp } from '../follow-up.js';
import { jobTimeoutMs } from '../lifecycle.js';
import { INITIAL_JOB_SECONDS } from '../admission/slots.js';
import { SharedAdmission, admissionKeys, admissionLimits, refusalError } from './admission.js';
import { closeRedis, connectQueueRedis, within } from './connection.js';
import { cancelledResult, etaSeconds, finishedView, newJobId, runningView, type JobError, type JobProgress, type JobQueue, type JobResult, type JobTimes, type JobView, type SubmitOptions, type SubmittedJob } from '../queue.js';
import { jobPriority, type JobOutcome, type JobSpec, type QueuedOperation } from '../spec.js';
import type { QueueCounts } from '../metrics.js';

/** A job as it waits in Redis: what to do, for whom, and what its runs have established. */
export interface QueuedJobData {
  spec: JobSpec;
  clientId: string;
  timeoutMs: number;
  webhookUrl?: string;
  /** With webhookUrl: its progress events too (webhook_progress). */
  webhookProgress?: boolean;
  cacheKey?: string;
  /** Set when a worker first starts it: a retry after a crash keeps this deadline. */
  deadlineAt?: number;
  /** Set as soon as its files are published: a run after that returns this instead of rendering again. */
  published?: JobOutcome;
}


/** Runs of one job: the first, and one more after an infrastructure failure (a crashed worker counts as a stall instead). */
export const JOB_ATTEMPTS = 2;

/** What a job BullMQ failed shows: its worker was lost more than once, or an internal error recurred. */
export const LOST_RESULT: JobResult = {
  ok: false,
  error: { code: 'INTERNAL_ERROR', message: 'The job failed: its worker stopped or an internal error recurred.' },
};

/** Names of what the API processes and the workers share in Redis, from QUEUE_NAME. */
export function queueKeys(queueName: string) {
  return {
    /** Where workers hear of cancelled running jobs. */
    cancelChannel: `${queueName}:cancel`,
    /** The measured seconds of a job per operation (a moving average the workers keep). */
    jobSeconds: `${queueName}:job-seconds`,
    /** Jobs cancelled before they ran: their view, until they expire. */
    cancelled: (id: string) => `${queueName}:cancelled:${id}`,
    /** Running jobs asked to stop: a worker that (re)starts one stops at once, should the message be missed. */
    cancelMarker: (id: string) => `${queueName}:cancel:${id}`,
    /** Workers' heartbeats: a sorted set of worker ids scored by their last beat (ms). One key, so Redis Cluster keeps it whole. */
    workers: `${queueName}:workers`,
  };
}

/** A worker beats this often; one silent for WORKER_SILENT_MS counts as gone (and is dropped from the set after a minute). */
export const WORKER_BEAT_MS = 5_000;
export const WORKER_SILENT_MS = 15_000;

export function queueOptions(config: Config) {
  const age = Math.ceil(config.jobRetentionMs / 1000);
  return {
    attempts: JOB_ATTEMPTS,
    backoff: { type: 'fixed', delay: 1000 },
    removeOnComplete: { age },
    removeOnFail: { age },
  };
}

/** A BullMQ job's times, for `finishedView` (`finishedAt`: now, for a job that is finishing). */
export function timesOf(job: Pick<Job, 'id' | 'timestamp' | 'processedOn' | 'finishedOn'>): JobTimes {
  return { id: job.id as string, createdAt: job.timestamp, startedAt: job.processedOn, finishedAt: job.finishedOn ?? Date.now() };
}

export function toAppError(error: JobError): AppError {
  return new AppError(error.code, { message: error.message, field: error.field, retryAfter: error.retryAfter });
}

/**
 * Jobs in Redis (BullMQ), rendered by `voxreel worker` processes: this side queues them, waits for them, reads
 * and cancels them. Jobs of every API process share one queue, so any instance can answer for any job.
 */
export class RedisJobQueue implements JobQueue {
  private closed = false;
  private readonly keys: ReturnType<typeof queueKeys>;

  /** The queue's room and each client's share, counted in Redis for every instance (admission.ts). */
  private readonly admission: SharedAdmission;
  /** Synchronous requests waiting here for their jobs: told SHUTTING_DOWN at once when this process stops. */
  private readonly waiters = new Set<(reason: AppError) => void>();
  /** Cancellations of those jobs on shutdown, awaited before the connections close. */
  private readonly stopping: Promise<unknown>[] = [];
  /** Submissions under way: one that was adding its job as the process began to stop is waited for, then told. */
  private readonly submitting = new Set<Promise<SubmittedJob>>();

  private constructor(
    private readonly config: Config,
    /** The shared state's connection (a command fails after a second): admission, and a cancellation's writes. */
    private readonly redis: Redis,
    private readonly queue: Queue<QueuedJobData, JobResult>,
    private readonly events: QueueEvents,
    private readonly options: RedisQueueOptions,
    /**
     * The queue's own connection (QueueEvents makes its own from it), closed here. A job's view reads through it
     * too: it waits for Redis as long as `reachable` allows (3 s), not the state connection's second, so a Redis
     * slow for a moment under load still answers a poller (it was answered 503 when one of its reads took a second).
     */
    private readonly connection: Redis,
  ) {
    this.keys = queueKeys(config.queueName);
    this.admission = new SharedAdmission(redis, admissionKeys(config.queueName), admissionLimits(config));
  }

  static async open(options: RedisQueueOptions): Promise<RedisJobQueue> {
    const { config, redis } = options;
    const connection = await connectQueueRedis(config.redisUrl as string, options.log);
    const queue = new Queue<QueuedJobData, JobResult>(config.queueName, { connection });
    const events = new QueueEvents(config.queueName, { connection });
    const onError = (err: Error) => options.log.error({ err }, 'Redis queue error');
    queue.on('error', onError);
    events.on('error', onError);
    await events.waitUntilReady();
    return new RedisJobQueue(config, redis, queue, events, options, connection);
  }

  async submit(spec: JobSpec, options: SubmitOptions): Promise<SubmittedJob> {
    if (this.closed) throw new AppError('SHUTTING_DOWN');
    const submitting = this.add(spec, options);
    this.submitting.add(submitting);
    try {
      return await submitting;
    } finally {
      this.submitting.delete(submitting);
    }
  }

  private async add(spec: JobSpec, options: SubmitOptions): Promise<SubmittedJob> {
    const id = newJobId();
    const { client } = options;
    const timeoutMs = jobTimeoutMs(this.config, spec.operation, client.characters);
    // The queue's room and the client's share in one atomic step, for every instance at once.
    const refusal = await reachable(this.admission.admit(id, client.id, client.characters, admissionHoldMs(timeoutMs)));
    if (refusal) {
      const retryAfter = refusal.kind === 'queue-full' ? await this.etaSeconds(spec.operation, refusal.waiting) : 1;
      throw refusalError(refusal, admissionLimits(this.config), retryAfter);
    }
    // A cached answer goes as already published: the worker that takes it answers with it at once.
    const data: QueuedJobData = { spec, clientId: client.id, timeoutMs, webhookUrl: options.webhookUrl, webhookProgress: options.webhookProgress, cacheKey: options.cacheKey, published: options.cached };
    try {
      const job = await reachable(this.queue.add(spec.operation, data, { ...queueOptions(this.config), jobId: id, priority: jobPriority(spec) }));
      return { id, outcome: () => this.outcomeOf(job, options.detached ? undefined : client.signal) };
    } catch (error) {
      await this.admission.release(id, client.id).catch(() => undefined);
      throw error;
    } finally {
      await this.admission.added(id).catch(() => undefined);
    }
  }

  /**
   * Waits for the job; a synchronous client that goes away cancels it, as in the embedded queue. It waits no longer
   * than a queue wait of VIDEO_TIMEOUT_MS plus the job's own deadline (no worker running must not hang a request).
   */
  private async outcomeOf(job: Job<QueuedJobData, JobResult>, signal: AbortSignal | undefined): Promise<JobOutcome> {
    const waitMs = signal ? job.data.timeoutMs + this.config.videoTimeoutMs : undefined;
    const finished = job.waitUntilFinished(this.events, waitMs).then(
      (result: JobResult) => {
        if (result.ok) return result.outcome;
        throw toAppError(result.error);
      },
      async (error: unknown) => {
        if (isAppError(error)) throw error;
        if (error instanceof Error && /timed out before finishing/i.test(error.message)) {
          await this.cancel(job.id as string, job.data.clientId).catch(() => undefined);
          throw new AppError('JOB_TIMEOUT', { message: 'The job did not finish in time: it waited for a worker, then ran, for longer than its deadlines allow.' });
        }
        throw new AppError('INTERNAL_ERROR', { cause: error });
      },
    );
    if (!signal) return finished;
    return new Promise<JobOutcome>((resolve, reject) => {
      // The client gone, or this process stopping: nobody will take the answer, so the job is cancelled.
      const giveUp = (error: AppError) => {
        reject(error);
        const cancelling = this.cancel(job.id as string, job.data.clientId).catch(() => undefined);
        if (error.code === 'SHUTTING_DOWN') this.stopping.push(cancelling);
      };
      const onAbort = () => giveUp(abortError(signal.reason));
      if (signal.aborted) return onAbort();
      // Queued while this process began to stop (close() waits for such submissions): told now, as the others were.
      if (this.closed) return giveUp(new AppError('SHUTTING_DOWN'));
      signal.addEventListener('abort', onAbort, { once: true });
      this.waiters.add(giveUp);
      finished.then(resolve, reject).finally(() => {
        signal.removeEventListener('abort', onAbort);
        this.waiters.delete(giveUp);
      });
    });
  }

  /** The job's view; 503 OVERLOADED when Redis does not answer within 3 s (it may be stalled, not down). */
  get(id: string, clientId: string): Promise<JobView | undefined> {
    return reachable(this.view(id, clientId));
  }

  private async view(id: string, clientId: string): Promise<JobView | undefined> {
    const job = await this.queue.getJob(id);
    if (!job) return this.cancelledView(id, clientId);
    if (job.data.clientId !== clientId) return undefined;
    const operation = job.data.spec.operation;
    // BullMQ removes finished jobs only as later ones finish: past its time, a job is gone whatever Redis still holds.
    if (job.finishedOn && job.finishedOn + this.config.jobRetentionMs < Date.now()) return undefined;
    const state = await job.getState();
    if (state === 'completed') return finishedView(timesOf(job), operation, job.returnvalue, this.config.jobRetentionMs);
    if (state === 'failed') return finishedView(timesOf(job), operation, LOST_RESULT, this.config.jobRetentionMs);
    const base = { id, operation, createdAt: new Date(job.timestamp).toISOString() };
    const jobSeconds = await this.jobSeconds(operation, this.connection);
    if (state === 'active') {
      const startedAt = job.processedOn ? { startedAt: new Date(job.processedOn).toISOString() } : {};
      return { ...base, ...startedAt, state: 'running', ...runningView(progressOf(job.progress), job.processedOn, jobSeconds) };
    }
    if (state === 'unknown') return undefined;
    const ahead = (await this.connection.zrank(this.queue.toKey('prioritized'), id)) ?? 0;
    const workers = await this.liveWorkers(this.connection);
    // No worker alive: no time can be promised, and the client is told why.
    const eta = workers > 0 ? { etaSeconds: await this.etaSeconds(operation, ahead, this.connection) } : {};
    return { ...base, state: 'queued', position: ahead, workers, ...eta };
  }

  /** The shared queue's jobs by state (metrics: what a worker autoscaler watches). */
  async counts(): Promise<QueueCounts> {
    const counts = await reachable(this.queue.getJobCounts('waiting', 'prioritized', 'active', 'delayed', 'failed'));
    return { waiting: (counts.waiting ?? 0) + (counts.prioritized ?? 0), active: counts.active ?? 0, delayed: counts.delayed ?? 0, failed: counts.failed ?? 0 };
  }

  /** Workers whose heartbeat is recent (a sorted set, not CLIENT LIST, which managed Redis services often forbid). */
  workers(): Promise<number> {
    return this.liveWorkers(this.redis);
  }

  /** Workers alive, read through `redis`: the state connection fails fast (readiness, metrics), the queue's waits (a job's view). */
  private async liveWorkers(redis: Redis): Promise<number> {
    const now = Date.now();
    await redis.zremrangebyscore(this.keys.workers, '-inf', now - 4 * WORKER_SILENT_MS);
    return redis.zcount(this.keys.workers, now - WORKER_SILENT_MS, '+inf');
  }

  /** Cancels the job; 503 OVERLOADED when Redis does not answer within 5 s, a running job's stop included. */
  cancel(id: string, clientId: string): Promise<JobView | undefined> {
    // Answered 503 once the deadline passes: the cancellation then stops before it changes anything, so a
    // stalled Redis that comes back does not cancel a job its client was told was not cancelled.
    const late = AbortSignal.timeout(CANCEL_TIMEOUT_MS);
    return reachable(this.cancelJob(id, clientId, late), CANCEL_TIMEOUT_MS);
  }

  private async cancelJob(id: string, clientId: string, late: AbortSignal, tries = 2): Promise<JobView | undefined> {
    const job = await this.queue.getJob(id);
    if (!job) return this.cancelledView(id, clientId);
    if (job.data.clientId !== clientId) return undefined;
    const state = await job.getState();
    if (late.aborted) return undefined;
    if (state === 'active') {
      await this.redis.set(this.keys.cancelMarker(id), '1', 'PX', job.data.timeoutMs + this.config.jobRetentionMs);
      await this.redis.publish(this.keys.cancelChannel, id);
      await job.waitUntilFinished(this.events, CANCEL_WAIT_MS).catch(() => undefined);
    } else if (state !== 'completed' && state !== 'failed') {
      // Not yet taken by a worker: removed from the queue (a worker that takes it meanwhile is told, as above).
      const removed = await job.remove().then(
        () => true,
        () => false,
      );
      // A worker took it meanwhile: cancel it there (once more at most).
      if (!removed) return tries > 1 ? this.cancelJob(id, clientId, late, tries - 1) : this.view(id, clientId);
      await this.admission.release(id, clientId);
      const view = finishedView({ ...timesOf(job), finishedAt: Date.now() }, job.data.spec.operation, cancelledResult(), this.config.jobRetentionMs);
      await this.redis.set(this.keys.cancelled(id), JSON.stringify({ clientId, view }), 'PX', this.config.jobRetentionMs);
      await this.options.followUp.finished({ spec: job.data.spec, clientId, view, webhookUrl: job.data.webhookUrl });
      return view;
    }
    return this.view(id, clientId);
  }

  private async cancelledView(id: string, clientId: string): Promise<JobView | undefined> {
    const raw = await this.connection.get(this.keys.cancelled(id));
    const record = raw ? (JSON.parse(raw) as { clientId: string; view: JobView }) : undefined;
    return record?.clientId === clientId ? record.view : undefined;
  }

  /** The measured seconds of one job of this kind, as the workers keep it (a guess before any has run). */
  private async jobSeconds(operation: QueuedOperation, redis: Redis): Promise<number> {
    const value = Number(await redis.hget(this.keys.jobSeconds, operation));
    return Number.isFinite(value) && value > 0 ? value : INITIAL_JOB_SECONDS;
  }

  private async etaSeconds(operation: QueuedOperation, ahead: number, redis: Redis = this.redis): Promise<number> {
    const [running, workers, jobSeconds] = await Promise.all([this.queue.getActiveCount(), this.liveWorkers(redis), this.jobSeconds(operation, redis)]);
    return etaSeconds(ahead, running, Math.max(1, workers) * this.config.concurrency, jobSeconds);
  }

  /** Shutting down: new jobs are refused, and synchronous requests waiting here answer SHUTTING_DOWN now, their jobs cancelled. */
  refuseNew(): void {
    this.closed = true;
    for (const giveUp of [...this.waiters]) giveUp(new AppError('SHUTTING_DOWN'));
    this.waiters.clear();
  }

  async close(): Promise<void> {
    this.refuseNew();
    // A job added as it began to stop: its request starts waiting in the turn after (outcomeOf), is told SHUTTING_DOWN
    // there and its job cancelled, before the connections close.
    await within(Promise.allSettled([...this.submitting]));
    await nextTurn();
    await Promise.all(this.stopping);
    await within(this.events.close());
    await within(this.queue.close());
    await closeRedis(this.connection);
  }
}

export interface RedisQueueOptions {
  config: Config;
  redis: Redis;
  log: { error(obj: object, msg: string): void };
  /** Told of jobs that end here rather than in a worker (cancelled before they ran). */
  followUp: JobFollowUp;
}

/** A job's progress as BullMQ keeps it: what the worker stored (jobProgress), or 0 before it told anything. */
function progressOf(stored: unknown): JobProgress {
  const progress = stored as Partial<JobProgress> | number | undefined;
  if (typeof progress === 'object' && progress !== null && typeof progress.fraction === 'number') return progress as JobProgress;
  return { fraction: typeof progress === 'number' ? progress / 100 : 0 };
}

/**
 * How long an admitted job counts against its client at most, should no process be left to release it (the
 * worker releases it when it finishes, DELETE when it is cancelled): its deadline plus an hour of waiting.
 */
function admissionHoldMs(timeoutMs: number): number {
  return timeoutMs + 3_600_000;
}

/**
 * How long queueing or reading a job may wait for Redis before the request is answered 503: with the rate limit's
 * and the request cache's one second each (connection.ts), a request answers within 5 s whatever Redis does.
 */
const QUEUE_TIMEOUT_MS = 3_000;
/** Cancelling may wait for a running job to stop (CANCEL_WAIT_MS) as well. */
const CANCEL_TIMEOUT_MS = 5_000;

/**
 * A queue operation, or OVERLOADED when Redis does not answer in time (BullMQ's commands wait through reconnects)
 * or fails it (the state connection's commands fail fast while Redis is down): a 503 to retry, never a 500.
 */
async function reachable<T>(operation: Promise<T>, timeoutMs = QUEUE_TIMEOUT_MS): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new AppError('OVERLOADED', { message: 'The job queue (Redis) does not answer; retry later.', retryAfter: 5 })),
      timeoutMs,
    );
  });
  const failed = operation.catch((error: unknown) => {
    if (isAppError(error)) throw error;
    throw new AppError('OVERLOADED', { message: 'The job queue (Redis) does not answer; retry later.', retryAfter: 5, cause: error });
  });
  try {
    return await Promise.race([failed, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/** How long DELETE waits for a running job to stop before answering with its state (within CANCEL_TIMEOUT_MS in all). */
const CANCEL_WAIT_MS = 3_500;
