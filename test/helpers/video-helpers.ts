import type { WordTiming } from '../../src/engines/types.js';
import type { Speech } from '../../src/speech/speech.js';
import { splitSentences } from '../../src/speech/sentences.js';
import { textTokens } from '../../src/speech/word-segments.js';

/** Strings that mean something to ASS, to ffmpeg's filter graph or drawtext, or to WebVTT. */
export const INJECTIONS = [
  '{\\an8}{\\fs200}{\\c&H0000FF&}big',
  '{\\p1}m 0 0 l 100 0 100 100{\\p0}',
  'C:\\new\\Net\\h\\N',
  '\\{not a tag\\}',
  'back\\',
  '\\\\N',
  '%{pts}',
  '%{eif\\:n\\:d}',
  "'single'",
  '"double"',
  'a:b;c,d',
  '[0:v][out]',
  'text=x:fontfile=/etc/passwd',
  '-->',
  '<b>bold</b>',
  '&amp;',
  '<00:00:01.000>',
];

/** A 220 Hz tone over each word's time, silence elsewhere, `seconds` long. */
function tones(words: readonly WordTiming[], seconds: number, sampleRate: number): Int16Array {
  const samples = new Int16Array(Math.round(seconds * sampleRate));
  for (const word of words) {
    for (let i = Math.round(word.start * sampleRate); i < Math.round(word.end * sampleRate); i += 1) samples[i] = Math.round(8000 * Math.sin((2 * Math.PI * 220 * i) / sampleRate));
  }
  return samples;
}

/**
 * Speech without an engine: a tone burst per word of `text`, with the word timings an engine would report,
 * so layout and render tests do not depend on the engines.
 */
export function toneSpeech(text: string, options: { wordSeconds?: number; gapSeconds?: number; sampleRate?: number } = {}): Speech {
  const { wordSeconds = 0.3, gapSeconds = 0.08, sampleRate = 22050 } = options;
  const words: WordTiming[] = [];
  let time = 0.05;
  for (const match of text.matchAll(/\S+/g)) {
    words.push({ word: match[0], start: time, end: time + wordSeconds, textOffset: match.index, textLength: match[0].length });
    time += wordSeconds + gapSeconds;
  }
  const samples = tones(words, time + 0.05, sampleRate);
  const first = words[0];
  const last = words.at(-1);
  return {
    samples,
    sampleRate,
    duration: samples.length / sampleRate,
    sentences: first && last ? [{ start: first.start, end: last.end, textOffset: 0, textLength: text.length }] : [],
    words,
  };
}

export interface Box {
  left: number;
  top: number;
  right: number;
  bottom: number;
}

/** Caption pixels (bright on the dark background) of an RGB24 frame: how many, and their bounding box. */
export function captionPixels(frame: Buffer, width: number): { count: number; box: Box | undefined } {
  let count = 0;
  let box: Box | undefined;
  for (let offset = 0; offset + 2 < frame.length; offset += 3) {
    if (Math.max(frame[offset] as number, frame[offset + 1] as number, frame[offset + 2] as number) < 128) continue;
    count += 1;
    const x = (offset / 3) % width;
    const y = Math.floor(offset / 3 / width);
    box = box
      ? { left: Math.min(box.left, x), top: Math.min(box.top, y), right: Math.max(box.right, x), bottom: Math.max(box.bottom, y) }
      : { left: x, top: y, right: x, bottom: y };
  }
  return { count, box };
}

/**
 * Speech as an engine with word events gives it: a tone burst per word of the captions (textTokens: scripts without
 * spaces cut into their words), `wordSeconds` each with `gapSeconds` between, and a sentence per sentence of the text
 * (splitSentences) with `sentenceGapSeconds` more after each.
 */
export function wordSpeech(text: string, options: { wordSeconds?: number; gapSeconds?: number; sentenceGapSeconds?: number; sampleRate?: number } = {}): Speech {
  const { wordSeconds = 0.3, gapSeconds = 0.08, sentenceGapSeconds = 0.3, sampleRate = 22050 } = options;
  const words: WordTiming[] = [];
  const sentences: Speech['sentences'] = [];
  let time = 0.05;
  for (const sentence of splitSentences(text)) {
    const start = time;
    for (const token of textTokens(sentence.text)) {
      words.push({ word: token.text, start: time, end: time + wordSeconds, textOffset: sentence.offset + token.offset, textLength: token.length });
      time += wordSeconds + gapSeconds;
    }
    sentences.push({ start, end: time - gapSeconds, textOffset: sentence.offset, textLength: sentence.text.length });
    time += sentenceGapSeconds;
  }
  const samples = tones(words, time + 0.05, sampleRate);
  return { samples, sampleRate, duration: samples.length / sampleRate, sentences, words };
}
