import { normalizeEnglish } from '../../src/speech/normalize-english.js';
import { execFileSync, spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

/**
 * The judge of speech for the quality test and the benchmark: test/helpers/judge.py in the venv script/install-judge
 * makes (script/setup --test), Whisper base (faster-whisper, CPU int8, beam 5) for what is heard and DNSMOS P.808
 * (speechmos) for how natural it sounds. Test-only: the service never runs it.
 */

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
/** The venv's folder, as the installer names it (one place for the versions). */
export const JUDGE_DIR = execFileSync(path.join(root, 'script/install-judge'), ['--where'], { encoding: 'utf8' }).trim();
const PROGRAM = path.join(root, 'test/helpers/judge.py');

/** Whether script/install-judge finished here (it writes its stamp last). */
export function judgeInstalled(): boolean {
  return existsSync(path.join(JUDGE_DIR, 'installed'));
}

export interface Judgement {
  /** What Whisper base heard, as it writes it (digits, punctuation). */
  transcript: string;
  /** DNSMOS P.808 mean opinion score, 1–5. */
  dnsmos: number;
  /** Each word Whisper heard and when (seconds), when asked for. */
  words: HeardWord[];
}

export interface HeardWord {
  word: string;
  start: number;
  end: number;
}

interface Answer {
  transcript?: string;
  dnsmos?: number;
  words?: HeardWord[];
  error?: string;
}

/** One judge process, the model loaded once; requests are answered one at a time, in order. */
/** A word as voxreel times it (`/tts` with `timestamps`). */
export interface TimedWord {
  word: string;
  start: number;
  end: number;
}

/** Our words and Whisper's, paired where their spellings agree, in order (a longest common subsequence). */
export function heardPairs<T extends Pick<TimedWord, 'word'>>(ours: readonly T[], heard: readonly HeardWord[]): Array<[T, HeardWord]> {
  const key = (word: string) => normalizeWords(word).join(' ');
  const [a, b] = [ours.map((word) => key(word.word)), heard.map((word) => key(word.word))];
  const table = Array.from({ length: a.length + 1 }, () => new Array<number>(b.length + 1).fill(0));
  for (let i = a.length - 1; i >= 0; i -= 1) {
    for (let j = b.length - 1; j >= 0; j -= 1) {
      const row = table[i] as number[];
      row[j] = a[i] !== '' && a[i] === b[j] ? (table[i + 1]?.[j + 1] ?? 0) + 1 : Math.max(table[i + 1]?.[j] ?? 0, row[j + 1] ?? 0);
    }
  }
  const found: Array<[T, HeardWord]> = [];
  for (let i = 0, j = 0; i < a.length && j < b.length; ) {
    if (a[i] !== '' && a[i] === b[j]) found.push([ours[i++] as T, heard[j++] as HeardWord]);
    else if ((table[i + 1]?.[j] ?? 0) >= (table[i]?.[j + 1] ?? 0)) i += 1;
    else j += 1;
  }
  return found;
}

export const median = (values: readonly number[]) => [...values].sort((x, y) => x - y)[Math.floor(values.length / 2)] ?? Number.NaN;

export class Judge {
  private readonly answers: ((answer: Answer) => void)[] = [];

  private constructor(private readonly child: ChildProcessWithoutNullStreams) {
    createInterface({ input: child.stdout }).on('line', (line) => this.answers.shift()?.(JSON.parse(line) as Answer));
  }

  /** Starts the program and waits until its model is loaded. `threads`: CTranslate2's CPU threads. */
  static async start(threads = 2): Promise<Judge> {
    const child = spawn(path.join(JUDGE_DIR, 'bin/python'), [PROGRAM, path.join(JUDGE_DIR, 'whisper-base'), String(threads)], {
      stdio: ['pipe', 'pipe', 'pipe'],
      env: { ...process.env, PYTHONUNBUFFERED: '1', OMP_NUM_THREADS: String(threads) },
    });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr = (stderr + chunk.toString()).slice(-4000)));
    const judge = new Judge(child);
    const ready = new Promise<Answer>((resolve) => judge.answers.push(resolve));
    const exited = new Promise<never>((_, reject) => {
      child.once('error', reject);
      child.once('exit', (code) => reject(new Error(`judge exited (${String(code)}) before it was ready: ${stderr}`)));
    });
    await Promise.race([ready, exited]);
    child.removeAllListeners('exit').removeAllListeners('error');
    child.once('exit', (code) => judge.failAll(`judge exited (${String(code)}): ${stderr}`));
    // A write after the process died: the exit above has already failed the waiting requests.
    child.stdin.on('error', () => undefined);
    return judge;
  }

  /** What is heard in `file` (any format ffmpeg's libraries read) and its DNSMOS score. */
  /** `language`: what Whisper is told it hears (default `en`); `words`: its word timestamps too. */
  async judge(file: string, wanted: { transcript?: boolean; dnsmos?: boolean; language?: string; words?: boolean } = {}): Promise<Judgement> {
    const request = { path: path.resolve(file), transcript: wanted.transcript ?? true, dnsmos: wanted.dnsmos ?? true, language: wanted.language ?? 'en', words: wanted.words ?? false };
    const answer = await new Promise<Answer>((resolve) => {
      this.answers.push(resolve);
      this.child.stdin.write(`${JSON.stringify(request)}\n`);
    });
    if (answer.error !== undefined) throw new Error(`judge: ${answer.error} (${file})`);
    return { transcript: answer.transcript ?? '', dnsmos: answer.dnsmos ?? Number.NaN, words: answer.words ?? [] };
  }

  async close(): Promise<void> {
    if (this.child.exitCode !== null) return;
    const exited = new Promise((resolve) => this.child.once('exit', resolve));
    this.child.stdin.end();
    await exited;
  }

  private failAll(reason: string): void {
    for (const answer of this.answers.splice(0)) answer({ error: reason });
  }
}

/** The paragraph every English voice is scored on: the first paragraph of the Rainbow Passage, a standard reading text. */
export const QUALITY_PARAGRAPH =
  'When the sunlight strikes raindrops in the air, they act as a prism and form a rainbow. The rainbow is a division ' +
  'of white light into many beautiful colors. These take the shape of a long round arch, with its path high above, ' +
  'and its two ends apparently beyond the horizon. There is, according to legend, a boiling pot of gold at one end. ' +
  'People look, but no one ever finds it. When a man looks for something beyond his reach, his friends say he is ' +
  'looking for the pot of gold at the end of the rainbow.';

const ONES = ['zero', 'one', 'two', 'three', 'four', 'five', 'six', 'seven', 'eight', 'nine', 'ten', 'eleven', 'twelve',
  'thirteen', 'fourteen', 'fifteen', 'sixteen', 'seventeen', 'eighteen', 'nineteen'];
const TENS = ['', '', 'twenty', 'thirty', 'forty', 'fifty', 'sixty', 'seventy', 'eighty', 'ninety'];
const SCALES: [number, string][] = [[1e12, 'trillion'], [1e9, 'billion'], [1e6, 'million'], [1000, 'thousand'], [100, 'hundred']];

/** A whole number in words, without "and": 15 → "fifteen", 2024 → "two thousand twenty four". */
export function numberToWords(n: number): string {
  if (!Number.isSafeInteger(n) || n < 0) throw new RangeError(`numberToWords: ${n}`);
  if (n < 20) return ONES[n] ?? '';
  if (n < 100) return [TENS[Math.floor(n / 10)], n % 10 ? ONES[n % 10] : ''].filter(Boolean).join(' ');
  for (const [scale, name] of SCALES) {
    if (n >= scale) {
      const rest = n % scale;
      return [numberToWords(Math.floor(n / scale)), name, rest ? numberToWords(rest) : ''].filter(Boolean).join(' ');
    }
  }
  return '';
}

/** A year as it is said: 1990 → "nineteen ninety", 1905 → "nineteen oh five", 2005 → "two thousand five", 2020 → "twenty twenty". */
function yearToWords(n: number): string {
  const [high, low] = [Math.floor(n / 100), n % 100];
  if (n >= 2000 && n < 2010) return numberToWords(n);
  if (low === 0) return `${numberToWords(high)} hundred`;
  return `${numberToWords(high)} ${low < 10 ? `oh ${numberToWords(low)}` : numberToWords(low)}`;
}

const ORDINALS: Record<string, string> = { one: 'first', two: 'second', three: 'third', five: 'fifth', eight: 'eighth', nine: 'ninth', twelve: 'twelfth' };

function ordinal(words: string): string {
  const last = words.split(' ').pop() ?? '';
  const said = ORDINALS[last] ?? (last.endsWith('y') ? `${last.slice(0, -1)}ieth` : `${last}th`);
  return `${words.slice(0, words.length - last.length)}${said}`;
}

/** What a recognizer writes for words it hears, on the side of the words. */
const WRITTEN: Record<string, string> = { mr: 'mister', mrs: 'missus', dr: 'doctor', ok: 'okay', disc: 'disk' };

/** Currency signs a recognizer writes: the unit and its hundredth, as said. */
const CURRENCIES: Record<string, [string, string]> = { $: ['dollars', 'cents'], '€': ['euros', 'cents'], '£': ['pounds', 'pence'], '¥': ['yen', 'sen'] };
/** Unit symbols a recognizer writes after a number, as said (singular, plural). */
const UNITS: Record<string, [string, string]> = {
  km: ['kilometer', 'kilometers'], 'km/h': ['kilometer per hour', 'kilometers per hour'], kg: ['kilogram', 'kilograms'],
  cm: ['centimeter', 'centimeters'], mm: ['millimeter', 'millimeters'], m: ['meter', 'meters'], mi: ['mile', 'miles'],
  mph: ['mile per hour', 'miles per hour'], lb: ['pound', 'pounds'], lbs: ['pound', 'pounds'], oz: ['ounce', 'ounces'],
  mb: ['megabyte', 'megabytes'], gb: ['gigabyte', 'gigabytes'], ms: ['millisecond', 'milliseconds'], s: ['second', 'seconds'],
  '°c': ['degree celsius', 'degrees celsius'], '°f': ['degree fahrenheit', 'degrees fahrenheit'],
};
const MONTHS = 'january|february|march|april|may|june|july|august|september|october|november|december';

/**
 * Words as a recognizer and a reference are compared: lower case, digits spelled out ("15" → "fifteen", "$12.50" →
 * "twelve dollars and fifty cents", "5%" → "five percent", "3.5" → "three point five", "21st" → "twenty first",
 * "March 15" → "march fifteenth", "3:30 pm" → "three thirty p m"), letters and digits apart ("4A" → "four a"), a
 * leading minus said, phone numbers digit by digit, unit symbols after a number said ("12 km" → "twelve kilometers"), punctuation gone.
 * `years`: four-digit numbers from 1100 to 2099 said as years ("nineteen ninety", "1990s" → "nineteen nineties").
 * `dotTimes`: "9.05" as a time ("nine oh five"), as Whisper writes times it hears, instead of "nine point zero five".
 * `numbers`: numbers of three digits in pairs ("221" → "two twenty one"), or numbers of two to four digits digit by
 * digit ("555" → "five five five"), as house and phone numbers are said.
 */
export function normalizeWords(text: string, options: { years?: boolean; dotTimes?: boolean; numbers?: 'pairs' | 'digits' } = {}): string[] {
  const spell = (digits: string): string => {
    const n = Number(digits.replace(/,/g, ''));
    if (options.years && /^\d{4}$/.test(digits) && n >= 1100 && n < 2100) return yearToWords(n);
    // Numbers of three digits as house numbers and phone numbers are said: in pairs ("two twenty one"), or digit by digit.
    if (options.numbers === 'pairs' && /^\d{3}$/.test(digits) && n % 100 >= 10) return `${numberToWords(Math.floor(n / 100))} ${numberToWords(n % 100)}`;
    if (options.numbers === 'digits' && /^\d{2,4}$/.test(digits)) return [...digits].map((digit) => ONES[Number(digit)]).join(' ');
    return numberToWords(n);
  };
  const money = (sign: string, amount: string, scale = ''): string => {
    const [unit, hundredth] = CURRENCIES[sign] ?? ['', ''];
    const cents = /^(\d[\d,]*)\.(\d\d)$/.exec(amount);
    if (!cents || scale) return `${amount}${scale} ${unit}`;
    const [, whole = '0', part = '00'] = cents;
    if (whole === '0') return `${part} ${hundredth}`;
    return part === '00' ? `${whole} ${unit}` : `${whole} ${unit} and ${part} ${hundredth}`;
  };
  return text
    .toLowerCase()
    .replace(/[’‘]/g, "'")
    // Phone numbers, as said: digit by digit.
    .replace(/\(?\b\d{3}\)?[\s-]\d{3}-\d{4}\b/g, (number) => [...number.replace(/\D/g, '')].map((digit) => ONES[Number(digit)]).join(' '))
    .replace(/(^|[\s(])[-−](?=\d)/g, '$1minus ')
    .replace(/([$€£¥])(\d[\d,]*(?:\.\d+)?)(\s+(?:thousand|million|billion))?/g, (_, sign: string, amount: string, scale?: string) => money(sign, amount, scale))
    .replace(/(\d)%/g, '$1 percent')
    .replace(/(\d)\s*([ap])\.?\s?m\b\.?/g, '$1 $2 m')
    .replace(/\b(1[1-9]|20)(\d)0s\b/g, (whole, century: string, decade: string) =>
      (options.years ? `${spell(century)} ${(TENS[Number(decade)] ?? '').replace(/y$/, 'ies')}` : whole))
    .replace(/(\d[\d,]*(?:\.\d+)?)\s*(km\/h|°[cf]|[a-z]+)(?![\w/])/g, (whole, amount: string, unit: string) => {
      const said = UNITS[unit];
      return said ? `${amount} ${amount === '1' ? said[0] : said[1]}` : whole;
    })
    .replace(options.dotTimes ? /\b([01]?\d|2[0-3])[:.]([0-5]\d)\b/g : /\b(\d{1,2})(?::|\.(?=\d\d [ap] m\b))(\d{2})\b/g, (_, hours: string, minutes: string) =>
      `${spell(hours)} ${minutes === '00' ? "o'clock" : Number(minutes) < 10 ? `oh ${spell(minutes)}` : spell(minutes)}`)
    .replace(new RegExp(`\\b(${MONTHS}) (\\d{1,2})\\b(?!:)`, 'g'), (_, month: string, day: string) => `${month} ${ordinal(spell(day))}`)
    .replace(/\b(\d[\d,]*)(st|nd|rd|th)\b/g, (_, digits: string) => ordinal(spell(digits)))
    .replace(/\b(\d[\d,]*)\.(\d+)\b/g, (_, whole: string, fraction: string) => `${spell(whole)} point ${[...fraction].map((digit) => spell(digit)).join(' ')}`)
    .replace(/(\d)([a-z])|([a-z])(\d)/g, (_, d1?: string, l1?: string, l2?: string, d2?: string) => (d1 ? `${d1} ${l1}` : `${l2} ${d2}`))
    .replace(/\b\d{1,3}(?:,\d{3})+\b|\b\d+\b/g, spell)
    .replace(/'/g, '')
    .replace(/[^a-z0-9 ]/g, ' ')
    .split(/\s+/)
    .filter(Boolean)
    .map((word) => WRITTEN[word] ?? word);
}

/** Word error rate: the edit distance between the two normalized word sequences over the reference's length. */
/** Character edits / characters of `reference`, over what both say without spaces and punctuation (Japanese, Chinese). */
export function characterErrorRate(reference: string, hypothesis: string): number {
  const letters = (text: string) => [...text.normalize('NFKC').replace(/[\p{P}\p{S}\s]/gu, '')];
  const [expected, heard] = [letters(reference), letters(hypothesis)];
  return editDistance(expected, heard) / Math.max(1, expected.length);
}

export function wordErrorRate(reference: string, hypothesis: string): number {
  const ref = normalizeWords(reference);
  return editDistance(ref, normalizeWords(hypothesis)) / Math.max(1, ref.length);
}

/** Levenshtein distance between two sequences. */
function editDistance(ref: readonly string[], hyp: readonly string[]): number {
  let previous = Array.from({ length: hyp.length + 1 }, (_, j) => j);
  for (let i = 1; i <= ref.length; i += 1) {
    const current = [i];
    for (let j = 1; j <= hyp.length; j += 1) {
      current[j] = Math.min((previous[j] ?? 0) + 1, (current[j - 1] ?? 0) + 1, (previous[j - 1] ?? 0) + (ref[i - 1] === hyp[j - 1] ? 0 : 1));
    }
    previous = current;
  }
  return previous[hyp.length] ?? 0;
}

/**
 * Whether a transcript says the reading's words in a row, its numbers taken as cardinals or as years, "9.05" as a
 * number or a time; Whisper writes what it hears in the usual written forms ("Henry VIII", "Mr.", "$3.14",
 * "example.com"), so the transcript is also read out by voxreel's English normalizer before it is compared.
 */
export function saysReading(transcript: string, reading: string): boolean {
  const wanted = ` ${normalizeWords(reading).join(' ')} `;
  // Digits in a transcript stand for any way of saying them: "221" for "two hundred twenty one" and for "two twenty one".
  const ways = [{}, { years: true }, { dotTimes: true }, { years: true, dotTimes: true }, { numbers: 'pairs' as const }, { numbers: 'digits' as const }];
  return [transcript, normalizeEnglish(transcript).text].some((heard) => ways.some((options) => ` ${normalizeWords(heard, options).join(' ')} `.includes(wanted)));
}
