import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import { describe, expect, it } from 'vitest';
import { verifyWebhookSignature } from '../../src/jobs/webhooks/delivery.js';
import { aliceText } from '../helpers/fixtures.js';
import { useWebhookReceiver } from '../helpers/webhook-receiver.js';
import { useTestApp } from '../helpers/helpers.js';
import { decodeErrors, decodeFrames, probe } from '../helpers/media.js';
import { captionPixels } from '../helpers/video-helpers.js';
import { useTempDir } from '../helpers/temp-dir.js';

const VOICE = 'espeak-ng:en-us';

interface JobStatus {
  id: string;
  state: string;
  progress?: number;
  characters?: number;
  charactersDone?: number;
  secondsDone?: number;
  etaSeconds?: number;
  result?: { url: string; duration: number; characters: number; captionsUrl?: string; words?: Array<{ word: string; start: number; end: number }> };
  error?: { code: string; message: string; field?: string };
}

async function post(app: FastifyInstance, url: string, payload: Record<string, unknown>) {
  return app.inject({ method: 'POST', url, payload });
}

async function status(app: FastifyInstance, id: string): Promise<JobStatus> {
  const response = await app.inject({ method: 'GET', url: `/jobs/${id}` });
  expect(response.statusCode, response.body).toBe(200);
  return response.json<JobStatus>();
}

describe('long jobs: up to 100,000 characters, asynchronous only', () => {
  const test = useTestApp({ CACHE_MAX_ENTRIES: '0', SENTENCE_CACHE_MB: '0' });
  const downloads = useTempDir('voxreel-long-');

  it('refuses a long text asked for synchronously (400, saying how to send it), and more than 100,000 characters at all', async () => {
    const text = 'Word. '.repeat(1000).trim();
    expect(text.length).toBeGreaterThan(5000);
    for (const url of ['/tts', '/tts-video']) {
      const now = await post(test.app, url, { text, voice: VOICE });
      expect(now.statusCode, now.body).toBe(400);
      expect(now.json()).toMatchObject({ error: { code: 'VALIDATION_ERROR', field: 'text' } });
      expect(now.json<{ error: { message: string } }>().error.message).toMatch(/"async": true/);
      const tooLong = await post(test.app, url, { text: 'a'.repeat(100_001), voice: VOICE, async: true });
      expect(tooLong.statusCode, tooLong.body).toBe(400);
    }
    // A loudness target needs the whole speech first: a long audio job is spoken into its file as it goes.
    const loud = await post(test.app, '/tts', { text, voice: VOICE, async: true, loudness: -16 });
    expect(loud.statusCode, loud.body).toBe(400);
    expect(loud.json()).toMatchObject({ error: { code: 'VALIDATION_ERROR', field: 'loudness' } });
  });

  it('speaks 100,000 characters into one file as it goes: progress never falls, its words reach the end of the file', async () => {
    const text = await aliceText(100_000);
    expect(text.length).toBeGreaterThan(99_000);
    const accepted = await post(test.app, '/tts', { text, voice: VOICE, async: true, timestamps: true });
    expect(accepted.statusCode, accepted.body).toBe(202);
    const { id } = accepted.json<{ id: string }>();
    const seen: JobStatus[] = [];
    let current = await status(test.app, id);
    for (const deadline = Date.now() + 240_000; ['queued', 'running'].includes(current.state) && Date.now() < deadline; current = await status(test.app, id)) {
      seen.push(current);
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
    expect(current.state, JSON.stringify(current.error)).toBe('succeeded');
    const running = seen.filter((view) => view.state === 'running' && view.charactersDone !== undefined);
    expect(running.length).toBeGreaterThan(5);
    for (const [index, view] of running.entries()) {
      const before = running[index - 1];
      expect(view.characters).toBe(running[0]?.characters);
      if (!before) continue;
      expect(view.charactersDone).toBeGreaterThanOrEqual(before.charactersDone as number);
      expect(view.progress).toBeGreaterThanOrEqual(before.progress as number);
      expect(view.secondsDone).toBeGreaterThanOrEqual(before.secondsDone as number);
    }
    // Some of the way along, the job's own pace sets its ETA: about what is left at that pace.
    const midway = running.find((view) => (view.progress ?? 0) >= 30);
    expect(midway?.etaSeconds).toBeGreaterThan(0);

    const result = current.result as NonNullable<JobStatus['result']>;
    expect(result.characters).toBe(text.length);
    const file = path.join(downloads, `${id}.mp3`);
    const served = await test.fetchFile(result.url);
    expect(served.statusCode).toBe(200);
    await writeFile(file, served.body);
    const info = await probe(file);
    expect(info.streams.map((stream) => stream.codecName)).toEqual(['mp3']);
    // eSpeak NG speaks some 15 characters a second: 100,000 are the better part of two hours.
    expect(info.duration).toBeGreaterThan(3600);
    expect(Math.abs(info.duration - result.duration)).toBeLessThan(0.1);
    const words = result.words ?? [];
    expect(words.length).toBeGreaterThan(15_000);
    expect(words.at(-1)?.end).toBeGreaterThan(info.duration - 2);
    expect(words.at(-1)?.end).toBeLessThanOrEqual(info.duration + 0.01);
    expect(words.every((word, index) => index === 0 || word.start >= (words[index - 1]?.start ?? 0))).toBe(true);
  }, 300_000);
});

describe('long jobs: a video longer than one splice segment (5 minutes at 30 fps)', () => {
  const test = useTestApp({ CACHE_MAX_ENTRIES: '0', SENTENCE_CACHE_MB: '0' });
  const downloads = useTempDir('voxreel-long-video-');

  it('is put together by the splicer in segments: every frame there, captions drawn on both sides of the cut', async () => {
    const text = await aliceText(6000);
    const accepted = await post(test.app, '/tts-video', { text, voice: VOICE, resolution: '720p', async: true });
    expect(accepted.statusCode, accepted.body).toBe(202);
    const { id } = accepted.json<{ id: string }>();
    let current = await status(test.app, id);
    for (const deadline = Date.now() + 240_000; ['queued', 'running'].includes(current.state) && Date.now() < deadline; current = await status(test.app, id)) {
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
    expect(current.state, JSON.stringify(current.error)).toBe('succeeded');
    const result = current.result as NonNullable<JobStatus['result']> & { renderPath: string; width: number; height: number };
    expect(result.renderPath).toBe('spliced');
    expect(result.duration).toBeGreaterThan(310);
    const file = path.join(downloads, `${id}.mp4`);
    await writeFile(file, (await test.fetchFile(result.url)).body);
    const info = await probe(file);
    const video = info.streams.find((stream) => stream.codecType === 'video');
    expect(Math.abs((video?.duration ?? 0) - result.duration)).toBeLessThan(0.1);
    expect(await decodeErrors(file)).toBe('');
    // The last frame of the first segment and the first of the second (frame 9000), and one well into it: words on each.
    const frames = await decodeFrames(file, [8999, 9000, 9300], { width: result.width, height: result.height });
    for (const frame of frames) expect(captionPixels(frame, result.width).count).toBeGreaterThan(200);
  }, 300_000);
});

describe('long jobs: cancelled, then asked for again', () => {
  const test = useTestApp({ CACHE_MAX_ENTRIES: '0', SENTENCE_CACHE_MB: '0', API_KEYS: 'key-a,key-b' });
  const as = (key: string) => ({ authorization: `Bearer ${key}` });

  async function submit(key: string, payload: Record<string, unknown>): Promise<string> {
    const response = await test.app.inject({ method: 'POST', url: '/tts', payload, headers: as(key) });
    expect(response.statusCode, response.body).toBe(202);
    return response.json<{ id: string }>().id;
  }

  async function view(key: string, id: string): Promise<JobStatus> {
    const response = await test.app.inject({ method: 'GET', url: `/jobs/${id}`, headers: as(key) });
    expect(response.statusCode, response.body).toBe(200);
    return response.json<JobStatus>();
  }

  /** Every view of the job until it ends, polled every 50 ms. */
  async function follow(key: string, id: string): Promise<JobStatus[]> {
    const seen = [await view(key, id)];
    for (const deadline = Date.now() + 120_000; ['queued', 'running'].includes(seen.at(-1)?.state ?? '') && Date.now() < deadline; ) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      seen.push(await view(key, id));
    }
    return seen;
  }

  const firstDone = (seen: JobStatus[]) => seen.find((current) => current.charactersDone !== undefined)?.charactersDone ?? 0;

  it("continues from what the cancelled run spoke, for the same client only; the file is an uninterrupted run's, byte for byte", async () => {
    // Flite says a sentence the same every time: an uninterrupted run's bytes are known.
    const request = { text: await aliceText(12_000), voice: 'flite:slt', format: 'mp3', async: true };
    const cancelled = await submit('key-a', request);
    let current = await view('key-a', cancelled);
    for (const deadline = Date.now() + 60_000; (current.charactersDone ?? 0) < (current.characters ?? Infinity) / 2 && current.state !== 'succeeded' && Date.now() < deadline; ) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      current = await view('key-a', cancelled);
    }
    expect(current.state).toBe('running');
    const spoken = current.charactersDone as number;
    const stopped = await test.app.inject({ method: 'DELETE', url: `/jobs/${cancelled}`, headers: as('key-a') });
    expect(stopped.json<JobStatus>().state).toBe('cancelled');

    // Another client's same request starts from nothing: the first client's checkpoints are not its.
    const other = await follow('key-b', await submit('key-b', request));
    expect(other.at(-1)?.state).toBe('succeeded');
    expect(firstDone(other)).toBeLessThan(spoken / 2);
    const whole = (await test.fetchFile(other.at(-1)?.result?.url as string)).body;

    // The first client again: its first progress is where the cancelled run was (its sentences read back, not spoken).
    const again = await follow('key-a', await submit('key-a', request));
    expect(again.at(-1)?.state).toBe('succeeded');
    expect(firstDone(again)).toBeGreaterThanOrEqual(spoken);
    const resumed = (await test.fetchFile(again.at(-1)?.result?.url as string)).body;
    expect(resumed.length).toBeGreaterThan(100_000);
    expect(resumed.equals(whole)).toBe(true);
    // Both done: no checkpoint left behind.
    expect((await test.listFiles()).filter((file) => file.startsWith('.checkpoints/') && !file.endsWith('/'))).toEqual([]);
  }, 180_000);
});

describe('long jobs: progress webhooks (webhook_progress)', () => {
  const SECRET = 'a-webhook-secret-for-progress';
  const hooks = useWebhookReceiver();
  const test = useTestApp({ WEBHOOK_SECRET: SECRET, WEBHOOK_ALLOW_PRIVATE: 'true', CACHE_MAX_ENTRIES: '0', SENTENCE_CACHE_MB: '0' });

  it('POSTs job.progress, signed, at each further tenth and in order, then how the job ended; none without asking', async () => {
    const text = await aliceText(8_000);
    const asked = await post(test.app, '/tts', { text, voice: 'flite:slt', webhook_url: hooks.url, webhook_progress: true });
    expect(asked.statusCode, asked.body).toBe(202);
    const { id } = asked.json<{ id: string }>();
    const plain = await post(test.app, '/tts', { text: 'No progress for this one, only its end.', voice: 'flite:slt', webhook_url: hooks.url });
    const { id: plainId } = plain.json<{ id: string }>();
    const deliveries = await hooks.waitFor(11);
    const ofJob = (job: string) => deliveries.filter((delivery) => (JSON.parse(delivery.body) as { job: { id: string } }).job.id === job);
    const events = ofJob(id).map((delivery) => ({ event: delivery.headers['voxreel-event'], body: JSON.parse(delivery.body) as { event: string; job: JobStatus } }));
    expect(events.at(-1)?.event).toBe('job.succeeded');
    const progress = events.filter((event) => event.event === 'job.progress');
    expect(progress.map((event) => event.body.job.progress! - (event.body.job.progress! % 10))).toEqual([10, 20, 30, 40, 50, 60, 70, 80, 90]);
    for (const event of progress) {
      expect(event.body).toMatchObject({ event: 'job.progress', job: { id, state: 'running' } });
      // The characters of its sentences: the spaces and line breaks between them are not spoken.
      expect(event.body.job.characters).toBeGreaterThan(text.length * 0.95);
      expect(event.body.job.characters).toBeLessThanOrEqual(text.length);
      expect(event.body.job.charactersDone).toBeGreaterThan(0);
    }
    for (const delivery of ofJob(id)) expect(verifyWebhookSignature(SECRET, delivery.headers['voxreel-signature'] as string, delivery.body)).toBe(true);
    expect(ofJob(plainId).map((delivery) => delivery.headers['voxreel-event'])).toEqual(['job.succeeded']);
  }, 120_000);
});
