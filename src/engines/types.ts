import type { Voice } from './voice.js';

/** The engine's part of a voice id (`piper` in `piper:en_US-joe-medium`). */
export type EngineName = Voice['engine'];

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
  /**
   * Speak this many times faster where the voice can do it naturally (`Voice.naturalSpeed`: Piper's length scale);
   * other engines ignore it, and the caller changes the tempo instead.
   */
  speed?: number;
  /** Spans of the text [start, end) to say as these IPA phonemes (SSML phoneme, lexicons), for engines that take them (`Voice.phonemes`). */
  phonemes?: PhonemeSpan[];
}

/** A span of a text to be said as IPA phonemes. */
export interface PhonemeSpan {
  start: number;
  end: number;
  ipa: string;
}

/**
 * A voice resolved once: what it is and can do (a Voice: sample rate, word timings, phonemes, natural speed,
 * language), with its engine bound to it, so that nothing below looks its id up again.
 */
export interface VoiceHandle extends Voice {
  /** How much of an asked rate the voice speaks itself, about speed^share; 1 where a tempo filter does it all. */
  readonly speedShare: number;
  /** This voice's speech of plain text; throws AppError ENGINE_FAILED, or the abort signal's reason. */
  synthesize(text: string, options?: SynthesizeOptions): Promise<SpeechChunk>;
}

/** Speaks voices: what synthesis needs, and what each engine and the registry of all engines provide. */
export interface Speaker {
  /** The voice with this id (case-insensitive), or undefined. */
  findVoice(voiceId: string): Voice | undefined;
  /** The voice with this id, resolved into a handle that speaks it (voice-handle.ts), or undefined. */
  handleOf(voiceId: string): VoiceHandle | undefined;
  /** Plain text in (the engine escapes what it must); throws AppError ENGINE_FAILED, or the abort signal's reason. */
  synthesize(voiceId: string, text: string, options?: SynthesizeOptions): Promise<SpeechChunk>;
  /** Engines installed but not started (the registry's): a voice of theirs is unavailable, not unknown. */
  unavailable?(): ReadonlyArray<{ engine: string; reason: string }>;
  /** A voice of `voice`'s engine and sample rate for another language (SSML lang), or undefined (the registry's). */
  voiceFor?(voice: Voice, language: string): Voice | undefined;
}

/** One engine: a Speaker with a name, its installed voices, and processes to stop. */
export interface Engine extends Speaker {
  readonly name: EngineName;
  /**
   * Where its voices speak `speed` themselves (`Voice.naturalSpeed`): how much of the asked rate they get, about
   * speed^share; the rest is a tempo filter's. Left out: a tempo filter alone.
   */
  readonly naturalSpeedShare?: number;
  /** Voices this engine can speak with on this machine; empty when the engine is not installed. */
  listVoices(): Promise<Voice[]>;
  /** Stops the engine's child processes. */
  close(): Promise<void>;
}
