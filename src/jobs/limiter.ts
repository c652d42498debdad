import { AppError } from '../errors.js';

export interface LimiterOptions {
  concurrency: number;
  /** Jobs that may wait for a slot; one more is refused at once with OVERLOADED. */
  queueLength: number;
  /** Seconds a refused client is told to wait (Retry-After). */
  retryAfterSeconds?: number;
}

interface Waiter {
  start: () => void;
  cancel: (error: unknown) => void;
}

/** One gate in front of every synthesis and render: fixed concurrency, bounded queue, fail fast when full. */
export class Limiter {
  private running = 0;
  private readonly queue: Waiter[] = [];

  constructor(private readonly options: LimiterOptions) {}

  get stats(): { running: number; queued: number } {
    return { running: this.running, queued: this.queue.length };
  }

  async run<T>(job: () => Promise<T>, signal?: AbortSignal): Promise<T> {
    await this.acquire(signal);
    try {
      return await job();
    } finally {
      this.release();
    }
  }

  private acquire(signal?: AbortSignal): Promise<void> {
    if (signal?.aborted) return Promise.reject(new AppError('CLIENT_CLOSED'));
    if (this.running < this.options.concurrency) {
      this.running += 1;
      return Promise.resolve();
    }
    if (this.queue.length >= this.options.queueLength) {
      return Promise.reject(new AppError('OVERLOADED', { retryAfter: this.options.retryAfterSeconds ?? 5 }));
    }
    return new Promise((resolve, reject) => {
      const onAbort = () => {
        const index = this.queue.indexOf(waiter);
        if (index >= 0) this.queue.splice(index, 1);
        reject(new AppError('CLIENT_CLOSED'));
      };
      const waiter: Waiter = {
        start: () => {
          signal?.removeEventListener('abort', onAbort);
          this.running += 1;
          resolve();
        },
        cancel: reject,
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
