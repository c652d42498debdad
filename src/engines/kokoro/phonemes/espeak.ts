// Text → Kokoro's phonemes for every language but Japanese: eSpeak NG's IPA with ties (t^ʃ), through the phonemizer
// Piper's voices use (one synthesis pass for the words and their places in the text, espeak_TextToPhonemes for the
// phonemes: piper/phonemizer.ts), then rewritten into the symbols Kokoro was trained on as misaki (hexgrad's G2P,
// misaki/espeak.py 0.9.4) rewrites them: its EspeakFallback for English, its EspeakG2P for the other languages, as
// kokoro-onnx and Kokoro's own pipeline call them. Each symbol keeps the word of the text it says.
import type { Phonemizer } from '../../piper/phonemizer.js';
import type { PackLanguage } from '../packs.js';
import type { KokoroPhonemeWord, KokoroPhonemized } from './types.js';

/** eSpeak NG's tie between the letters of one sound, as misaki asks for it. */
export const TIE = '^';

type Rule = readonly [from: string, to: string];

/** Symbols, each with the index of its word (-1: spaces, punctuation). */
interface Labelled {
  chars: string[];
  labels: number[];
}

/** misaki's E2M (EspeakFallback), which both English variants share. */
const ENGLISH: readonly Rule[] = [
  ['ʔˌn\u0329', 'ʔn'], ['ʔn\u0329', 'ʔn'],
  ['a^ɪ', 'I'], ['a^ʊ', 'W'], ['d^ʒ', 'ʤ'], ['e^ɪ', 'A'], ['e', 'A'], ['t^ʃ', 'ʧ'], ['ɔ^ɪ', 'Y'], ['ə^l', 'ᵊl'],
  ['ʲo', 'jo'], ['ʲə', 'jə'], ['ʲ', ''], ['ɚ', 'əɹ'], ['r', 'ɹ'], ['x', 'k'], ['ç', 'k'], ['ɐ', 'ə'], ['ɬ', 'l'], ['\u0303', ''],
];
/**
 * What misaki changes next for British and for American English. Its British `e^ə` → ɛː is done before E2M here:
 * after it, as misaki orders them, E2M has already made every e an A and the rule never applies.
 */
const BRITISH_FIRST: readonly Rule[] = [['e^ə', 'ɛː']];
const BRITISH: readonly Rule[] = [['iə', 'ɪə'], ['ə^ʊ', 'Q']];
const AMERICAN: readonly Rule[] = [['o^ʊ', 'O'], ['ɜːɹ', 'ɜɹ'], ['ɜː', 'ɜɹ'], ['ɪə', 'iə'], ['ː', '']];
/** misaki's last English steps for Kokoro v1.0 (its version None): o as ɔ (eSpeak before 1.52), the flap T, the glottal stop t. */
const ENGLISH_LAST: readonly Rule[] = [['o', 'ɔ'], ['ɾ', 'T'], ['ʔ', 't'], [TIE, '']];
/** misaki's e2m (EspeakG2P) for the other languages, then the ties and hyphens it deletes. */
const OTHER: readonly Rule[] = [
  ['a^ɪ', 'I'], ['a^ʊ', 'W'], ['d^z', 'ʣ'], ['d^ʒ', 'ʤ'], ['e^ɪ', 'A'], ['o^ʊ', 'O'], ['ə^ʊ', 'Q'], ['s^s', 'S'], ['t^s', 'ʦ'], ['t^ʃ', 'ʧ'], ['ɔ^ɪ', 'Y'],
];
const OTHER_LAST: readonly Rule[] = [[TIE, ''], ['-', '']];
/** The phonemizer decomposes (NFD, as Piper's models want); Kokoro's vocabulary has ç composed, every other mark apart. */
const COMPOSED: readonly Rule[] = [['c\u0327', 'ç']];
const SYLLABIC = '\u0329';

/** Full-width CJK punctuation as the ASCII marks eSpeak NG ends clauses at (one for one: offsets into the text hold), as kokoro-js maps them. */
const CJK_PUNCTUATION: Readonly<Record<string, string>> = { '，': ',', '、': ',', '。': '.', '！': '!', '？': '?', '：': ':', '；': ';' };

/** One left-to-right pass: at each place the longest rule that matches, its output labelled as the first symbol it replaces. */
function rewrite({ chars, labels }: Labelled, rules: readonly Rule[]): Labelled {
  const ordered = [...rules].map(([from, to]): [string[], string[]] => [[...from], [...to]]).sort((a, b) => b[0].length - a[0].length);
  const out: Labelled = { chars: [], labels: [] };
  let at = 0;
  while (at < chars.length) {
    const rule = ordered.find(([from]) => from.every((char, offset) => chars[at + offset] === char));
    const [from, to] = rule ?? [[chars[at] as string], [chars[at] as string]];
    for (const char of to) {
      out.chars.push(char);
      out.labels.push(labels[at] ?? -1);
    }
    at += from.length;
  }
  return out;
}

/** misaki's `(\S)\u0329` → `ᵊ\1`: a syllabic consonant said with a schwa before it; stray marks dropped. */
function syllabics({ chars, labels }: Labelled): Labelled {
  const out: Labelled = { chars: [], labels: [] };
  chars.forEach((char, index) => {
    if (char === SYLLABIC) return;
    if (chars[index + 1] === SYLLABIC && !/\s/u.test(char)) {
      out.chars.push('ᵊ');
      out.labels.push(labels[index] ?? -1);
    }
    out.chars.push(char);
    out.labels.push(labels[index] ?? -1);
  });
  return out;
}

/** misaki's rewriting of eSpeak NG's IPA for `language`. */
export function toKokoroSymbols(labelled: Labelled, language: PackLanguage): Labelled {
  const composed = rewrite(labelled, COMPOSED);
  if (!language.english) return rewrite(rewrite(composed, OTHER), OTHER_LAST);
  const british = language.english === 'british';
  const mapped = syllabics(rewrite(british ? rewrite(composed, BRITISH_FIRST) : composed, ENGLISH));
  return rewrite(rewrite(mapped, british ? BRITISH : AMERICAN), ENGLISH_LAST);
}

/** How far a word of the text runs from where eSpeak NG says it starts: letters, digits, marks, and apostrophes within. */
function wordLength(text: string, offset: number): number {
  const match = /^[\p{L}\p{N}\p{M}]+(?:['’][\p{L}\p{N}\p{M}]+)*/u.exec(text.slice(offset));
  return Math.max(1, match?.[0].length ?? 1);
}

/** The symbols of each word, as KokoroPhonemized says them; a word whose symbols were all rewritten away is left out. */
export function phonemizedOf(text: string, wordOffsets: readonly number[], { chars, labels }: Labelled): KokoroPhonemized {
  const spans = new Map<number, [number, number]>();
  let position = 0;
  chars.forEach((char, index) => {
    const label = labels[index] ?? -1;
    if (label >= 0) {
      const span = spans.get(label);
      spans.set(label, [span?.[0] ?? position, position + char.length]);
    }
    position += char.length;
  });
  const words: KokoroPhonemeWord[] = [];
  wordOffsets.forEach((textOffset, word) => {
    const span = spans.get(word);
    if (!span) return;
    const previous = words.at(-1);
    // eSpeak NG reads a number as several words ("42": forty, two), each from where it starts: one word of the text.
    if (previous && textOffset < previous.textOffset + previous.textLength) previous.phonemeEnd = span[1];
    else words.push({ textOffset, textLength: wordLength(text, textOffset), phonemeStart: span[0], phonemeEnd: span[1] });
  });
  return { phonemes: chars.join(''), words };
}

/** `text` (after sanitizeText) in Kokoro's symbols for a pack of `language`, its sentences joined by a space. */
export function espeakPhonemes(phonemizer: Phonemizer, text: string, language: PackLanguage): KokoroPhonemized {
  if (!language.espeakVoice) throw new Error(`no eSpeak NG voice reads ${language.tag} for Kokoro`);
  const source = text.replace(/[，、。！？：；]/gu, (mark) => CJK_PUNCTUATION[mark] ?? mark);
  const { sentences, wordOffsets } = phonemizer.phonemize(source, language.espeakVoice, TIE);
  const joined: Labelled = { chars: [], labels: [] };
  for (const sentence of sentences) {
    if (joined.chars.length > 0) {
      joined.chars.push(' ');
      joined.labels.push(-1);
    }
    joined.chars.push(...sentence.phonemes);
    joined.labels.push(...sentence.wordOf);
  }
  return phonemizedOf(text, wordOffsets, toKokoroSymbols(joined, language));
}
