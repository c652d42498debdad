import { MONTHS, yearWords } from './dates.js';
import { cardinal, numberWords, ordinalOf, pairedWords, pluralOf } from './number-words.js';
import { NUMBER, sticky, WHOLE, WORD_END, wordAfter, wordBefore, type Reader } from './reader.js';

interface Currency {
  readonly one: string;
  readonly many: string;
  /** Cents, pence; the yen has none said. */
  readonly minor?: { readonly one: string; readonly many: string };
}

const CENTS = { one: 'cent', many: 'cents' };
const CURRENCIES: Record<string, Currency> = {
  $: { one: 'dollar', many: 'dollars', minor: CENTS },
  '€': { one: 'euro', many: 'euros', minor: CENTS },
  '£': { one: 'pound', many: 'pounds', minor: { one: 'penny', many: 'pence' } },
  '¥': { one: 'yen', many: 'yen' },
};

function amountWords(amount: string, currency: Currency): string {
  const [whole = '0', fraction] = amount.replace(/,/g, '').split('.');
  const { minor } = currency;
  if (fraction !== undefined && (!minor || fraction.length > 2)) return `${numberWords(amount)} ${currency.many}`;
  const cents = Number((fraction ?? '').padEnd(2, '0'));
  const said: string[] = [];
  if (Number(whole) > 0 || cents === 0) said.push(`${cardinal(whole)} ${whole === '1' ? currency.one : currency.many}`);
  if (minor && cents > 0) said.push(`${cardinal(String(cents))} ${cents === 1 ? minor.one : minor.many}`);
  return said.join(' and ');
}

const SCALES: Record<string, string> = { k: 'thousand', K: 'thousand', m: 'million', M: 'million', mn: 'million', bn: 'billion', B: 'billion', tn: 'trillion' };

/** "$15" fifteen dollars, "£3.20" three pounds and twenty pence, "$1.5 million" and "$1.5M" one point five million dollars. */
const money: Reader = {
  pattern: sticky(
    String.raw`([$€£¥])\s?(${WHOLE}(?:\.\d+)?)(?:\s(thousand|million|billion|trillion)|(${Object.keys(SCALES).join('|')}))?${WORD_END}`,
  ),
  read: ([, symbol, amount, scale, scaleLetters]) => {
    const currency = CURRENCIES[symbol!]!;
    const said = scale ?? SCALES[scaleLetters ?? ''];
    return { spoken: said ? `${numberWords(amount!)} ${said} ${currency.many}` : amountWords(amount!, currency) };
  },
};

/** "15%" fifteen percent. */
const percent: Reader = {
  pattern: sticky(String.raw`(${NUMBER})\s?%`),
  read: ([, number]) => ({ spoken: `${numberWords(number!)} percent` }),
};

/** Units after a number: the singular and, when not just an s more, the plural. */
const UNITS: Record<string, readonly [string, string?]> = {
  'km/h': ['kilometer per hour', 'kilometers per hour'],
  mph: ['mile per hour', 'miles per hour'],
  km: ['kilometer'], m: ['meter'], cm: ['centimeter'], mm: ['millimeter'], mi: ['mile'], ft: ['foot', 'feet'],
  kg: ['kilogram'], g: ['gram'], mg: ['milligram'], lb: ['pound'], lbs: ['pound'], oz: ['ounce'], ml: ['milliliter'],
  '°C': ['degree Celsius', 'degrees Celsius'], '°F': ['degree Fahrenheit', 'degrees Fahrenheit'], '°': ['degree'],
  TB: ['terabyte'], GB: ['gigabyte'], MB: ['megabyte'], KB: ['kilobyte'], kB: ['kilobyte'],
  h: ['hour'], min: ['minute'], s: ['second'], ms: ['millisecond'], kWh: ['kilowatt hour'],
};
const UNIT_NAMES = Object.keys(UNITS).sort((a, b) => b.length - a.length).map((name) => name.replace('/', '\\/'));

/** "12 km" twelve kilometers, "1 kg" one kilogram, "25°C" twenty-five degrees Celsius. */
const unit: Reader = {
  pattern: sticky(String.raw`(${NUMBER})\s?(${UNIT_NAMES.join('|')})(?![\p{L}\p{N}/])`),
  read: ([, number, name]) => {
    const [one, many = `${one}s`] = UNITS[name!]!;
    return { spoken: `${numberWords(number!)} ${/^[-−+]?1$/.test(number!) ? one : many}` };
  },
};

/** "1st" first, "22nd" twenty-second, "1,000th" one thousandth. */
const ordinal: Reader = {
  pattern: sticky(String.raw`(${WHOLE})(?:st|nd|rd|th)${WORD_END}`),
  read: ([, digits]) => ({ spoken: ordinalOf(cardinal(digits!.replace(/,/g, ''))) }),
};

/** "1990s" nineteen nineties, "80s" eighties, "100s" hundreds. */
const decade: Reader = {
  pattern: sticky(String.raw`(\d0|100|\d{3}0)'?s${WORD_END}`),
  read: ([, digits]) => {
    if (/^10+$/.test(digits!)) return { spoken: pluralOf(cardinal(digits!).replace(/^one /, '')) };
    return { spoken: pluralOf(digits!.length === 4 ? pairedWords(digits!) : cardinal(digits!)) };
  },
};

const MONTH_NAMES = new Set(MONTHS);
const YEAR_WORDS = new Set(['in', 'since', 'by', 'until', 'till', 'year', 'circa']);
const YEAR_RANGE = { from: 1100, to: 2099 };

/**
 * A four-digit number without separators is a year between 1100 and 2099, or at any value after "in", "since",
 * "by", "until", "till", "year", "circa" or a month name, or before AD, BC, CE or BCE.
 */
function isYear(digits: string, source: string, index: number): boolean {
  const value = Number(digits);
  if (value >= YEAR_RANGE.from && value <= YEAR_RANGE.to) return true;
  const before = wordBefore(source, index)?.text ?? '';
  if (YEAR_WORDS.has(before.toLowerCase()) || MONTH_NAMES.has(before)) return true;
  return /^(?:AD|BC|CE|BCE)$/.test(wordAfter(source, index + digits.length) ?? '');
}

/** "v1.2.3" version one point two point three. */
const version: Reader = {
  pattern: sticky(String.raw`[vV](\d+(?:\.\d+)+)${WORD_END}(?!\.\d)`),
  read: ([, numbers]) => ({ spoken: `version ${numbers!.split('.').map(cardinal).join(' point ')}` }),
};

/** Plain numbers: cardinals, decimals, years ("'05" oh five), and dotted runs such as addresses ("1.2.3" one dot two dot three). */
const plainNumber: Reader = {
  pattern: sticky(String.raw`(?:(\d+(?:\.\d+){2,})|(${NUMBER}))(?![\p{L}\p{N}]|\.\d)`),
  read: (match, source) => {
    const [, dotted, plain = ''] = match;
    if (dotted) return { spoken: dotted.split('.').map(cardinal).join(' dot ') };
    if (/^[1-9]\d{3}$/.test(plain) && isYear(plain, source, match.index)) return { spoken: pairedWords(plain) };
    if (/^\d\d$/.test(plain) && /['’]/.test(source[match.index - 1] ?? '')) return { spoken: yearWords(plain) };
    return { spoken: numberWords(plain) };
  },
};

export { decade, money, ordinal, percent, plainNumber, unit, version };
