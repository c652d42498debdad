// Digits read as hiragana before MeCab sees them, as misaki's `ja` does (its num2kana.py, from Greatdane's
// Convert-Numbers-to-Japanese): 2024 → にせんにじゅうよん, 100 → ひゃく, 12345 → いちまんにせんさんびゃくよんじゅうご.
// Misaki reads a run of digits alone, never with its counter: 3人 is さん人 (MeCab reads 人 then), 1個 いち個, and
// a comma or a point between digits splits them into two numbers (3,500 → さん, ごひゃく). The reference's own
// oddities stay, so that the phonemes are the ones the voices were trained on: 0 is ゼロ, a leading zero is dropped
// (03 → さん). One difference: from 10 digits on, misaki gives the English sentence "Number length too long, choose
// less than 10 digits" (which is then spelled letter by letter); here such a run goes to Open JTalk as digits, which
// reads it as a number or digit by digit as it judges (digits.ts). Digits of other scripts (٣, ३) stay text here;
// misaki fails on them.
const KANA: Readonly<Record<string, string>> = {
  '0': 'ゼロ', '1': 'いち', '2': 'に', '3': 'さん', '4': 'よん', '5': 'ご', '6': 'ろく', '7': 'なな', '8': 'はち', '9': 'きゅう',
  '10': 'じゅう', '100': 'ひゃく', '1000': 'せん', '10000': 'まん', '100000000': 'おく',
  '300': 'さんびゃく', '600': 'ろっぴゃく', '800': 'はっぴゃく', '3000': 'さんぜん', '8000': 'はっせん', '01000': 'いっせん',
};

/** The longest run of digits misaki reads as one number. */
const MAX_DIGITS = 9;

function kana(key: string): string {
  return KANA[key] ?? '';
}

function one(digits: string): string {
  return kana(digits);
}

function two(digits: string): string {
  const [first = '', second = ''] = digits;
  if (first === '0') return one(second);
  if (digits === '10') return kana('10');
  if (first === '1') return kana('10') + one(second);
  if (second === '0') return one(first) + kana('10');
  return kana(first) + kana('10') + kana(second);
}

function three(digits: string): string {
  const first = digits[0] ?? '';
  let out = ['1', '3', '6', '8'].includes(first) ? kana(first === '1' ? '100' : `${first}00`) : kana(first) + kana('100');
  if (!(digits.slice(1) === '00' && digits.length === 3)) out += digits[1] === '0' ? kana(digits[2] ?? '') : two(digits.slice(1));
  return out;
}

function four(input: string, standAlone: boolean): string {
  if (input === '0000') return '';
  const digits = input.replace(/^0+/u, '');
  if (digits.length === 1) return one(digits);
  if (digits.length === 2) return two(digits);
  if (digits.length === 3) return three(digits);
  const first = digits[0] ?? '';
  let out: string;
  if (first === '1') out = kana(standAlone ? '1000' : '01000');
  else if (first === '3' || first === '8') out = kana(`${first}000`);
  else out = kana(first) + kana('1000');
  if (digits.slice(1) !== '000') out += digits[1] === '0' ? two(digits.slice(2)) : three(digits.slice(1));
  return out;
}

function longer(digits: string): string {
  const high = digits.slice(0, -4);
  let out: string;
  if (high.length === 1) out = kana(high) + kana('10000');
  else if (high.length === 2) out = two(high) + kana('10000');
  else if (high.length === 3) out = three(high) + kana('10000');
  else if (high.length === 4) out = four(high, false) + kana('10000');
  else {
    const tenThousands = digits.slice(1, 5);
    out = kana(digits[0] ?? '') + kana('100000000') + four(tenThousands, false) + (tenThousands === '0000' ? '' : kana('10000'));
  }
  return out + four(digits.slice(-4), false);
}

/** A run of ASCII digits as misaki reads it, in hiragana (a run too long for it as it is). */
export function numberKana(run: string): string {
  if (run.length > MAX_DIGITS) return run;
  const digits = run.length > 1 ? run.replace(/^0+(?=.)/u, '') : run;
  switch (digits.length) {
    case 1:
      return one(digits);
    case 2:
      return two(digits);
    case 3:
      return three(digits);
    case 4:
      return four(digits, true);
    default:
      return longer(digits);
  }
}
