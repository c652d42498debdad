import { describe, expect, it } from 'vitest';
import { AppError } from '../../src/errors.js';
import { JobSlots } from '../../src/jobs/admission/slots.js';
import { Limiter } from '../../src/jobs/admission/limiter.js';
import { ClientQuota } from '../../src/jobs/admission/quota.js';

function deferred() {
  let resolve!: () => void;
  const promise = new Promise<void>((done) => (resolve = done));
  return { promise, resolve };
}

describe('Limiter', () => {
  it('runs at most `concurrency` jobs and refuses beyond the queue at once', async () => {
    const limiter = new Limiter({ concurrency: 2, queueLength: 1 });
    limiter.retryAfter = () => 7;
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
    expect(limiter.stats).toEqual({ running: 2, queued: 1, concurrency: 2 });
    const refused = await limiter.run(job).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(AppError);
    expect(refused).toMatchObject({ code: 'OVERLOADED', statusCode: 503, retryAfter: 7 });
    gate.resolve();
    await Promise.all(accepted);
    expect(peak).toBe(2);
    expect(limiter.stats).toEqual({ running: 0, queued: 0, concurrency: 2 });
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

/** Work that runs until its signal aborts, then throws the signal's reason as every layer does. */
const untilAborted = (signal: AbortSignal) =>
  new Promise<never>((_resolve, reject) => {
    if (signal.aborted) reject(signal.reason as Error);
    signal.addEventListener('abort', () => reject(signal.reason as Error), { once: true });
  });

describe('JobSlots', () => {
  const timeouts = { ttsTimeoutMs: 60_000, videoTimeoutMs: 60_000 };

  it('aborts a job at its deadline with JOB_TIMEOUT, and a disconnect with CLIENT_CLOSED', async () => {
    const jobs = new JobSlots(new Limiter({ concurrency: 2, queueLength: 0 }), { ...timeouts, ttsTimeoutMs: 50 });
    await expect(jobs.run('tts', { id: 'ip:1', signal: new AbortController().signal, characters: 10 }, untilAborted)).rejects.toMatchObject({ code: 'JOB_TIMEOUT', statusCode: 504 });
    const client = new AbortController();
    const running = jobs.run('tts-video', { id: 'ip:1', signal: client.signal, characters: 10 }, untilAborted);
    client.abort(new AppError('CLIENT_CLOSED'));
    await expect(running).rejects.toMatchObject({ code: 'CLIENT_CLOSED' });
  });

  it("a job's deadline grows with its text: TIMEOUT_MS_PER_CHARACTER for each character", async () => {
    const jobs = new JobSlots(new Limiter({ concurrency: 2, queueLength: 0 }), { ...timeouts, ttsTimeoutMs: 50, timeoutMsPerCharacter: 10 });
    const started = performance.now();
    // 50 ms + 30 characters × 10 ms: stopped at 350 ms, not at 50.
    await expect(jobs.run('tts', { id: 'ip:1', signal: new AbortController().signal, characters: 30 }, untilAborted)).rejects.toMatchObject({ code: 'JOB_TIMEOUT' });
    expect(performance.now() - started).toBeGreaterThanOrEqual(340);
  });

  it('at shutdown refuses queued and new jobs, lets running ones finish, and stops them at the end of the grace', async () => {
    const jobs = new JobSlots(new Limiter({ concurrency: 1, queueLength: 2 }), timeouts);
    const gate = deferred();
    const client = { id: 'ip:1', signal: new AbortController().signal, characters: 10 };
    const finishing = jobs.run('tts', client, () => gate.promise.then(() => 'done'));
    const queued = jobs.run('tts', client, async () => 'never');
    jobs.refuseNew();
    await expect(queued).rejects.toMatchObject({ code: 'SHUTTING_DOWN', statusCode: 503 });
    await expect(jobs.run('tts', client, async () => 'never')).rejects.toMatchObject({ code: 'SHUTTING_DOWN' });
    gate.resolve();
    await expect(finishing).resolves.toBe('done');
    const stubborn = new JobSlots(new Limiter({ concurrency: 1, queueLength: 0 }), timeouts);
    const running = stubborn.run('tts-video', client, untilAborted);
    stubborn.stopRunning();
    await expect(running).rejects.toMatchObject({ code: 'SHUTTING_DOWN' });
  });

  it('derives Retry-After from the measured job time and the queue ahead', async () => {
    const limiter = new Limiter({ concurrency: 1, queueLength: 1 });
    const jobs = new JobSlots(limiter, timeouts);
    const client = { id: 'ip:1', signal: new AbortController().signal, characters: 10 };
    const before = jobs.retryAfterSeconds();
    // Slow jobs raise the estimate; the waiting queue multiplies it.
    for (let i = 0; i < 3; i += 1) await jobs.run('tts', client, () => new Promise((done) => setTimeout(done, 1500)));
    const measured = jobs.retryAfterSeconds();
    const gate = deferred();
    const held = [jobs.run('tts', client, () => gate.promise), jobs.run('tts', client, () => gate.promise)];
    const refused = await jobs.run('tts', client, async () => undefined).catch((error: unknown) => error);
    expect(refused).toMatchObject({ code: 'OVERLOADED' });
    expect((refused as AppError).retryAfter).toBeGreaterThan(measured);
    expect(measured).toBeGreaterThanOrEqual(before);
    gate.resolve();
    await Promise.all(held);
  });
});

describe('ClientQuota', () => {
  const timeouts = { ttsTimeoutMs: 60_000, videoTimeoutMs: 60_000 };

  it('caps the jobs one client holds, running or queued, while others still get in', async () => {
    const quota = new ClientQuota({ maxJobs: 2, characters: 0, windowMs: 60_000 });
    const jobs = new JobSlots(new Limiter({ concurrency: 1, queueLength: 10 }), timeouts, undefined, quota);
    const gate = deferred();
    const greedy = { id: 'ip:greedy', signal: new AbortController().signal, characters: 5000 };
    const held = [jobs.run('tts-video', greedy, () => gate.promise), jobs.run('tts-video', greedy, () => gate.promise)];
    await expect(jobs.run('tts-video', greedy, async () => undefined)).rejects.toMatchObject({ code: 'RATE_LIMITED', statusCode: 429 });
    const other = jobs.run('tts', { ...greedy, id: 'ip:other' }, async () => 'served');
    gate.resolve();
    await Promise.all(held);
    await expect(other).resolves.toBe('served');
    // Finished jobs give their share back.
    await expect(jobs.run('tts', greedy, async () => 'again')).resolves.toBe('again');
  });

  it('charges characters per window and says when the window ends', () => {
    let now = 1_000_000;
    const quota = new ClientQuota({ maxJobs: 0, characters: 10_000, windowMs: 60_000 }, () => now);
    quota.admit('key:a', 6000)();
    now += 15_000;
    const refused = (() => {
      try {
        quota.admit('key:a', 5000);
      } catch (error) {
        return error as AppError;
      }
      return undefined;
    })();
    expect(refused).toMatchObject({ code: 'RATE_LIMITED', retryAfter: 45 });
    expect(() => quota.admit('key:b', 5000)()).not.toThrow();
    now += 46_000;
    expect(() => quota.admit('key:a', 5000)()).not.toThrow();
  });
});
