import { describe, expect, it } from 'vitest';
import { audioCues, srtFile, webVttFile, type CaptionText } from '../../src/speech/captions/cues.js';
import { timedWords } from '../../src/speech/words.js';
import type { WordTimestamp } from '../../src/api/speech.js';
import type { MeasuredFont } from '../../src/video/font.js';
import { captionBox, frameSize } from '../../src/video/frame.js';
import { layoutCaptions } from '../../src/video/layout.js';
import { postTts, useTestApp } from '../helpers/helpers.js';
import { toneSpeech } from '../helpers/video-helpers.js';
import { onlyEmoji } from '../../src/engines/emoji-text.js';

/** Sixty letters and no space: too long for a line of 42 characters. */
const LONG_WORD = 'supercalifragilisticexpialidociousantidisestablishmentarians';

const cueLines = (cues: ReadonlyArray<{ lines: ReadonlyArray<ReadonlyArray<{ text: string }>> }>) => cues.map((cue) => cue.lines.map((line) => line.map((piece) => piece.text).join(' ')));

// A line break, a dash on its own, a number, an emoji, accents and a CRLF: offsets are UTF-16, into the text as sent.
const TEXT = 'Hello there — this is voxreel.\nIt counts 25 jugs, naïvely 😀 and well.\r\nThe café closes at nine. Good night!';

const t = useTestApp();

const tts = (body: Record<string, unknown>) => postTts(t.app, body);

function expectWellFormed(text: string, words: readonly WordTimestamp[], duration: number): void {
  let covered = 0;
  for (const token of text.matchAll(/\S+/g)) {
    const word = words.find((candidate) => candidate.text_offset <= token.index && token.index < candidate.text_offset + candidate.text_length);
    // Emoji are never spoken: no timestamp covers one standing alone.
    if (onlyEmoji(token[0])) {
      expect(word, `"${token[0]}" at ${token.index}`).toBeUndefined();
      continue;
    }
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

  it('keeps the last word within 0.1 s of the end when slowed down (every engine, every format)', async () => {
    const voices = ['espeak-ng:en-us', 'flite:slt', ...(t.app.engines.findVoice('festival:slt-hts') ? ['festival:slt-hts'] : [])];
    for (const voice of voices) {
      for (const format of ['mp3', 'wav', 'ogg'] as const) {
        const result = await tts({ text: TEXT, voice, format, speed: 0.5, timestamps: true });
        expectWellFormed(TEXT, result.words ?? [], result.duration);
      }
    }
  });

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

  it('ends a caption line at a line break and cuts a word too long for a line', async () => {
    const text = `Roses are red\nviolets are blue ${LONG_WORD} ends it.`;
    const result = await tts({ text, voice: 'espeak-ng:en-us', timestamps: true });
    const srt = (await t.fetchFile(result.srtUrl as string)).body.toString('utf8');
    const cues = srt
      .trim()
      .split(/\n\n/)
      .map((cue) => {
        const [, timing = '', ...lines] = cue.split('\n');
        const [start = 0, end = 0] = timing.split(' --> ').map((time) => {
          const [h, m, s] = time.replace(',', '.').split(':').map(Number);
          return (h ?? 0) * 3600 + (m ?? 0) * 60 + (s ?? 0);
        });
        return { start, end, lines };
      });
    expect(LONG_WORD).toHaveLength(60);
    expect(cues.map((cue) => cue.lines)).toEqual([
      ['Roses are red'],
      ['violets are blue', LONG_WORD.slice(0, 42)],
      [`${LONG_WORD.slice(42)} ends it.`],
    ]);
    // The cut word shares its spoken time between its two cues, which never overlap.
    cues.forEach((cue, index) => {
      expect(cue.end).toBeGreaterThan(cue.start);
      expect(cue.end).toBeLessThanOrEqual(cues[index + 1]?.start ?? Number.POSITIVE_INFINITY);
    });
    const word = result.words?.find((candidate) => candidate.word === LONG_WORD) as WordTimestamp;
    expect(cues[2]?.start).toBeGreaterThan(word.start);
    expect(cues[2]?.start).toBeLessThan(word.end);
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
  const word = (text: string, start: number, sentenceStart = false, breakBefore = false): CaptionText => ({ text, start, end: start + 0.3, sentenceStart, breakBefore });

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
      // Issue 38: a sentence's words spread evenly over its cues, its lines balanced.
      ['First word0 word1 word2 word3 word4', 'word5 word6 word7 word8 word9'],
      ['word10 word11 word12 word13 word14', 'word15 word16 word17 word18 word19'],
      ['Next sentence.'],
      ['Later'],
    ]);
    for (const cue of cues) expect(cue.lines.every((line) => line.map((piece) => piece.text).join(' ').length <= 42)).toBe(true);
    // Held half a second after the last word, never into the next cue.
    expect(cues[1]?.end).toBeCloseTo(8.5, 6);
    expect(cues[2]?.end).toBeCloseTo(9.7, 6);
  });

  it('ends a line at a line break of the text, and the cue after two lines', () => {
    const words = [word('one', 0, true), word('two', 0.4), word('three', 0.8, false, true), word('four', 1.2), word('five', 1.6, false, true)];
    // Issue 38: cues start at the text's line breaks where they can, and share the words evenly.
    expect(cueLines(audioCues(words))).toEqual([['one two'], ['three four', 'five']]);
  });

  it('cuts a word too long for a line into pieces, sharing its spoken time between cues', () => {
    const cues = audioCues([word('Start', 0, true), word(LONG_WORD, 0.4), word('end', 0.8)]);
    expect(cueLines(cues)).toEqual([['Start', LONG_WORD.slice(0, 42)], [`${LONG_WORD.slice(42)} end`]]);
    // Its second piece is said in the second half of the word (0.4 to 0.7 s); the first cue gives way then.
    expect(cues[0]?.end).toBeCloseTo(0.55, 6);
    expect(cues[1]?.start).toBeCloseTo(0.55, 6);
    expect(webVttFile(cues)).toContain(`00:00:00.550 --> 00:00:01.600\n${LONG_WORD.slice(42)} <00:00:00.800>end`);
  });

  it('breaks lines as video captions do when a video line holds 42 characters', () => {
    const text = `The harbour wakes before the town does, and the fishing boats slide out\npast the lighthouse ${LONG_WORD} while the bakery on the corner starts its first batch of bread by seven.`;
    const speech = toneSpeech(text);
    const box = captionBox(frameSize('1080p', '16:9'), '16:9');
    const font: MeasuredFont = { missingCharacters: () => [], width: (line) => (line.length / 42) * box.maxLineWidth };
    const video = layoutCaptions({ text, speech, size: frameSize('1080p', '16:9'), aspectRatio: '16:9', fps: 30, font });
    const audio = audioCues(timedWords(text, speech));
    expect(cueLines(audio)).toEqual(cueLines(video.cues));
    // Issue 38: no word left alone on the last cue ("seven."); each cue's lines balanced.
    expect(cueLines(audio)).toEqual([
      ['The harbour wakes before the town', 'does, and the fishing boats slide out'],
      ['past the lighthouse', LONG_WORD.slice(0, 42)],
      [`${LONG_WORD.slice(42)} while the bakery on the`],
      ['corner starts its first', 'batch of bread by seven.'],
    ]);
  });

  it('writes WebVTT with escaped text and word timestamps, and SRT', () => {
    const cues = audioCues([word('a<b', 0, true), word('&c', 0.5), word('d>', 1)]);
    expect(webVttFile(cues)).toBe('WEBVTT\n\n00:00:00.000 --> 00:00:01.800\na&lt;b <00:00:00.500>&amp;c <00:00:01.000>d&gt;\n\n');
    expect(srtFile(cues)).toBe('1\n00:00:00,000 --> 00:00:01,800\na<b &c d>\n');
  });

  it('keeps a caption line shaped like an SRT timing line from being read as one', () => {
    const cues = audioCues([word('00:00:01,000', 0, true), word('-->', 0.4), word('00:00:02,000', 0.6), word('Next.', 3, true)]);
    const blocks = srtFile(cues).trim().split('\n\n');
    expect(blocks).toHaveLength(2);
    // An SRT reader takes each block's first line with an arrow as its timing: there must be only one per block.
    for (const block of blocks) expect(block.split('\n').filter((line) => line.includes('-->'))).toHaveLength(1);
    expect(blocks[0]?.split('\n')[2]).toBe('00:00:01,000 \u2011\u2011> 00:00:02,000');
  });
});
