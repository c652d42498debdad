import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import { describe, expect, it } from 'vitest';
import { aliceText } from '../helpers/fixtures.js';
import { useTestApp } from '../helpers/helpers.js';
import { probe } from '../helpers/media.js';
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
