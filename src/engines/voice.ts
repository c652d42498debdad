/** A voice as every engine describes its own (GET /voices lists it; api/voices.ts holds its schema and field descriptions). */
export interface Voice {
  /** `<engine>:<voice>`, stable. */
  id: string;
  name: string;
  /** BCP-47, as people write it. */
  language: string;
  /** The engine's own tag where it differs from `language`. */
  engineLanguage?: string;
  gender: 'female' | 'male' | null;
  /** The part of `id` before the colon. */
  engine: string;
  /** Native, in Hz. */
  sampleRate: number;
  /** Whether the engine reports when each word is spoken. */
  wordTimings: boolean;
  /** Whether the voice takes words as IPA (SSML phoneme, lexicons). */
  phonemes: boolean;
  /** The one voice to choose for its language. */
  recommended?: boolean;
  /** Whether `speed` is spoken by the voice itself rather than by a tempo filter. */
  naturalSpeed?: boolean;
  /** The publisher's overall grade, `A` to `F` with `+` and `-`. */
  grade?: string;
  /** A neural voice's size and rate, as its publisher grades it. */
  quality?: 'x_low' | 'low' | 'medium' | 'high';
}

/** Most different voices one request speaks in (a dialogue's): each voice's model is loaded, and kept, by its engine. ElevenLabs' limit too. */
export const MAX_REQUEST_VOICES = 10;
