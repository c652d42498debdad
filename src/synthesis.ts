import type { Voice } from './schemas.js';
import type { SpeechChunk, SynthesizeOptions } from './engines/types.js';
import { AUDIO_ENCODINGS, encodeSpeech, type AudioEncoding } from './audio-encoding.js';
import { AppError } from './errors.js';
import type { Ffmpeg } from './ffmpeg.js';
import { joinSpeech, type Speech, type SpokenSpan } from './pcm.js';
import { ProcessError } from './process.js';
import type { FileKind, Storage, StoredFile } from './storage.js';
import { normalizeText, splitSentences } from './text.js';

/** What synthesis needs of the engines (src/engines/index.ts provides it). */
export interface VoiceEngines {
  findVoice(id: string): Voice | undefined;
  synthesize(voiceId: string, text: string, options?: SynthesizeOptions): Promise<SpeechChunk>;
}

export interface SpeakRequest {
  text: string;
  voice: string;
  signal?: AbortSignal;
}

export interface AudioRequest extends SpeakRequest {
  encoding: AudioEncoding;
  speed: number;
}

export interface AudioResult {
  file: StoredFile;
  /** Length of the written file in seconds, as ffprobe reads it. */
  duration: number;
  /** The speech at normal speed, with its timings. */
  speech: Speech;
}

/** Sentences synthesized at once for one request; the engine pool is shared with other requests. */
const SENTENCES_IN_FLIGHT = 2;

/** Text → speech → files in storage. Knows nothing of HTTP. */
export class Synthesizer {
  constructor(
    private readonly engines: VoiceEngines,
    private readonly ffmpeg: Ffmpeg,
    private readonly storage: Storage,
  ) {}

  /** Checks what the schema cannot: that the voice exists and the text is well-formed Unicode. */
  validate(request: Pick<SpeakRequest, 'text' | 'voice'>): Voice {
    const voice = this.engines.findVoice(request.voice);
    if (!voice) {
      throw new AppError('UNKNOWN_VOICE', { field: 'voice', message: `No voice has the id "${request.voice.slice(0, 100)}"; GET /voices lists them.` });
    }
    if (!request.text.isWellFormed()) {
      throw new AppError('VALIDATION_ERROR', { field: 'text', message: 'text must be valid Unicode (it holds a lone surrogate).' });
    }
    return voice;
  }

  /** Speaks the text sentence by sentence and joins the pieces into one recording at normal speed. */
  async speak(request: SpeakRequest): Promise<Speech> {
    this.validate(request);
    // Offsets stay valid: normalizing replaces characters one for one.
    const spans = splitSentences(normalizeText(request.text));
    const chunks = await mapLimited(spans, SENTENCES_IN_FLIGHT, async (span): Promise<SpokenSpan> => {
      const chunk = await this.engines.synthesize(request.voice, span.text, { signal: request.signal });
      return { ...chunk, span };
    });
    return joinSpeech(chunks);
  }

  /** Speaks the text and stores it as an audio file; the file appears at its URL complete or not at all. */
  async renderAudio(request: AudioRequest): Promise<AudioResult> {
    const speech = await this.speak(request);
    const encoding = AUDIO_ENCODINGS[request.encoding];
    const { file, duration } = await this.store('audio', encoding.extension, request, async (output) => {
      await encodeSpeech(this.ffmpeg, speech, {
        encoding: request.encoding,
        speed: request.speed,
        output,
        signal: request.signal,
      });
    });
    return { file, duration, speech };
  }

  /** Runs `produce` into a temporary file, measures it, and publishes it; discards it on any failure. */
  private async store(
    kind: FileKind,
    extension: string,
    limits: { signal?: AbortSignal },
    produce: (output: string) => Promise<void>,
  ): Promise<{ file: StoredFile; duration: number }> {
    const pending = await this.storage.pending(kind, this.storage.newName(), extension).catch((cause: unknown) => {
      throw new AppError('STORAGE_FAILED', { cause });
    });
    try {
      await produce(pending.path).catch(rethrowAsAppError('MEDIA_FAILED'));
      const info = await this.ffmpeg.probe(pending.path, { signal: limits.signal }).catch(rethrowAsAppError('MEDIA_FAILED'));
      const file = await pending.commit().catch((cause: unknown) => {
        throw new AppError('STORAGE_FAILED', { cause });
      });
      return { file, duration: info.duration };
    } catch (error) {
      await pending.discard();
      throw error;
    }
  }
}

/** Maps a ProcessError to the API's error for its cause: canceled, timed out, or failed. */
export function rethrowAsAppError(failedCode: 'MEDIA_FAILED' | 'ENGINE_FAILED') {
  return (error: unknown): never => {
    if (error instanceof AppError) throw error;
    if (error instanceof ProcessError) {
      if (error.isCanceled) throw new AppError('CLIENT_CLOSED', { cause: error });
      if (error.timedOut) throw new AppError('JOB_TIMEOUT', { cause: error });
      if (/No space left|Permission denied|Read-only file system/i.test(error.stderrTail)) {
        throw new AppError('STORAGE_FAILED', { cause: error });
      }
    }
    throw new AppError(failedCode, { cause: error });
  };
}

/** Like Promise.all over items.map(fn), with at most `limit` calls running; stops starting new ones after a failure. */
async function mapLimited<T, R>(items: readonly T[], limit: number, fn: (item: T) => Promise<R>): Promise<R[]> {
  const results = new Array<R>(items.length);
  let next = 0;
  let failed = false;
  const lane = async () => {
    while (!failed && next < items.length) {
      const index = next++;
      try {
        results[index] = await fn(items[index] as T);
      } catch (error) {
        failed = true;
        throw error;
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, lane));
  return results;
}
