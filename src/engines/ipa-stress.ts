// IPA as a person writes it marks stress before the syllable (ˈtʃɑːk); eSpeak NG, and so Piper's models trained on its
// phonemes, mark it before the syllable's vowel (tʃˈɑːk). Both engines that take IPA get it their way.

/** A vowel of IPA: where a stress mark goes. */
export const IPA_VOWEL = /[aeiouyæɑɒɔəɛɜɪʊʌɐɚɝᵻøœɤɯɨʉɵɘɞɶ]/u;

const STRESS = /[ˈˌ]/u;

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
