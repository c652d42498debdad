/** English number words: the one place digits become words, for every reader of the normalizer. */

const ONES = [
  'zero', 'one', 'two', 'three', 'four', 'five', 'six', 'seven', 'eight', 'nine', 'ten',
  'eleven', 'twelve', 'thirteen', 'fourteen', 'fifteen', 'sixteen', 'seventeen', 'eighteen', 'nineteen',
];
const TENS = ['', '', 'twenty', 'thirty', 'forty', 'fifty', 'sixty', 'seventy', 'eighty', 'ninety'];
const SCALES = ['', 'thousand', 'million', 'billion', 'trillion', 'quadrillion', 'quintillion', 'sextillion'];
const IRREGULAR_ORDINALS: Record<string, string> = {
  one: 'first', two: 'second', three: 'third', five: 'fifth', eight: 'eighth', nine: 'ninth', twelve: 'twelfth',
};

function belowHundred(n: number): string {
  if (n < 20) return ONES[n]!;
  const ones = n % 10;
  return ones === 0 ? TENS[Math.floor(n / 10)]! : `${TENS[Math.floor(n / 10)]}-${ONES[ones]}`;
}

function belowThousand(n: number): string {
  const hundreds = Math.floor(n / 100);
  const rest = n % 100;
  if (hundreds === 0) return belowHundred(rest);
  return rest === 0 ? `${ONES[hundreds]} hundred` : `${ONES[hundreds]} hundred ${belowHundred(rest)}`;
}

/** Each digit as a word: "555" → "five five five". */
export function digitWords(digits: string): string {
  return [...digits].map((digit) => ONES[Number(digit)]).join(' ');
}

/** A whole number given as plain digits, US style (no "and"); past the sextillions it is read digit by digit. */
export function cardinal(digits: string): string {
  const trimmed = digits.replace(/^0+(?=\d)/, '');
  if (trimmed.length > SCALES.length * 3) return digitWords(digits);
  const words: string[] = [];
  for (let end = trimmed.length, scale = 0; end > 0; end -= 3, scale += 1) {
    const group = Number(trimmed.slice(Math.max(0, end - 3), end));
    if (group > 0) words.unshift(scale === 0 ? belowThousand(group) : `${belowThousand(group)} ${SCALES[scale]}`);
  }
  return words.length === 0 ? 'zero' : words.join(' ');
}

/** The ordinal of number words: "twenty-one" → "twenty-first", "one hundred three" → "one hundred third". */
export function ordinalOf(words: string): string {
  const [, head, last] = /^(.*?)([a-z]+)$/.exec(words) ?? ['', '', words];
  const irregular = IRREGULAR_ORDINALS[last!];
  if (irregular) return head + irregular;
  return head + (last!.endsWith('y') ? `${last!.slice(0, -1)}ieth` : `${last}th`);
}

/** Number words made plural, for decades: "ninety" → "nineties", "hundred" → "hundreds". */
export function pluralOf(words: string): string {
  return words.endsWith('y') ? `${words.slice(0, -1)}ies` : `${words}s`;
}

/**
 * Three or four digits read in pairs, as years and house numbers are: 1999 "nineteen ninety-nine", 1905 "nineteen
 * oh five", 1900 "nineteen hundred", 221 "two twenty-one"; a round thousand and the nine after it as a cardinal
 * (2000 "two thousand", 2005 "two thousand five").
 */
export function pairedWords(digits: string): string {
  const value = Number(digits);
  const head = Math.floor(value / 100);
  const tail = value % 100;
  if (head === 0 || value % 1000 < 10) return cardinal(digits);
  if (tail === 0) return `${cardinal(String(head))} hundred`;
  return `${cardinal(String(head))} ${tail < 10 ? 'oh ' : ''}${belowHundred(tail)}`;
}

/** A number as written, sign, thousands separators and decimals included: "-1,234.5" → "minus one thousand two hundred thirty-four point five". */
export function numberWords(written: string): string {
  const [, sign, whole, fraction] = /^([-−+]?)([\d,]*)(?:\.(\d+))?$/.exec(written) ?? ['', '', written, undefined];
  const digits = whole!.replace(/,/g, '');
  let words = /^0\d/.test(digits) ? digitWords(digits) : cardinal(digits || '0');
  if (fraction !== undefined) words += ` point ${digitWords(fraction)}`;
  return sign ? `${sign === '+' ? 'plus' : 'minus'} ${words}` : words;
}
