import { readdir, rm, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { ErrorBody } from '../../src/api/errors.js';
import type { VoiceList } from '../../src/api/voices.js';
import { previewText } from '../../src/speech/voice-previews.js';
import { useTestApp } from '../helpers/helpers.js';
import { meanVolume, probe, runFfmpeg } from '../helpers/media.js';
import { useTempDir } from '../helpers/temp-dir.js';

const t = useTestApp();
const scratch = useTempDir('voxreel-preview-');

const previewPath = (id: string) => `/voices/${encodeURIComponent(id)}/preview`;
const previewsDir = () => path.join(t.outputDir, 'previews');

/** Synthesis jobs run so far: each preview made is one, each preview served from the disk none. */
async function jobsRun(): Promise<number> {
  const { values } = await t.app.metrics.jobDuration.get();
  return values.filter((value) => value.metricName === 'voxreel_job_duration_seconds_count').reduce((sum, value) => sum + value.value, 0);
}

async function previewFiles(): Promise<string[]> {
  return (await readdir(previewsDir())).filter((name) => name.endsWith('.mp3')).sort();
}

async function getPreview(id: string, headers: Record<string, string> = {}) {
  return t.app.inject({ method: 'GET', url: previewPath(id), headers });
}

describe('GET /voices/{id}/preview', () => {
  it('is a real MP3 of the voice, made on the first request and then served from the disk', async () => {
    const before = await jobsRun();
    const first = await getPreview('espeak-ng:en-us');
    expect(first.statusCode, first.body).toBe(200);
    expect(first.headers['content-type']).toBe('audio/mpeg');
    expect(first.headers['cache-control']).toMatch(/max-age=2592000/);
    expect(first.headers.etag).toBeTruthy();
    expect(await jobsRun()).toBe(before + 1);

    const file = path.join(scratch, 'en-us.mp3');
    await writeFile(file, first.rawPayload);
    const info = await probe(file);
    expect(info.formatName).toBe('mp3');
    expect(info.streams[0]?.codecName).toBe('mp3');
    expect(info.duration).toBeGreaterThan(1);
    expect(info.duration).toBeLessThan(10);
    const decoded = await runFfmpeg(['-v', 'error', '-i', file, '-f', 'null', '-']);
    expect(decoded.stderr.toString().trim()).toBe('');
    expect(await meanVolume(file)).toBeGreaterThan(-40);

    const [name] = await previewFiles();
    expect(name).toBeDefined();
    const made = await stat(path.join(previewsDir(), name as string));
    const second = await getPreview('espeak-ng:en-us');
    expect(second.statusCode).toBe(200);
    expect(second.rawPayload.equals(first.rawPayload)).toBe(true);
    expect(second.headers.etag).toBe(first.headers.etag);
    expect(await jobsRun()).toBe(before + 1);
    expect((await stat(path.join(previewsDir(), name as string))).mtimeMs).toBe(made.mtimeMs);

    const revalidated = await getPreview('espeak-ng:en-us', { 'if-none-match': String(first.headers.etag) });
    expect(revalidated.statusCode).toBe(304);
    expect(revalidated.rawPayload.length).toBe(0);
  });

  it('makes a voice preview once however many ask for it at once', async () => {
    const before = await jobsRun();
    const filesBefore = await previewFiles();
    const answers = await Promise.all(Array.from({ length: 5 }, () => getPreview('espeak-ng:fr')));
    for (const answer of answers) {
      expect(answer.statusCode, answer.body).toBe(200);
      expect(answer.rawPayload.equals(answers[0]?.rawPayload as Buffer)).toBe(true);
    }
    expect(await jobsRun()).toBe(before + 1);
    expect((await previewFiles()).length).toBe(filesBefore.length + 1);
    expect(await readdir(path.join(previewsDir(), '.tmp'))).toEqual([]);
  });

  it('knows ids however they are written, as the other routes do', async () => {
    await getPreview('espeak-ng:en-us');
    const before = await jobsRun();
    const answer = await getPreview('ESPEAK-NG:EN-US');
    expect(answer.statusCode).toBe(200);
    expect(await jobsRun()).toBe(before);
  });

  it('is kept by the retention sweep, and made again if it is deleted all the same', async () => {
    await getPreview('espeak-ng:en-us');
    const files = await previewFiles();
    await t.app.storage.sweep(0);
    expect(await previewFiles()).toEqual(files);

    await Promise.all(files.map((name) => rm(path.join(previewsDir(), name))));
    const before = await jobsRun();
    const answer = await getPreview('espeak-ng:en-us');
    expect(answer.statusCode).toBe(200);
    expect(await jobsRun()).toBe(before + 1);
  });

  it('is never served under /files', async () => {
    await getPreview('espeak-ng:en-us');
    const [name] = await previewFiles();
    const answer = await t.app.inject({ method: 'GET', url: `/files/previews/${name}` });
    expect(answer.statusCode).toBe(404);
  });

  it('answers 404 in the documented body for an unknown voice', async () => {
    for (const id of ['nobody:none', 'espeak-ng:xx-none', 'piper']) {
      const answer = await getPreview(id);
      expect(answer.statusCode).toBe(404);
      const body = answer.json<ErrorBody>();
      expect(body).toMatchObject({ status: 'error', error: { code: 'NOT_FOUND' } });
      expect(body.error.message).toContain(id);
      expect(answer.headers['x-request-id']).toBe(body.error.requestId);
    }
  });
});

describe('preview_url in GET /voices', () => {
  it('is absolute, on the host the request came to, for every voice', async () => {
    const response = await t.app.inject({ method: 'GET', url: '/voices', headers: { host: 'voxreel.example:8080' } });
    const { voices } = response.json<VoiceList>();
    expect(voices.length).toBeGreaterThan(100);
    for (const voice of voices) {
      const url = new URL(voice.preview_url);
      expect(url.origin).toBe('http://voxreel.example:8080');
      expect(url.pathname).toBe(previewPath(voice.id));
    }
    expect(voices.find((voice) => voice.id === 'espeak-ng:en-us')?.preview_url).toBe('http://voxreel.example:8080/voices/espeak-ng%3Aen-us/preview');
  });

  it('leads to the preview', async () => {
    const { voices } = (await t.app.inject({ method: 'GET', url: '/voices?language=en-US' })).json<VoiceList>();
    const voice = voices.find((candidate) => candidate.id === 'flite:slt');
    expect(voice).toBeDefined();
    const answer = await t.app.inject({ method: 'GET', url: new URL(voice?.preview_url as string).pathname });
    expect(answer.statusCode).toBe(200);
    expect(answer.headers['content-type']).toBe('audio/mpeg');
  });
});

describe('the preview sentence', () => {
  it('is English for English voices, the language itself where it is known, else the language name or English', () => {
    const english = previewText('en');
    expect(english).toMatch(/^Hello/);
    expect(previewText('en-US')).toBe(english);
    expect(previewText('en-GB-scotland')).toBe(english);
    expect(previewText('fr-FR')).toBe('Bonjour, voici ma voix.');
    expect(previewText('pt-BR')).toBe('Olá, esta é a minha voz.');
    expect(previewText('cmn')).toBe('你好，这是我的声音。');
    expect(previewText('cmn-Latn-pinyin')).toMatch(/^Ni hao/);
    expect(previewText('zh-CN')).toBe('你好，这是我的声音。');
    expect(previewText('zh-Latn-CN-pinyin')).toMatch(/^Ni hao/);
    expect(previewText('zh-HK')).toBe('你好，呢個係我嘅聲音。');
    expect(previewText('ka')).toBe('ქართული.');
    expect(previewText('qqq')).toBe(english);
  });
});
