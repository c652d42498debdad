import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { normalizeEnglish } from '../../src/speech/normalize-english.js';

interface Item {
  text: string;
  reading: string;
}

const items = JSON.parse(readFileSync(new URL('../../fixtures/normalization-en.json', import.meta.url), 'utf8')) as Item[];

/** What a listener hears: lower case, punctuation but apostrophes gone (a hyphen parts words). */
const heard = (text: string) => text.toLowerCase().replace(/[^\p{L}\p{N}'\s]/gu, ' ').split(/\s+/).filter(Boolean).join(' ');

/** Each word of the output with the source text it maps back to. */
function wordSources(text: string): [string, string][] {
  const mapped = normalizeEnglish(text);
  return [...mapped.text.matchAll(/[^\s,]+/g)].map(({ 0: word, index }) => {
    const span = mapped.sourceSpan(index, index + word.length)!;
    return [word, text.slice(span.offset, span.offset + span.length)];
  });
}

describe('normalizeEnglish: fixtures/normalization-en.json', () => {
  it('holds at least 36 items, each reading in plain lower-case words', () => {
    expect(items.length).toBeGreaterThanOrEqual(36);
    for (const { reading } of items) expect(reading).toMatch(/^[a-z']+(?: [a-z']+)*$/);
  });

  it.each(items)('$text', ({ text, reading }) => {
    expect(heard(normalizeEnglish(text).text)).toBe(reading);
  });
});

describe('normalizeEnglish: what is said', () => {
  it.each([
    ['Dr. Smith lives at 221B Baker St. and paid 15% more in Q3.', 'Doctor Smith lives at two twenty-one B Baker Street and paid fifteen percent more in Q three.'],
    ['Bring fruit, etc.', 'Bring fruit, et cetera.'],
    ['It ends at 7 p.m. Then we go.', 'It ends at seven P M. Then we go.'],
    ['Elm Dr. is long; St. Paul is not.', 'Elm Drive is long; Saint Paul is not.'],
    ['Call 1-800-555-1234 or +44 20 7946 0958.', 'Call one, eight zero zero, five five five, one two three four or plus four four, two zero, seven nine four six, zero nine five eight.'],
    ['It costs $1.01, £1.01, €1 or $2 billion.', 'It costs one dollar and one cent, one pound and one penny, one euro or two billion dollars.'],
    ['v1.2.3 runs on 192.168.0.1 at 12:00:00.', "version one point two point three runs on one hundred ninety-two dot one hundred sixty-eight dot zero dot one at twelve o'clock."],
    ['B2B, MP3, 4x4 and 3D in the 80s.', 'B two B, M P three, four X four and three D in the eighties.'],
    ['The 1st of May: $1.5M, $20k, 555-1234.', 'The first of May: one point five million dollars, twenty thousand dollars, five five five, one two three four.'],
    ["The '90s and '05, 100s and 1000s of people.", "The 'nineties and 'oh five, hundreds and thousands of people."],
    ['Pick 1,2,3; +3% or +1 kg.', 'Pick one,two,three; plus three percent or plus one kilogram.'],
  ])('%s', (text, said) => {
    expect(normalizeEnglish(text).text).toBe(said);
  });

  it('reads slashed dates month first, and day first only when the first number cannot be a month', () => {
    expect(normalizeEnglish('04/07/2025').text).toBe('April seventh, twenty twenty-five');
    expect(normalizeEnglish('15/03/2024').text).toBe('March fifteenth, twenty twenty-four');
  });

  it('reads four digits as a year from 1100 to 2099, elsewhere only in a year context', () => {
    expect(normalizeEnglish('1500 people').text).toBe('fifteen hundred people');
    expect(normalizeEnglish('3000 people, 1,999 people').text).toBe('three thousand people, one thousand nine hundred ninety-nine people');
    expect(normalizeEnglish('in 2150, 1066 AD').text).toBe('in twenty-one fifty, ten sixty-six AD');
    expect(normalizeEnglish('2000, 2005, 1900, 1905').text).toBe('two thousand, two thousand five, nineteen hundred, nineteen oh five');
  });

  it('reads Roman numerals after counting words and names only', () => {
    expect(normalizeEnglish('Part I, Henry V, Malcolm X, Henry I, the IV drip, Type C, Washington DC, WW II').text).toBe(
      'Part one, Henry the fifth, Malcolm X, Henry I, the IV drip, Type C, Washington DC, WW two',
    );
  });

  it('leaves other scripts alone, and numbers within them or between their words', () => {
    const text = '東京は3月に行きます。Привет, мир! Привет 5 раз. 価格は $5 です。';
    const mapped = normalizeEnglish(text);
    expect(mapped.text).toBe(text);
    for (let index = 0; index < text.length; index++) expect(mapped.sourceSpan(index, index + 1)).toEqual({ offset: index, length: 1 });
  });

  it('reads numbers beside English words in a text of other scripts', () => {
    expect(normalizeEnglish('東京 has 3 lines').text).toBe('東京 has three lines');
  });
});

describe('normalizeEnglish: mapping back to the source', () => {
  it('maps each word of a reading to the span it reads, and untouched words to themselves', () => {
    expect(wordSources('Sales rose by 15%.')).toEqual([
      ['Sales', 'Sales'], ['rose', 'rose'], ['by', 'by'], ['fifteen', '15%'], ['percent.', '15%.'],
    ]);
    expect(wordSources('Dr. Smith paid $12.50 on March 15, 2024.')).toEqual([
      ['Doctor', 'Dr.'], ['Smith', 'Smith'], ['paid', 'paid'],
      ['twelve', '$12.50'], ['dollars', '$12.50'], ['and', '$12.50'], ['fifty', '$12.50'], ['cents', '$12.50'], ['on', 'on'],
      ['March', 'March 15, 2024'], ['fifteenth', 'March 15, 2024'], ['twenty', 'March 15, 2024'], ['twenty-four.', 'March 15, 2024.'],
    ]);
  });

  it("keeps a sentence's dot after an abbreviation as the source's own dot", () => {
    const mapped = normalizeEnglish('Bring fruit, etc.');
    expect(mapped.sourceSpan(mapped.text.length - 1, mapped.text.length)).toEqual({ offset: 16, length: 1 });
    expect(mapped.sourceSpan(13, 22)).toEqual({ offset: 13, length: 3 });
  });
});

describe('normalizeEnglish: speed', () => {
  /** The best of a few runs, in milliseconds, after a warm-up. */
  function fastest(text: string): number {
    for (let i = 0; i < 3; i++) normalizeEnglish(text);
    return Math.min(
      ...Array.from({ length: 10 }, () => {
        const start = performance.now();
        normalizeEnglish(text);
        return performance.now() - start;
      }),
    );
  }

  it('normalizes 5000 characters in well under 10 ms', () => {
    const text = 'Dr. Smith lives at 221B Baker St. and paid 15% more in Q3. Call (555) 123-4567 on March 15, 2024 at 3:30 pm. ';
    expect(fastest(text.repeat(50).slice(0, 5000))).toBeLessThan(10);
  });

  // Unbounded address patterns once scanned such runs to their end from each word: 180 ms for 5000 characters.
  it.each(['a-', 'a.', '1-', '1 '])('takes linear time on 5000 characters of "%s"', (unit) => {
    expect(fastest(unit.repeat(2500))).toBeLessThan(40);
  });
});
