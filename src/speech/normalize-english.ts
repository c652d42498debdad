import { MappedTextBuilder, type MappedText } from '../engines/mapped-text.js';
import { ENGLISH_READERS, wordAfter, wordBefore } from './normalize/index.js';

/**
 * Where a reading may start: a word's first letter; a digit but one inside a word (after a letter, or after a dot or
 * an apostrophe within one, as in "v1.2"); a sign that starts one ($, +, a minus, a bracket).
 */
const READING_START = /(?<![\p{L}\p{N}_'’])\p{L}|(?<![\p{L}\p{N}_]|[\p{L}\p{N}][.'’])\p{N}|[$€£¥+(\-−]/gu;
/** A word of letters none of which is Latin. */
const OTHER_SCRIPT_WORD = /^(?=.*\p{L})[^\p{Script=Latin}]*$/u;

/** Whether the words on either side of a span are in other scripts: "Привет 5 раз" is not English to read. */
function amidOtherScripts(text: string, start: number, end: number): boolean {
  const around = [wordBefore(text, start)?.text, wordAfter(text, end)].filter((word) => word !== undefined && /\p{L}/u.test(word));
  return around.length > 0 && around.every((word) => OTHER_SCRIPT_WORD.test(word!));
}

/** The first reader's reading of the text at `start`. */
function readAt(text: string, start: number): { spoken: string; end: number } | undefined {
  for (const reader of ENGLISH_READERS) {
    reader.pattern.lastIndex = start;
    const match = reader.pattern.exec(text);
    const reading = match ? reader.read(match, text) : undefined;
    if (!match || !reading) continue;
    const end = start + (reading.length ?? match[0].length);
    return amidOtherScripts(text, start, end) ? undefined : { spoken: reading.spoken, end };
  }
  return undefined;
}

/**
 * English text as it should be said, the same for every engine: numbers, money, dates, times, years, percentages,
 * units, abbreviations, phone numbers, addresses and Roman numerals in words (docs/api.md, "English text
 * normalization"). Each reading maps to the whole span it reads; all else, other scripts included, maps to itself.
 */
export function normalizeEnglish(text: string): MappedText {
  const builder = new MappedTextBuilder();
  const starts = new RegExp(READING_START);
  let copied = 0;
  const copyTo = (end: number) => {
    for (; copied < end; copied++) builder.append(text[copied]!, copied, copied + 1);
  };
  for (let found = starts.exec(text); found; found = starts.exec(text)) {
    const reading = readAt(text, found.index);
    if (!reading) continue;
    copyTo(found.index);
    builder.append(reading.spoken, found.index, reading.end);
    copied = reading.end;
    starts.lastIndex = reading.end;
  }
  copyTo(text.length);
  return builder.build();
}
