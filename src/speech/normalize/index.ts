import { email, phone, url } from './addresses.js';
import { dayMonth, isoDate, monthDay, slashDate, time } from './dates.js';
import { decade, money, ordinal, percent, plainNumber, unit, version } from './numbers.js';
import type { Reader } from './reader.js';
import { abbreviation, alphanumeric, roman } from './words.js';

export type { Reader, Reading } from './reader.js';
export { wordAfter, wordBefore } from './reader.js';

/** The readers of English text, first taker first: the longer and surer forms before the numbers they contain. */
export const ENGLISH_READERS: readonly Reader[] = [
  email, url, phone, isoDate, slashDate, monthDay, dayMonth, time, money, percent, decade, unit, ordinal, version, alphanumeric,
  abbreviation, roman, plainNumber,
];
