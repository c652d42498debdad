import { cardinal, digitWords, ordinalOf, pairedWords } from './number-words.js';
import { capitalized, isNameWithin, readingWithPeriod, sticky, WORD_END, wordAfter, wordBefore, type Reader } from './reader.js';

interface Said {
  readonly said: string;
  /** Whether it may end a sentence: its dot is kept where one may end. */
  readonly mayEnd?: boolean;
}

/** Abbreviations with one reading. */
const ABBREVIATIONS: Record<string, Said> = {
  'Mr.': { said: 'Mister' },
  'Mrs.': { said: 'Missus' },
  'Ms.': { said: 'Miz' },
  'Prof.': { said: 'Professor' },
  'Mt.': { said: 'Mount' },
  'Jr.': { said: 'Junior', mayEnd: true },
  'Sr.': { said: 'Senior', mayEnd: true },
  'Ave.': { said: 'Avenue', mayEnd: true },
  'Rd.': { said: 'Road', mayEnd: true },
  'etc.': { said: 'et cetera', mayEnd: true },
  'vs.': { said: 'versus' },
  vs: { said: 'versus' },
  'e.g.': { said: 'for example' },
  'i.e.': { said: 'that is' },
  'approx.': { said: 'approximately' },
};

/**
 * Readings that hang on the words around: "St." is Street after a name or a number ("Baker St.", "5th St."), else
 * Saint before a name ("St. Louis"); "Dr." is Doctor before a name, else Drive after one ("Elm Dr."); "No." is
 * Number only before a number.
 */
function contextual(abbreviation: string, source: string, start: number): Said | undefined {
  const before = wordBefore(source, start);
  const afterName = isNameWithin(source, before) || /\d/.test(before?.text ?? '');
  const beforeName = capitalized(wordAfter(source, start + abbreviation.length));
  switch (abbreviation) {
    case 'St.':
      return afterName || !beforeName ? { said: 'Street', mayEnd: true } : { said: 'Saint' };
    case 'Dr.':
      return !beforeName && (capitalized(before?.text) || afterName) ? { said: 'Drive', mayEnd: true } : { said: 'Doctor' };
    default:
      return /^\s?\d/.test(source.slice(start + abbreviation.length, start + abbreviation.length + 2)) ? { said: 'number' } : undefined;
  }
}

const abbreviation: Reader = {
  pattern: sticky(String.raw`(?:(?:Mrs?|Ms|Prof|Mt|Jr|Sr|Ave|Rd|etc|vs|approx|St|Dr|[Nn]o)\.|e\.g\.|i\.e\.|vs${WORD_END})`),
  read: (match, source) => {
    const [written] = match;
    const found = ABBREVIATIONS[written] ?? contextual(written, source, match.index);
    if (!found) return undefined;
    return readingWithPeriod(found.said, match, source, found.mayEnd === true);
  },
};

const ROMAN = /^(?:XL|L?X{0,3})(?:IX|IV|V?I{0,3})$/;
const ROMAN_VALUES: Record<string, number> = { I: 1, V: 5, X: 10, L: 50 };
/** Words after which a numeral counts: "Chapter IV" chapter four, "World War II" world war two. */
const COUNTED = new Set(
  'chapter part volume vol book act scene section war ww phase stage type class level article appendix episode round grade tier category figure table psalm canto unit step'.split(' '),
);
/** Capitalized words that are no name: "The IV" stays as written. */
const NOT_NAMES = new Set('The A An And Or But Of In On At To For With By From As Is It My Our Your His Her Their Its This That These Those He She We They You If So Not No'.split(' '));

function romanValue(numeral: string): number {
  let value = 0;
  for (let i = 0; i < numeral.length; i++) {
    const digit = ROMAN_VALUES[numeral[i]!]!;
    const next = ROMAN_VALUES[numeral[i + 1] ?? ''] ?? 0;
    value += digit < next ? -digit : digit;
  }
  return value;
}

/**
 * Roman numerals of I, V, X and L after a word that counts ("Chapter IV" chapter four), or the ordinal after a name
 * ("Henry VIII" Henry the eighth); after names only numerals of I, V and X, and never I or X alone ("Malcolm X");
 * C, D and M are left alone ("Type C", "Washington DC").
 */
const roman: Reader = {
  pattern: sticky(String.raw`[IVXL]+${WORD_END}`),
  read: (match, source) => {
    const [numeral] = match;
    if (!ROMAN.test(numeral)) return undefined;
    const before = wordBefore(source, match.index)?.text;
    const value = String(romanValue(numeral));
    if (before && COUNTED.has(before.toLowerCase())) return { spoken: cardinal(value) };
    if (!capitalized(before) || NOT_NAMES.has(before!) || /L/.test(numeral) || numeral === 'I' || numeral === 'X') return undefined;
    return { spoken: `the ${ordinalOf(cardinal(value))}` };
  },
};

/** Digits inside a word: one or two as a number, three or four in pairs, more (or a leading zero) digit by digit. */
function innerDigits(digits: string): string {
  if (digits.startsWith('0') || digits.length > 4) return digitWords(digits);
  return digits.length <= 2 ? cardinal(digits) : pairedWords(digits);
}

/** "221B" two twenty-one B, "Q3" Q three, "MP3" M P three: letters up to three capitals spelled, longer runs kept. */
const alphanumeric: Reader = {
  pattern: sticky(String.raw`(?=[A-Za-z\d]*\d)(?=[A-Za-z\d]*[A-Za-z])[A-Za-z\d]+${WORD_END}`),
  read: ([written]) => ({
    spoken: written.match(/\d+|[A-Za-z]+/g)!.map((run) => {
      if (/\d/.test(run)) return innerDigits(run);
      if (run.length === 1 || /^[A-Z]{2,3}$/.test(run)) return [...run.toUpperCase()].join(' ');
      return run;
    }).join(' '),
  }),
};

export { abbreviation, alphanumeric, roman };
