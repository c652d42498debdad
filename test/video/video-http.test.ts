import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { videoCost } from '../../src/jobs/pricing.js';
import type { ErrorBody } from '../../src/api/errors.js';
import type { TtsVideoResponse } from '../../src/api/video.js';
import { useTestApp } from '../helpers/helpers.js';
import { decodeErrors, meanVolume, probe, rawStreams } from '../helpers/media.js';
import { INJECTIONS } from '../helpers/video-helpers.js';

const VOICE = 'espeak-ng:en-us';
const SENTENCE = 'Narrated videos are made here, with captions that follow the voice.';

const t = useTestApp();

function fileOf(url: string): string {
  return path.join(t.outputDir, url.slice(t.config.cdnUrl.length + 1));
}

async function ttsVideo(body: Record<string, unknown>): Promise<TtsVideoResponse> {
  const response = await t.app.inject({ method: 'POST', url: '/tts-video', payload: body });
  expect(response.statusCode, response.body).toBe(200);
  return response.json<TtsVideoResponse>();
}

/** The text of every cue of a WebVTT file, tags dropped and entities decoded. */
function vttText(vtt: string): string {
  return vtt
    .split('\n\n')
    .slice(1)
    .map((block) => block.split('\n').slice(1).join(' '))
    .join(' ')
    .replace(/<\d\d:\d\d:\d\d\.\d{3}>/g, '')
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&amp;/g, '&')
    .trim();
}

describe('POST /tts-video', () => {
  it('answers with the video and its captions, both served, by default 1920×1080 at a constant 30 fps', async () => {
    const result = await ttsVideo({ text: SENTENCE, voice: VOICE });
    expect(result).toMatchObject({ status: 'success', width: 1920, height: 1080, fps: 30, frameRate: 'constant', subtitles: true, voice: VOICE });
    const name = /\/video\/([A-Za-z0-9_-]{22})\.mp4$/.exec(result.url)?.[1];
    expect(result.url).toBe(`${t.config.cdnUrl}/video/${name}.mp4`);
    expect(result.captionsUrl).toBe(`${t.config.cdnUrl}/captions/${name}.vtt`);
    expect(result.cost).toBe(videoCost(t.config.pricing, SENTENCE.length, result.duration));
    expect(result.characters).toBe(SENTENCE.length);

    const info = await probe(fileOf(result.url));
    expect(Math.abs(info.duration - result.duration)).toBeLessThan(0.01);
    expect(result.duration).toBeGreaterThan(2);
    const [video, audio] = await rawStreams(fileOf(result.url));
    expect(video).toMatchObject({ codec_name: 'h264', pix_fmt: 'yuv420p', width: 1920, height: 1080, avg_frame_rate: '30/1' });
    expect(audio).toMatchObject({ codec_name: 'aac' });
    expect(Math.abs(Number(video?.duration) - Number(audio?.duration))).toBeLessThan(0.05);
    expect(await meanVolume(fileOf(result.url))).toBeGreaterThan(-45);

    const served = await t.fetchFile(result.url);
    expect(served.statusCode).toBe(200);
    expect(String(served.headers['content-type'])).toContain('video/mp4');
    expect(served.body.length).toBe(result.bytes);
    const captions = await t.fetchFile(result.captionsUrl);
    expect(captions.statusCode).toBe(200);
    expect(String(captions.headers['content-type'])).toContain('text/vtt');
    expect(vttText(captions.body.toString('utf8'))).toBe(SENTENCE);
  });

  it('keeps markup, escapes and filter syntax in the text literal in the captions file', async () => {
    const text = `Look: ${INJECTIONS.join(' ')}\nThe end.`;
    const result = await ttsVideo({ text, voice: VOICE, resolution: '720p', frame_rate: 'variable' });
    const vtt = await t.fetchFile(result.captionsUrl);
    expect(vttText(vtt.body.toString('utf8'))).toBe(text.replace(/\s+/g, ' '));
  });

  it('makes portrait 720p at a variable rate, 4:5 for Instagram\'s feed, and any text without burned-in captions', async () => {
    const portrait = await ttsVideo({ text: SENTENCE, voice: VOICE, resolution: '720p', aspect_ratio: '9:16', frame_rate: 'variable', fps: 25 });
    expect(portrait).toMatchObject({ width: 720, height: 1280, fps: 25, frameRate: 'variable' });
    const [video] = await rawStreams(fileOf(portrait.url));
    expect(video).toMatchObject({ width: 720, height: 1280 });
    expect(Number(video?.nb_frames)).toBeLessThan(portrait.duration * 25 * 0.5);

    const feed = await ttsVideo({ text: SENTENCE, voice: VOICE, resolution: '720p', aspect_ratio: '4:5' });
    expect(feed).toMatchObject({ width: 576, height: 720 });
    const [feedVideo] = await rawStreams(fileOf(feed.url));
    expect(feedVideo).toMatchObject({ codec_name: 'h264', pix_fmt: 'yuv420p', width: 576, height: 720 });
    expect(await decodeErrors(fileOf(feed.url))).toBe('');

    const plain = await ttsVideo({ text: '你好，世界。Hello world.', voice: VOICE, aspect_ratio: '1:1', subtitles: false });
    expect(plain).toMatchObject({ width: 1080, height: 1080, subtitles: false });
    const vtt = await t.fetchFile(plain.captionsUrl);
    expect(vtt.body.toString('utf8')).toContain('世界');
  });
});

describe('POST /tts-video refusals', () => {
  const text = 'Hi there.';
  const cases: Array<{ name: string; body: Record<string, unknown>; status: number; code: string; field?: string }> = [
    { name: 'missing text', body: { voice: VOICE }, status: 400, code: 'VALIDATION_ERROR', field: 'text' },
    { name: 'blank text', body: { text: ' \n ', voice: VOICE }, status: 400, code: 'VALIDATION_ERROR', field: 'text' },
    { name: 'text over 5000', body: { text: 'a '.repeat(2501), voice: VOICE }, status: 400, code: 'VALIDATION_ERROR', field: 'text' },
    { name: 'missing voice', body: { text }, status: 400, code: 'VALIDATION_ERROR', field: 'voice' },
    { name: 'unknown voice', body: { text, voice: 'espeak-ng:klingon' }, status: 400, code: 'UNKNOWN_VOICE', field: 'voice' },
    { name: 'unknown resolution', body: { text, voice: VOICE, resolution: '4k' }, status: 400, code: 'VALIDATION_ERROR', field: 'resolution' },
    { name: 'unknown aspect ratio', body: { text, voice: VOICE, aspect_ratio: '4:3' }, status: 400, code: 'VALIDATION_ERROR', field: 'aspect_ratio' },
    { name: '4:5 upside down', body: { text, voice: VOICE, aspect_ratio: '5:4' }, status: 400, code: 'VALIDATION_ERROR', field: 'aspect_ratio' },
    { name: 'subtitles as a string', body: { text, voice: VOICE, subtitles: 'yes' }, status: 400, code: 'VALIDATION_ERROR', field: 'subtitles' },
    { name: 'fps too high', body: { text, voice: VOICE, fps: 120 }, status: 400, code: 'VALIDATION_ERROR', field: 'fps' },
    { name: 'fps not whole', body: { text, voice: VOICE, fps: 29.97 }, status: 400, code: 'VALIDATION_ERROR', field: 'fps' },
    { name: 'unknown frame rate mode', body: { text, voice: VOICE, frame_rate: 'vfr' }, status: 400, code: 'VALIDATION_ERROR', field: 'frame_rate' },
    { name: 'unknown field', body: { text, voice: VOICE, backdrop: 'red' }, status: 400, code: 'VALIDATION_ERROR', field: 'backdrop' },
    { name: 'Ethiopic, which no shipped font draws', body: { text: 'ሰላም ዓለም', voice: VOICE }, status: 422, code: 'UNSUPPORTED_TEXT', field: 'text' },
    { name: 'only emoji, nothing to speak', body: { text: '🚀 🔥👍', voice: VOICE }, status: 422, code: 'UNSUPPORTED_TEXT', field: 'text' },
  ];

  it.each(cases)('$name → $status $code, and no file', async ({ body, status, code, field }) => {
    const before = await t.listFiles();
    const response = await t.app.inject({ method: 'POST', url: '/tts-video', payload: body });
    expect(response.statusCode, response.body).toBe(status);
    const error = response.json<ErrorBody>().error;
    expect(error.code).toBe(code);
    if (field) expect(error.field).toBe(field);
    expect(await t.listFiles()).toEqual(before);
  });
});
