import { existsSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import type { TtsResponse, WordTimestamp } from '../../src/api/speech.js';
import { runProcess } from '../../src/media/process.js';
import { chaptersText, markdownChapters } from '../../src/speech/chapters.js';
import { plainScript } from '../../src/speech/script.js';
import { postTts, uploadAsset, useTestApp } from '../helpers/helpers.js';
import { decodeErrors, ffmpeg, runFfmpeg } from '../helpers/media.js';
import { useTempDir } from '../helpers/temp-dir.js';

const VOICE = 'piper:en_US-joe-medium';
const installed = existsSync(fileURLToPath(new URL('../../voices/en_US-joe-medium.onnx', import.meta.url)));

const TEXT = [
  '# The Harbour',
  'The fog lifted over the harbour at dawn, and the boats went out one by one.',
  '## The Lighthouse ##',
  'An old keeper climbed the stairs every night to light the lamp.',
  '## Home Again',
  'By evening the boats came back, full of fish, and the town came down to meet them.',
].join('\n\n');
const TITLES = ['The Harbour', 'The Lighthouse', 'Home Again'];

interface ProbedChapter {
  start_time: string;
  end_time: string;
  tags?: { title?: string };
}

async function probeJson(file: string): Promise<{ chapters: ProbedChapter[]; format: { duration: string; tags?: Record<string, string> }; streams: Array<{ codec_type: string; codec_name: string; sample_rate?: string; disposition?: { attached_pic?: number } }> }> {
  const { stdout } = await runProcess(ffmpeg.tools.ffprobe, ['-v', 'error', '-print_format', 'json', '-show_chapters', '-show_format', '-show_streams', file], { timeoutMs: 30_000 });
  return JSON.parse(stdout.toString('utf8'));
}

/** The file decoded to mono 16-bit samples at `rate`. */
async function decoded(file: string, rate: number): Promise<Int16Array> {
  const { stdout } = await runFfmpeg(['-v', 'error', '-i', file, '-map', '0:a:0', '-ac', '1', '-ar', String(rate), '-f', 's16le', '-']);
  return new Int16Array(stdout.buffer, stdout.byteOffset, stdout.byteLength / 2);
}

function rmsOf(samples: Int16Array, rate: number, from: number, to: number): number {
  const piece = samples.subarray(Math.max(0, Math.round(from * rate)), Math.round(to * rate));
  return piece.length ? Math.sqrt(piece.reduce((sum, value) => sum + value * value, 0) / piece.length) / 32768 : 0;
}

/** The first 5 ms block from `from` on whose level is over `threshold`: where sound starts again after a pause. */
function onsetAfter(samples: Int16Array, rate: number, from: number, threshold: number): number {
  const block = Math.round(rate * 0.005);
  for (let at = Math.round(from * rate); at + block <= samples.length; at += block) {
    if (rmsOf(samples, rate, at / rate, (at + block) / rate) > threshold) return at / rate;
  }
  return Infinity;
}

/** The first word of each chapter's title, as the timestamps give it. */
function titleWords(answer: TtsResponse): WordTimestamp[] {
  const written = markdownChapters(TEXT)?.text ?? '';
  return TITLES.map((title) => answer.words?.find((word) => word.text_offset === written.indexOf(title)) as WordTimestamp);
}

describe('chapters of a text', () => {
  it('reads Markdown headings as chapters: their markup left out of the written text, each title said alone after a pause', () => {
    const script = plainScript(`Before it all.\n\n${TEXT}`);
    expect(script.text).not.toContain('#');
    expect(script.chapters?.map((chapter) => chapter.title)).toEqual(TITLES);
    for (const chapter of script.chapters ?? []) expect(script.text.slice(chapter.offset, chapter.offset + chapter.title.length)).toBe(chapter.title);
    const titles = script.utterances.filter((utterance) => TITLES.includes(utterance.span.text));
    expect(titles).toHaveLength(3);
    for (const title of titles) expect(title.pauseBefore).toBe(1.5);
    // A hashtag and a heading without its space are words, not chapters.
    expect(plainScript('#voxreel is here.\n#Not a heading').chapters).toBeUndefined();
    expect(chaptersText([{ title: 'One\ntwo', text: ' Text. ' }])).toBe('# One two\n\nText.');
  });
});

describe.runIf(installed)('chapters in the file', () => {
  const t = useTestApp();
  const dir = useTempDir('voxreel-chapters-');

  it('m4b: AAC in MP4 whose chapter atoms ffprobe lists with their titles, each starting where its title\'s first word does', async () => {
    const answer = await postTts(t.app, { text: TEXT, voice: VOICE, format: 'm4b', timestamps: true });
    expect(answer.url).toMatch(/\/audio\/[\w-]+\.m4b$/);
    const { body, headers } = await t.fetchFile(answer.url);
    expect(headers['content-type']).toBe('audio/mp4');
    const file = path.join(dir, 'book.m4b');
    await writeFile(file, body);
    expect(body.toString('latin1', 8, 12)).toBe('M4B ');
    const probed = await probeJson(file);
    expect(probed.streams.map((stream) => stream.codec_name)).toContain('aac');
    expect(probed.chapters.map((chapter) => chapter.tags?.title)).toEqual(TITLES);
    expect(answer.chapters?.map((chapter) => chapter.title)).toEqual(TITLES);
    const rate = Number(probed.streams.find((stream) => stream.codec_type === 'audio')?.sample_rate);
    const frame = 1024 / rate;
    const words = titleWords(answer);
    const samples = await decoded(file, rate);
    answer.chapters?.forEach((chapter, index) => {
      const probedStart = Number(probed.chapters[index]?.start_time);
      expect(Math.abs(probedStart - chapter.start)).toBeLessThanOrEqual(0.001);
      if (index === 0) return expect(chapter.start).toBe(0);
      // Where its title's first word starts, by the timestamps of the same answer...
      expect(chapter.start).toBe(words[index]?.start);
      // ...and by the sound: silence before it (the pause), and the voice back within one AAC frame of it.
      expect(rmsOf(samples, rate, chapter.start - 0.6, chapter.start - frame)).toBeLessThan(0.003);
      expect(Math.abs(onsetAfter(samples, rate, chapter.start - 0.6, 0.01) - chapter.start)).toBeLessThanOrEqual(frame);
      expect(answer.chapters?.[index - 1]?.end).toBe(chapter.start);
    });
    expect(answer.chapters?.at(-1)?.end).toBeCloseTo(answer.duration, 2);
    expect(Number(probed.format.duration)).toBeCloseTo(answer.duration, 1);
    expect(await decodeErrors(file)).toBe('');
  });

  it('publishes the chapters as WebVTT, and the whole text\'s captions beside them', async () => {
    const answer = await postTts(t.app, { text: TEXT, voice: VOICE, format: 'wav' });
    expect(answer.chaptersUrl).toMatch(/\/captions\/[\w-]+\.chapters\.vtt$/);
    expect(answer.captionsUrl).toMatch(/\/captions\/[\w-]+\.vtt$/);
    // Every word only when asked for (a book's are tens of thousands).
    expect(answer.words).toBeUndefined();
    const vtt = (await t.fetchFile(answer.chaptersUrl as string)).body.toString('utf8');
    const cues = [...vtt.matchAll(/(\d\d:\d\d:\d\d\.\d{3}) --> (\d\d:\d\d:\d\d\.\d{3})\n(.+)/g)].map((match) => match[3]);
    expect(vtt.startsWith('WEBVTT')).toBe(true);
    expect(cues).toEqual(TITLES);
    const captions = (await t.fetchFile(answer.captionsUrl as string)).body.toString('utf8');
    expect(captions).toContain('Lighthouse');
    expect(captions).not.toContain('#');
    // Billed without the headings' markup.
    expect(answer.characters).toBe(markdownChapters(TEXT)?.text.length);
  });

  it('mp3: ID3 CHAP and CTOC frames, the title and the cover, the audio as before', async () => {
    const cover = path.join(dir, 'cover.png');
    await runFfmpeg(['-v', 'error', '-f', 'lavfi', '-i', 'color=c=0x3060a0:s=320x320', '-frames:v', '1', cover]);
    const coverId = await uploadAsset(t.app, cover);
    const answer = await postTts(t.app, { chapters: TITLES.map((title, index) => ({ title, text: `This is part ${index + 1} of the story.` })), voice: VOICE, title: 'Harbour Tales', cover: coverId });
    const file = path.join(dir, 'book.mp3');
    await writeFile(file, (await t.fetchFile(answer.url)).body);
    const probed = await probeJson(file);
    expect(probed.chapters.map((chapter) => chapter.tags?.title)).toEqual(TITLES);
    probed.chapters.forEach((chapter, index) => expect(Number(chapter.start_time)).toBeCloseTo(answer.chapters?.[index]?.start ?? -1, 3));
    expect(probed.format.tags?.title).toBe('Harbour Tales');
    expect(probed.streams.find((stream) => stream.codec_type === 'video')?.disposition?.attached_pic).toBe(1);
    expect(Number(probed.format.duration)).toBeCloseTo(answer.duration, 1);
    expect(await decodeErrors(file)).toBe('');
  });

  it('m4b: the title and the cover as MP4 tags', async () => {
    const cover = path.join(dir, 'cover.jpg');
    await runFfmpeg(['-v', 'error', '-f', 'lavfi', '-i', 'color=c=0xa03060:s=320x320', '-frames:v', '1', cover]);
    const m4b = await postTts(t.app, { text: TEXT, voice: VOICE, format: 'm4b', title: 'Harbour Tales', cover: await uploadAsset(t.app, cover) });
    const m4bFile = path.join(dir, 'tagged.m4b');
    await writeFile(m4bFile, (await t.fetchFile(m4b.url)).body);
    const probed = await probeJson(m4bFile);
    expect(probed.format.tags?.title).toBe('Harbour Tales');
    expect(probed.streams.find((stream) => stream.codec_type === 'video')?.disposition?.attached_pic).toBe(1);
    expect(probed.chapters).toHaveLength(3);
  });

  it('refuses text and chapters together, none of them, too many chapters, and a WebP cover', async () => {
    const post = (body: Record<string, unknown>) => t.app.inject({ method: 'POST', url: '/tts', payload: { voice: VOICE, ...body } });
    const both = await post({ text: 'Hello.', chapters: [{ title: 'One', text: 'Hello.' }] });
    expect(both.statusCode).toBe(400);
    expect(both.json().error).toMatchObject({ code: 'VALIDATION_ERROR', field: 'chapters' });
    expect((await post({})).json().error).toMatchObject({ code: 'VALIDATION_ERROR', field: 'text' });
    const many = await post({ text: Array.from({ length: 256 }, (_, index) => `# Part ${index}\n\nWords.`).join('\n\n'), async: true });
    expect(many.statusCode).toBe(400);
    expect(many.json().error.message).toMatch(/256 chapters/);
    const tooLong = await post({ chapters: [{ title: 'One', text: 'a '.repeat(49_999) }, { title: 'Two', text: 'b '.repeat(100) }], async: true });
    expect(tooLong.statusCode).toBe(400);
    expect(tooLong.json().error).toMatchObject({ field: 'chapters' });
    const webp = path.join(dir, 'cover.webp');
    await runFfmpeg(['-v', 'error', '-f', 'lavfi', '-i', 'color=c=red:s=64x64', '-frames:v', '1', '-c:v', 'libwebp', webp]);
    const refused = await post({ text: TEXT, format: 'm4b', cover: await uploadAsset(t.app, webp) });
    expect(refused.statusCode).toBe(400);
    expect(refused.json().error).toMatchObject({ field: 'cover' });
  });
});
