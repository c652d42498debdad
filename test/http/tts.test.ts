import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { TtsResponse } from '../../src/api/speech.js';
import type { VoiceList } from '../../src/api/voices.js';
import { buildTestApp, postTts, useTestApp } from '../helpers/helpers.js';
import { meanVolume, probe, runFfmpeg } from '../helpers/media.js';

const SENTENCE = 'The quick brown fox jumps over the lazy dog, then rests in the warm afternoon sun.';
const VOICE = 'espeak-ng:en-us';

const t = useTestApp();

const tts = (body: Record<string, unknown>) => postTts(t.app, body);

function fileOf(url: string): string {
  const relative = url.slice(t.config.cdnUrl.length + 1);
  return path.join(t.outputDir, relative);
}

describe('POST /tts formats', () => {
  const cases = [
    { format: 'mp3', formatName: 'mp3', codec: 'mp3', contentType: 'audio/mpeg' },
    { format: 'wav', formatName: 'wav', codec: 'pcm_s16le', contentType: 'audio/wav' },
    { format: 'ogg', formatName: 'ogg', codec: 'vorbis', contentType: 'audio/ogg' },
  ] as const;

  for (const expected of cases) {
    it(`writes a real ${expected.format} file at its URL`, async () => {
      const result = await tts({ text: SENTENCE, voice: VOICE, format: expected.format });
      expect(result.status).toBe('success');
      expect(result.url).toMatch(new RegExp(`^${t.config.cdnUrl}/audio/[A-Za-z0-9_-]{22}\\.${expected.format}$`));
      expect(result.cost).toBeCloseTo((SENTENCE.length / 1000) * 0.015, 6);
      expect(result.currency).toBe('USD');

      const info = await probe(fileOf(result.url));
      expect(info.formatName).toBe(expected.formatName);
      expect(info.streams).toHaveLength(1);
      expect(info.streams[0]?.codecName).toBe(expected.codec);
      expect(Math.abs(info.duration - result.duration)).toBeLessThan(0.05);
      expect(result.duration).toBeGreaterThan(2);
      expect(result.duration).toBeLessThan(10);
      expect(await meanVolume(fileOf(result.url))).toBeGreaterThan(-45);

      const served = await t.fetchFile(result.url);
      expect(served.statusCode).toBe(200);
      expect(String(served.headers['content-type'])).toContain(expected.contentType);
      expect(served.body.length).toBe(result.bytes);
    });
  }

  it('defaults to mp3 and answers range requests', async () => {
    const result = await tts({ text: 'Hello there.', voice: VOICE });
    expect(result.format).toBe('mp3');
    expect(result.url.endsWith('.mp3')).toBe(true);
    const ranged = await t.app.inject({ method: 'GET', url: new URL(result.url).pathname, headers: { range: 'bytes=0-99' } });
    expect(ranged.statusCode).toBe(206);
    expect(ranged.rawPayload.length).toBe(100);
    expect(ranged.headers['content-range']).toBe(`bytes 0-99/${result.bytes}`);
  });
});

describe('POST /tts speed', () => {
  it('scales the duration by about 1/speed', async () => {
    const [normal, slow, fast] = await Promise.all(
      [1, 0.5, 2].map((speed) => tts({ text: SENTENCE, voice: VOICE, format: 'wav', speed })),
    );
    expect(slow!.duration / normal!.duration).toBeCloseTo(2, 1);
    expect(fast!.duration / normal!.duration).toBeCloseTo(0.5, 1);
    expect(await meanVolume(fileOf(slow!.url))).toBeGreaterThan(-45);
    expect(await meanVolume(fileOf(fast!.url))).toBeGreaterThan(-45);
  });
});

describe('POST /tts long text', () => {
  it('splits at sentences and joins them with no long gaps', async () => {
    const text = Array.from({ length: 12 }, (_, i) => `This is sentence number ${i + 1}, spoken in one go.`).join(' ');
    const result = await tts({ text, voice: VOICE, format: 'wav' });
    expect(result.duration).toBeGreaterThan(20);
    const { stderr } = await runFfmpeg(['-hide_banner', '-i', fileOf(result.url), '-af', 'silencedetect=noise=-50dB:d=0.6', '-f', 'null', '-']);
    expect(stderr).not.toContain('silence_duration');
  });

  it('accepts the full 5000 characters', async () => {
    const text = 'Speech synthesis turns text into sound. '.repeat(125);
    expect(text.length).toBe(5000);
    const result = await tts({ text, voice: VOICE });
    expect(result.characters).toBe(5000);
    expect(result.duration).toBeGreaterThan(200);
  });
});

describe('every engine', () => {
  it('synthesizes with the first voice of each engine', async () => {
    const { voices } = (await t.app.inject({ method: 'GET', url: '/voices' })).json<VoiceList>();
    const engines = [...new Set(voices.map((voice) => voice.engine))];
    expect(engines).toEqual(expect.arrayContaining(['espeak-ng', 'flite']));
    for (const engine of engines) {
      const voice = voices.find((candidate) => candidate.engine === engine && candidate.language.startsWith('en'));
      expect(voice, engine).toBeDefined();
      const result = await tts({ text: SENTENCE, voice: voice!.id, format: 'wav' });
      const info = await probe(fileOf(result.url));
      expect(info.streams[0]?.sampleRate).toBe(voice!.sampleRate);
      expect(result.duration).toBeGreaterThan(2);
      expect(await meanVolume(fileOf(result.url))).toBeGreaterThan(-45);
    }
  });
});

describe('CDN_URL on another host', () => {
  it('builds URLs on that host and still writes under OUTPUT_DIR', async () => {
    const external = await buildTestApp({ CDN_URL: 'https://cdn.example.com/voxreel/' }, { engines: t.app.engines });
    try {
      const response = await external.app.inject({ method: 'POST', url: '/tts', payload: { text: 'Hello.', voice: VOICE } });
      const result = response.json<TtsResponse>();
      expect(result.url).toMatch(/^https:\/\/cdn\.example\.com\/voxreel\/audio\/[A-Za-z0-9_-]{22}\.mp3$/);
      expect(await external.listFiles()).toEqual([result.url.replace('https://cdn.example.com/voxreel/', '')]);
    } finally {
      await external.close();
    }
  });
});
