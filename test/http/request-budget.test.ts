// Issue 36, findings 2, 3, 6 and 9: a budget per request, counted where the cost is made. Breaks, lexicon aliases,
// a low disk and a render's scratch refused before the work that would spend them, on every front door.
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { ElevenLabsClient, ElevenLabsError } from '@elevenlabs/elevenlabs-js';
import OpenAI from 'openai';
import { beforeAll, describe, expect, it } from 'vitest';
import type { AssetResponse } from '../../src/api/assets.js';
import type { ErrorBody } from '../../src/api/errors.js';
import { buildTestApp, multipartForm, useTestApp, type TestApp } from '../helpers/helpers.js';
import { runFfmpeg } from '../helpers/media.js';
import { useTempDir } from '../helpers/temp-dir.js';

const VOICE = 'espeak-ng:en-us';
/** `count` ten-second breaks, each before a word: 10 × count seconds of silence in a short text. */
/** The folders work takes in scratch space (the shared ones, such as `bin`, stay for the process's life). */
const workFolders = async (dir: string) => (await readdir(dir)).filter((name) => /^(video|audio)-/.test(name));
const breaks = (count: number) => `<speak>${'Hi. <break time="10s"/>'.repeat(count)}Bye.</speak>`;
/** The refusals must come before any speech is made: espeak-ng says these texts in well under this, the breaks are not said at all. */
const FAST_MS = 2000;

const t = useTestApp();
const dir = useTempDir('voxreel-budget-');

async function listen(app: TestApp): Promise<string> {
  await app.app.listen({ port: 0, host: '127.0.0.1' });
  const { port } = app.app.server.address() as { port: number };
  return `http://127.0.0.1:${port}`;
}

async function timed<T>(work: () => Promise<T>): Promise<{ result: T; ms: number }> {
  const started = performance.now();
  const result = await work();
  return { result, ms: performance.now() - started };
}

function refusal(response: { statusCode: number; body: string; json: <T>() => T }, status: number, code: string): ErrorBody['error'] {
  expect(response.statusCode, response.body).toBe(status);
  const { error } = response.json<ErrorBody>();
  expect(error.code).toBe(code);
  return error;
}

describe('the seconds of every break count before anything is spoken', () => {
  let baseUrl: string;
  beforeAll(async () => {
    baseUrl = await listen(t);
  });

  it('/tts: 120 ten-second breaks (1,200 s, MAX_AUDIO_SECONDS 600) refused 422 at once, nothing published', async () => {
    const { result, ms } = await timed(() => t.app.inject({ method: 'POST', url: '/tts', payload: { text: breaks(120), voice: VOICE, format: 'wav' } }));
    const error = refusal(result, 422, 'OUTPUT_TOO_LONG');
    expect(error.message).toContain('MAX_AUDIO_SECONDS');
    expect(ms).toBeLessThan(FAST_MS);
    expect((await t.listFiles()).filter((name) => name.startsWith('audio/'))).toEqual([]);
  });

  it('/tts async: refused before the job is queued', async () => {
    const response = await t.app.inject({ method: 'POST', url: '/tts', payload: { text: breaks(120), voice: VOICE, async: true } });
    expect(refusal(response, 422, 'OUTPUT_TOO_LONG').message).toContain('MAX_AUDIO_SECONDS');
  });

  it('/v1/audio/speech, pcm at speed 0.25 through the OpenAI SDK: 422 naming MAX_AUDIO_SECONDS, no audio', async () => {
    const client = new OpenAI({ baseURL: `${baseUrl}/v1`, apiKey: 'anything', maxRetries: 0 });
    const started = performance.now();
    const failure = await client.audio.speech.create({ model: 'tts-1', voice: VOICE, input: breaks(40), response_format: 'pcm', speed: 0.25 }).then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(performance.now() - started).toBeLessThan(FAST_MS);
    expect(failure).toBeInstanceOf(OpenAI.APIError);
    expect((failure as InstanceType<typeof OpenAI.APIError>).status).toBe(422);
    expect((failure as InstanceType<typeof OpenAI.APIError>).message).toContain('MAX_AUDIO_SECONDS');
  });

  it('/v1/text-to-speech (ElevenLabs SDK): breaks past MAX_AUDIO_SECONDS refused 422', async () => {
    const client = new ElevenLabsClient({ baseUrl, apiKey: 'anything', maxRetries: 0 });
    const started = performance.now();
    const failure = await client.textToSpeech.convert(VOICE, { text: breaks(120), outputFormat: 'pcm_16000' }).then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(performance.now() - started).toBeLessThan(FAST_MS);
    expect(failure).toBeInstanceOf(ElevenLabsError);
    expect((failure as ElevenLabsError).statusCode).toBe(422);
    expect(JSON.stringify((failure as ElevenLabsError).body)).toContain('MAX_AUDIO_SECONDS');
  });

  it('/tts-video: 60 ten-second breaks (600 s, MAX_VIDEO_SECONDS 300) refused 422 at once', async () => {
    const { result, ms } = await timed(() => t.app.inject({ method: 'POST', url: '/tts-video', payload: { text: breaks(60), voice: VOICE, resolution: '720p' } }));
    expect(refusal(result, 422, 'OUTPUT_TOO_LONG').message).toContain('MAX_VIDEO_SECONDS');
    expect(ms).toBeLessThan(FAST_MS);
  });

  it('lets breaks within the limit through, and the file holds them', async () => {
    const response = await t.app.inject({ method: 'POST', url: '/tts', payload: { text: breaks(3), voice: VOICE, format: 'wav' } });
    expect(response.statusCode, response.body).toBe(200);
    expect(response.json<{ duration: number }>().duration).toBeGreaterThan(30);
  });
});

describe('the spoken length counts after lexicon aliases', () => {
  it('a lexeme `a` → 100 × `b` over "a " × 2400 (480,000 characters spoken) refused 422 at once, naming MAX_SPOKEN_CHARACTERS', async () => {
    const pls =
      '<?xml version="1.0"?><lexicon version="1.0" xmlns="http://www.w3.org/2005/01/pronunciation-lexicon" alphabet="ipa" xml:lang="en-US">' +
      `<lexeme><grapheme>a</grapheme><alias>${'b '.repeat(100).trim()}</alias></lexeme></lexicon>`;
    const uploaded = await t.app.inject({ method: 'POST', url: '/lexicons', payload: pls, headers: { 'content-type': 'application/pls+xml' } });
    expect(uploaded.statusCode, uploaded.body).toBe(201);
    const { id } = uploaded.json<{ id: string }>();
    for (const url of ['/tts', '/tts-video']) {
      const { result, ms } = await timed(() => t.app.inject({ method: 'POST', url, payload: { text: 'a '.repeat(2400), voice: VOICE, lexicons: [id] } }));
      expect(refusal(result, 422, 'OUTPUT_TOO_LONG').message).toContain('MAX_SPOKEN_CHARACTERS');
      expect(ms).toBeLessThan(FAST_MS);
    }
  });

  it('a long <sub alias> (300 words, sentences in it) is spoken on Piper as its text is: the same seconds, billed by what is written', async () => {
    const list = ['one', 'two', 'six', 'ten', 'red', 'cat', 'dog', 'sun', 'box', 'pen', 'cup', 'hat', 'map'];
    const words = Array.from({ length: 300 }, (_, i) => `${list[(i * 7 + (i >> 3)) % list.length]}${i % 12 === 11 ? '.' : ''}`).join(' ');
    const say = (text: string) => t.app.inject({ method: 'POST', url: '/tts', payload: { text, voice: 'piper:en_US-joe-medium', format: 'wav' } });
    const [plain, alias] = [await say(`Start. ${words} End.`), await say(`<speak>Start. <sub alias="${words}">X</sub> End.</speak>`)];
    expect(plain.statusCode, plain.body).toBe(200);
    expect(alias.statusCode, alias.body).toBe(200);
    const [plainBody, aliasBody] = [plain.json<{ duration: number; characters: number }>(), alias.json<{ duration: number; characters: number }>()];
    expect(aliasBody.duration).toBeGreaterThan(60);
    expect(Math.abs(aliasBody.duration / plainBody.duration - 1)).toBeLessThan(0.05);
    expect(aliasBody.characters).toBe('Start. X End.'.length);
  });
});

describe('disk checked before every generated file', () => {
  it('MIN_FREE_DISK_MB above what is free: /tts and /tts-video answer 503 STORAGE_FULL with Retry-After, no file anywhere', async () => {
    const low = await buildTestApp({ MIN_FREE_DISK_MB: String(1024 * 1024 * 1024) }, { engines: t.app.engines });
    try {
      for (const [url, payload] of [
        ['/tts', { text: 'Hello there.', voice: VOICE }],
        ['/tts-video', { text: 'Hello there.', voice: VOICE, resolution: '720p' }],
      ] as const) {
        const response = await low.app.inject({ method: 'POST', url, payload });
        refusal(response, 503, 'STORAGE_FULL');
        expect(Number(response.headers['retry-after'])).toBeGreaterThan(0);
      }
      expect(await low.listFiles()).toEqual([]);
      expect(await workFolders(low.app.scratch.dir)).toEqual([]);
    } finally {
      await low.close();
    }
  });
});

describe('a render bounded by JOB_SCRATCH_MB', () => {
  it('a video whose encoded picture and soundtrack alone pass the bound (about 2 MB a second at 1080p): refused before they are encoded', async () => {
    const small = await buildTestApp({ JOB_SCRATCH_MB: '1' }, { engines: t.app.engines });
    try {
      const response = await small.app.inject({ method: 'POST', url: '/tts-video', payload: { text: 'Hello there.', voice: VOICE, resolution: '1080p' } });
      const { message } = refusal(response, 422, 'RENDER_TOO_LARGE');
      expect(message).toContain('JOB_SCRATCH_MB');
      expect(message).toContain('the encoded picture and soundtrack');
      expect((await small.listFiles()).filter((name) => !name.startsWith('.assets'))).toEqual([]);
      expect(await workFolders(small.app.scratch.dir)).toEqual([]);
    } finally {
      await small.close();
    }
  });

  it('an image background whose raw frame passes the bound: 422 RENDER_TOO_LARGE naming it, no scratch, no file', async () => {
    // Room for the encoded picture of a short 1080p video, not for its raw 1080p frame (3 MB) as well.
    const small = await buildTestApp({ JOB_SCRATCH_MB: '4' }, { engines: t.app.engines });
    try {
      const picture = path.join(dir, 'picture.png');
      await runFfmpeg(['-v', 'error', '-f', 'lavfi', '-i', 'testsrc=size=320x240', '-frames:v', '1', picture]);
      const form = multipartForm([{ name: 'file', filename: 'picture.png', content: await readFile(picture) }]);
      const asset = await small.app.inject({ method: 'POST', url: '/assets', payload: form.payload, headers: form.headers });
      expect(asset.statusCode, asset.body).toBe(201);
      const image = asset.json<AssetResponse>().id;
      const response = await small.app.inject({ method: 'POST', url: '/tts-video', payload: { text: 'Hello there.', voice: VOICE, resolution: '1080p', background: { image } } });
      const { message } = refusal(response, 422, 'RENDER_TOO_LARGE');
      expect(message).toContain('JOB_SCRATCH_MB');
      expect(message).toContain('the image background');
      expect((await small.listFiles()).filter((name) => !name.startsWith('.assets'))).toEqual([]);
      expect(await workFolders(small.app.scratch.dir)).toEqual([]);
    } finally {
      await small.close();
    }
  });
});
