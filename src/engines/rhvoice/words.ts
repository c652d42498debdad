import type { WordTiming } from '../types.js';
import type { RhvoiceWordMark } from './protocol.js';

/** From the first letter, digit or mark of a token to its last one. */
const SPOKEN_PART = /[\p{L}\p{N}\p{M}](?:.*[\p{L}\p{N}\p{M}])?/su;

/** UTF-16 index of each UTF-8 byte offset of `text` (and of its end); -1 inside a character. */
function utf16IndexByByte(text: string): Int32Array {
  const table = new Int32Array(Buffer.byteLength(text, 'utf8') + 1).fill(-1);
  let bytes = 0;
  let units = 0;
  for (const char of text) {
    table[bytes] = units;
    bytes += Buffer.byteLength(char, 'utf8');
    units += char.length;
  }
  table[bytes] = units;
  return table;
}

/** RHVoice's words are whitespace tokens: drop the punctuation around the letters and digits, if there are any. */
function trimToWord(text: string, start: number, end: number): [number, number] {
  const spoken = SPOKEN_PART.exec(text.slice(start, end));
  return spoken ? [start + spoken.index, start + spoken.index + spoken[0].length] : [start, end];
}

/** Word timings from RHVoice's word marks: byte spans of the UTF-8 text mapped back to `text`, samples to seconds. */
export function rhvoiceWordTimings(text: string, marks: readonly RhvoiceWordMark[], sampleRate: number, totalSamples: number): WordTiming[] {
  const byByte = utf16IndexByByte(text);
  const words: WordTiming[] = [];
  for (const mark of marks) {
    const start = byByte[mark.byteOffset] ?? -1;
    const end = byByte[mark.byteOffset + mark.byteLength] ?? -1;
    const previous = words.at(-1);
    if (start === -1 || end <= start || (previous && start < previous.textOffset + previous.textLength)) continue;
    const [from, to] = trimToWord(text, start, end);
    const startSample = Math.min(mark.startSample, totalSamples);
    const endSample = Math.min(Math.max(mark.endSample, startSample), totalSamples);
    words.push({
      word: text.slice(from, to),
      start: startSample / sampleRate,
      end: endSample / sampleRate,
      textOffset: from,
      textLength: to - from,
    });
  }
  return words;
}
