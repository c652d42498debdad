import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { audioCues, srtFile, webVttFile, type CaptionText } from '../src/speech/captions.js';
import type { WordTimestamp } from '../src/http/schemas.js';
import { buildTestApp, postTts, type TestApp } from './helpers.js';

// A line break, a dash on its own, a number, an emoji, accents and a CRLF: offsets are UTF-16, into the text as sent.
const TEXT = 'Hello there — this is voxreel.\nIt counts 25 jugs, naïvely 😀 and well.\r\nThe café closes at nine. Good night!';

let t: TestApp;
beforeAll(async () => {
  t = await buildTestApp();
});
afterAll(async () => t?.close());

const tts = (body: Record<string, unknown>) => postTts(t.app, body);

function expectWellFormed(text: string, words: readonly WordTimestamp[], duration: number): void {
  let covered = 0;
  for (const token of text.matchAll(/\S+/g)) {
    const word = words.find((candidate) => candidate.text_offset <= token.index && token.index < candidate.text_offset + candidate.text_length);
    expect(word, `"${token[0]}" at ${token.index}`).toBeDefined();
    covered += 1;
  }
  expect(covered).toBeGreaterThan(10);
  words.forEach((word, index) => {
    expect(word.word).toBe(text.slice(word.text_offset, word.text_offset + word.text_length));
    expect(word.end).toBeGreaterThanOrEqual(word.start);
    const previous = words[index - 1];
    if (!previous) return;
    expect(word.text_offset).toBeGreaterThanOrEqual(previous.text_offset + previous.text_length);
    expect(word.start).toBeGreaterThanOrEqual(previous.start);
    expect(word.end).toBeGreaterThanOrEqual(previous.end);
  });
  expect(words[0]?.start).toBeGreaterThanOrEqual(0);
  expect(Math.abs((words.at(-1)?.end ?? 0) - duration)).toBeLessThan(0.1);
}

describe('POST /tts timestamps', () => {
  for (const voice of ['espeak-ng:en-us', 'flite:slt']) {
    it(`times every word of the text in order (${voice})`, async () => {
      const result = await tts({ text: TEXT, voice, timestamps: true });
      expectWellFormed(TEXT, result.words ?? [], result.duration);
    });
  }

  it('gives times in the produced file: speed 2 halves them', async () => {
    const [normal, fast] = await Promise.all([1, 2].map((speed) => tts({ text: TEXT, voice: 'espeak-ng:en-us', format: 'wav', speed, timestamps: true })));
    expectWellFormed(TEXT, fast!.words ?? [], fast!.duration);
    expect(fast!.words).toHaveLength(normal!.words!.length);
    fast!.words!.forEach((word, index) => {
      const before = normal!.words![index] as WordTimestamp;
      expect(Math.abs(word.start - before.start / 2), word.word).toBeLessThan(0.03);
      expect(Math.abs(word.end - before.end / 2), word.word).toBeLessThan(0.03);
    });
  });

  it('publishes WebVTT and SRT captions under the audio file name', async () => {
    const result = await tts({ text: TEXT, voice: 'espeak-ng:en-us', timestamps: true });
    const name = result.url.split('/').pop()?.replace(/\.mp3$/, '');
    expect(result.captionsUrl).toBe(`${t.config.cdnUrl}/captions/${name}.vtt`);
    expect(result.srtUrl).toBe(`${t.config.cdnUrl}/captions/${name}.srt`);
    const vtt = await t.fetchFile(result.captionsUrl as string);
    expect(vtt.statusCode).toBe(200);
    expect(String(vtt.headers['content-type'])).toContain('text/vtt');
    const vttText = vtt.body.toString('utf8');
    expect(vttText.startsWith('WEBVTT\n\n')).toBe(true);
    expect(vttText).toContain('Hello <');
    const srt = (await t.fetchFile(result.srtUrl as string)).body.toString('utf8');
    const cues = srt.trim().split(/\n\n/);
    expect(cues[0]).toMatch(/^1\n\d\d:\d\d:\d\d,\d{3} --> \d\d:\d\d:\d\d,\d{3}\nHello there — this is voxreel\.$/);
    const spoken = cues.map((cue) => cue.split('\n').slice(2).join(' ')).join(' ');
    expect(spoken).toBe(TEXT.split(/\s+/).join(' '));
  });

  it('adds nothing without timestamps', async () => {
    const before = (await t.listFiles()).filter((file) => file.startsWith('captions/')).length;
    const result = await tts({ text: 'Hello there.', voice: 'espeak-ng:en-us' });
    expect(result).not.toHaveProperty('words');
    expect(result).not.toHaveProperty('captionsUrl');
    expect((await t.listFiles()).filter((file) => file.startsWith('captions/'))).toHaveLength(before);
  });
});

describe('audio captions', () => {
  const word = (text: string, start: number, sentenceStart = false): CaptionText => ({ text, start, end: start + 0.3, sentenceStart });

  it('fills two lines of 42 characters at most, and starts a cue at each sentence and long pause', () => {
    const words = [
      word('First', 0, true),
      ...Array.from({ length: 20 }, (_, i) => word(`word${i}`, 0.4 + i * 0.4)),
      word('Next', 8.5, true),
      word('sentence.', 8.9),
      word('Later', 11),
    ];
    const cues = audioCues(words);
    expect(cues.map((cue) => cue.lines.map((line) => line.map((piece) => piece.text).join(' ')))).toEqual([
      ['First word0 word1 word2 word3 word4 word5', 'word6 word7 word8 word9 word10 word11'],
      ['word12 word13 word14 word15 word16 word17', 'word18 word19'],
      ['Next sentence.'],
      ['Later'],
    ]);
    for (const cue of cues) expect(cue.lines.every((line) => line.map((piece) => piece.text).join(' ').length <= 42)).toBe(true);
    // Held half a second after the last word, never into the next cue.
    expect(cues[1]?.end).toBeCloseTo(8.5, 6);
    expect(cues[2]?.end).toBeCloseTo(9.7, 6);
  });

  it('writes WebVTT with escaped text and word timestamps, and SRT', () => {
    const cues = audioCues([word('a<b', 0, true), word('&c', 0.5), word('d>', 1)]);
    expect(webVttFile(cues)).toBe('WEBVTT\n\n00:00:00.000 --> 00:00:01.800\na&lt;b <00:00:00.500>&amp;c <00:00:01.000>d&gt;\n\n');
    expect(srtFile(cues)).toBe('1\n00:00:00,000 --> 00:00:01,800\na<b &c d>\n');
  });
});
