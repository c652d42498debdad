import { cardinal, digitWords, ordinalOf, pairedWords } from './number-words.js';
import { readingWithPeriod, sticky, WORD_END, wordBefore, type Reader } from './reader.js';

export const MONTHS = 'January February March April May June July August September October November December'.split(' ');
const SHORT_MONTHS = 'Jan Feb Mar Apr Jun Jul Aug Sep Sept Oct Nov Dec'.split(' ');
const MONTH = String.raw`(${MONTHS.join('|')}|(?:${SHORT_MONTHS.join('|')})\.?)`;
const DAY = String.raw`(\d{1,2})(?:st|nd|rd|th)?`;
const YEAR = String.raw`(?:,?\s(\d{4}))?`;

function monthOf(name: string): string | undefined {
  const short = name.replace('.', '').slice(0, 3);
  return MONTHS.find((month) => month.startsWith(short));
}

/** Years of four digits in pairs; of two, with their leading zero said: '05 "oh five". */
export function yearWords(digits: string): string {
  if (digits.length === 4) return pairedWords(digits);
  return digits.startsWith('0') ? `oh ${digitWords(digits.slice(1))}` : cardinal(digits);
}

/**
 * "March fifteenth, twenty twenty-four", or with `dayFirstAfter` ("the " or nothing) "the fifteenth of March"; undefined
 * when the month or the day cannot be.
 */
function dateWords(month: string | undefined, day: number, year: string | undefined, dayFirstAfter?: string): string | undefined {
  if (!month || day < 1 || day > 31) return undefined;
  const dayWords = ordinalOf(cardinal(String(day)));
  const date = dayFirstAfter === undefined ? `${month} ${dayWords}` : `${dayFirstAfter}${dayWords} of ${month}`;
  return year ? `${date}, ${yearWords(year)}` : date;
}

function spoken(words: string | undefined): { spoken: string } | undefined {
  return words === undefined ? undefined : { spoken: words };
}

/** ISO 8601: "2024-03-15". */
const isoDate: Reader = {
  pattern: sticky(String.raw`(\d{4})-(\d{2})-(\d{2})(?![\p{L}\p{N}]|-\d)`),
  read: ([, year, month, day]) => spoken(dateWords(MONTHS[Number(month) - 1], Number(day), year)),
};

/**
 * Slashes: month first, as in the US ("04/07/2025" April seventh); day first only when the first number cannot be a
 * month ("15/03/2024" March fifteenth).
 */
const slashDate: Reader = {
  pattern: sticky(String.raw`(\d{1,2})/(\d{1,2})/(\d{4}|\d{2})(?![\p{L}\p{N}]|/\d)`),
  read: ([, first, second, year]) => {
    const dayFirst = Number(first) > 12;
    const month = MONTHS[Number(dayFirst ? second : first) - 1];
    return spoken(dateWords(month, Number(dayFirst ? first : second), year));
  },
};

/** "March 15, 2024", "Mar. 15th", "March 15". */
const monthDay: Reader = {
  pattern: sticky(String.raw`${MONTH}\s${DAY}${YEAR}(?![\p{L}\p{N}]|[:.,]\d)`),
  read: ([, month, day, year]) => spoken(dateWords(monthOf(month!), Number(day), year)),
};

/** "15 March 2024" the fifteenth of March, twenty twenty-four; "the 1st of May" the first of May. */
const dayMonth: Reader = {
  pattern: sticky(String.raw`${DAY}\s(?:of\s)?${MONTH}${YEAR}${WORD_END}`),
  read: (match, source) => {
    const [, day, month, year] = match;
    const article = /^the$/i.test(wordBefore(source, match.index)?.text ?? '') ? '' : 'the ';
    return spoken(dateWords(monthOf(month!), Number(day), year, article));
  },
};

/** "3:30 pm", "15:45", "7am", "8:15 p.m.": hours and minutes, with a.m. or p.m. said as letters. */
const time: Reader = {
  pattern: sticky(String.raw`(\d{1,2})(?::(\d{2})(?::(\d{2}))?)?(?:\s?([AaPp])\.?[Mm]\.?)?${WORD_END}`),
  read: (match, source) => {
    const [, hourDigits, minutes, seconds, meridiem] = match;
    const hour = Number(hourDigits);
    if (minutes === undefined && meridiem === undefined) return undefined;
    if (meridiem ? hour < 1 || hour > 12 : hour > 23) return undefined;
    if (Number(minutes ?? 0) > 59 || Number(seconds ?? 0) > 59) return undefined;
    const said = [cardinal(String(hour))];
    if (minutes === '00' && !meridiem) said.push(hour >= 1 && hour <= 12 ? "o'clock" : 'hundred');
    else if (minutes && minutes !== '00') said.push(minutes.startsWith('0') ? `oh ${cardinal(minutes)}` : cardinal(minutes));
    if (seconds && seconds !== '00') said.push(`and ${cardinal(seconds)} seconds`);
    if (meridiem) said.push(`${meridiem.toUpperCase()} M`);
    return readingWithPeriod(said.join(' '), match, source, true);
  },
};

export { dayMonth, isoDate, monthDay, slashDate, time };
