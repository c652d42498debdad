// IPA → eSpeak NG's own phoneme mnemonics (what it reads between [[ and ]]). Each language's phoneme table names its
// phonemes differently, so the table is read from eSpeak itself: every candidate mnemonic is spoken alone and eSpeak's
// phoneme event says which IPA it is (espeak-host.ts); the request's IPA is then spelled in the mnemonics it found.
import { spokenIpa, unspeakableIpa } from '../spoken-ipa.js';

/** Mnemonics eSpeak NG's phoneme tables use (single letters and symbols first: the shortest spelling of an IPA wins). */
export const MNEMONIC_CANDIDATES: readonly string[] = [
  ...'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123@#*?',
  ...'tS dZ ts dz pf eI aI OI aU oU I@ e@ U@ A@ O@ o@ 3: A: O: i: u: a: e: o: E: a# @L I2 I# E2 e# aI@ aI3 aU@ i@ i@3 0# V# r- n- m- N- n^ l^'.split(' '),
];

/**
 * Spellings of IPA a person writes that a table may not list as such: English IPA in its common forms (ɹ for r,
 * ɝ for ɜː, an unmarked ɑ or ɪ); typographic variants (a typed g, tie bars, : for ː) are spokenIpa's.
 */
const EQUIVALENTS: ReadonlyArray<readonly [string, readonly string[]]> = [
  ['ɡ', ['g']],
  ['ɹ', ['r']],
  ['r', ['ɹ']],
  ['ɝ', ['ɜː', 'ɚ']],
  ['ɜ', ['ɜː']],
  ['ɚ', ['ɜː']],
  ['ɑ', ['ɑː']],
  ['ɑː', ['ɑ']],
  ['ɒ', ['ɑː', 'ɔ']],
  ['ɔ', ['ɔː']],
  ['ɪ', ['ᵻ', 'i']],
  ['ʊ', ['u']],
  ['i', ['iː']],
  ['u', ['uː']],
  ['e', ['eɪ', 'ɛ']],
  ['o', ['oʊ', 'əʊ']],
  ['oʊ', ['əʊ']],
  ['əʊ', ['oʊ']],
  ['ɫ', ['l']],
  ['l', ['ɫ']],
];

/** Marks spelled as mnemonics of their own: primary and secondary stress, and a word break. */
const MARKS: Readonly<Record<string, string>> = { ˈ: "'", ˌ: ',', ' ': ' ' };

/** A voice's IPA → mnemonic pairs, as eSpeak reported them. */
export type PhonemeTable = Array<[string, string]>;

/**
 * The table from eSpeak's answer for each candidate: the IPA of the one phoneme it said (stress marks left out),
 * first candidate kept where two say the same.
 */
export function buildPhonemeTable(said: (mnemonic: string) => readonly string[]): PhonemeTable {
  const table = new Map<string, string>();
  for (const mnemonic of MNEMONIC_CANDIDATES) {
    const phonemes = said(mnemonic);
    if (phonemes.length !== 1) continue;
    const ipa = (phonemes[0] as string).replace(/[ˈˌ]/gu, '');
    if (ipa && !table.has(ipa)) table.set(ipa, mnemonic);
  }
  return [...table];
}

/** A table ready for spelling: IPA keys, each with its mnemonic, longest keys tried first. */
export class IpaSpeller {
  private readonly byIpa: Map<string, string>;
  private readonly longest: number;

  constructor(table: PhonemeTable) {
    this.byIpa = new Map(table);
    for (const [ipa, alternatives] of EQUIVALENTS) {
      const found = alternatives.map((alternative) => this.byIpa.get(alternative)).find((mnemonic) => mnemonic !== undefined);
      if (!this.byIpa.has(ipa) && found !== undefined) this.byIpa.set(ipa, found);
    }
    this.longest = Math.max(1, ...[...this.byIpa.keys()].map((ipa) => ipa.length));
  }

  /** The IPA in eSpeak's mnemonics; 422 UNSUPPORTED_SSML naming the first symbol the voice has no phoneme for. */
  spell(ipa: string, voiceId: string): string {
    // eSpeak marks stress before the syllable's vowel, not before the syllable (spokenIpa moves it there).
    const text = spokenIpa(ipa);
    let spelled = '';
    let at = 0;
    while (at < text.length) {
      const mark = MARKS[text[at] as string];
      if (mark !== undefined) {
        spelled += mark;
        at += 1;
        continue;
      }
      let length = Math.min(this.longest, text.length - at);
      while (length > 0 && !this.byIpa.has(text.slice(at, at + length))) length -= 1;
      if (length === 0) throw unspeakableIpa(ipa, String.fromCodePoint(text.codePointAt(at) as number), voiceId);
      spelled += this.byIpa.get(text.slice(at, at + length)) as string;
      at += length;
    }
    return spelled;
  }
}
