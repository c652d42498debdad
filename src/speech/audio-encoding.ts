import { PassThrough, Readable, type Writable } from 'node:stream';
import type { Ffmpeg } from '../media/ffmpeg.js';
import type { Speech } from './speech.js';
import type { ProcessLimits } from '../media/process.js';

/** Containers and codecs we write; `aac` is internal (the soundtrack of videos). */
export const AUDIO_ENCODINGS = {
  // No ID3 tag: with the metadata dropped it would only name the encoder, and it would be a stream's first bytes.
  mp3: { extension: 'mp3', contentType: 'audio/mpeg', args: ['-c:a', 'libmp3lame', '-b:a', '64k', '-f', 'mp3', '-id3v2_version', '0'] },
  wav: { extension: 'wav', contentType: 'audio/wav', args: ['-c:a', 'pcm_s16le', '-f', 'wav'] },
  ogg: { extension: 'ogg', contentType: 'audio/ogg', args: ['-c:a', 'libvorbis', '-q:a', '4', '-f', 'ogg'] },
  aac: { extension: 'm4a', contentType: 'audio/mp4', args: ['-c:a', 'aac', '-aac_coder', 'fast', '-b:a', '96k', '-f', 'ipod'] },
  // For the OpenAI-compatible endpoint.
  adts: { extension: 'aac', contentType: 'audio/aac', args: ['-c:a', 'aac', '-aac_coder', 'fast', '-b:a', '64k', '-f', 'adts'] },
  opus: { extension: 'opus', contentType: 'audio/ogg; codecs=opus', args: ['-c:a', 'libopus', '-b:a', '48k', '-f', 'ogg', '-page_duration', '20000'] },
  flac: { extension: 'flac', contentType: 'audio/flac', args: ['-c:a', 'flac', '-f', 'flac'] },
  pcm: { extension: 'pcm', contentType: 'audio/pcm', args: ['-c:a', 'pcm_s16le', '-f', 's16le'] },
} as const;
export type AudioEncoding = keyof typeof AUDIO_ENCODINGS;

/** Encodings whose bytes are final as soon as they are written, so they can be sent while the rest is encoded. */
export const STREAMABLE_ENCODINGS: ReadonlySet<AudioEncoding> = new Set(['mp3', 'adts', 'opus', 'pcm']);

export interface EncodeOptions extends ProcessLimits {
  encoding: AudioEncoding;
  /** Playback speed, 0.25 to 4 (atempo keeps the pitch). */
  speed: number;
  /** Resample to this rate; by default the speech keeps its own. */
  sampleRate?: number;
  /** A file, or a stream that gets the encoded bytes as they are written. */
  output: string | Writable;
}

/** Writes the speech, at the given speed, to `output` in one ffmpeg run fed through stdin. */
export function encodeSpeech(ffmpeg: Ffmpeg, speech: Speech, options: EncodeOptions): Promise<void> {
  const pcm = Buffer.from(speech.samples.buffer, speech.samples.byteOffset, speech.samples.byteLength);
  return encodePcm(ffmpeg, Readable.from([pcm]), speech.sampleRate, options);
}

/** Encodes mono 16-bit PCM in one ffmpeg run, reading it as it arrives on `pcm`. */
export function encodePcm(ffmpeg: Ffmpeg, pcm: Readable, inputRate: number, options: EncodeOptions): Promise<void> {
  const streaming = typeof options.output !== 'string';
  return ffmpeg.run({
    inputs: [
      {
        source: pcm,
        // Raw PCM needs no probing; without these ffmpeg would wait for seconds of input before encoding any.
        options: ['-probesize', '32', '-analyzeduration', '0', '-f', 's16le', '-ar', String(inputRate), '-ac', '1'],
      },
    ],
    output: options.output,
    outputOptions: [
      ...(options.speed === 1 ? [] : ['-af', tempoFilter(options.speed)]),
      ...(options.sampleRate ? ['-ar', String(options.sampleRate)] : []),
      '-map_metadata',
      '-1',
      ...(streaming ? ['-flush_packets', '1'] : []),
      ...AUDIO_ENCODINGS[options.encoding].args,
    ],
    signal: options.signal,
    timeoutMs: options.timeoutMs,
  });
}

interface Spare {
  input: PassThrough;
  output: PassThrough;
  controller: AbortController;
  done: Promise<void>;
  alive: boolean;
}

/**
 * Streaming encodes started ahead of need: one spare ffmpeg per encoding and rates once that combination has been
 * asked for, so a stream's first bytes wait for its first sentence only, not also for ffmpeg to start (some 50 ms
 * of CPU, much longer on a busy machine). Speed 1 only: atempo is fixed when ffmpeg starts.
 */
export class WarmEncoders {
  private readonly spares = new Map<string, Spare>();
  private closed = false;

  constructor(private readonly ffmpeg: Ffmpeg) {}

  /** encodePcm into a stream, on the spare when one is ready. */
  encode(pcm: Readable, inputRate: number, options: EncodeOptions & { output: Writable }): Promise<void> {
    if (options.speed !== 1) return encodePcm(this.ffmpeg, pcm, inputRate, options);
    const key = `${options.encoding}/${inputRate}/${options.sampleRate ?? inputRate}`;
    const ready = this.spares.get(key);
    this.spares.delete(key);
    const spare = ready?.alive ? ready : this.start(inputRate, options);
    // The next spare starts once this encode has begun to give bytes, so as not to slow its start.
    spare.output.once('data', () => {
      if (!this.closed && !this.spares.has(key)) this.spares.set(key, this.start(inputRate, options));
    });
    return useSpare(spare, pcm, options);
  }

  /** Stops the spares. */
  close(): void {
    this.closed = true;
    for (const spare of this.spares.values()) spare.controller.abort();
    this.spares.clear();
  }

  private start(inputRate: number, options: EncodeOptions): Spare {
    const controller = new AbortController();
    const input = new PassThrough();
    const output = new PassThrough();
    const done = encodePcm(this.ffmpeg, input, inputRate, {
      encoding: options.encoding,
      speed: 1,
      sampleRate: options.sampleRate,
      output,
      signal: controller.signal,
    });
    const spare: Spare = { input, output, controller, done, alive: true };
    // A spare that ends unused (closed, or killed from outside) is passed over; a user gets its failure.
    void done
      .catch(() => undefined)
      .finally(() => {
        spare.alive = false;
      });
    return spare;
  }
}

async function useSpare(spare: Spare, pcm: Readable, options: EncodeOptions & { output: Writable }): Promise<void> {
  // As with encodePcm: an abort, a failing input or a destination gone kill ffmpeg.
  const stop = () => spare.controller.abort();
  options.signal?.addEventListener('abort', stop, { once: true });
  if (options.signal?.aborted) stop();
  pcm.once('error', stop);
  options.output.once('close', stop);
  spare.output.pipe(options.output);
  pcm.pipe(spare.input);
  try {
    await spare.done;
  } finally {
    options.signal?.removeEventListener('abort', stop);
    options.output.removeListener('close', stop);
  }
}

/** One atempo goes down to 0.5: slower speeds chain two. */
function tempoFilter(speed: number): string {
  return speed < 0.5 ? `atempo=0.5,atempo=${speed / 0.5}` : `atempo=${speed}`;
}
