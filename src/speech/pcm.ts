import type { WordTiming } from '../engines/types.js';
import type { SentenceTiming, Speech, SpokenSpan } from './speech.js';

/** The pause between sentences. */
export const GAP_SECONDS = 0.25;
export const EDGE_SECONDS = 0.05;

export interface JoinOptions {
  /** Silence between sentences. */
  gapSeconds?: number;
  /** Silence kept before the first and after the last sound. */
  edgeSeconds?: number;
  /** Fade at every cut, so no clicks where a chunk is trimmed. */
  fadeSeconds?: number;
  /** Amplitude under which a sample counts as silence. */
  silenceThreshold?: number;
}

/**
 * Joins sentence recordings into one: each trimmed of the engine's own leading and trailing silence, faded at
 * the cuts and separated by an even pause, with word and sentence timings moved to where they now stand.
 */
export function joinSpeech(chunks: readonly SpokenSpan[], options: JoinOptions = {}): Speech {
  const sampleRate = chunks[0]?.sampleRate ?? 22050;
  const gap = Math.round((options.gapSeconds ?? GAP_SECONDS) * sampleRate);
  const edge = Math.round((options.edgeSeconds ?? EDGE_SECONDS) * sampleRate);
  const fade = Math.max(1, Math.round((options.fadeSeconds ?? 0.005) * sampleRate));
  const threshold = options.silenceThreshold ?? 200;

  const trimmed = chunks.map((chunk) => {
    if (chunk.sampleRate !== sampleRate) throw new Error('All chunks of one speech must share a sample rate');
    const first = chunk.samples.findIndex((value) => Math.abs(value) > threshold);
    if (first < 0) return { chunk, from: 0, to: 0 };
    let last = chunk.samples.length - 1;
    while (last > first && Math.abs(chunk.samples[last] ?? 0) <= threshold) last -= 1;
    return { chunk, from: Math.max(0, first - fade), to: Math.min(chunk.samples.length, last + 1 + fade) };
  });
  const audible = trimmed.filter(({ from, to }) => to > from);
  // Before each chunk: the usual gap, or the pause it asks for (SSML break); before the first, that pause and the edge.
  const before = audible.map(({ chunk }, index) => {
    const pause = chunk.pauseBefore === undefined ? undefined : Math.round(chunk.pauseBefore * sampleRate);
    return index === 0 ? edge + (pause ?? 0) : (pause ?? gap);
  });
  const total = edge + audible.reduce((sum, { from, to }, index) => sum + (before[index] as number) + (to - from), 0) + (audible.length === 0 ? edge : 0);
  const samples = new Int16Array(total);
  const sentences: SentenceTiming[] = [];
  const words: WordTiming[] = [];
  let cursor = 0;
  for (const [index, { chunk, from, to }] of audible.entries()) {
    cursor += before[index] as number;
    const piece = chunk.samples.subarray(from, to);
    samples.set(piece, cursor);
    fadeEdges(samples, cursor, piece.length, fade);
    const shift = (cursor - from) / sampleRate;
    const start = cursor / sampleRate;
    const end = (cursor + piece.length) / sampleRate;
    sentences.push({ start, end, textOffset: chunk.span.offset, textLength: chunk.span.text.length });
    for (const word of chunk.words ?? []) {
      words.push({
        ...word,
        start: clamp(word.start + shift, start, end),
        end: clamp(word.end + shift, start, end),
        textOffset: word.textOffset + chunk.span.offset,
      });
    }
    cursor += piece.length;
  }
  return { samples, sampleRate, duration: total / sampleRate, sentences, words };
}

/**
 * joinSpeech one chunk at a time, for streaming: push the chunks in order and get the samples each adds, then
 * end() for the closing silence. Laid end to end, the pieces are the samples joinSpeech makes of the same chunks.
 */
export class SpeechJoiner {
  private started = false;
  /** Samples handed out so far. */
  private position = 0;

  constructor(
    readonly sampleRate: number,
    private readonly options: JoinOptions = {},
  ) {}

  push(chunk: SpokenSpan): Int16Array {
    return this.pushTimed(chunk).samples;
  }

  /** push(), with the chunk's sentence and words timed as joinSpeech times them in the whole recording. */
  pushTimed(chunk: SpokenSpan): { samples: Int16Array } & Pick<Speech, 'sentences' | 'words'> {
    if (chunk.sampleRate !== this.sampleRate) throw new Error('All chunks of one speech must share a sample rate');
    const piece = joinSpeech([{ ...chunk, pauseBefore: undefined }], { ...this.options, edgeSeconds: 0 });
    if (piece.samples.length === 0) return { samples: piece.samples, sentences: [], words: [] };
    const pause = chunk.pauseBefore ?? (this.started ? (this.options.gapSeconds ?? GAP_SECONDS) : 0);
    const lead = this.silence(this.started ? pause : this.edgeSeconds + pause);
    this.started = true;
    const samples = new Int16Array(lead + piece.samples.length);
    samples.set(piece.samples, lead);
    const shift = (this.position + lead) / this.sampleRate;
    this.position += samples.length;
    return {
      samples,
      sentences: piece.sentences.map((sentence) => ({ ...sentence, start: sentence.start + shift, end: sentence.end + shift })),
      words: piece.words.map((word) => ({ ...word, start: word.start + shift, end: word.end + shift })),
    };
  }

  /** Seconds of samples handed out so far. */
  get seconds(): number {
    return this.position / this.sampleRate;
  }

  end(): Int16Array {
    const samples = new Int16Array(this.silence(this.edgeSeconds) * (this.started ? 1 : 2));
    this.position += samples.length;
    return samples;
  }

  private get edgeSeconds(): number {
    return this.options.edgeSeconds ?? EDGE_SECONDS;
  }

  private silence(seconds: number): number {
    return Math.round(seconds * this.sampleRate);
  }
}

function fadeEdges(samples: Int16Array, start: number, length: number, fade: number): void {
  const steps = Math.min(fade, Math.floor(length / 2));
  for (let i = 0; i < steps; i += 1) {
    const gain = i / steps;
    samples[start + i] = Math.round((samples[start + i] ?? 0) * gain);
    const tail = start + length - 1 - i;
    samples[tail] = Math.round((samples[tail] ?? 0) * gain);
  }
}

function clamp(value: number, min: number, max: number): number {
  return Math.min(max, Math.max(min, value));
}

/** Root mean square of the samples, 0 to 1 of full scale. */
export function rms(samples: Int16Array): number {
  let sum = 0;
  for (const value of samples) sum += value * value;
  return samples.length ? Math.sqrt(sum / samples.length) / 32768 : 0;
}

/** The samples' bytes (16-bit little-endian, as this machine holds them), without a copy. */
export function pcmBytes(samples: Int16Array): Buffer {
  return Buffer.from(samples.buffer, samples.byteOffset, samples.byteLength);
}
