// Kokoro's phonemes → inferences → audio, with the samples each word of the text takes (host side).
import type { KokoroInference } from './model.js';
import { SAMPLES_PER_FRAME } from './model.js';
import { KOKORO_ONSET_FRAMES } from '../word-onsets.js';
import type { KokoroPhonemized } from './phonemes/types.js';
import type { SpokenWordSpan } from './protocol.js';
import { tokenRuns, type TokenRun } from './tokens.js';
import { concatSamples } from '../wav.js';

/** The model as speak() drives it: the style row for a token count, and an inference that a signal can still stop. */
export interface KokoroVoice {
  style(tokens: number): Float32Array;
  infer(ids: readonly number[], style: Float32Array, speed: number, signal: AbortSignal): Promise<KokoroInference>;
}

export interface Spoken {
  samples: Int16Array;
  /** Null when the model gives no durations. */
  words: SpokenWordSpan[] | null;
}

/** Symbols in place of the phonemes of the words of the text that start in [start, end). */
export interface SymbolSpan {
  start: number;
  end: number;
  symbols: string;
}

/**
 * The phonemes with each span's words said as its symbols: the phonemes from the first of those words to the last
 * give way to the symbols, which count as the first word's.
 */
export function withSymbols(phonemized: KokoroPhonemized, spans: readonly SymbolSpan[]): KokoroPhonemized {
  if (spans.length === 0) return phonemized;
  const words: KokoroPhonemized['words'] = [];
  let phonemes = '';
  let copied = 0;
  const { words: source } = phonemized;
  for (let index = 0; index < source.length; index++) {
    const word = source[index] as (typeof source)[number];
    const span = spans.find((candidate) => word.textOffset >= candidate.start && word.textOffset < candidate.end);
    if (!span) {
      phonemes += phonemized.phonemes.slice(copied, word.phonemeEnd);
      const shift = phonemes.length - word.phonemeEnd;
      words.push({ ...word, phonemeStart: word.phonemeStart + shift, phonemeEnd: word.phonemeEnd + shift });
      copied = word.phonemeEnd;
      continue;
    }
    let last = word;
    while (index + 1 < source.length && (source[index + 1]?.textOffset ?? Infinity) < span.end) last = source[++index] as typeof word;
    phonemes += phonemized.phonemes.slice(copied, word.phonemeStart);
    words.push({ textOffset: word.textOffset, textLength: last.textOffset + last.textLength - word.textOffset, phonemeStart: phonemes.length, phonemeEnd: phonemes.length + span.symbols.length });
    phonemes += span.symbols;
    copied = last.phonemeEnd;
  }
  return { phonemes: phonemes + phonemized.phonemes.slice(copied), words };
}

/** Float audio as 16-bit PCM, clipped: Kokoro's level is its own (no peak normalization, unlike Piper's). */
function toPcm(pieces: readonly Float32Array[]): Int16Array {
  return concatSamples(pieces.map((piece) => Int16Array.from(piece, (value) => Math.round(Math.max(-1, Math.min(1, value)) * 32767))));
}

/**
 * Where each token of a run is heard to start in its audio (samples), and where the last ends: frames × 600, scaled
 * to the audio's length, KOKORO_ONSET_FRAMES earlier (the audio runs that far ahead of its frames: word-onsets.ts).
 */
function tokenStarts(run: TokenRun, inferred: KokoroInference): Float64Array | undefined {
  const { frames, audio } = inferred;
  if (!frames) return undefined;
  const total = frames.reduce((sum, count) => sum + count, 0) * SAMPLES_PER_FRAME;
  const scale = total > 0 ? audio.length / total : 0;
  // frames[0] is the leading pad's.
  const starts = new Float64Array(run.ids.length + 1);
  let at = (frames[0] ?? 0) * SAMPLES_PER_FRAME * scale;
  const ahead = KOKORO_ONSET_FRAMES * SAMPLES_PER_FRAME * scale;
  for (let token = 0; token <= run.ids.length; token++) {
    starts[token] = Math.max(0, at - ahead);
    at += (frames[token + 1] ?? 0) * SAMPLES_PER_FRAME * scale;
  }
  return starts;
}

/** Each word's first and last sample, from the runs that say its phonemes. */
function wordSpans(phonemized: KokoroPhonemized, timed: readonly { run: TokenRun; offset: number; starts: Float64Array }[]): SpokenWordSpan[] {
  return phonemized.words.flatMap(({ textOffset, phonemeStart, phonemeEnd }) => {
    let start = Infinity;
    let end = -Infinity;
    for (const { run, offset, starts } of timed) {
      for (let at = Math.max(phonemeStart, run.from); at < Math.min(phonemeEnd, run.to); at++) {
        const token = run.tokenAt[at - run.from] ?? -1;
        if (token < 0) continue;
        start = Math.min(start, offset + (starts[token] ?? 0));
        end = Math.max(end, offset + (starts[token + 1] ?? 0));
      }
    }
    return start <= end ? [{ textOffset, start: Math.round(start), end: Math.round(end) }] : [];
  });
}

/**
 * Every inference is asked for at once (the host runs as many side by side as it may), and read in order; a failed
 * one stops the ones still waiting. `signal` stops them when the job is given up.
 */
export async function speak(voice: KokoroVoice, phonemized: KokoroPhonemized, speed: number, signal: AbortSignal): Promise<Spoken> {
  const stop = new AbortController();
  const stopping = AbortSignal.any([signal, stop.signal]);
  const planned = tokenRuns(phonemized.phonemes).map((run) => {
    const inferred = voice.infer(run.ids, voice.style(run.ids.length), speed, stopping);
    inferred.catch(() => undefined);
    return { run, inferred };
  });
  const audio: Float32Array[] = [];
  const timed: { run: TokenRun; offset: number; starts: Float64Array }[] = [];
  let offset = 0;
  let durations = true;
  try {
    for (const { run, inferred: asked } of planned) {
      const inferred = await asked;
      const starts = tokenStarts(run, inferred);
      if (starts) timed.push({ run, offset, starts });
      else durations = false;
      audio.push(inferred.audio);
      offset += inferred.audio.length;
    }
  } catch (error) {
    stop.abort(error);
    throw error;
  }
  return { samples: toPcm(audio), words: durations ? wordSpans(phonemized, timed) : null };
}
