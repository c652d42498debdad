import { MappedTextBuilder, type MappedText } from '../engines/mapped-text.js';
import { ENGLISH_READERS } from './normalize/index.js';

/**
 * Where a reading may start: a word's first letter or digit (not one after a dot inside a word, as in "v1.2"), or a
 * sign that starts one ($, +, a minus, a bracket).
 */
const READING_START = /(?<![\p{L}\p{N}_'’]|[\p{L}\p{N}]\.)[\p{L}\p{N}]|[$€£¥+(\-−]/gu;

/** The first reader's reading of the text at `start`. */
function readAt(text: string, start: number): { spoken: string; end: number } | undefined {
  for (const reader of ENGLISH_READERS) {
    reader.pattern.lastIndex = start;
    const match = reader.pattern.exec(text);
    const reading = match ? reader.read(match, text) : undefined;
    if (match && reading) return { spoken: reading.spoken, end: start + (reading.length ?? match[0].length) };
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
