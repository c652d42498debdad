import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { Queue } from 'bullmq';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { LocalStorage } from '../../src/storage/local.js';
import type { Storage } from '../../src/storage/storage.js';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { verifyWebhookSignature } from '../../src/jobs/webhooks/delivery.js';
import { openWorker, type RunningWorker } from '../../src/app/open-worker.js';
import { buildTestApp, type TestApp } from '../helpers/helpers.js';
import { freePort, startRedis, useRedis } from '../helpers/redis-server.js';
import { useTempDir } from '../helpers/temp-dir.js';
import { useWebhookReceiver } from '../helpers/webhook-receiver.js';

const VOICE = 'espeak-ng:en-us';
const SECRET = 'a-webhook-secret-for-tests';
/** What the workers logged, to see how often a job was started. */
const logged: Array<Record<string, unknown> & { msg: string }> = [];
const record = (obj: object, msg: string) => void logged.push({ ...obj, msg });
const LOG = { info: record, warn: record, error: record };

interface JobStatus {
  id: string;
  state: string;
  position?: number;
  etaSeconds?: number;
  startedAt?: string;
  result?: { url: string };
  error?: { code: string };
}

/**
 * The API with REDIS_URL against a real redis-server, and `voxreel worker`s started in this process only when a
 * test wants jobs to run: so what waits in Redis can be seen waiting.
 */
describe('jobs queued in Redis', () => {
  const redis = useRedis();
  let api: TestApp;
  const workers: RunningWorker[] = [];
  const hooks = useWebhookReceiver();
  const env = () => ({
    REDIS_URL: redis.url,
    CDN_URL: 'http://files.example/files',
    QUEUE_LENGTH: '3',
    CONCURRENCY: '1',
    CACHE_MAX_ENTRIES: '0',
    SENTENCE_CACHE_MB: '0',
    WEBHOOK_SECRET: SECRET,
    WEBHOOK_ALLOW_PRIVATE: 'true',
    TTS_TIMEOUT_MS: '1000',
    TIMEOUT_MS_PER_CHARACTER: '0',
  });

  beforeAll(async () => {
    api = await buildTestApp(env());
  });
  afterEach(async () => {
    await Promise.all(workers.splice(0).map((worker) => worker.close(1000)));
  });
  afterAll(async () => {
    await api?.close();
  });

  /** A worker on the same queue and OUTPUT_DIR as the API. */
  async function startWorker(): Promise<RunningWorker> {
    const config = loadConfig({ ...env(), OUTPUT_DIR: api.outputDir, LOG_LEVEL: 'silent', WARM_VOICE: 'espeak-ng:en-us' });
    const worker = await openWorker({ ...config, redisUrl: redis.url }, LOG);
    workers.push(worker);
    return worker;
  }

  async function submit(url: string, payload: Record<string, unknown>): Promise<string> {
    const response = await api.app.inject({ method: 'POST', url, payload: { ...payload, async: true } });
    expect(response.statusCode, response.body).toBe(202);
    return response.json<{ id: string }>().id;
  }

  async function status(id: string): Promise<JobStatus> {
    return (await api.app.inject({ method: 'GET', url: `/jobs/${id}` })).json<JobStatus>();
  }

  async function settle(id: string): Promise<JobStatus> {
    for (const deadline = Date.now() + 60_000; Date.now() < deadline; ) {
      const current = await status(id);
      // Only an end state ends the wait (a CI run once read a body without a state here, the job succeeding meanwhile).
      if (current.state === 'succeeded' || current.state === 'failed' || current.state === 'cancelled') return current;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    throw new Error(`job ${id} did not finish`);
  }

  it('keeps jobs queued with their position, refuses one more than QUEUE_LENGTH with 503 and Retry-After, cancels a queued one, then runs speech before videos', async () => {
    const firstVideo = await submit('/tts-video', { text: 'The first video in line.', voice: VOICE, resolution: '720p' });
    const secondVideo = await submit('/tts-video', { text: 'The second video in line.', voice: VOICE, resolution: '720p' });
    const speech = await submit('/tts', { text: 'Speech goes first.', voice: VOICE });
    expect(await status(speech)).toMatchObject({ state: 'queued', position: 0 });
    expect(await status(secondVideo)).toMatchObject({ state: 'queued', position: 2 });
    // No worker is running yet: the view says so rather than promise a time.
    expect(await status(firstVideo)).toMatchObject({ state: 'queued', workers: 0 });
    expect((await status(firstVideo)).etaSeconds).toBeUndefined();

    const refused = await api.app.inject({ method: 'POST', url: '/tts', payload: { text: 'No room.', voice: VOICE } });
    expect(refused.statusCode).toBe(503);
    expect(refused.json().error.code).toBe('OVERLOADED');
    expect(Number(refused.headers['retry-after'])).toBeGreaterThanOrEqual(1);

    const cancelledId = await (async () => {
      const deleted = await api.app.inject({ method: 'DELETE', url: `/jobs/${secondVideo}` });
      expect(deleted.json()).toMatchObject({ state: 'cancelled', error: { code: 'JOB_CANCELLED' } });
      return secondVideo;
    })();
    expect(await status(cancelledId)).toMatchObject({ state: 'cancelled' });

    await startWorker();
    const [video, spoken] = [await settle(firstVideo), await settle(speech)];
    expect(video.state).toBe('succeeded');
    expect(spoken.state).toBe('succeeded');
    expect(Date.parse(spoken.startedAt ?? '')).toBeLessThan(Date.parse(video.startedAt ?? ''));
    expect(video.result?.url).toBe(`http://files.example/files/video/${firstVideo}.mp4`);
    const file = await api.fetchFile(`http://localhost/files/video/${firstVideo}.mp4`);
    expect(file.statusCode).toBe(200);
    expect(await status(cancelledId)).toMatchObject({ state: 'cancelled' });
  }, 90_000);

  it('a synchronous request waits for its worker and answers the seed contract; a job past its deadline fails with JOB_TIMEOUT, once', async () => {
    expect((await api.app.inject({ method: 'GET', url: '/readyz' })).json().checks).toMatchObject({ redis: true });
    await startWorker();
    const sync = await api.app.inject({ method: 'POST', url: '/tts', payload: { text: 'Hello from a worker.', voice: VOICE } });
    expect(sync.statusCode, sync.body).toBe(200);
    expect(sync.json()).toMatchObject({ status: 'success', cached: false });
    // Festival takes well over TTS_TIMEOUT_MS (1 s) for this: the job stops at its deadline and is not run again.
    const slow = await api.app.inject({ method: 'POST', url: '/tts', payload: { text: 'A long sentence for a slow voice. '.repeat(40), voice: 'festival:slt-hts' } });
    expect(slow.statusCode).toBe(504);
    expect(slow.json().error.code).toBe('JOB_TIMEOUT');
    const finished = logged.filter((entry) => entry.msg === 'job finished' && entry.outcome === 'JOB_TIMEOUT');
    expect(finished).toHaveLength(1);
    await new Promise((resolve) => setTimeout(resolve, 1500));
    expect(logged.filter((entry) => entry.msg === 'job started' && entry.job === finished[0]?.job)).toHaveLength(1);
  }, 60_000);

  it('DELETE stops a job running in a worker: cancelled, nothing published', async () => {
    await startWorker();
    const before = (await api.listFiles()).filter((file) => !file.startsWith('.'));
    const id = await submit('/tts-video', { text: 'A long video that will not be finished. '.repeat(40), voice: VOICE });
    while ((await status(id)).state !== 'running') await new Promise((resolve) => setTimeout(resolve, 20));
    await new Promise((resolve) => setTimeout(resolve, 200));
    const deleted = await api.app.inject({ method: 'DELETE', url: `/jobs/${id}` });
    expect(deleted.json()).toMatchObject({ state: 'cancelled', error: { code: 'JOB_CANCELLED' } });
    expect(await status(id)).toMatchObject({ state: 'cancelled' });
    expect((await api.listFiles()).filter((file) => !file.startsWith('.'))).toEqual(before);
    expect(logged.some((entry) => entry.msg === 'job finished' && entry.job === id && entry.outcome === 'JOB_CANCELLED')).toBe(true);
  }, 60_000);

  it("shows an operator the real queue: jobs by state and live workers in the API's /metrics and /readyz, and the worker's own /healthz, /readyz and /metrics", async () => {
    const metric = (text: string, line: string) => Number(text.split('\n').find((entry) => entry.startsWith(line))?.split(' ').at(-1));
    const scrape = async () => (await api.app.inject({ method: 'GET', url: '/metrics' })).body;
    const ids = [await submit('/tts', { text: 'Counted while waiting.', voice: VOICE }), await submit('/tts', { text: 'And me.', voice: VOICE })];
    expect(metric(await scrape(), 'voxreel_queue_jobs{state="waiting"}')).toBe(2);
    expect(metric(await scrape(), 'voxreel_workers ')).toBe(0);
    expect((await api.app.inject({ method: 'GET', url: '/readyz' })).json()).toMatchObject({ status: 'ok', workers: 0 });

    const port = await freePort();
    const config = loadConfig({ ...env(), OUTPUT_DIR: api.outputDir, LOG_LEVEL: 'silent', WARM_VOICE: 'espeak-ng:en-us', WORKER_PORT: String(port) });
    const worker = await openWorker({ ...config, redisUrl: redis.url }, LOG);
    workers.push(worker);
    expect(worker.port).toBe(port);
    for (const id of ids) expect(await settle(id)).toMatchObject({ state: 'succeeded' });
    expect((await api.app.inject({ method: 'GET', url: '/readyz' })).json()).toMatchObject({ workers: 1 });
    expect(metric(await scrape(), 'voxreel_workers ')).toBe(1);
    expect(metric(await scrape(), 'voxreel_queue_jobs{state="waiting"}')).toBe(0);

    const base = `http://127.0.0.1:${port}`;
    expect((await fetch(`${base}/healthz`)).status).toBe(200);
    expect((await fetch(`${base}/readyz`)).status).toBe(200);
    const own = await (await fetch(`${base}/metrics`)).text();
    expect(metric(own, 'voxreel_job_duration_seconds_count{operation="tts",outcome="success"}')).toBeGreaterThanOrEqual(2);
    expect(metric(own, 'voxreel_jobs_running ')).toBe(0);
    expect(own).toMatch(/^# HELP voxreel_engine_failures_total /m);
    // Closing: no longer ready, then gone from the API's count at once (not after its heartbeat runs out).
    await worker.close(1000);
    workers.splice(workers.indexOf(worker), 1);
    expect((await api.app.inject({ method: 'GET', url: '/readyz' })).json()).toMatchObject({ workers: 0 });
  }, 60_000);

  it('a run that loses its lock (as in a Redis stall) publishes and records nothing; the job runs again and succeeds once', async () => {
    await startWorker();
    const id = await submit('/tts-video', { text: 'A video whose first run loses its lock. '.repeat(12), voice: VOICE, resolution: '720p' });
    while ((await status(id)).state !== 'running') await new Promise((resolve) => setTimeout(resolve, 20));
    // Another token takes the lock for 3 s, as a worker that took the job over after a stall would.
    const { Redis } = await import('ioredis');
    const client = new Redis(redis.url);
    try {
      await client.set(`bull:voxreel:${id}:lock`, 'another-worker', 'PX', 3000);
    } finally {
      client.disconnect();
    }
    const finished = await settle(id);
    expect(finished.state).toBe('succeeded');
    expect(logged.some((entry) => entry.job === id && /lost the job's lock/.test(entry.msg))).toBe(true);
    // The abandoned run recorded no outcome: exactly one run finished.
    expect(logged.filter((entry) => entry.msg === 'job finished' && entry.job === id && entry.outcome === 'success')).toHaveLength(1);
  }, 90_000);

  it('webhooks fire from the worker with the finished job, signed, and for a job cancelled before it ran', async () => {
    const before = hooks.received.length;
    const queued = await api.app.inject({ method: 'POST', url: '/tts', payload: { text: 'Never run.', voice: VOICE, webhook_url: hooks.url } });
    const cancelled = queued.json<{ id: string }>().id;
    await api.app.inject({ method: 'DELETE', url: `/jobs/${cancelled}` });
    await startWorker();
    const done = await api.app.inject({ method: 'POST', url: '/tts', payload: { text: 'Call me when done.', voice: VOICE, webhook_url: hooks.url } });
    const id = done.json<{ id: string }>().id;
    const finished = await settle(id);
    const events = (await hooks.waitFor(before + 2)).slice(before).map(({ headers, body }) => {
      expect(verifyWebhookSignature(SECRET, String(headers['voxreel-signature']), body)).toBe(true);
      return JSON.parse(body) as { event: string; job: JobStatus };
    });
    expect(events.find((event) => event.job.id === cancelled)).toMatchObject({ event: 'job.cancelled', job: { state: 'cancelled' } });
    expect(events.find((event) => event.job.id === id)).toMatchObject({ event: 'job.succeeded', job: { state: 'succeeded', result: { url: finished.result?.url } } });
  }, 60_000);
});

describe('when Redis goes away', () => {
  const useless = useTempDir('voxreel-no-redis-');
  it('answers 503 instead of hanging: /readyz says why, queueing is refused, limits let requests through', async () => {
    const redis = await startRedis();
    const api = await buildTestApp({ REDIS_URL: redis.url, CDN_URL: 'http://files.example/files', RATE_LIMIT_MAX: '100' });
    try {
      expect((await api.app.inject({ method: 'GET', url: '/readyz' })).statusCode).toBe(200);
      await redis.stop();
      const ready = await api.app.inject({ method: 'GET', url: '/readyz' });
      expect(ready.statusCode).toBe(503);
      expect(ready.json().checks.redis).toBe(false);
      const started = Date.now();
      const refused = await api.app.inject({ method: 'POST', url: '/tts', payload: { text: 'Nowhere to go.', voice: VOICE } });
      expect(refused.statusCode).toBe(503);
      expect(refused.json().error.code).toBe('OVERLOADED');
      expect(Date.now() - started).toBeLessThan(10_000);
      expect((await api.app.inject({ method: 'GET', url: '/voices?language=en' })).statusCode).toBe(200);
    } finally {
      await api.close();
    }
  }, 30_000);

  it('waits out a short Redis stall (SIGSTOP); answers every job route within its bound through a long one: 503 with Retry-After, then serves again', async () => {
    const redis = await startRedis();
    const api = await buildTestApp({ REDIS_URL: redis.url, CDN_URL: 'http://files.example/files', RATE_LIMIT_MAX: '100' });
    try {
      const queued = await api.app.inject({ method: 'POST', url: '/tts', payload: { text: 'Waits for a worker.', voice: VOICE, async: true } });
      expect(queued.statusCode).toBe(202);
      const location = queued.headers.location as string;
      // A stall shorter than the view's 3 s bound is waited out, not answered 503 (the view's first read, the job
      // itself, waits on the queue's connection whichever connection its later reads use: this does not tell them apart).
      redis.pause();
      const resumed = setTimeout(() => redis.resume(), 1500);
      const waited = await api.app.inject({ method: 'GET', url: location });
      clearTimeout(resumed);
      expect(waited.statusCode, waited.body).toBe(200);
      expect(waited.json().state).toBe('queued');
      redis.pause();
      for (const [method, url, payload] of [
        ['GET', location, undefined],
        ['DELETE', location, undefined],
        ['POST', '/tts', { text: 'Stalled.', voice: VOICE, async: true }],
      ] as const) {
        const started = Date.now();
        const response = await api.app.inject({ method, url, ...(payload ? { payload } : {}) });
        expect(response.statusCode, `${method} ${url}: ${response.body}`).toBe(503);
        expect(Number(response.headers['retry-after']), `${method} ${url}`).toBeGreaterThan(0);
        // 5 s at most by design (queue 3 s, the rate limit's and the cache's Redis 1 s each), and a margin for a busy machine.
        expect(Date.now() - started, `${method} ${url}`).toBeLessThan(6_500);
      }
      // The routes that need Redis only in part answer too, within the same bound: /readyz says why it is not ready.
      for (const [url, status] of [
        ['/readyz', 503],
        ['/metrics', 200],
        ['/voices', 200],
        ['/healthz', 200],
      ] as const) {
        const started = Date.now();
        const response = await api.app.inject({ method: 'GET', url });
        expect(response.statusCode, `${url}: ${response.body.slice(0, 200)}`).toBe(status);
        expect(Date.now() - started, url).toBeLessThan(6_500);
      }
      redis.resume();
      const after = await api.app.inject({ method: 'GET', url: location });
      expect(after.statusCode, after.body).toBe(200);
    } finally {
      redis.resume();
      await api.close();
      await redis.stop();
    }
  }, 60_000);

  it('closing (SIGTERM) answers the synchronous requests waiting for a worker 503 SHUTTING_DOWN at once and takes their jobs out of the queue', async () => {
    const redis = await startRedis();
    const api = await buildTestApp({ REDIS_URL: redis.url, CDN_URL: 'http://files.example/files', QUEUE_NAME: 'closing', CACHE_MAX_ENTRIES: '0' });
    const queue = new Queue('closing', { connection: { host: '127.0.0.1', port: redis.port } });
    try {
      const waiting = api.app.inject({ method: 'POST', url: '/tts', payload: { text: 'Nobody renders me.', voice: VOICE } });
      const queued = async () => Object.values(await queue.getJobCounts('waiting', 'prioritized', 'delayed')).reduce((sum, count) => sum + count, 0);
      await expect.poll(queued, { timeout: 5000 }).toBe(1);
      const started = Date.now();
      const closing = api.app.close();
      const answer = await waiting;
      expect(answer.statusCode, answer.body).toBe(503);
      expect(answer.json().error.code).toBe('SHUTTING_DOWN');
      expect(Date.now() - started).toBeLessThan(2000);
      await closing;
      expect(await queued()).toBe(0);
    } finally {
      await queue.close();
      await api.close().catch(() => undefined);
      await redis.stop();
    }
  }, 30_000);

  it('stops at start with one line naming REDIS_URL when Redis does not answer', async () => {
    const port = await freePort();
    const server = spawn(process.execPath, ['--import', 'tsx', 'src/server.ts'], {
      env: { ...process.env, PORT: '0', REDIS_URL: `redis://127.0.0.1:${port}`, OUTPUT_DIR: useless, LOG_LEVEL: 'silent' },
    });
    let stderr = '';
    server.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const [code] = (await once(server, 'exit')) as [number];
    expect(code).toBe(1);
    expect(stderr.trim()).toMatch(/^voxreel: Redis at REDIS_URL \(redis:\/\/127\.0\.0\.1:\d+\) did not answer within 10 s$/);
  }, 30_000);
});

describe('per-client job quota with several API instances', () => {
  const redis = useRedis();

  it('a job cancelled through another instance gives its client the slot back', async () => {
    const env = { REDIS_URL: redis.url, CDN_URL: 'http://files.example/files', CLIENT_MAX_JOBS: '1', QUEUE_NAME: 'quota-test' };
    const [one, two] = await Promise.all([buildTestApp(env), buildTestApp(env)]);
    try {
      const payload = { text: 'Waits for a worker that never comes.', voice: VOICE, async: true };
      const first = await one.app.inject({ method: 'POST', url: '/tts', payload });
      expect(first.statusCode).toBe(202);
      const refused = await one.app.inject({ method: 'POST', url: '/tts', payload: { ...payload, text: 'A second one.' } });
      expect(refused.statusCode).toBe(429);
      const cancelled = await two.app.inject({ method: 'DELETE', url: first.headers.location as string });
      expect(cancelled.json()).toMatchObject({ state: 'cancelled' });
      let again = 0;
      for (let tries = 0; tries < 50 && again !== 202; tries++) {
        again = (await one.app.inject({ method: 'POST', url: '/tts', payload: { ...payload, text: `Room again ${tries}.` } })).statusCode;
        if (again !== 202) await new Promise((resolve) => setTimeout(resolve, 50));
      }
      expect(again).toBe(202);
    } finally {
      await Promise.all([one.close(), two.close()]);
    }
  }, 30_000);

  it('sweeps old files from one instance at a time (the one that takes a Redis lock), not from every instance', async () => {
    const swept: string[] = [];
    const root = await mkdtemp(path.join(os.tmpdir(), 'voxreel-sweep-'));
    /** A real local storage whose sweeps are counted. */
    const counted = (name: string): Storage => {
      const storage = new LocalStorage(root, 'http://files.example/files');
      return new Proxy(storage, {
        get(target, property) {
          if (property === 'sweep') return (maxAgeMs: number) => (swept.push(name), target.sweep(maxAgeMs));
          const value: unknown = Reflect.get(target, property, target);
          return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
        },
      });
    };
    const env = { REDIS_URL: redis.url, CDN_URL: 'http://files.example/files', RETENTION_HOURS: '1', QUEUE_NAME: 'one-sweeper' };
    const apps = await Promise.all(['one', 'two', 'three'].map((name) => buildTestApp(env, { storage: counted(name) })));
    try {
      await expect.poll(() => swept.length, { timeout: 5000 }).toBeGreaterThanOrEqual(1);
      await new Promise((resolve) => setTimeout(resolve, 1000));
      expect(swept).toHaveLength(1);
    } finally {
      await Promise.all(apps.map((app) => app.close()));
      await rm(root, { recursive: true, force: true });
    }
  });

  it('counts an address\'s refused API keys across instances (AUTH_FAILURE_LIMIT)', async () => {
    const env = { REDIS_URL: redis.url, CDN_URL: 'http://files.example/files', API_KEYS: 'good-key', AUTH_FAILURE_LIMIT: '3', QUEUE_NAME: 'auth-shared' };
    const [one, two] = await Promise.all([buildTestApp(env), buildTestApp(env)]);
    try {
      const voices = (app: TestApp, key: string, address = '203.0.113.9') =>
        app.app.inject({ method: 'GET', url: '/voices?language=fr', headers: { authorization: `Bearer ${key}` }, remoteAddress: address });
      expect((await voices(one, 'guess-1')).statusCode).toBe(401);
      expect((await voices(two, 'guess-2')).statusCode).toBe(401);
      expect((await voices(one, 'guess-3')).statusCode).toBe(401);
      // Three refused through two instances: the right key is refused too now, on either.
      for (const app of [one, two]) {
        const limited = await voices(app, 'good-key');
        expect(limited.statusCode).toBe(429);
        expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0);
      }
      expect((await voices(two, 'good-key', '203.0.113.10')).statusCode).toBe(200);
    } finally {
      await Promise.all([one.close(), two.close()]);
    }
  });

  it('holds a client to one share however many instances it reaches, and admits exactly QUEUE_LENGTH jobs when many arrive at once', async () => {
    const env = { REDIS_URL: redis.url, CDN_URL: 'http://files.example/files', CLIENT_MAX_JOBS: '2', QUEUE_NAME: 'shared-share', CACHE_MAX_ENTRIES: '0' };
    const [one, two] = await Promise.all([buildTestApp(env), buildTestApp(env)]);
    try {
      const post = (app: TestApp, text: string, address = '10.0.0.1') =>
        app.app.inject({ method: 'POST', url: '/tts', payload: { text, voice: VOICE, async: true }, remoteAddress: address });
      expect((await post(one, 'First, through one.')).statusCode).toBe(202);
      expect((await post(two, 'Second, through two.')).statusCode).toBe(202);
      // Per process this would be a third job on instance two, or on one: shared, it is the client's third.
      for (const app of [one, two]) {
        const refused = await post(app, 'A third.');
        expect(refused.statusCode, refused.body).toBe(429);
        expect(refused.json().error.code).toBe('RATE_LIMITED');
      }
    } finally {
      await Promise.all([one.close(), two.close()]);
    }

    const crowd = { REDIS_URL: redis.url, CDN_URL: 'http://files.example/files', QUEUE_LENGTH: '3', CLIENT_MAX_JOBS: '0', QUEUE_NAME: 'atomic-room', CACHE_MAX_ENTRIES: '0' };
    const [three, four] = await Promise.all([buildTestApp(crowd), buildTestApp(crowd)]);
    try {
      const answers = await Promise.all(
        Array.from({ length: 12 }, (_, index) =>
          (index % 2 ? three : four).app.inject({ method: 'POST', url: '/tts', payload: { text: `Crowd ${index}.`, voice: VOICE, async: true } }),
        ),
      );
      const codes = answers.map((answer) => answer.statusCode);
      expect(codes.filter((code) => code === 202)).toHaveLength(3);
      expect(codes.filter((code) => code === 503)).toHaveLength(9);
    } finally {
      await Promise.all([three.close(), four.close()]);
    }
  }, 60_000);
});
