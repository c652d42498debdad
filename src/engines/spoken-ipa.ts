// IPA from SSML <phoneme> and lexicons as the engines that take it (Piper, eSpeak NG) want it. A person marks stress
// before the syllable (ˈtʃɑːk); eSpeak NG, and so Piper's models trained on its phonemes, before its vowel (tʃˈɑːk).
import { AppError } from '../errors.js';

/** A vowel of IPA: where a stress mark goes. */
const IPA_VOWEL = /[aeiouyæɑɒɔəɛɜɪʊʌɐɚɝᵻøœɤɯɨʉɵɘɞɶ]/u;

const STRESS = /[ˈˌ]/u;

/** What carries no sound of its own in a transcription: slashes and brackets around it, syllable dots, tie bars. */
const IGNORED = /[/[\]().\u200D]|\u0361|\u035C/gu;

/**
 * IPA as an engine takes it: composed (NFC), `:` as the length mark ː and a typed g as IPA's ɡ, without what carries
 * no sound, single spaces between words, and each stress mark before its vowel.
 */
export function spokenIpa(ipa: string): string {
  return stressOnVowels(ipa.normalize('NFC').replace(/:/gu, 'ː').replace(/g/gu, 'ɡ').replace(IGNORED, '').replace(/\s+/gu, ' ').trim());
}

/** Each stress mark moved to just before the next vowel of its word (a mark with no vowel after it in the word is dropped). */
export function stressOnVowels(ipa: string): string {
  let moved = '';
  let pending = '';
  for (const char of ipa) {
    if (STRESS.test(char)) {
      pending = char;
      continue;
    }
    if (/\s/u.test(char)) pending = '';
    else if (pending && IPA_VOWEL.test(char)) {
      moved += pending;
      pending = '';
    }
    moved += char;
  }
  return moved;
}

/** 422 UNSUPPORTED_SSML: the IPA has a symbol the voice has no phoneme for (named with its code point). */
export function unspeakableIpa(ipa: string, symbol: string, voiceId: string): AppError {
  const codePoint = (symbol.codePointAt(0) as number).toString(16).toUpperCase().padStart(4, '0');
  return new AppError('UNSUPPORTED_SSML', { field: 'text', message: `The IPA "${ipa}" has a symbol the voice ${voiceId} has no phoneme for: "${symbol}" (U+${codePoint}).` });
}
