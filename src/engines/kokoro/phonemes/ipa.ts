// IPA from SSML <phoneme> and lexicons, in Kokoro's symbols: as a person writes it (spoken-ipa.ts), the letters of one
// sound tied as eSpeak NG ties them (tʃ → t^ʃ), then misaki's rules for the pack's language (espeak.ts).
import { spokenIpa, unspeakableIpa } from '../../spoken-ipa.js';
import type { PackLanguage } from '../packs.js';
import { tokenOf } from '../tokens.js';
import { TIE, toKokoroSymbols } from './espeak.js';

/** The pairs eSpeak NG ties, which misaki's rules then write as one symbol. */
const TIED = /(?<=a)(?=[ɪʊ])|(?<=d)(?=[ʒz])|(?<=e)(?=[ɪə])|(?<=t)(?=[ʃs])|(?<=ɔ)(?=ɪ)|(?<=o)(?=ʊ)|(?<=ə)(?=ʊ)|(?<=s)(?=s)/gu;

/**
 * `ipa` as the symbols a pack of `language` says; 422 UNSUPPORTED_SSML naming the first symbol Kokoro has none for
 * (it would be left out unsaid).
 */
export function kokoroSymbols(ipa: string, language: PackLanguage, voiceId: string): string {
  const tied = [...spokenIpa(ipa).replace(TIED, TIE).normalize('NFD')];
  const { chars } = toKokoroSymbols({ chars: tied, labels: tied.map(() => 0) }, language);
  for (const symbol of chars) {
    if (tokenOf(symbol) === undefined) throw unspeakableIpa(ipa, symbol, voiceId);
  }
  return chars.join('');
}
