import { describe, expect, it } from 'vitest';
import { AppError } from '../../src/errors.js';
import { blendName, MAX_BLEND_PARTS, parseBlend } from '../../src/engines/kokoro/blend.js';
import { PACK_LANGUAGES, packInfo } from '../../src/engines/kokoro/packs.js';
import { espeakPhonemes } from '../../src/engines/kokoro/phonemes/espeak.js';
import { kokoroSymbols } from '../../src/engines/kokoro/phonemes/ipa.js';
import { withSymbols } from '../../src/engines/kokoro/synthesis.js';
import { tokenOf, tokenRuns } from '../../src/engines/kokoro/tokens.js';
import { Phonemizer } from '../../src/engines/piper/phonemizer.js';

const phonemizer = await Phonemizer.create();
const native = phonemizer.build === 'native';
if (!native) console.warn('kokoro-phonemes.test.ts: eSpeak NG 1.52\'s native library is not installed (script/setup installs it): the eSpeak cases are skipped.');
const american = PACK_LANGUAGES.a!;
const british = PACK_LANGUAGES.b!;

describe.runIf(native || Boolean(process.env.CI))("Kokoro's phonemes from eSpeak NG", () => {
  it("rewrites eSpeak NG's tied IPA as misaki does: diphthongs and affricates as one symbol, American and British apart", () => {
    const us = espeakPhonemes(phonemizer, 'Joy, judge, go home, my cow.', american);
    expect(us.phonemes).toBe('ʤˈY, ʤˈʌʤ, ɡˌO hˈOm, mI kˈW.');
    const uk = espeakPhonemes(phonemizer, 'Go home, my cow.', british);
    expect(uk.phonemes).toBe('ɡˌQ hˈQm, mI kˈW.');
    // Every symbol is in the model's vocabulary.
    for (const symbol of us.phonemes + uk.phonemes) expect(tokenOf(symbol), symbol).toBeTypeOf('number');
  });

  it('keeps each word of the text with its symbols, in order', () => {
    const text = "Don't stop: the kitten's button, 42 times.";
    const { phonemes, words } = espeakPhonemes(phonemizer, text, american);
    expect(words.map((word) => text.slice(word.textOffset, word.textOffset + word.textLength))).toEqual(["Don't", 'stop', 'the', "kitten's", 'button', '42', 'times']);
    words.forEach((word, index) => {
      expect(word.phonemeEnd).toBeGreaterThan(word.phonemeStart);
      if (index > 0) expect(word.phonemeStart).toBeGreaterThanOrEqual(words[index - 1]!.phonemeEnd);
    });
    // A number eSpeak NG reads as several words is one word of the text.
    expect(phonemes.slice(words[5]!.phonemeStart, words[5]!.phonemeEnd)).toBe('fˈɔɹTi tˈu');
    expect(phonemes.slice(words[1]!.phonemeStart, words[1]!.phonemeEnd)).toBe('stˈɑp');
  });

  it('reads the other languages through eSpeak NG, their tied sounds rewritten (misaki EspeakG2P)', () => {
    expect(espeakPhonemes(phonemizer, 'Ciao mondo.', PACK_LANGUAGES.i!).phonemes).toBe('ʧˈao mˈondo.');
    const french = espeakPhonemes(phonemizer, 'Bonjour, un vin blanc.', PACK_LANGUAGES.f!);
    expect(french.words).toHaveLength(4);
    for (const symbol of french.phonemes) expect(tokenOf(symbol), symbol).toBeTypeOf('number');
  });

  it('says SSML phoneme IPA in Kokoro\'s symbols, and refuses a symbol it has none for', () => {
    expect(kokoroSymbols('ˈtʃɑːk', american, 'kokoro:af_heart')).toBe('ʧˈɑk');
    expect(kokoroSymbols('həˈloʊ', american, 'kokoro:af_heart')).toBe('həlˈO');
    expect(kokoroSymbols('həˈləʊ', british, 'kokoro:bf_emma')).toBe('həlˈQ');
    const refused = (() => {
      try {
        kokoroSymbols('ʘa', american, 'kokoro:af_heart');
      } catch (error) {
        return error;
      }
      return undefined;
    })();
    expect(refused).toBeInstanceOf(AppError);
    expect(refused).toMatchObject({ code: 'UNSUPPORTED_SSML', message: expect.stringContaining('U+0298') });
  });

  it("puts a span's symbols in place of its words' phonemes", () => {
    const text = 'Say tomato now.';
    const phonemized = espeakPhonemes(phonemizer, text, american);
    const replaced = withSymbols(phonemized, [{ start: 4, end: 10, symbols: 'təmˈɑtO' }]);
    expect(replaced.phonemes).toContain('təmˈɑtO');
    const word = replaced.words[1]!;
    expect(replaced.phonemes.slice(word.phonemeStart, word.phonemeEnd)).toBe('təmˈɑtO');
    expect(replaced.phonemes.slice(replaced.words[2]!.phonemeStart, replaced.words[2]!.phonemeEnd)).toBe(phonemized.phonemes.slice(phonemized.words[2]!.phonemeStart, phonemized.words[2]!.phonemeEnd));
  });
});

describe('Kokoro tokens, packs and blends', () => {
  it('makes one inference a sentence, a sentence over 510 tokens cut after a clause, never more than 510', () => {
    const clause = 'ðə kwˈɪk bɹˈWn fˈɑks ʤˈʌmps ˌOvəɹ ðə lˈAzi dˈɑɡ, ';
    const long = `${clause.repeat(12).trim().slice(0, -1)}.`;
    const runs = tokenRuns(`hˈɛlO. ${long} bˈI.`);
    expect(runs.length).toBeGreaterThanOrEqual(4);
    expect(runs[0]).toMatchObject({ from: 0, to: 6 });
    for (const run of runs) {
      expect(run.ids.length).toBeGreaterThan(0);
      expect(run.ids.length).toBeLessThanOrEqual(510);
    }
    const middle = runs.slice(1, -1);
    for (const run of middle.slice(0, -1)) expect(`hˈɛlO. ${long} bˈI.`.slice(run.to - 1, run.to)).toBe(',');
    // No pause, no space: a hard cut at 510.
    expect(tokenRuns('a'.repeat(1200)).map((run) => run.ids.length)).toEqual([510, 510, 180]);
    // Symbols outside the vocabulary are left out, their places kept.
    expect(tokenRuns('a#b').map((run) => run.tokenAt)).toEqual([[0, -1, 1]]);
  });

  it('reads language and gender from a pack name', () => {
    expect(packInfo('af_heart')).toMatchObject({ language: { tag: 'en-US', espeakVoice: 'en-us' }, gender: 'female', displayName: 'Heart' });
    expect(packInfo('bm_george')).toMatchObject({ language: { tag: 'en-GB' }, gender: 'male' });
    expect(packInfo('zf_xiaobei')?.language.espeakVoice).toBe('cmn');
    expect(packInfo('jf_alpha')?.language.espeakVoice).toBeUndefined();
    expect(packInfo('xf_nobody')).toBeUndefined();
  });

  it('parses blends as Kokoro-FastAPI writes them, weights normalized, and names them in lowest terms', () => {
    expect(parseBlend('af_bella(2)+af_sky(1)')).toEqual([
      { pack: 'af_bella', weight: 2 / 3 },
      { pack: 'af_sky', weight: 1 / 3 },
    ]);
    expect(parseBlend('AF_Bella+af_sky')).toEqual([
      { pack: 'af_bella', weight: 0.5 },
      { pack: 'af_sky', weight: 0.5 },
    ]);
    expect(blendName(parseBlend('af_bella(4)+af_sky(2)')!)).toBe('af_bella(2)+af_sky(1)');
    expect(blendName(parseBlend('af_heart')!)).toBe('af_heart');
    expect(blendName(parseBlend('af_heart(0.5)+am_michael(1.5)')!)).toBe('af_heart(1)+am_michael(3)');
    for (const bad of ['af_bella(0)+af_sky', 'af_bella()', 'af_bella+', 'nobody', 'af_bella(-1)', Array.from({ length: MAX_BLEND_PARTS + 1 }, () => 'af_sky').join('+')]) {
      expect(parseBlend(bad), bad).toBeUndefined();
    }
  });
});
