import { describe, expect, it } from 'vitest';
import { AppError } from '../src/errors.js';
import { Limiter } from '../src/jobs/limiter.js';

function deferred() {
  let resolve!: () => void;
  const promise = new Promise<void>((done) => (resolve = done));
  return { promise, resolve };
}

describe('Limiter', () => {
  it('runs at most `concurrency` jobs and refuses beyond the queue at once', async () => {
    const limiter = new Limiter({ concurrency: 2, queueLength: 1, retryAfterSeconds: 7 });
    const gate = deferred();
    let running = 0;
    let peak = 0;
    const job = async () => {
      running += 1;
      peak = Math.max(peak, running);
      await gate.promise;
      running -= 1;
    };
    const accepted = [limiter.run(job), limiter.run(job), limiter.run(job)];
    expect(limiter.stats).toEqual({ running: 2, queued: 1 });
    const refused = await limiter.run(job).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(AppError);
    expect(refused).toMatchObject({ code: 'OVERLOADED', statusCode: 503, retryAfter: 7 });
    gate.resolve();
    await Promise.all(accepted);
    expect(peak).toBe(2);
    expect(limiter.stats).toEqual({ running: 0, queued: 0 });
  });

  it('drops a queued job whose client went away', async () => {
    const limiter = new Limiter({ concurrency: 1, queueLength: 5 });
    const gate = deferred();
    const first = limiter.run(() => gate.promise);
    const controller = new AbortController();
    let ran = false;
    const queued = limiter.run(async () => {
      ran = true;
    }, controller.signal);
    controller.abort();
    await expect(queued).rejects.toMatchObject({ code: 'CLIENT_CLOSED' });
    expect(limiter.stats.queued).toBe(0);
    gate.resolve();
    await first;
    expect(ran).toBe(false);
  });

  it('frees the slot when a job fails', async () => {
    const limiter = new Limiter({ concurrency: 1, queueLength: 0 });
    await expect(limiter.run(() => Promise.reject(new Error('boom')))).rejects.toThrow('boom');
    await expect(limiter.run(async () => 'ok')).resolves.toBe('ok');
  });
});
