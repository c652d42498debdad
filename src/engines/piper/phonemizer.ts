// Text → Piper's phonemes, as piper-phonemize and piper1-gpl get them from eSpeak NG, each labelled with the word
// of the text it says. Two passes over one eSpeak NG (the system's native library when it is 1.52 or later, else
// the WebAssembly build: see espeak-access.ts):
//  - a synthesis (its audio dropped) gives eSpeak's clauses (`end` events), sentences (`sentence`), its words with
//    where they start in the text (`word`), and each word's IPA with stress and length marks (`phoneme`);
//  - text_to_phonemes (espeak_TextToPhonemes, the call Piper makes) gives each clause's phonemes exactly as Piper
//    gets them. They differ from the event phonemes only in some stress marks ("what?" alone gets ˌ, not ˈ): once
//    stress marks and spaces are dropped both spell the same, which labels each character with its word. A clause
//    whose spellings still differ keeps the event phonemes.
// Piper's clause terminator (. ? ! , : ; or none) is read from the text before the next clause, since the
// WebAssembly build has no espeak_TextToPhonemesWithTerminator. Checked against piper-tts 1.8 on the 58 texts of
// fixtures/piper-tts-phonemes.json: both builds (1.52) spell 50 the same, and each other's all 58; both lack the ʲ of
// piper-tts's own build (ðɪʲ). Debian bookworm's own 1.51 matched 42 (its data spells o@ oː, not ɔː: "four"), so it
// is not used. Per sentence, medians of 580 on 2 busy cores: native 1.5 ms (p90 2.5), WebAssembly 5.1 ms (p90 8.3).
import { toEspeakSsml } from '../espeak/text.js';
import type { EspeakAccess, EspeakEvent } from './espeak-access.js';
import { ESPEAK_NG_LIBRARY, NativeEspeak } from './espeak-native.js';
import { WasmEspeak } from './espeak-wasm.js';

export interface PhonemizedSentence {
  /** Code points after NFD, spaces and punctuation included: what Piper maps to ids. */
  phonemes: string[];
  /** For each phoneme, the index of its word in `PhonemizedText.wordOffsets`, or -1 (spaces, punctuation). */
  wordOf: number[];
}

export interface PhonemizedText {
  sentences: PhonemizedSentence[];
  /** Where each word eSpeak spoke starts in the text (UTF-16). */
  wordOffsets: number[];
}

interface EventWord {
  textOffset: number;
  /** IPA, stress marks included. */
  phonemes: string;
}

interface EventClause {
  words: EventWord[];
  startsSentence: boolean;
}

/** Characters, each with the word it belongs to (-1: none). */
interface Labelled {
  chars: string[];
  labels: number[];
}

const STRESS_MARKS = new Set(['ˈ', 'ˌ']);
const LANGUAGE_SWITCH = /\([^)]+\)/gu;
const TERMINATORS: Record<string, string> = { '.': '.', '?': '?', '!': '!', ',': ',', ':': ':', ';': ';', '\u2014': ';' };
/** After these Piper adds a space: the sentence goes on. */
export const PAUSES: ReadonlySet<string> = new Set([',', ':', ';']);
const SPEAKABLE = /[\p{L}\p{N}\p{M}]/u;

/** Piper's terminator for the clause that ends before `end`: the first mark in the run of non-letters before it. */
export function clauseTerminator(text: string, end: number): string {
  let start = Math.min(end, text.length);
  while (start > 0 && !SPEAKABLE.test(text[start - 1] ?? '')) start--;
  const run = text.slice(start, end);
  // An ellipsis ends a clause without a terminator.
  if (run.includes('..') || run.includes('\u2026')) return '';
  for (const char of run) {
    const terminator = TERMINATORS[char];
    if (terminator) return terminator;
  }
  return '';
}

function withoutStress(phonemes: string): string {
  return [...phonemes].filter((char) => !STRESS_MARKS.has(char)).join('');
}

/** The event words' phonemes, a space between words (a word eSpeak merged into the one before has none). */
function eventPhonemes(words: readonly EventWord[], firstWord: number): Labelled {
  const labelled: Labelled = { chars: [], labels: [] };
  words.forEach((word, index) => {
    if (!word.phonemes) return;
    if (labelled.chars.length > 0) {
      labelled.chars.push(' ');
      labelled.labels.push(-1);
    }
    for (const char of word.phonemes) {
      labelled.chars.push(char);
      labelled.labels.push(firstWord + index);
    }
  });
  return labelled;
}

/**
 * Labels each character of Piper's clause with the event word it spells, when both spell the same phonemes once
 * stress marks, spaces and ties are dropped; a stress mark goes with the phoneme after it, a tie with the one before
 * it, a space with no word.
 */
function alignClause(exact: string, words: readonly EventWord[], firstWord: number, tie: string | undefined): Labelled | undefined {
  const owners = words.flatMap((word, index) => [...withoutStress(word.phonemes)].map(() => firstWord + index));
  const chars = [...exact];
  const spelled = (char: string) => char !== ' ' && char !== tie && !STRESS_MARKS.has(char);
  const bare = chars.filter(spelled);
  if (bare.join('') !== words.map((word) => withoutStress(word.phonemes)).join('')) return undefined;
  const labels = new Array<number>(chars.length).fill(-1);
  let next = 0;
  chars.forEach((char, index) => {
    if (spelled(char)) labels[index] = owners[next++] ?? -1;
    else if (char === tie) labels[index] = labels[index - 1] ?? -1;
  });
  for (let index = chars.length - 2; index >= 0; index--) {
    if (STRESS_MARKS.has(chars[index] ?? '')) labels[index] = labels[index + 1] ?? -1;
  }
  return { chars, labels };
}

export interface PhonemizerOptions {
  /**
   * The native library to try first (a soname or a file); the WebAssembly build when it cannot be loaded. Default:
   * the host's ESPEAK_NG_LIBRARY, else Debian's libespeak-ng.so.1.
   */
  library?: string;
}

/** One per eSpeak instance: the native library's state is the process's, so it gets one phonemizer at most. */
const natives = new WeakMap<NativeEspeak, Phonemizer>();

export class Phonemizer {
  private voice: string | undefined;

  private constructor(
    private readonly espeak: EspeakAccess,
    /** Why the native library was not used, when it was not. */
    readonly fallbackReason?: string,
  ) {}

  /** Debian's native eSpeak NG when it loads, else the WebAssembly build (`build` and `fallbackReason` say which). */
  static async create(options: PhonemizerOptions = {}): Promise<Phonemizer> {
    const library = options.library ?? (process.env.ESPEAK_NG_LIBRARY || ESPEAK_NG_LIBRARY);
    let native: NativeEspeak;
    try {
      native = NativeEspeak.load(library);
    } catch (error) {
      return new Phonemizer(await WasmEspeak.create(), `${library}: ${error instanceof Error ? error.message : String(error)}`);
    }
    let phonemizer = natives.get(native);
    if (!phonemizer) {
      phonemizer = new Phonemizer(native);
      natives.set(native, phonemizer);
    }
    return phonemizer;
  }

  get build(): EspeakAccess['build'] {
    return this.espeak.build;
  }

  /**
   * `text` must have gone through sanitizeText(); `voice` is the config's espeak.voice. `tie`: the phonemes of one
   * sound joined by it (t^ʃ), as Kokoro's phonemizer asks for them (native build only, see EspeakAccess).
   */
  phonemize(text: string, voice: string, tie?: string): PhonemizedText {
    this.setVoice(voice);
    const events = this.eventClauses(text);
    const exact = this.exactClauses(text, tie);
    const exactUsable = exact.length === events.length;
    // eSpeak may end with an empty clause (after a closing quote): Piper skips it.
    const kept = events.flatMap((clause, index) => {
      const phonemes = exactUsable ? (exact[index] ?? '') : '';
      return clause.words.length > 0 || phonemes !== '' ? [{ ...clause, exact: exactUsable ? phonemes : undefined }] : [];
    });

    const wordOffsets: number[] = [];
    const sentences: PhonemizedSentence[] = [];
    let sentence: PhonemizedSentence = { phonemes: [], wordOf: [] };
    kept.forEach((clause, index) => {
      if (clause.startsSentence && sentence.phonemes.length > 0) {
        sentences.push(sentence);
        sentence = { phonemes: [], wordOf: [] };
      }
      const firstWord = wordOffsets.length;
      wordOffsets.push(...clause.words.map((word) => word.textOffset));
      const aligned = clause.exact === undefined ? undefined : alignClause(clause.exact, clause.words, firstWord, tie);
      const { chars, labels } = aligned ?? eventPhonemes(clause.words, firstWord);
      const terminator = clauseTerminator(text, kept[index + 1]?.words[0]?.textOffset ?? text.length);
      const tail = PAUSES.has(terminator) ? `${terminator} ` : terminator;
      // Piper decomposes (NFD) the clause as a whole: per character keeps each label with its own parts.
      [...chars, ...tail].forEach((char, position) => {
        for (const part of char.normalize('NFD')) {
          sentence.phonemes.push(part);
          sentence.wordOf.push(labels[position] ?? -1);
        }
      });
    });
    if (sentence.phonemes.length > 0) sentences.push(sentence);
    return { sentences, wordOffsets };
  }

  private setVoice(voice: string): void {
    if (voice === this.voice) return;
    this.voice = undefined;
    if (!this.espeak.setVoice(voice)) throw new Error(`eSpeak NG has no voice ${voice}`);
    this.voice = voice;
  }

  /** eSpeak's clauses, sentences and words, from one synthesis whose audio is dropped. */
  private eventClauses(text: string): EventClause[] {
    const ssml = toEspeakSsml(text);
    // eSpeak counts code points of the SSML from 1.
    const sourceOffset = (position: number) => ssml.sourceOffset(ssml.unitIndexOfCodePoint(position - 1) ?? ssml.text.length) ?? text.length;
    const clauses: EventClause[] = [];
    let clause: EventClause = { words: [], startsSentence: true };
    let sentenceStarted = false;
    this.espeak.synthesizeEvents(ssml.text, (event: EspeakEvent) => {
      if (event.type === 'sentence') {
        sentenceStarted = true;
      } else if (event.type === 'word') {
        if (clause.words.length === 0) {
          if (clauses.length > 0) clause.startsSentence = sentenceStarted;
          sentenceStarted = false;
        }
        clause.words.push({ textOffset: sourceOffset(event.textPosition), phonemes: '' });
      } else if (event.type === 'phoneme' && event.phoneme !== undefined) {
        const word = clause.words.at(-1);
        if (word) word.phonemes += event.phoneme.replace(/[\s\p{Cc}]/gu, '');
      } else if (event.type === 'end') {
        clauses.push(clause);
        clause = { words: [], startsSentence: false };
      }
    });
    if (clause.words.length > 0) clauses.push(clause);
    return clauses;
  }

  /** espeak_TextToPhonemes per clause, as Piper gets them (IPA), without language-switch flags. */
  private exactClauses(text: string, tie: string | undefined): string[] {
    return this.espeak.textToPhonemes(text, tie).map((clause) => clause.replace(LANGUAGE_SWITCH, ''));
  }
}
