import type { SpeechChunk, WordTiming } from '../engines/types.js';
import type { ScriptChapter } from './chapters.js';
import type { ScriptMark } from './script.js';
import type { TextSpan } from './sentences.js';
import type { SpeakerTurn } from './dialogue.js';

/** An engine's chunk with the span of the request text it speaks. */
export interface SpokenSpan extends SpeechChunk {
  span: TextSpan;
  /** Seconds of silence before it in place of the usual pause (SSML break). */
  pauseBefore?: number;
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
  /** The written text the offsets point into, where it is not the request's text (SSML without its markup). */
  text?: string;
  /** SSML marks: names at offsets into the written text. */
  marks?: ScriptMark[];
  /** Chapters: titles at offsets into the written text (chapters.ts). */
  chapters?: ScriptChapter[];
  /** A dialogue's turns: who says which stretch of the written text (turns.ts). */
  turns?: SpeakerTurn[];
}
