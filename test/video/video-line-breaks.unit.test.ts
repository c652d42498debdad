import { describe, expect, it } from 'vitest';
import { audioCues, breakIntoCues, joinLine, type CaptionPiece, type CaptionText, type LineFits } from '../../src/speech/captions/cues.js';
import { timedWords } from '../../src/speech/words.js';
import { captionFont } from '../../src/video/font.js';
import { frameSize } from '../../src/video/frame.js';
import { layoutCaptions } from '../../src/video/layout.js';
import type { AspectRatio } from '../../src/api/video-options.js';
import { toneSpeech, wordSpeech } from '../helpers/video-helpers.js';

// ー and small kana inside words and, where the segmenter cuts (す|ご|ー|い！, 待|って|ぇ|ー！, 乗り|たい|っ！), at the start of one; 「」.
const JAPANESE =
  'ラーメンを食べに行きましょう。「東京」の電車はとても便利です。ちょっとコーヒーを飲みませんか？キャッシュレス決済はスーパーでもコンビニでも使えます。' +
  'ジェットコースターに乗りたいっ！すごーい！ちょっと待ってぇー！やったぁ、できたー。「待って」と言った。';
const CHINESE =
  '每天早上，港口总是比城镇更早醒来。渔船驶过灯塔。街角的面包店开始烤第一批面包，香味飘过狭窄的街道。到了七点，市场的摊位都开张了。' +
  '游客们慢慢地走向海边，孩子们在广场上追逐鸽子，老人们坐在长椅上看报纸，一天就这样开始了。好。';

// Written out here, apart from the breaker's own rules: what Japanese kinsoku forbids at a line's two ends.
const NO_LINE_START = /^[ー・、。，．！？」』）】〕ぁぃぅぇぉっゃゅょゎァィゥェォッャュョヮヵヶ\p{Pe}\p{Pf}]/u;
const NO_LINE_END = /[「『（【〔\p{Ps}\p{Pi}]$/u;
const ONLY_MARKS = /^[\p{P}\s]*$/u;

const lineText = (line: readonly CaptionPiece[]) => joinLine(line, (index) => (line[index] as CaptionPiece).text);

/** Cues for `text` spoken as one sentence, lines measured in the sans family at 100 px and at most `ems` wide. */
function cuesAt(text: string, ems: number): { words: CaptionText[]; cues: CaptionPiece[][][]; fits: LineFits } {
  const font = captionFont('sans');
  const fits: LineFits = (line) => font.width(line, 100) <= ems * 100;
  const words = timedWords(text, toneSpeech(text));
  return { words, cues: breakIntoCues(words, fits).map((cue) => cue.lines), fits };
}

/** Every line of `cues` starts and ends where kinsoku allows, none is marks alone, and together they are `text`. */
function expectKinsoku(text: string, cues: readonly CaptionPiece[][][], label: string): void {
  const lines = cues.flatMap((cue) => cue.map(lineText));
  for (const line of lines) {
    expect(line, `${label}: "${line}" starts with a mark no line starts with`).not.toMatch(NO_LINE_START);
    expect(line, `${label}: "${line}" ends with an opening bracket`).not.toMatch(NO_LINE_END);
    expect(line, `${label}: "${line}" is marks alone`).not.toMatch(ONLY_MARKS);
  }
  expect(lines.join('')).toBe(text.replace(/\s/g, ''));
}

describe('Japanese lines follow kinsoku', () => {
  // From 7: 待ってぇー！ is six characters no line may be broken inside of; narrower lines must break it somewhere.
  it('at every line width from 7 to 20 characters: no line starts with ー, a small kana or a closing mark, none ends with 「', () => {
    const words = timedWords(JAPANESE, toneSpeech(JAPANESE)).map((word) => word.text);
    // The text holds words a line must not start with, so the rule is exercised.
    expect(words.filter((word) => NO_LINE_START.test(word)).length).toBeGreaterThanOrEqual(5);
    for (let ems = 7; ems <= 20; ems += 0.5) expectKinsoku(JAPANESE, cuesAt(JAPANESE, ems).cues, `${ems} em`);
  });

  it.each(['9:16', '16:9', '1:1', '4:5'] as const)('in a real %s layout at 720p and 1080p', (aspectRatio: AspectRatio) => {
    for (const resolution of ['720p', '1080p'] as const) {
      for (const family of ['sans', 'display'] as const) {
        const captions = layoutCaptions({ text: JAPANESE, speech: wordSpeech(JAPANESE), size: frameSize(resolution, aspectRatio), aspectRatio, fps: 30, look: { family } });
        expectKinsoku(JAPANESE, captions.cues.map((cue) => cue.lines), `${resolution} ${aspectRatio} ${family}`);
        const font = captionFont(family);
        for (const cue of captions.cues) for (const line of cue.lines) expect(font.width(lineText(line), captions.box.fontSize)).toBeLessThanOrEqual(captions.box.maxLineWidth);
      }
    }
  });

  it('keeps a word that starts with a small kana with the word before it, carrying both to the next line', () => {
    const words: CaptionText[] = ['乗り', 'たい', 'っ！'].map((text, index) => ({ text, start: index * 0.3, end: index * 0.3 + 0.3, sentenceStart: index === 0, breakBefore: false, spaceBefore: index === 0 }));
    const fourCharacters: LineFits = (line) => [...line].length <= 4;
    expect(breakIntoCues(words, fourCharacters).map((cue) => cue.lines.map(lineText))).toEqual([['乗り', 'たいっ！']]);
  });
});

describe('Chinese captions follow sentences', () => {
  const sentences = CHINESE.match(/[^。！？]+[。！？]/gu) ?? [];

  it.each(['9:16', '16:9', '1:1'] as const)('in %s, a sentence that fits a cue is one cue, and a cue ends at a sentence end unless its sentence is too long for one', (aspectRatio) => {
    const captions = layoutCaptions({ text: CHINESE, speech: toneSpeech(CHINESE), size: frameSize('1080p', aspectRatio), aspectRatio, fps: 30 });
    const font = captionFont('sans');
    const fits: LineFits = (line) => font.width(line, captions.box.fontSize) <= captions.box.maxLineWidth;
    const cueOf = captions.words.map((_word, index) => captions.cues.findIndex((cue) => cue.lines.flat().some((piece) => piece.word === index)));
    let offset = 0;
    let sentencesInOneCue = 0;
    for (const sentence of sentences) {
      const inside = captions.words.flatMap((word, index) => (word.offset >= offset && word.offset < offset + sentence.length ? [index] : []));
      offset += sentence.length;
      const alone = breakIntoCues(inside.map((index) => captions.words[index] as CaptionText), fits);
      const cues = new Set(inside.map((index) => cueOf[index]));
      if (alone.length === 1) {
        expect(cues.size, sentence).toBe(1);
        sentencesInOneCue += 1;
      } else {
        // Too long for one cue: it starts one of its own.
        expect(captions.cues[cueOf[inside[0] as number] as number]?.lines[0]?.[0]?.word, sentence).toBe(inside[0]);
      }
    }
    expect(sentencesInOneCue).toBeGreaterThanOrEqual(3);
    expectKinsoku(CHINESE, captions.cues.map((cue) => cue.lines), aspectRatio);
  });

  it('never leaves 。 alone on a cue or a line, and a sentence of one character stays a cue of its own (issue 38: sentence ends are hard breaks), at any width', () => {
    for (let ems = 3; ems <= 20; ems += 0.5) {
      const { cues } = cuesAt(CHINESE, ems);
      expectKinsoku(CHINESE, cues, `${ems} em`);
      expect(cues.at(-1)?.flat().map((piece) => piece.text).join(''), `${ems} em`).toBe('好。');
    }
  });

  it('keeps a 。 written apart (after a space) with the word before it', () => {
    const text = '我们去公园散步吧 。 好';
    for (let ems = 3; ems <= 8; ems += 0.5) {
      for (const cue of cuesAt(text, ems).cues) for (const line of cue) expect(lineText(line)).not.toMatch(/^。/u);
    }
  });
});

describe('a sentence in cues (issue 38)', () => {
  const word = (text: string, start: number, sentenceStart = false): CaptionText => ({ text, start, end: start + 0.3, sentenceStart, breakBefore: false });
  const spoken = (text: string, from: number, sentenceStart = true) => text.split(' ').map((part, index) => word(part, from + index * 0.4, sentenceStart && index === 0));
  const cueLines = (words: CaptionText[]) => audioCues(words).map((cue) => cue.lines.map((line) => line.map((piece) => piece.text).join(' ')));

  it('spreads a sentence too long for one cue evenly over its cues, and the next sentence starts a cue of its own ("hearts?")', () => {
    const words = [...spoken('Thank you all for the music, the laughter and the kindness you gave from your whole hearts?', 0), ...spoken('We love you.', 7)];
    expect(cueLines(words)).toEqual([['Thank you all for the', 'music, the laughter and'], ['the kindness you gave', 'from your whole hearts?'], ['We love you.']]);
  });

  it('keeps a sentence of one word a cue of its own', () => {
    expect(cueLines([...spoken('Yes.', 0), ...spoken('We will be there by seven.', 0.8)])).toEqual([['Yes.'], ['We will be there by seven.']]);
  });

  it('starts a cue after a long pause', () => {
    expect(cueLines([...spoken('We will be there by seven.', 0), ...spoken('Later.', 5)])).toEqual([['We will be there by seven.'], ['Later.']]);
  });
});
