import { cancelReason } from '../../errors.js';
import { jobTimeoutMs, movingAverage, runJob, type JobTimeouts, type Operation } from '../lifecycle.js';
import type { Limiter } from './limiter.js';
import { isLongText } from '../spec.js';
import type { ClientQuota } from './quota.js';

export type { Operation } from '../lifecycle.js';

/** Whom a job is for: its client's id (for its quota), the client's disconnect, and what it submits. */
export interface JobClient {
  id: string;
  signal: AbortSignal;
  characters: number;
}

export interface JobObserver {
  jobFinished(operation: Operation, seconds: number, outcome: string): void;
}

/** Assumed job time before any job has finished. */
export const INITIAL_JOB_SECONDS = 2;
const MAX_RETRY_AFTER_SECONDS = 300;

/**
 * The API process's job slots: every synthesis and render here takes one limiter slot, after its client's quota
 * and the queue's room were checked, and runs its lifecycle (`runJob`) there until its deadline, its client's
 * disconnect or the server's shutdown.
 */
export class JobSlots {
  private readonly shutdown = new AbortController();
  private averageSeconds = INITIAL_JOB_SECONDS;
  private readonly averageByOperation = new Map<Operation, number>();

  constructor(
    private readonly limiter: Limiter,
    private readonly timeouts: JobTimeouts,
    private readonly observer?: JobObserver,
    private readonly quota?: ClientQuota,
  ) {
    limiter.retryAfter = () => this.retryAfterSeconds();
  }

  /** Runs `work` in a limiter slot under the operation's deadline; a job that cannot be taken rejects at once (see `admit`). */
  async run<T>(operation: Operation, client: JobClient, work: (signal: AbortSignal) => Promise<T>): Promise<T> {
    return this.admit(operation, client)(work);
  }

  /**
   * Takes a job in or refuses it, by a throw, before anything is queued: the client's quota, a full queue, shutting
   * down. The returned function runs the job's work (once); `priority`: lower goes first.
   */
  admit(operation: Operation, client: JobClient, priority = 0): <T>(work: (signal: AbortSignal) => Promise<T>) => Promise<T> {
    const release = this.quota?.admit(client.id, client.characters);
    try {
      this.limiter.assertRoom();
    } catch (error) {
      release?.();
      throw error;
    }
    return (work) => this.runAdmitted(operation, client, work, priority).finally(() => release?.());
  }

  /** The measured mean time of one job of this operation (every operation's before one has run). */
  expectedSeconds(operation: Operation): number {
    return this.averageByOperation.get(operation) ?? this.averageSeconds;
  }

  get concurrency(): number {
    return this.limiter.stats.concurrency;
  }

  private runAdmitted<T>(operation: Operation, client: JobClient, work: (signal: AbortSignal) => Promise<T>, priority: number): Promise<T> {
    const waiting = AbortSignal.any([client.signal, this.shutdown.signal]);
    const onFinished = (seconds: number, outcome: string) => {
      // A long job's hours would stand for every job's in the ETAs and Retry-Afters: its own pace gives its ETA.
      if (!isLongText(client.characters)) {
        this.averageSeconds = movingAverage(this.averageSeconds, seconds);
        this.averageByOperation.set(operation, movingAverage(this.averageByOperation.get(operation), seconds));
      }
      this.observer?.jobFinished(operation, seconds, outcome);
    };
    const deadlineMs = jobTimeoutMs(this.timeouts, operation, client.characters);
    return this.limiter.run(() => runJob({ deadlineMs, stoppedBy: [waiting], onFinished }, work), waiting, priority);
  }

  /** Shutting down: new and queued jobs are refused with SHUTTING_DOWN; running ones go on. */
  refuseNew(): void {
    this.limiter.close(cancelReason('SHUTTING_DOWN'));
  }

  /** The end of the grace period: running jobs stop and answer SHUTTING_DOWN. */
  stopRunning(): void {
    this.refuseNew();
    this.shutdown.abort(cancelReason('SHUTTING_DOWN'));
  }

  /** When a refused client might find room: the queue ahead of it drained at the measured pace. */
  retryAfterSeconds(): number {
    const { queued, concurrency } = this.limiter.stats;
    const seconds = Math.ceil((this.averageSeconds * (queued + 1)) / concurrency);
    return Math.min(MAX_RETRY_AFTER_SECONDS, Math.max(1, seconds));
  }
}
