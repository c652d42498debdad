import type { WordTiming } from '../types.js';
import type { SpokenWordSpan } from './protocol.js';
import { wordSegmenter } from '../mapped-text.js';

interface TextWord {
  start: number;
  end: number;
  isWordLike: boolean;
  /** Samples of the eSpeak words that fall on it, NaN while none has. */
  from: number;
  to: number;
}

/** The text's runs that are not spaces (words, numbers, marks), as Intl.Segmenter splits them. */
function textWords(text: string, language: string): TextWord[] {
  const found: TextWord[] = [];
  for (const { segment, index, isWordLike } of wordSegmenter(language).segment(text)) {
    if (/^\s+$/u.test(segment)) continue;
    found.push({ start: index, end: index + segment.length, isWordLike: isWordLike ?? false, from: Number.NaN, to: Number.NaN });
  }
  return found;
}

/** Where an eSpeak word starting at `offset` belongs: the text word it starts in; a mark joined to a word (-5, $3) goes with that word. */
function ownerOf(words: readonly TextWord[], offset: number): TextWord | undefined {
  let low = 0;
  let high = words.length;
  while (low < high) {
    const middle = (low + high) >> 1;
    if ((words[middle]?.end ?? 0) <= offset) low = middle + 1;
    else high = middle;
  }
  const word = words[low];
  // Between words (on a space): the word before.
  if (!word || offset < word.start) return words[low - 1];
  const next = words[low + 1];
  if (!word.isWordLike && next?.isWordLike && next.start === word.end) return next;
  return word;
}

/**
 * One timing per word of the text that eSpeak spoke. Its word events can fall inside a number ("1,234.50" gives
 * several: merged), on a mark it reads out ("&": kept as a word of its own), or be missing for a word it ran into
 * the one before ("from the" → fɹʌmðə: the two share that span by length).
 */
export function piperWordTimings(text: string, language: string, spoken: readonly SpokenWordSpan[], sampleRate: number): WordTiming[] {
  const words = textWords(text, language);
  for (const { textOffset, start, end } of spoken) {
    const word = ownerOf(words, textOffset);
    if (!word) continue;
    word.from = Number.isNaN(word.from) ? start : Math.min(word.from, start);
    word.to = Number.isNaN(word.to) ? end : Math.max(word.to, end);
  }
  const timings: WordTiming[] = [];
  let previous: TextWord | undefined;
  for (const word of words) {
    if (Number.isNaN(word.from)) {
      if (!word.isWordLike || !previous) continue;
      const before = previous.end - previous.start;
      const cut = previous.from + ((previous.to - previous.from) * before) / (before + word.end - word.start);
      word.from = cut;
      word.to = previous.to;
      previous.to = cut;
      const last = timings.at(-1);
      if (last) last.end = cut / sampleRate;
    }
    timings.push({
      word: text.slice(word.start, word.end),
      start: word.from / sampleRate,
      end: word.to / sampleRate,
      textOffset: word.start,
      textLength: word.end - word.start,
    });
    previous = word;
  }
  return timings;
}
