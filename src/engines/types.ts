import type { Static } from '@sinclair/typebox';
import type { Voice } from './voice.js';

export type EngineName = Static<typeof Voice>['engine'];

/** A word as the engine spoke it: times in seconds from the start of its chunk, offsets into the chunk's text as given. */
export interface WordTiming {
  word: string;
  start: number;
  end: number;
  textOffset: number;
  textLength: number;
}

/** Mono 16-bit PCM of one synthesized piece of text. */
export interface SpeechChunk {
  samples: Int16Array;
  sampleRate: number;
  /** Present when the engine reports word timings (Voice.wordTimings). */
  words?: WordTiming[];
}

export interface SynthesizeOptions {
  signal?: AbortSignal;
}

export interface Engine {
  readonly name: EngineName;
  /** Voices this engine can speak with on this machine; empty when the engine is not installed. */
  listVoices(): Promise<Voice[]>;
  /** Plain text in (the engine escapes what it must); throws AppError ENGINE_FAILED / JOB_TIMEOUT / CLIENT_CLOSED. */
  synthesize(voiceId: string, text: string, options?: SynthesizeOptions): Promise<SpeechChunk>;
  /** Stops the engine's child processes. */
  close(): Promise<void>;
}
