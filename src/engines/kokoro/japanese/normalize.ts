// The text as MeCab is given it, each unit remembering where in the input it came from: misaki's `ja`
// normalization (a wave dash before a digit read から, the small katakana extensions made plain, NFKC, digits read
// as kana after a space) then Open JTalk's text2mecab (printable ASCII made full-width, control characters dropped).
import { MappedTextBuilder, type MappedText } from '../../mapped-text.js';
import { numberKana } from './numbers.js';

/** ㇰ ㇱ ㇲ ... (Katakana Phonetic Extensions, U+31F0–U+31FF): the kana they are small forms of. */
const PHONETIC_EXTENSIONS = 'クシストヌハヒフヘホムラリルレロ';

/** text2mecab's table for the ASCII that NFKC leaves as it is, where it is not simply the full-width form. */
const TEXT2MECAB_SPECIAL: Readonly<Record<string, string>> = { ' ': '\u3000', '"': '”', "'": '’', '-': '−', '\\': '￥', '`': '‘', '~': '〜' };

const graphemes = new Intl.Segmenter('ja', { granularity: 'grapheme' });

/** text2mecab for one character of NFKC's output. */
function widen(char: string): string {
  const code = char.charCodeAt(0);
  if (code > 0x7f) return char;
  if (code < 0x20 || code === 0x7f) return '';
  return TEXT2MECAB_SPECIAL[char] ?? String.fromCharCode(code + 0xfee0);
}

function extensionToKana(char: string): string {
  const code = char.charCodeAt(0);
  return code >= 0x31f0 && code <= 0x31ff ? (PHONETIC_EXTENSIONS[code - 0x31f0] ?? char) : char;
}

/**
 * `text` as MeCab reads it. NFKC is applied one grapheme cluster at a time (the same result but where a cluster
 * composes with the next, which no Japanese text does), so that each output unit maps back to its cluster.
 */
export function normalizeForMecab(text: string): MappedText {
  const builder = new MappedTextBuilder();
  let digits = '';
  let digitsStart = 0;
  let digitsEnd = 0;
  const flushDigits = (): void => {
    if (!digits) return;
    builder.append(widen(' ') + [...numberKana(digits)].map(widen).join(''), digitsStart, digitsEnd);
    digits = '';
  };
  for (const { segment, index } of graphemes.segment(text)) {
    const end = index + segment.length;
    // Misaki's r'[〜～](?=\d)': the wave dash of a range read as から when a digit (of any script) follows.
    const normalized = /^[〜～]$/u.test(segment) && /^\p{Nd}/u.test(text.slice(end)) ? 'から' : [...segment].map(extensionToKana).join('').normalize('NFKC');
    for (const char of normalized) {
      if (char >= '0' && char <= '9') {
        if (!digits) digitsStart = index;
        digits += char;
        digitsEnd = end;
        continue;
      }
      flushDigits();
      builder.append(widen(char), index, end);
    }
  }
  flushDigits();
  return builder.build();
}
