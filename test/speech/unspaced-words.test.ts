import { describe, expect, it } from 'vitest';
import type { WordTimestamp } from '../../src/api/speech.js';
import type { TtsVideoResponse } from '../../src/api/video.js';
import { textTokens } from '../../src/speech/word-segments.js';
import { timedWords } from '../../src/speech/words.js';
import { postTts, useTestApp } from '../helpers/helpers.js';
import { toneSpeech } from '../helpers/video-helpers.js';

const CHINESE = '今天天气很好，我们去公园散步吧。这个城市的交通非常方便，地铁可以到达每一个角落！';
const JAPANESE = '今日はいい天気ですね。ラーメンを食べに行きましょう。「東京」の電車はとても便利です。';
const THAI = 'สวัสดีครับ วันนี้อากาศดีมาก เราไปเดินเล่นกันเถอะ';

/** What must fall inside exactly one word: every character that is neither a space nor punctuation. */
const MUST_BE_COVERED = /[^\s\p{P}]/u;

type Spanned = Pick<WordTimestamp, 'text_offset' | 'text_length'>;

function expectCovering(text: string, words: readonly Spanned[]): void {
  [...text].forEach((char, index) => {
    if (!MUST_BE_COVERED.test(char)) return;
    const owners = words.filter((word) => word.text_offset <= index && index < word.text_offset + word.text_length);
    expect(owners, `"${char}" at ${index}`).toHaveLength(1);
  });
  words.forEach((word, index) => {
    const previous = words[index - 1];
    if (previous) expect(word.text_offset).toBeGreaterThanOrEqual(previous.text_offset + previous.text_length);
  });
}

describe('textTokens', () => {
  it.each([
    ['Chinese', '我们去公园散步吧。', ['我们', '去', '公园', '散步', '吧。']],
    ['Japanese, brackets kept with their word', '「東京」へ行く', ['「東京」', 'へ', '行く']],
    ['Thai', 'สวัสดีครับ วันนี้', ['สวัสดี', 'ครับ', 'วัน', 'นี้']],
    ['Lao', 'ພາສາລາວ', ['ພາສາ', 'ລາວ']],
    ['Latin, unchanged: runs between spaces', 'Hello, world — "quoted" 25.', ['Hello,', 'world', '—', '"quoted"', '25.']],
  ])('cuts %s into words', (_name, text, expected) => {
    const tokens = textTokens(text);
    expect(tokens.map((token) => token.text)).toEqual(expected);
    for (const token of tokens) expect(text.slice(token.offset, token.offset + token.length)).toBe(token.text);
    expectCovering(text, tokens.map((token) => ({ text_offset: token.offset, text_length: token.length })));
  });

  it('keeps Khmer and Burmese whole characters in order', () => {
    for (const text of ['ភាសាខ្មែរ គឺជាភាសា', 'မြန်မာဘာသာစကား']) {
      const tokens = textTokens(text);
      expect(tokens.map((token) => token.text).join('')).toBe(text.replace(/\s/g, ''));
    }
  });
});

describe('timedWords for scripts without spaces', () => {
  it('shares an engine word that covers a whole sentence among its words by characters, in order', () => {
    // One engine word for the whole run (as eSpeak NG reads Japanese).
    const speech = toneSpeech('今日はいい天気ですね。', { wordSeconds: 1 });
    const words = timedWords('今日はいい天気ですね。', speech);
    expect(words.map((word) => word.text)).toEqual(['今日', 'は', 'いい', '天気', 'です', 'ね。']);
    expect(words.map((word) => word.spaceBefore)).toEqual([true, false, false, false, false, false]);
    expect(words[0]?.start).toBeCloseTo(0.05, 3);
    // Two of ten characters each: a fifth of the second.
    expect(words[1]?.start).toBeCloseTo(0.25, 3);
    expect(words.at(-1)?.end).toBeCloseTo(1.05, 3);
  });

  it('spreads a sentence with no engine words over its words by characters', () => {
    const text = '我们去公园。';
    const speech = { ...toneSpeech(text), words: [] };
    const words = timedWords(text, speech);
    expect(words.map((word) => word.text)).toEqual(['我们', '去', '公园。']);
    const [sentence] = speech.sentences;
    const span = (sentence?.end ?? 0) - (sentence?.start ?? 0);
    expect((words[1]?.start ?? 0) - (words[0]?.start ?? 0)).toBeCloseTo((span * 2) / 5, 3);
  });
});

const t = useTestApp();

describe('POST /tts timestamps in scripts without spaces', () => {
  it.each([
    ['espeak-ng:cmn', CHINESE],
    ['espeak-ng:ja', JAPANESE],
    ['espeak-ng:th', THAI],
  ])('%s: one entry per word, in order, covering the text', async (voice, text) => {
    const result = await postTts(t.app, { text, voice, timestamps: true, format: 'wav' });
    const words = result.words ?? [];
    expect(words.map((word) => word.word)).toEqual(textTokens(text).map((token) => token.text));
    expectCovering(text, words);
    words.forEach((word, index) => {
      expect(word.word).toBe(text.slice(word.text_offset, word.text_offset + word.text_length));
      expect(word.end).toBeGreaterThanOrEqual(word.start);
      const previous = words[index - 1];
      if (previous) expect(word.start).toBeGreaterThan(previous.start);
    });
    expect(Math.abs((words.at(-1)?.end ?? 0) - result.duration)).toBeLessThan(0.1);
  });
});

interface VttPiece {
  /** When it shows or lights: the cue's start, or the timestamp tag before it. */
  at: number;
  text: string;
  cueStart: boolean;
}

/** Every run of cue text with the time it appears: the cue start for the first, the tag before it for the rest. */
function vttPieces(vtt: string): VttPiece[] {
  const seconds = (stamp: string) => stamp.split(':').reduce((sum, part) => sum * 60 + Number(part), 0);
  return vtt
    .trim()
    .split('\n\n')
    .slice(1)
    .flatMap((block) => {
      const [timing = '', ...lines] = block.split('\n');
      const start = seconds(timing.split(' --> ')[0] ?? '');
      const parts = lines.join('').split(/<(\d\d:\d\d:\d\d\.\d{3})>/);
      const pieces: VttPiece[] = [{ at: start, text: parts[0] ?? '', cueStart: true }];
      for (let index = 1; index < parts.length; index += 2) pieces.push({ at: seconds(parts[index] ?? ''), text: parts[index + 1] ?? '', cueStart: false });
      return pieces.filter((piece) => piece.text.trim() !== '');
    });
}

describe('POST /tts-video captions in Chinese and Japanese', () => {
  it.each([
    ['espeak-ng:cmn', CHINESE],
    ['espeak-ng:ja', JAPANESE],
  ])('%s: no cue before its first word is spoken, and the words light in order as spoken', async (voice, text) => {
    const spoken = (await postTts(t.app, { text, voice, timestamps: true, format: 'wav' })).words ?? [];
    const response = await t.app.inject({ method: 'POST', url: '/tts-video', payload: { text, voice, resolution: '720p', aspect_ratio: '9:16', frame_rate: 'variable' } });
    expect(response.statusCode, response.body).toBe(200);
    const video = response.json<TtsVideoResponse>();
    const pieces = vttPieces((await t.fetchFile(video.captionsUrl)).body.toString('utf8'));
    expect(pieces.filter((piece) => piece.cueStart).length).toBeGreaterThan(1);

    let next = 0;
    let lit = 0;
    for (const piece of pieces) {
      const first = spoken[next];
      expect(first, piece.text).toBeDefined();
      // A piece holds the words that light on the same frame; no space is drawn between them.
      let shown = '';
      while (shown.length < piece.text.replace(/\s/g, '').length && spoken[next]) shown += (spoken[next++] as WordTimestamp).word;
      expect(shown).toBe(piece.text.replace(/\s/g, ''));
      expect(piece.at, `"${piece.text}" at ${piece.at}, spoken at ${first?.start}`).toBeGreaterThanOrEqual((first?.start ?? 0) - 0.1);
      if (!piece.cueStart) expect(piece.at, piece.text).toBeLessThanOrEqual((first?.start ?? 0) + 0.1);
      expect(piece.at).toBeGreaterThanOrEqual(lit);
      lit = piece.at;
    }
    expect(next).toBe(spoken.length);
  });
});
