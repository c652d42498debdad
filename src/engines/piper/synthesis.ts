// Text → Piper phonemes → ids → audio, with the samples each word of the text takes (host side).
import type { Inference, Scales } from './model.js';
import { PAUSES, type PhonemizedText, type Phonemizer } from './phonemizer.js';
import type { PhonemeSpan } from '../types.js';
import { spokenIpa } from '../spoken-ipa.js';
import type { PiperModelSpec, SpokenWordSpan } from './protocol.js';
import { BOS, EOS, PAD } from './voice-config.js';
import { withoutOverlap } from '../word-onsets.js';
import { concatSamples } from '../wav.js';

/** Ids per inference at most: its memory grows with them (400 ids ≈ 340 MB at peak, 1000 ≈ 700 MB). */
export const MAX_IDS = 400;

export interface SpeakOptions {
  speakerId: number;
  lengthScale: number;
  /** Spans of the text to say as these IPA phonemes in place of eSpeak NG's. */
  phonemes?: readonly PhonemeSpan[];
  /** Stops before the next inference: the job was given up. */
  signal?: AbortSignal;
}

/** A loaded voice, as speak() drives it. */
export interface VoiceModel {
  readonly spec: PiperModelSpec;
  infer(ids: number[], scales: Scales, speakerId: number, signal?: AbortSignal): Promise<Inference>;
}

export interface Spoken {
  samples: Int16Array;
  /** Null when the model gives no durations. */
  words: SpokenWordSpan[] | null;
}

type IdMap = Readonly<Record<string, readonly number[]>>;

/** Piper's phonemes_to_ids: BOS PAD, then each phoneme's ids and a PAD, then EOS; unknown phonemes are skipped. */
function toIds(phonemes: readonly string[], map: IdMap): { ids: number[]; spans: [number, number][] } {
  const pad = map[PAD] ?? [];
  const ids = [...(map[BOS] ?? []), ...pad];
  // For each phoneme, [first, end) of its ids with the PAD after it; [-1, -1] when it has none.
  const spans = phonemes.map((phoneme): [number, number] => {
    const own = map[phoneme];
    if (!own) return [-1, -1];
    const first = ids.length;
    ids.push(...own, ...pad);
    return [first, ids.length];
  });
  ids.push(...(map[EOS] ?? []));
  return { ids, spans };
}

/** Where a piece that would hold [from, to) and more should end: after a clause's pause, else between words, else at `to`. */
function cutBefore(phonemes: readonly string[], from: number, to: number): number {
  let wordGap = -1;
  for (let end = to; end > from + 1; end--) {
    if (phonemes[end - 1] !== ' ') continue;
    if (PAUSES.has(phonemes[end - 2] ?? '')) return end;
    if (wordGap === -1) wordGap = end;
  }
  return wordGap === -1 ? to : wordGap;
}

/** A sentence's phonemes in runs of at most MAX_IDS ids each, cut where a speaker could pause. */
export function splitSentence(phonemes: readonly string[], map: IdMap): [number, number][] {
  const padLength = map[PAD]?.length ?? 0;
  const idsOf = (phoneme: string | undefined) => {
    const own = phoneme === undefined ? undefined : map[phoneme];
    return own ? own.length + padLength : 0;
  };
  const markers = (map[BOS]?.length ?? 0) + padLength + (map[EOS]?.length ?? 0);
  const pieces: [number, number][] = [];
  let from = 0;
  while (from < phonemes.length) {
    let to = from;
    let count = markers + idsOf(phonemes[to]);
    while (++to < phonemes.length && count + idsOf(phonemes[to]) <= MAX_IDS) count += idsOf(phonemes[to]);
    if (to < phonemes.length) to = cutBefore(phonemes, from, to);
    pieces.push([from, to]);
    from = to;
  }
  return pieces;
}

/** Piper's normalize_audio: the sentence's peak to full scale, then 16-bit. */
function toPcm(pieces: readonly Float32Array[], length: number): Int16Array {
  let peak = 0;
  for (const piece of pieces) for (const value of piece) peak = Math.max(peak, Math.abs(value));
  const gain = peak < 1e-8 ? 0 : 1 / peak;
  const samples = new Int16Array(length);
  let at = 0;
  for (const piece of pieces) {
    for (const value of piece) samples[at++] = Math.round(Math.max(-1, Math.min(1, value * gain)) * 32767);
  }
  return samples;
}

/** Per word: its first and last sample so far, NaN until one of its phonemes is heard. */
class WordSpans {
  private readonly starts: Float64Array;
  private readonly ends: Float64Array;

  constructor(private readonly offsets: readonly number[]) {
    this.starts = new Float64Array(offsets.length).fill(Number.NaN);
    this.ends = new Float64Array(offsets.length).fill(Number.NaN);
  }

  add(word: number, start: number, end: number): void {
    if (word < 0 || word >= this.offsets.length) return;
    this.starts[word] = Number.isNaN(this.starts[word] ?? Number.NaN) ? start : Math.min(this.starts[word] ?? start, start);
    this.ends[word] = Number.isNaN(this.ends[word] ?? Number.NaN) ? end : Math.max(this.ends[word] ?? end, end);
  }

  /** The words in order, none starting before the one before it ends (an onset moved into a word said run together with it). */
  list(): SpokenWordSpan[] {
    return withoutOverlap(
      this.offsets.flatMap((textOffset, word) => {
        const start = this.starts[word] ?? Number.NaN;
        const end = this.ends[word] ?? Number.NaN;
        return Number.isNaN(start) ? [] : [{ textOffset, start: Math.round(start), end: Math.round(end) }];
      }),
    );
  }
}

/**
 * `text` must have gone through sanitizeText(). Each sentence is normalized on its own, as Piper does. Every piece's
 * inference is asked for at once, so that the inference thread runs as many as it runs at a time (two on 2 cores,
 * inference.ts) while this thread reads the answers in order; a failed piece stops the ones still waiting.
 */
export async function speak(phonemizer: Phonemizer, model: VoiceModel, text: string, options: SpeakOptions): Promise<Spoken> {
  const { phonemeIds } = model.spec;
  const padLength = (phonemeIds[PAD] ?? []).length;
  const { sentences, wordOffsets } = withPhonemes(phonemizer.phonemize(text, model.spec.espeakVoice), options.phonemes ?? []);
  const scales: Scales = { ...model.spec.scales, length: options.lengthScale };
  const stop = new AbortController();
  const signal = options.signal ? AbortSignal.any([options.signal, stop.signal]) : stop.signal;
  const planned = sentences.map((sentence) =>
    splitSentence(sentence.phonemes, phonemeIds).map(([from, to]) => {
      const { ids, spans } = toIds(sentence.phonemes.slice(from, to), phonemeIds);
      const inferred = model.infer(ids, scales, options.speakerId, signal);
      // Read in order below; one that fails before its turn is not left unhandled meanwhile.
      inferred.catch(() => undefined);
      return { from, ids, spans, inferred };
    }),
  );
  const words = new WordSpans(wordOffsets);
  let timed = true;
  const sentencePcm: Int16Array[] = [];
  let offset = 0;
  try {
    for (const [index, pieces] of planned.entries()) {
      const wordOf = sentences[index]?.wordOf ?? [];
      const audio: Float32Array[] = [];
      let length = 0;
      for (const { from, ids, spans, inferred: asked } of pieces) {
        const inferred = await asked;
        const frames = inferred.frames;
        if (frames) {
          // Frames × hop length (256) is the audio length: scaling by the two keeps the times right if a model disagrees.
          const total = frames.reduce((sum, count) => sum + count, 0);
          const perFrame = total > 0 ? inferred.audio.length / total : 0;
          const idStarts = new Float64Array(ids.length + 1);
          frames.forEach((count, at) => (idStarts[at + 1] = (idStarts[at] ?? 0) + count * perFrame));
          const at = offset + length;
          // A phoneme is heard from the blank (PAD) before its ids: VITS sounds its onset there (word-onsets.ts).
          const onset = (first: number) => idStarts[Math.max(0, first - padLength)] ?? 0;
          spans.forEach(([first, end], position) => {
            if (first >= 0) words.add(wordOf[from + position] ?? -1, at + onset(first), at + (idStarts[end] ?? 0));
          });
        } else {
          timed = false;
        }
        audio.push(inferred.audio);
        length += inferred.audio.length;
      }
      sentencePcm.push(toPcm(audio, length));
      offset += length;
    }
  } catch (error) {
    stop.abort(error);
    throw error;
  }
  return { samples: concatSamples(sentencePcm), words: timed ? words.list() : null };
}

/**
 * The phonemes with each span's words said as its IPA: the phonemes of the words that start in the span give way,
 * where the first of them stood, to the IPA's code points (after NFD, as Piper maps them), labelled as that word.
 */
export function withPhonemes(phonemized: PhonemizedText, spans: readonly PhonemeSpan[]): PhonemizedText {
  if (spans.length === 0) return phonemized;
  const { wordOffsets } = phonemized;
  const spanOf = (word: number) => spans.find((span) => (wordOffsets[word] ?? -1) >= span.start && (wordOffsets[word] ?? -1) < span.end);
  const placed = new Set<PhonemeSpan>();
  const sentences = phonemized.sentences.map((sentence) => {
    const phonemes: string[] = [];
    const wordOf: number[] = [];
    sentence.phonemes.forEach((phoneme, index) => {
      const word = sentence.wordOf[index] ?? -1;
      const span = word >= 0 ? spanOf(word) : undefined;
      if (!span) {
        phonemes.push(phoneme);
        wordOf.push(word);
      } else if (!placed.has(span)) {
        placed.add(span);
        for (const ipa of spokenIpa(span.ipa).normalize('NFD')) {
          phonemes.push(ipa);
          wordOf.push(word);
        }
      }
    });
    return { phonemes, wordOf };
  });
  return { sentences, wordOffsets };
}
