// IPA spelled in eSpeak NG's phoneme names (src/engines/espeak/ipa.ts). The table is part of what eSpeak NG's en-US
// voice reports for its phonemes; the end-to-end path (the host asking eSpeak, the audio, Whisper) is in
// test/speech/ssml.test.ts and test/engines/quality.test.ts.
import { describe, expect, it } from 'vitest';
import { AppError } from '../../src/errors.js';
import { buildPhonemeTable, IpaSpeller } from '../../src/engines/espeak/ipa.js';
import { stressOnVowels } from '../../src/engines/spoken-ipa.js';

const EN_US: [string, string][] = [
  ['æ', 'a'], ['b', 'b'], ['d', 'd'], ['ɡ', 'g'], ['k', 'k'], ['l', 'l'], ['m', 'm'], ['n', 'n'], ['r', 'r'], ['s', 's'], ['t', 't'], ['z', 'z'],
  ['ð', 'D'], ['ɛ', 'E'], ['ʃ', 'S'], ['θ', 'T'], ['ʌ', 'V'], ['ɑː', '0'], ['ɚ', '3'], ['ə', '@'], ['tʃ', 'tS'], ['eɪ', 'eI'],
  ['oʊ', 'oU'], ['ɜː', '3:'], ['iː', 'i:'], ['ᵻ', 'I#'], ['ɹ', 'r-'],
];

describe('spelling IPA in eSpeak NG phoneme names', () => {
  const speller = new IpaSpeller(EN_US);

  it('takes the longest IPA the table has, and puts stress before the vowel, where eSpeak wants it', () => {
    expect(speller.spell('ˈtʃiːz', 'espeak-ng:en-us')).toBe("tS'i:z");
    expect(speller.spell('təˈmɑːtoʊ', 'espeak-ng:en-us')).toBe("t@m'0toU");
    expect(speller.spell('ˌbæ ˈzɛd', 'espeak-ng:en-us')).toBe("b,a z'Ed");
  });

  it('reads what people write around IPA: slashes, syllable dots, tie bars, a colon for ː, ɝ and unmarked ɑ or ɪ', () => {
    expect(speller.spell('/ˈt͡ʃiː.z/', 'espeak-ng:en-us')).toBe("tS'i:z");
    expect(speller.spell('bɝd', 'espeak-ng:en-us')).toBe('b3:d');
    expect(speller.spell('kɑt', 'espeak-ng:en-us')).toBe('k0t');
    expect(speller.spell('sɪt', 'espeak-ng:en-us')).toBe('sI#t');
    expect(speller.spell('ti:', 'espeak-ng:en-us')).toBe('ti:');
  });

  it('refuses a symbol the voice has no phoneme for with 422 UNSUPPORTED_SSML naming it', () => {
    const refusal = (() => {
      try {
        speller.spell('ʘa', 'espeak-ng:en-us');
      } catch (error) {
        return error;
      }
      return undefined;
    })();
    expect(refusal).toBeInstanceOf(AppError);
    expect(refusal).toMatchObject({ code: 'UNSUPPORTED_SSML', statusCode: 422, field: 'text' });
    expect((refusal as AppError).message).toContain('"ʘ" (U+0298)');
  });

  it('builds the table from what eSpeak says for each candidate: one phoneme each, stress left out, the first spelling kept', () => {
    const said: Record<string, string[]> = { a: ['ˈæ'], tS: ['tʃ'], T: ['θ'], D: ['ð', 'ə'], '0': ['ɑː'], A: ['ɑː'] };
    const table = buildPhonemeTable((mnemonic) => said[mnemonic] ?? []);
    expect(Object.fromEntries(table)).toEqual({ æ: 'a', tʃ: 'tS', θ: 'T', ɑː: 'A' });
  });
});

describe('stress marks, moved before the vowel', () => {
  it('moves each mark to the next vowel of its word, and drops one with no vowel left in the word', () => {
    expect(stressOnVowels('ˈtʃɑːkləts')).toBe('tʃˈɑːkləts');
    expect(stressOnVowels('ˌʌndəˈstænd')).toBe('ˌʌndəstˈænd');
    expect(stressOnVowels('ˈst ɑː')).toBe('st ɑː');
  });
});
