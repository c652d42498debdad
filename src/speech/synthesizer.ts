import { createReadStream } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { Readable, type Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { Voice } from '../engines/voice.js';
import type { SpeechChunk, SynthesizeOptions } from '../engines/types.js';
import { AUDIO_ENCODINGS, STREAMABLE_ENCODINGS, WarmEncoders, encodeSpeech, type AudioEncoding } from './audio-encoding.js';
import { audioCues, srtFile, webVttFile } from './captions.js';
import { audioDuration } from './audio-duration.js';
import { AppError, processFailure } from '../errors.js';
import type { Ffmpeg } from '../media/ffmpeg.js';
import { joinSpeech, SpeechJoiner, type Speech, type SpokenSpan } from './pcm.js';
import { ProcessError } from '../media/process.js';
import type { FileKind, PendingFile, Storage, StoredFile } from '../storage/storage.js';
import { splitSentences } from './sentences.js';
import { timedWordsIn, type SpokenWord } from './words.js';

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
  /** Also time every word in the file, and publish WebVTT and SRT captions of the same name. */
  timestamps?: boolean;
}

export interface AudioResult {
  file: StoredFile;
  /** Length of the written file in seconds, as ffprobe reads it. */
  duration: number;
  /** With `timestamps`: every word with its times in the file. */
  words?: SpokenWord[];
  captions?: { vtt: StoredFile; srt: StoredFile };
}

export interface StreamRequest extends SpeakRequest {
  encoding: AudioEncoding;
  speed: number;
  /** Resample to this rate; by default the voice's own. */
  sampleRate?: number;
}

/** A file published beside another, under the same name. */
interface Companion {
  kind: FileKind;
  extension: string;
  content: string;
}

/** Sentences synthesized at once for one request; the engine pool is shared with other requests. */
const SENTENCES_IN_FLIGHT = 2;

/** Text → speech → files in storage. Knows nothing of HTTP. */
export class Synthesizer {
  private readonly encoders: WarmEncoders;

  constructor(
    private readonly engines: VoiceEngines,
    private readonly ffmpeg: Ffmpeg,
    private readonly storage: Storage,
  ) {
    this.encoders = new WarmEncoders(ffmpeg);
  }

  /** Stops the encoders kept ready for streams. */
  close(): void {
    this.encoders.close();
  }

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
    const chunks: SpokenSpan[] = [];
    for await (const chunk of this.speakInOrder(request)) chunks.push(chunk);
    return joinSpeech(chunks);
  }

  /**
   * Speaks the text sentence by sentence, yielding each sentence in order as soon as it and those before it are
   * spoken. `firstAlone`: nothing else competes with the first sentence for the cores (streaming waits for it).
   */
  async *speakInOrder(request: SpeakRequest, firstAlone = false): AsyncGenerator<SpokenSpan> {
    this.validate(request);
    const spans = splitSentences(request.text);
    yield* mapInOrder(spans, SENTENCES_IN_FLIGHT, firstAlone, async (span): Promise<SpokenSpan> => {
      const chunk = await this.engines.synthesize(request.voice, span.text, { signal: request.signal });
      return { ...chunk, span };
    });
  }

  /** Speaks the text and stores it as an audio file; the file (and its captions) appear at their URLs complete or not at all. */
  async renderAudio(request: AudioRequest): Promise<AudioResult> {
    const speech = await this.speak(request);
    const encoding = AUDIO_ENCODINGS[request.encoding];
    let words: SpokenWord[] | undefined;
    const captions = (duration: number): Companion[] => {
      words = timedWordsIn(request.text, speech, duration);
      const cues = audioCues(words);
      return [
        { kind: 'captions', extension: 'vtt', content: webVttFile(cues) },
        { kind: 'captions', extension: 'srt', content: srtFile(cues) },
      ];
    };
    const stored = await this.store(
      'audio',
      encoding.extension,
      async (output) => {
        await encodeSpeech(this.ffmpeg, speech, {
          encoding: request.encoding,
          speed: request.speed,
          output,
          signal: request.signal,
        });
      },
      (output) => measureAudio(this.ffmpeg, output, request.encoding, request.signal),
      request.timestamps ? captions : undefined,
    );
    const [vtt, srt] = stored.companions;
    return { file: stored.file, duration: stored.duration, ...(words && vtt && srt ? { words, captions: { vtt, srt } } : {}) };
  }

  /**
   * Speaks the text into `output` as it goes: one ffmpeg encodes the sentences as they are spoken, the first one
   * first, and its bytes flow on as they are written. Encodings that cannot be streamed are made whole, then sent.
   */
  async streamAudio(request: StreamRequest, output: Writable): Promise<void> {
    const voice = this.validate(request);
    const options = { encoding: request.encoding, speed: request.speed, sampleRate: request.sampleRate, signal: request.signal };
    if (!STREAMABLE_ENCODINGS.has(request.encoding)) {
      const speech = await this.speak(request);
      const pending = await this.storage.pending('audio', this.storage.newName(), AUDIO_ENCODINGS[request.encoding].extension).catch(storageFailed);
      try {
        await encodeSpeech(this.ffmpeg, speech, { ...options, output: pending.path }).catch(rethrowAsAppError('MEDIA_FAILED'));
        await pipeline(createReadStream(pending.path), output, { signal: request.signal }).catch((cause: unknown) => {
          throw request.signal?.aborted ? new AppError('CLIENT_CLOSED', { cause }) : cause;
        });
      } finally {
        await pending.discard();
      }
      return;
    }
    let spokenFailure: unknown;
    const pieces = this.pcmPieces(request, voice.sampleRate);
    // Synthesis starts now, not when the encoder first reads.
    const head = pieces.next();
    void head.catch(() => undefined);
    const pcm = Readable.from(
      (async function* () {
        try {
          const first = await head;
          if (first.done) return;
          yield first.value;
          yield* pieces;
        } catch (error) {
          spokenFailure = error;
          throw error;
        }
      })(),
    );
    await this.encoders.encode(pcm, voice.sampleRate, { ...options, output }).catch((error: unknown) => {
      pcm.destroy();
      return rethrowAsAppError('MEDIA_FAILED')(spokenFailure ?? error);
    });
  }

  /** The PCM speak() would join, piece by piece: each sentence as soon as it and those before it are spoken. */
  private async *pcmPieces(request: SpeakRequest, sampleRate: number): AsyncGenerator<Buffer> {
    const joiner = new SpeechJoiner(sampleRate);
    for await (const chunk of this.speakInOrder(request, true)) {
      const samples = joiner.push(chunk);
      if (samples.length > 0) yield pcmBytes(samples);
    }
    yield pcmBytes(joiner.end());
  }

  /**
   * Runs `produce` into a temporary file, measures it, and publishes it with its companions (made from its measured
   * length, under the same name): all of them, or on any failure none.
   */
  private async store(
    kind: FileKind,
    extension: string,
    produce: (output: string) => Promise<void>,
    /** The produced file's length in seconds, as ffprobe would read it. */
    measure: (output: string) => Promise<number>,
    companions: (duration: number) => Companion[] = () => [],
  ): Promise<{ file: StoredFile; duration: number; companions: StoredFile[] }> {
    const name = this.storage.newName();
    const pending = await this.storage.pending(kind, name, extension).catch(storageFailed);
    const extras: PendingFile[] = [];
    try {
      await produce(pending.path).catch(rethrowAsAppError('MEDIA_FAILED'));
      const duration = await measure(pending.path).catch(rethrowAsAppError('MEDIA_FAILED'));
      for (const companion of companions(duration)) {
        const extra = await this.storage.pending(companion.kind, name, companion.extension).catch(storageFailed);
        extras.push(extra);
        await writeFile(extra.path, companion.content).catch(storageFailed);
      }
      // Companions first: the main file never stands at its URL without them.
      const published: StoredFile[] = [];
      try {
        for (const extra of extras) published.push(await extra.commit());
        return { file: await pending.commit(), duration, companions: published };
      } catch (cause) {
        await Promise.all(published.map((file) => this.storage.delete(file.key).catch(() => undefined)));
        throw new AppError('STORAGE_FAILED', { cause });
      }
    } catch (error) {
      await Promise.all([pending, ...extras].map((file) => file.discard()));
      throw error;
    }
  }
}

/** Reads our own headers where it can (no process to start), else asks ffprobe. */
function measureAudio(ffmpeg: Ffmpeg, file: string, encoding: AudioEncoding, signal?: AbortSignal): Promise<number> {
  if (encoding === 'mp3' || encoding === 'wav' || encoding === 'ogg') return audioDuration(file, encoding);
  return ffmpeg.probe(file, { signal }).then((info) => info.duration);
}

function storageFailed(cause: unknown): never {
  throw new AppError('STORAGE_FAILED', { cause });
}

function pcmBytes(samples: Int16Array): Buffer {
  return Buffer.from(samples.buffer, samples.byteOffset, samples.byteLength);
}

/** Maps a ProcessError to the API's error for its cause: canceled, timed out, or failed. */
export function rethrowAsAppError(failedCode: 'MEDIA_FAILED' | 'ENGINE_FAILED') {
  return (error: unknown): never => {
    if (error instanceof AppError) throw error;
    if (error instanceof ProcessError) {
      if (error.isCanceled || error.timedOut) throw processFailure(error, failedCode, error);
      if (/No space left|Permission denied|Read-only file system/i.test(error.stderrTail)) {
        throw new AppError('STORAGE_FAILED', { cause: error });
      }
    }
    throw new AppError(failedCode, { cause: error });
  };
}

/**
 * items.map(fn) with at most `limit` calls running (only one until the first is done, with `firstAlone`), yielding
 * the results in order, each as soon as it and those before it are done; stops starting calls after a failure (and
 * when the consumer stops).
 */
async function* mapInOrder<T, R>(items: readonly T[], limit: number, firstAlone: boolean, fn: (item: T) => Promise<R>): AsyncGenerator<R> {
  const results: Array<Promise<R>> = [];
  let running = 0;
  let stopped = false;
  const cap = () => (firstAlone && results.length === 1 && running > 0 ? 1 : limit);
  const launch = () => {
    while (!stopped && running < cap() && results.length < items.length) {
      running += 1;
      const result = fn(items[results.length] as T);
      results.push(result);
      result.then(
        () => {
          running -= 1;
          launch();
        },
        () => {
          stopped = true;
        },
      );
    }
  };
  launch();
  try {
    // Calls start in order and stop at a failure, so the loop meets the failure before any call not started.
    for (let index = 0; index < items.length; index += 1) yield await (results[index] as Promise<R>);
  } finally {
    stopped = true;
  }
}
