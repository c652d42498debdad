import { AppError, abortError } from '../errors.js';

export interface LimiterOptions {
  concurrency: number;
  /** Jobs that may wait for a slot; one more is refused at once with OVERLOADED. */
  queueLength: number;
}

interface Waiter {
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

  async run<T>(job: () => Promise<T>, signal?: AbortSignal): Promise<T> {
    await this.acquire(signal);
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

  private acquire(signal?: AbortSignal): Promise<void> {
    if (this.closedWith) return Promise.reject(this.closedWith);
    if (signal?.aborted) return Promise.reject(abortError(signal.reason));
    if (this.running < this.options.concurrency) {
      this.running += 1;
      return Promise.resolve();
    }
    if (this.queue.length >= this.options.queueLength) {
      return Promise.reject(new AppError('OVERLOADED', { retryAfter: this.retryAfter() }));
    }
    return new Promise((resolve, reject) => {
      const onAbort = () => {
        const index = this.queue.indexOf(waiter);
        if (index >= 0) this.queue.splice(index, 1);
        reject(abortError(signal?.reason));
      };
      const waiter: Waiter = {
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
      this.queue.push(waiter);
    });
  }

  private release(): void {
    this.running -= 1;
    this.queue.shift()?.start();
  }
}
