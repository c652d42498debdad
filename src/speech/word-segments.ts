import { wordSegmenter } from '../engines/mapped-text.js';
import { silenceEmoji } from '../engines/emoji-text.js';

/** A word of the request text as shown and timed: a run between spaces, or a dictionary word of a script written without them. */
export interface TextToken {
  /** As shown: control characters dropped. */
  text: string;
  offset: number;
  /** Length in the request text, control characters included. */
  length: number;
  /** A line break in the request text comes before this token. */
  breakBefore: boolean;
  /** A space separates it from the token before (false inside a run of a script written without spaces). */
  spaceBefore: boolean;
}

const LINE_BREAK = /[\n\v\f\r\u0085\u2028\u2029]/;

/** Scripts written without spaces between words: their runs are cut into words by the word segmenter's dictionaries. */
const UNSPACED = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Thai}\p{Script=Lao}\p{Script=Khmer}\p{Script=Myanmar}]/u;
const OPENING = /^[\p{Ps}\p{Pi}]+$/u;

/** ICU's dictionaries for these scripts do not depend on the locale. */
const segmenter = wordSegmenter('und');

/**
 * Thai loanwords of the videos people make that ICU's dictionary cuts, or cuts its neighbours wrongly around, in some
 * builds and contexts (วิ|ดีโอ; แล้|วกดไลก์ for แล้ว|กด|ไลก์): each is a word of its own, the text between them
 * segmented as usual. Longest first, so a longer word wins over one inside it.
 */
export const KNOWN_WORDS = [
  'วิดีโอ', 'คลิป', 'ไลก์', 'แชร์', 'คอมเมนต์', 'ซับไตเติล', 'คอนเทนต์', 'ครีเอเตอร์', 'ออนไลน์', 'แอปพลิเคชัน',
  'ยูทูบ', 'ติ๊กต็อก', 'อินสตาแกรม', 'เฟซบุ๊ก', 'โซเชียลมีเดีย', 'สมาร์ทโฟน', 'ฟิลเตอร์', 'เอฟเฟกต์', 'ไมโครโฟน',
  'ดาวน์โหลด', 'อัปโหลด', 'ลิงก์', 'แฮชแท็ก', 'ไวรัล', 'แคปชัน', 'เทรนด์', 'โพสต์', 'ตัดต่อ',
].sort((a, b) => b.length - a.length);
const KNOWN_WORD = new RegExp(KNOWN_WORDS.join('|'), 'gu');

/** A katakana word goes on across a segmenter's cut (ハイ|パー): two such segments are one word. */
const KATAKANA_END = /[\p{Script=Katakana}ー]$/u;
const KATAKANA_START = /^[\p{Script=Katakana}ー]/u;

/** The segmenter's segments of a run, known words each one word-like segment, katakana words whole. */
function segmentsOf(run: string): Intl.SegmentData[] {
  const segments: Intl.SegmentData[] = [];
  const add = (segment: string, index: number, isWordLike: boolean) => {
    const last = segments.at(-1);
    if (last?.isWordLike && isWordLike && KATAKANA_END.test(last.segment) && KATAKANA_START.test(segment)) last.segment += segment;
    else segments.push({ segment, index, input: run, isWordLike });
  };
  const addGap = (from: number, to: number) => {
    for (const { segment, index, isWordLike } of segmenter.segment(run.slice(from, to))) add(segment, from + index, isWordLike === true);
  };
  let done = 0;
  for (const match of run.matchAll(KNOWN_WORD)) {
    addGap(done, match.index);
    add(match[0], match.index, true);
    done = match.index + match[0].length;
  }
  addGap(done, run.length);
  return segments;
}

/**
 * Cuts a run of non-space characters into words where it holds a script written without spaces; marks go with the
 * word before them, opening brackets and quotes with the word after, so that no word is only punctuation.
 */
function cutRun(run: string): Array<{ start: number; end: number }> {
  if (!UNSPACED.test(run)) return [{ start: 0, end: run.length }];
  const parts: Array<{ start: number; end: number }> = [];
  let pendingStart: number | undefined;
  for (const { segment, index, isWordLike } of segmentsOf(run)) {
    const end = index + segment.length;
    const last = parts.at(-1);
    if (isWordLike) parts.push({ start: pendingStart ?? index, end });
    else if (last && pendingStart === undefined && !OPENING.test(segment)) last.end = end;
    else pendingStart ??= index;
    if (isWordLike) pendingStart = undefined;
  }
  if (pendingStart !== undefined) {
    const last = parts.at(-1);
    if (last) last.end = run.length;
    else parts.push({ start: pendingStart, end: run.length });
  }
  return parts;
}

/** The words of `text` in order, each non-space character in exactly one of them. */
export function textTokens(text: string): TextToken[] {
  const tokens: TextToken[] = [];
  let gapStart = 0;
  for (const match of text.matchAll(/\S+/gu)) {
    const breakBefore = tokens.length > 0 && LINE_BREAK.test(text.slice(gapStart, match.index));
    let first = true;
    for (const part of cutRun(match[0])) {
      const shown = match[0].slice(part.start, part.end).replace(/\p{Cc}/gu, '');
      if (!shown) continue;
      tokens.push({ text: shown, offset: match.index + part.start, length: part.end - part.start, breakBefore: breakBefore && first, spaceBefore: first });
      first = false;
    }
    gapStart = match.index + match[0].length;
  }
  return tokens;
}

const LETTER_OR_DIGIT = /[\p{L}\p{N}]/u;

/**
 * How long a token takes to say relative to the others of its sentence, when the engine does not tell: its UTF-16
 * length without its emoji (never spoken) plus one for the space before it; in scripts written without spaces, its
 * letters and digits only.
 * Measured with script/measure-word-weights.ts against eSpeak NG's own word events, error of the word starts
 * inside a sentence (mean, median, worst):
 * - Mandarin (8 sentences, 71 word starts): characters 107, 89, 407 ms; syllables the same (one a character);
 *   characters with the marks counted 136, 119, 407 ms; the engine's own phoneme counts 90, 62, 329 ms.
 * - Japanese (1 sentence of 8: eSpeak NG gives per-character events only for kanji, reading each as "Chinese
 *   letter"; 5 word starts): characters 945 ms, syllables the same, the engine's phonemes 164 ms.
 * Phonemes would be best but only the engine knows them, so characters (syllables cost a kana table for no gain).
 */
export function spokenWeight(token: Pick<TextToken, 'text' | 'spaceBefore'>): number {
  if (!UNSPACED.test(token.text)) return silenceEmoji(token.text).trim().length + (token.spaceBefore ? 1 : 0);
  let letters = 0;
  for (const char of token.text) if (LETTER_OR_DIGIT.test(char)) letters += 1;
  return Math.max(1, letters);
}
