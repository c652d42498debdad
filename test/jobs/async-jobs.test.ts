import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import { describe, expect, it } from 'vitest';
import { verifyWebhookSignature } from '../../src/jobs/webhooks/delivery.js';
import { useTestApp } from '../helpers/helpers.js';
import { useWebhookReceiver, type Delivery } from '../helpers/webhook-receiver.js';
import { probe } from '../helpers/media.js';

const VOICE = 'espeak-ng:en-us';
const SECRET = 'a-webhook-secret-for-tests';
/** Long enough that a job behind it is still queued when it is read: about a minute of video. */
const LONG_TEXT = 'The quick brown fox jumps over the lazy dog, and then it runs away into the woods. '.repeat(14);

interface JobStatus {
  id: string;
  state: string;
  operation: string;
  position?: number;
  etaSeconds?: number;
  progress?: number;
  result?: Record<string, unknown> & { url: string };
  error?: { code: string; message: string };
}

async function submit(app: FastifyInstance, url: string, payload: Record<string, unknown>, headers: Record<string, string> = {}) {
  const response = await app.inject({ method: 'POST', url, payload, headers });
  expect(response.statusCode, response.body).toBe(202);
  const body = response.json<{ status: string; id: string; statusUrl: string; state: string }>();
  expect(body).toMatchObject({ status: 'accepted', state: 'queued' });
  expect(response.headers.location).toBe(`/jobs/${body.id}`);
  expect(body.statusUrl).toBe(response.headers.location);
  return body.id;
}

async function status(app: FastifyInstance, id: string, headers: Record<string, string> = {}): Promise<JobStatus> {
  const response = await app.inject({ method: 'GET', url: `/jobs/${id}`, headers });
  expect(response.statusCode, response.body).toBe(200);
  return response.json<JobStatus>();
}

/** Polls until the job has finished; returns every state seen on the way. */
async function settle(app: FastifyInstance, id: string, headers: Record<string, string> = {}): Promise<{ final: JobStatus; seen: JobStatus[] }> {
  const seen: JobStatus[] = [];
  for (let polls = 0; polls < 600; polls++) {
    const current = await status(app, id, headers);
    seen.push(current);
    if (!['queued', 'running'].includes(current.state)) return { final: current, seen };
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`job ${id} did not finish`);
}

describe('asynchronous jobs, embedded queue', () => {
  // One job at a time, so that jobs queue behind each other; nothing cached, so a long job stays long.
  const test = useTestApp({ CONCURRENCY: '1', CACHE_MAX_ENTRIES: '0', SENTENCE_CACHE_MB: '0' });

  it('answers 202 with Location for "async": true, and the finished job holds the body a synchronous request gets', async () => {
    const payload = { text: 'Read this later. It has two sentences.', voice: VOICE, format: 'wav' };
    const id = await submit(test.app, '/tts', { ...payload, async: true });
    const { final } = await settle(test.app, id);
    expect(final.state).toBe('succeeded');
    expect(final.operation).toBe('tts');
    const sync = await test.app.inject({ method: 'POST', url: '/tts', payload });
    expect(sync.statusCode).toBe(200);
    const syncBody = sync.json<Record<string, unknown>>();
    expect(Object.keys(final.result ?? {}).sort()).toEqual(Object.keys(syncBody).filter((key) => key !== 'cached').sort());
    expect(final.result).toMatchObject({ status: 'success', format: 'wav', voice: VOICE, duration: syncBody.duration });
    const file = await test.fetchFile(final.result?.url ?? '');
    expect(file.statusCode).toBe(200);
    expect(file.body.subarray(0, 4).toString()).toBe('RIFF');
  });

  it('takes Prefer: respond-async, shows a queued job its position and ETA, a running one its progress', async () => {
    const video = await submit(test.app, '/tts-video', { text: LONG_TEXT, voice: VOICE, resolution: '720p' }, { prefer: 'respond-async' });
    const behind = await submit(test.app, '/tts-video', { text: 'Second in line.', voice: VOICE, resolution: '720p', async: true });
    const queued = await status(test.app, behind);
    expect(queued.state).toBe('queued');
    expect(queued.position).toBe(0);
    expect(queued.etaSeconds).toBeGreaterThanOrEqual(1);
    const { final, seen } = await settle(test.app, video);
    expect(final.state).toBe('succeeded');
    const running = seen.filter((view) => view.state === 'running');
    expect(running.length).toBeGreaterThan(0);
    const progress = running.map((view) => view.progress ?? -1);
    expect(progress.every((value) => value >= 0 && value <= 100)).toBe(true);
    expect(progress.at(-1)).toBeGreaterThan(0);
    expect(progress).toEqual([...progress].sort((a, b) => a - b));
    const info = await probe(path.join(test.outputDir, new URL(final.result?.url ?? '').pathname.replace(/^\/files\//, '')));
    expect(info.duration).toBeGreaterThan(30);
    expect((await settle(test.app, behind)).final.state).toBe('succeeded');
  }, 120_000);

  it('runs a short /tts before videos that were queued first', async () => {
    const blocker = await submit(test.app, '/tts-video', { text: LONG_TEXT, voice: VOICE, resolution: '720p', async: true });
    const videos = [
      await submit(test.app, '/tts-video', { text: 'A later video.', voice: VOICE, resolution: '720p', async: true }),
      await submit(test.app, '/tts-video', { text: 'Another later video.', voice: VOICE, resolution: '720p', async: true }),
    ];
    const speech = await submit(test.app, '/tts', { text: 'Short and urgent.', voice: VOICE, async: true });
    expect((await status(test.app, speech)).position).toBe(0);
    expect((await status(test.app, videos[1] as string)).position).toBe(2);
    const finished = await Promise.all([blocker, ...videos, speech].map(async (id) => (await settle(test.app, id)).final));
    const startOf = (view: JobStatus) => Date.parse((view as unknown as { startedAt: string }).startedAt);
    const [, first, second, urgent] = finished as [JobStatus, JobStatus, JobStatus, JobStatus];
    expect(startOf(urgent)).toBeLessThan(startOf(first));
    expect(startOf(first)).toBeLessThanOrEqual(startOf(second));
  }, 120_000);

  it('DELETE cancels a queued job and a running one; neither publishes a file', async () => {
    const before = await test.listFiles();
    const running = await submit(test.app, '/tts-video', { text: LONG_TEXT, voice: VOICE, async: true });
    const queued = await submit(test.app, '/tts-video', { text: `${LONG_TEXT} Queued.`, voice: VOICE, async: true });
    const cancelledQueued = await test.app.inject({ method: 'DELETE', url: `/jobs/${queued}` });
    expect(cancelledQueued.statusCode).toBe(200);
    expect(cancelledQueued.json()).toMatchObject({ state: 'cancelled', error: { code: 'JOB_CANCELLED' } });
    while ((await status(test.app, running)).state === 'queued') await new Promise((resolve) => setTimeout(resolve, 20));
    const cancelledRunning = await test.app.inject({ method: 'DELETE', url: `/jobs/${running}` });
    expect(cancelledRunning.json()).toMatchObject({ state: 'cancelled', error: { code: 'JOB_CANCELLED' } });
    expect(await test.listFiles()).toEqual(before);
    // A finished job is left as it is.
    expect((await test.app.inject({ method: 'DELETE', url: `/jobs/${running}` })).json()).toMatchObject({ state: 'cancelled' });
  }, 60_000);

  it('a failed job shows the error a synchronous request would have answered with', async () => {
    const id = await submit(test.app, '/tts', { text: 'W'.repeat(5000), voice: 'festival:slt-hts', async: true });
    const { final } = await settle(test.app, id);
    expect(final.state).toBe('failed');
    expect(final.error?.code).toBe('OUTPUT_TOO_LONG');
  }, 60_000);

  it('refuses what it can check at once with 4xx before queueing, and answers 404 for unknown jobs', async () => {
    const unknownVoice = await test.app.inject({ method: 'POST', url: '/tts', payload: { text: 'x', voice: 'nope', async: true } });
    expect(unknownVoice.statusCode).toBe(400);
    expect(unknownVoice.json().error.code).toBe('UNKNOWN_VOICE');
    const missing = await test.app.inject({ method: 'GET', url: '/jobs/AAAAAAAAAAAAAAAAAAAAAA' });
    expect(missing.statusCode).toBe(404);
    expect(missing.json().error.code).toBe('JOB_NOT_FOUND');
    expect((await test.app.inject({ method: 'DELETE', url: '/jobs/AAAAAAAAAAAAAAAAAAAAAA' })).statusCode).toBe(404);
  });
});

describe('a job belongs to its client', () => {
  const test = useTestApp({ API_KEYS: 'key-one,key-two', CACHE_MAX_ENTRIES: '0' });

  it('another API key can neither read nor cancel it', async () => {
    const one = { authorization: 'Bearer key-one' };
    const two = { authorization: 'Bearer key-two' };
    const id = await submit(test.app, '/tts', { text: 'Mine alone.', voice: VOICE, async: true }, one);
    expect((await test.app.inject({ method: 'GET', url: `/jobs/${id}`, headers: two })).statusCode).toBe(404);
    expect((await test.app.inject({ method: 'DELETE', url: `/jobs/${id}`, headers: two })).statusCode).toBe(404);
    expect((await test.app.inject({ method: 'GET', url: `/jobs/${id}` })).statusCode).toBe(401);
    expect((await settle(test.app, id, one)).final.state).toBe('succeeded');
  });
});

describe('webhooks', () => {
  const hooks = useWebhookReceiver();
  const test = useTestApp({ WEBHOOK_SECRET: SECRET, WEBHOOK_ALLOW_PRIVATE: 'true', CACHE_MAX_ENTRIES: '0' });

  it('POSTs the finished job, signed with HMAC-SHA256 over the timestamp and the body', async () => {
    const id = await submit(test.app, '/tts', { text: 'Call me back.', voice: VOICE, webhook_url: hooks.url });
    const { final } = await settle(test.app, id);
    const received = await hooks.waitFor(1);
    expect(received).toHaveLength(1);
    const [delivery] = received as [Delivery];
    expect(delivery.headers['voxreel-event']).toBe('job.succeeded');
    expect(verifyWebhookSignature(SECRET, String(delivery.headers['voxreel-signature']), delivery.body)).toBe(true);
    expect(verifyWebhookSignature('another-secret-entirely', String(delivery.headers['voxreel-signature']), delivery.body)).toBe(false);
    const payload = JSON.parse(delivery.body) as { event: string; job: JobStatus };
    expect(payload.event).toBe('job.succeeded');
    expect(payload.job).toMatchObject({ id, state: 'succeeded', result: { url: final.result?.url } });
  });
});

describe('webhooks to private addresses', () => {
  const test = useTestApp({ WEBHOOK_SECRET: SECRET, CACHE_MAX_ENTRIES: '0' });

  it('refuses loopback and private targets with 400 unless WEBHOOK_ALLOW_PRIVATE', async () => {
    for (const target of ['http://127.0.0.1:9/hook', 'http://10.1.2.3/hook', 'http://[::1]/hook', 'http://localhost/hook', 'ftp://example.com/hook']) {
      const response = await test.app.inject({ method: 'POST', url: '/tts', payload: { text: 'x', voice: VOICE, webhook_url: target } });
      expect(response.statusCode, target).toBe(400);
      expect(response.json().error).toMatchObject({ code: 'VALIDATION_ERROR', field: 'webhook_url' });
    }
  });
});

describe('job expiry', () => {
  // About a second.
  const test = useTestApp({ JOB_RETENTION_HOURS: '0.0003', CACHE_MAX_ENTRIES: '0' });

  it('forgets a finished job JOB_RETENTION_HOURS after it finished', async () => {
    const id = await submit(test.app, '/tts', { text: 'Soon forgotten.', voice: VOICE, async: true });
    const { final } = await settle(test.app, id);
    expect(Date.parse((final as unknown as { expiresAt: string }).expiresAt)).toBeGreaterThan(Date.now());
    await new Promise((resolve) => setTimeout(resolve, 1300));
    expect((await test.app.inject({ method: 'GET', url: `/jobs/${id}` })).statusCode).toBe(404);
  });
});
