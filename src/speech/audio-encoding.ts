import { PassThrough, Readable, type Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { abortError } from '../errors.js';
import type { Ffmpeg } from '../media/ffmpeg.js';
import type { Speech } from './speech.js';
import { limitsOf, runProcess, type ProcessLimits } from '../media/process.js';
import { monoTarget, normalizeLoudness, TRUE_PEAK_CEILING, truePeak } from './loudness.js';
import { encodeInProcess } from './encoders/in-process.js';

/** Loads the in-process codecs ahead of the first request (see encoders/in-process.ts). */
export { prepareInProcessEncoding } from './encoders/in-process.js';

/** Hz: the band limit of the videos' AAC; our voices reach 11–16 kHz. */
export const AAC_CUTOFF = 16_000;

/** MP4 as an audiobook (`-f ipod`, major brand M4B), its index first. */
export const M4B_MUXER: readonly string[] = ['-f', 'ipod', '-brand', 'M4B ', '-movflags', '+faststart'];

/**
 * Containers and codecs we write; `aac` is internal (the soundtrack of videos). `peakHeadroom`: dB under the true-peak
 * ceiling that a loudness target aims peaks at, for what the codec adds to them (measured on eSpeak NG and Flite
 * brought to -14 LUFS, whose peaks the limiter holds hardest) and what a meter's finer interpolation finds.
 */
export const AUDIO_ENCODINGS = {
  // No ID3 tag: with the metadata dropped it would only name the encoder, and it would be a stream's first bytes.
  mp3: { extension: 'mp3', contentType: 'audio/mpeg', peakHeadroom: 1, args: ['-c:a', 'libmp3lame', '-b:a', '64k', '-f', 'mp3', '-id3v2_version', '0'] },
  wav: { extension: 'wav', contentType: 'audio/wav', peakHeadroom: 0.5, args: ['-c:a', 'pcm_s16le', '-f', 'wav'] },
  // Audiobooks: AAC in MP4 of the M4B brand (what players shelve as a book), its index first (players start before
  // the whole has arrived); its chapters, title and cover are added once it is spoken (audio-chapters.ts).
  m4b: { extension: 'm4b', contentType: 'audio/mp4', peakHeadroom: 1, args: ['-c:a', 'aac', '-b:a', '64k', ...M4B_MUXER] },
  ogg: { extension: 'ogg', contentType: 'audio/ogg', peakHeadroom: 2, args: ['-c:a', 'libvorbis', '-q:a', '4', '-f', 'ogg'] },
  // Videos' soundtrack. Without perceptual noise substitution and with a 16 kHz band limit (our voices reach 11–16
  // kHz): about 10 % less encoding time, the critical path of a video.
  aac: { extension: 'm4a', contentType: 'audio/mp4', peakHeadroom: 1, args: ['-c:a', 'aac', '-aac_coder', 'fast', '-aac_pns', '0', '-cutoff', String(AAC_CUTOFF), '-b:a', '96k', '-f', 'ipod'] },
  // For the OpenAI-compatible endpoint.
  adts: { extension: 'aac', contentType: 'audio/aac', peakHeadroom: 1, args: ['-c:a', 'aac', '-aac_coder', 'fast', '-b:a', '64k', '-f', 'adts'] },
  opus: { extension: 'opus', contentType: 'audio/ogg; codecs=opus', peakHeadroom: 1.5, args: ['-c:a', 'libopus', '-b:a', '48k', '-f', 'ogg', '-page_duration', '20000'] },
  flac: { extension: 'flac', contentType: 'audio/flac', peakHeadroom: 0.5, args: ['-c:a', 'flac', '-f', 'flac'] },
  pcm: { extension: 'pcm', contentType: 'audio/pcm', peakHeadroom: 0.5, args: ['-c:a', 'pcm_s16le', '-f', 's16le'] },
  // G.711, raw, 8 bits a sample: telephony (the ElevenLabs-compatible endpoint's ulaw_8000 and alaw_8000).
  ulaw: { extension: 'ulaw', contentType: 'audio/basic', peakHeadroom: 0.5, args: ['-c:a', 'pcm_mulaw', '-f', 'mulaw'] },
  alaw: { extension: 'alaw', contentType: 'audio/x-alaw-basic', peakHeadroom: 0.5, args: ['-c:a', 'pcm_alaw', '-f', 'alaw'] },
} as const;
export type AudioEncoding = keyof typeof AUDIO_ENCODINGS;

/** Encodings whose bytes are final as soon as they are written, so they can be sent while the rest is encoded. */
export const STREAMABLE_ENCODINGS: ReadonlySet<AudioEncoding> = new Set(['mp3', 'adts', 'opus', 'pcm', 'ulaw', 'alaw']);

export interface EncodeOptions extends ProcessLimits {
  encoding: AudioEncoding;
  /** Playback speed, 0.25 to 4 (atempo keeps the pitch). */
  speed: number;
  /** Resample to this rate; by default the speech keeps its own. */
  sampleRate?: number;
  /** 2: the voice centred in stereo, the same in both channels (a video's soundtrack); default 1. */
  channels?: 1 | 2;
  /**
   * Integrated loudness to bring the speech to, in LUFS (ITU-R BS.1770-4, EBU R128), its true peak held under
   * -1 dBTP; by default the voice's own level is kept. Only for whole speech (encodeSpeech).
   */
  loudness?: number;
  /** With `loudness`: the true peak (dBTP) the encode aims under; by default the ceiling less the codec's headroom. */
  peakCeiling?: number;
  /**
   * With `loudness` and a file: meter the written file and write it again, peaks held lower, while a peak is over the
   * ceiling (default). A caller with something to do meanwhile checks it itself (encodedTruePeak, lowerCeiling).
   */
  checkPeak?: boolean;
  /** A file, or a stream that gets the encoded bytes as they are written. */
  output: string | Writable;
}

/** A stream's samples arrive over time, so its loudness cannot be measured before its first bytes leave: no target. */
export type PcmEncodeOptions = Omit<EncodeOptions, 'loudness'> & { loudness?: undefined };

/** Encodings written again, the ceiling lowered, when a written file's true peak is over it: at most this many. */
export const PEAK_RETRIES = 2;
/** dB under the ceiling that an encoding written again aims at, beyond the peak's excess. */
const PEAK_MARGIN = 0.3;

/** The true peak an encoding aims under: the ceiling less what the codec adds to peaks. */
export function peakCeilingFor(encoding: AudioEncoding): number {
  return TRUE_PEAK_CEILING - AUDIO_ENCODINGS[encoding].peakHeadroom;
}

/**
 * Writes the speech, at the given speed, to `output`. WAV, and short mp3 and ogg, at the speech's own rate and speed
 * with no loudness target, are written in this process (encoders/in-process.ts); the rest in one ffmpeg run fed
 * through stdin. With `loudness`, a file's true peak is then read (encodedTruePeak), and the file written again with
 * its peaks held lower if the codec lifted one over the ceiling (a stream cannot be taken back: it gets the codec's
 * headroom only).
 */
export async function encodeSpeech(ffmpeg: Ffmpeg, speech: Speech, options: EncodeOptions): Promise<void> {
  if (await encodeInProcess(speech, options)) return;
  const { loudness, output } = options;
  if (loudness === undefined) return encode(ffmpeg, pcmOf(speech.samples), speech.sampleRate, options, 0);
  let ceiling = options.peakCeiling ?? peakCeilingFor(options.encoding);
  const limits = limitsOf(options);
  const perChannel = monoTarget(loudness, options.channels ?? 1);
  for (let attempt = 0; ; attempt += 1) {
    // Peaks held by a limiter, not by less gain: eSpeak NG's stand 18 dB over its loudness, less gain would leave it 5 LU short of -14.
    const { samples, gain } = normalizeLoudness(speech.samples, speech.sampleRate, perChannel, ceiling);
    // The gain goes to ffmpeg (volume, in floating point); the samples change only where the limiter held a peak.
    await encode(ffmpeg, pcmOf(samples), speech.sampleRate, options, gain);
    if (typeof output !== 'string' || attempt === PEAK_RETRIES || options.checkPeak === false) return;
    const peak = await encodedTruePeak(ffmpeg, output, limits, options.channels);
    if (peak <= TRUE_PEAK_CEILING) return;
    ceiling = lowerCeiling(ceiling, peak);
  }
}

/** The ceiling to aim at when writing again a file whose true peak came out at `peak`, over TRUE_PEAK_CEILING. */
export function lowerCeiling(ceiling: number, peak: number): number {
  return ceiling - (peak - TRUE_PEAK_CEILING + PEAK_MARGIN);
}

/**
 * dB added to our own reading of a written file's true peak, so that it never reads lower than a meter with a finer
 * interpolator (ffmpeg's ebur128, which the tests use) would.
 */
export const METER_MARGIN = 0.2;

/**
 * The true peak of an encoded file of `channels` channels in dBTP (−Infinity for silence): decoded by ffmpeg and read
 * by truePeak here, METER_MARGIN added. About half the time of ffmpeg's own ebur128 meter, so that the check of a
 * video's soundtrack hides behind the mux.
 */
export async function encodedTruePeak(ffmpeg: Ffmpeg, file: string, limits: ProcessLimits, channels = 1): Promise<number> {
  const { stdout } = await runProcess(ffmpeg.tools.ffmpeg, ['-nostdin', '-v', 'error', '-i', file, '-map', '0:a:0', '-ac', String(channels), '-f', 's16le', 'pipe:1'], limits);
  return truePeak(new Int16Array(stdout.buffer, stdout.byteOffset, Math.floor(stdout.byteLength / 2)), channels) + METER_MARGIN;
}

function pcmOf(samples: Int16Array): Readable {
  return Readable.from([Buffer.from(samples.buffer, samples.byteOffset, samples.byteLength)]);
}

/** Encodes mono 16-bit PCM in one ffmpeg run, reading it as it arrives on `pcm`. */
export function encodePcm(ffmpeg: Ffmpeg, pcm: Readable, inputRate: number, options: PcmEncodeOptions): Promise<void> {
  return encode(ffmpeg, pcm, inputRate, options, 0);
}

function encode(ffmpeg: Ffmpeg, pcm: Readable, inputRate: number, options: Omit<EncodeOptions, 'loudness'>, gain: number): Promise<void> {
  const streaming = typeof options.output !== 'string';
  const filters = [
    ...(gain === 0 ? [] : [`volume=${gain.toFixed(2)}dB`]),
    ...(options.speed === 1 ? [] : [tempoFilter(options.speed)]),
    // Copied whole into both channels (ffmpeg's own upmix would take 3 dB off each).
    ...(options.channels === 2 ? ['pan=stereo|c0=c0|c1=c0'] : []),
  ];
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
      ...(filters.length === 0 ? [] : ['-af', filters.join(',')]),
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
  encode(pcm: Readable, inputRate: number, options: PcmEncodeOptions & { output: Writable }): Promise<void> {
    // Raw 16-bit PCM at the voice's own rate is what the speech already is: no encoder, and no ffmpeg between a
    // sentence and its bytes (it held each stream's first bytes some 50 ms and its end as long: Wyoming, measured).
    if (options.encoding === 'pcm' && options.speed === 1 && (options.sampleRate ?? inputRate) === inputRate) {
      return pipeline(pcm, options.output, { signal: options.signal }).catch((error: unknown) => {
        throw options.signal?.aborted ? abortError(options.signal.reason) : error;
      });
    }
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

  private start(inputRate: number, options: PcmEncodeOptions): Spare {
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

async function useSpare(spare: Spare, pcm: Readable, options: PcmEncodeOptions & { output: Writable }): Promise<void> {
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
export function tempoFilter(speed: number): string {
  return speed < 0.5 ? `atempo=0.5,atempo=${speed / 0.5}` : `atempo=${speed}`;
}
