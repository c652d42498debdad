import type { SpeechChunk, WordTiming } from '../engines/types.js';
import type { TextSpan } from './sentences.js';

/** An engine's chunk with the span of the request text it speaks. */
export interface SpokenSpan extends SpeechChunk {
  span: TextSpan;
}

export interface SentenceTiming {
  start: number;
  end: number;
  textOffset: number;
  textLength: number;
}

/** One continuous mono recording of the whole text; times in seconds, offsets into the request text. */
export interface Speech {
  samples: Int16Array;
  sampleRate: number;
  duration: number;
  sentences: SentenceTiming[];
  /** Empty when the engine reports no word timings. */
  words: WordTiming[];
}
