import { performance } from 'node:perf_hooks';
import { abortError, cancelReason, deadlineSignal, isAppError } from '../errors.js';
import type { Limiter } from './limiter.js';
import type { ClientQuota } from './quota.js';

/** `speech`: the OpenAI-compatible endpoint, whose job lasts until its stream is encoded. */
export type Operation = 'tts' | 'tts-video' | 'speech';

/** Whom a job is for: its client's id (for its quota), the client's disconnect, and what it submits. */
export interface JobClient {
  id: string;
  signal: AbortSignal;
  characters: number;
}

export interface JobObserver {
  jobFinished(operation: Operation, seconds: number, outcome: string): void;
}

/** Weight of the newest job in the running average of job times (an exponential moving average). */
const AVERAGE_WEIGHT = 0.2;

/** The running average of job times after one more, `seconds` long; the first sample is taken as it is. */
export function movingAverage(previous: number | undefined, seconds: number): number {
  return previous === undefined ? seconds : previous + AVERAGE_WEIGHT * (seconds - previous);
}

/** Assumed job time before any job has finished. */
export const INITIAL_JOB_SECONDS = 2;
const MAX_RETRY_AFTER_SECONDS = 300;

/**
 * Every synthesis and render runs through here: one limiter slot, and one signal that aborts with the reason
 * the job is stopped (the client's disconnect, the operation's deadline, the server's shutdown), so its processes
 * are killed, its temporary files removed, and every layer throws that reason as it is.
 */
export class JobRunner {
  private readonly shutdown = new AbortController();
  private averageSeconds = INITIAL_JOB_SECONDS;
  private readonly averageByOperation = new Map<Operation, number>();

  constructor(
    private readonly limiter: Limiter,
    private readonly timeoutsMs: Record<Operation, number>,
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
    return (work) => this.runAdmitted(operation, client.signal, work, priority).finally(() => release?.());
  }

  /** The measured mean time of one job of this operation (every operation's before one has run). */
  expectedSeconds(operation: Operation): number {
    return this.averageByOperation.get(operation) ?? this.averageSeconds;
  }

  get concurrency(): number {
    return this.limiter.stats.concurrency;
  }

  private runAdmitted<T>(operation: Operation, clientSignal: AbortSignal, work: (signal: AbortSignal) => Promise<T>, priority: number): Promise<T> {
    const waiting = AbortSignal.any([clientSignal, this.shutdown.signal]);
    return this.limiter.run(async () => {
      const deadline = deadlineSignal(this.timeoutsMs[operation]);
      const signal = AbortSignal.any([waiting, deadline.signal]);
      const started = performance.now();
      let outcome = 'success';
      try {
        return await work(signal);
      } catch (thrown) {
        // A stopped job fails for why it was stopped, whatever a killed process reported on its way down.
        const error = signal.aborted ? abortError(signal.reason) : thrown;
        outcome = isAppError(error) ? error.code : 'INTERNAL_ERROR';
        throw error;
      } finally {
        deadline.clear();
        const seconds = (performance.now() - started) / 1000;
        this.averageSeconds = movingAverage(this.averageSeconds, seconds);
        this.averageByOperation.set(operation, movingAverage(this.averageByOperation.get(operation), seconds));
        this.observer?.jobFinished(operation, seconds, outcome);
      }
    }, waiting, priority);
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
