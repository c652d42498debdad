import { AppError, abortError } from '../../errors.js';

export interface LimiterOptions {
  concurrency: number;
  /** Jobs that may wait for a slot; one more is refused at once with OVERLOADED. */
  queueLength: number;
}

interface Waiter {
  /** Lower goes first; equal ones in arrival order. */
  priority: number;
  start: () => void;
  cancel: (error: unknown) => void;
}

/** One gate in front of every synthesis and render: fixed concurrency, bounded queue, fail fast when full. */
export class Limiter {
  private running = 0;
  private readonly queue: Waiter[] = [];
  private closedWith: AppError | undefined;
  /** Seconds a refused client is told to wait (Retry-After); the job runner sets it from measured job times. */
  retryAfter: () => number = () => 5;

  constructor(private readonly options: LimiterOptions) {}

  get stats(): { running: number; queued: number; concurrency: number } {
    return { running: this.running, queued: this.queue.length, concurrency: this.options.concurrency };
  }

  /** Throws what `run` would refuse a job with right now (closed, or no slot and a full queue). */
  assertRoom(): void {
    if (this.closedWith) throw this.closedWith;
    if (this.running >= this.options.concurrency && this.queue.length >= this.options.queueLength) {
      throw new AppError('OVERLOADED', { retryAfter: this.retryAfter() });
    }
  }

  /** Runs `job` in a slot, after the waiting jobs of lower or equal `priority` (short speech jobs pass long videos). */
  async run<T>(job: () => Promise<T>, signal?: AbortSignal, priority = 0): Promise<T> {
    await this.acquire(signal, priority);
    try {
      return await job();
    } finally {
      this.release();
    }
  }

  /** Refuses every job from now on with `reason`, those waiting included; running jobs go on. */
  close(reason: AppError): void {
    this.closedWith ??= reason;
    for (const waiter of this.queue.splice(0)) waiter.cancel(reason);
  }

  private acquire(signal: AbortSignal | undefined, priority: number): Promise<void> {
    if (signal?.aborted) return Promise.reject(abortError(signal.reason));
    try {
      this.assertRoom();
    } catch (error) {
      return Promise.reject(error);
    }
    if (this.running < this.options.concurrency) {
      this.running += 1;
      return Promise.resolve();
    }
    return new Promise((resolve, reject) => {
      const onAbort = () => {
        const index = this.queue.indexOf(waiter);
        if (index >= 0) this.queue.splice(index, 1);
        reject(abortError(signal?.reason));
      };
      const waiter: Waiter = {
        priority,
        start: () => {
          signal?.removeEventListener('abort', onAbort);
          this.running += 1;
          resolve();
        },
        cancel: (error) => {
          signal?.removeEventListener('abort', onAbort);
          reject(error);
        },
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      const behind = this.queue.findIndex((other) => other.priority > priority);
      this.queue.splice(behind < 0 ? this.queue.length : behind, 0, waiter);
    });
  }

  private release(): void {
    this.running -= 1;
    this.queue.shift()?.start();
  }
}
