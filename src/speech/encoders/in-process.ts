import { open, writeFile } from 'node:fs/promises';
import { endianness } from 'node:os';
import type { Writable } from 'node:stream';
import { setImmediate as turn } from 'node:timers/promises';
import { AppError, abortError } from '../../errors.js';
import { storageFailed } from '../../storage/storage.js';
import type { Speech } from '../speech.js';
import type { Codec, CodecKind, CodecSource } from './codec.js';
import { InfoTag, MP3_SAMPLE_RATES, withInfoFrame } from './mp3-info-frame.js';
import { nativeLame } from './native-lame.js';
import { wasmCodec } from './wasm-codecs.js';

/**
 * Encodes that need no process, for speech at its own rate and speed with no loudness target (those need ffmpeg's
 * filters): WAV written here; mp3 through the system's LAME (native-lame.ts), else LAME in WebAssembly; Ogg Vorbis
 * through libvorbis in WebAssembly (wasm-codecs.ts). A codec that cannot be loaded leaves its encodes to ffmpeg.
 *
 * mp3 and ogg only up to IN_PROCESS_MAX_SECONDS: encoding here holds the event loop's thread (in slices), while
 * ffmpeg works on another core, and the WebAssembly codecs take 1.3–1.5× the CPU of native ones (some 5 ms a second
 * of speech here, against 3.5); ffmpeg's start (~85 ms of CPU with its launcher) is paid back well before 30 s.
 */
export const IN_PROCESS_MAX_SECONDS = 30;
/** Seconds of speech encoded between two turns of the event loop (a few milliseconds of CPU). */
const SLICE_SECONDS = 0.5;

export interface InProcessJob {
  encoding: string;
  speed: number;
  sampleRate?: number;
  loudness?: number;
  output: string | Writable;
  signal?: AbortSignal;
  timeoutMs?: number;
}

/** The codec that would encode `job` in process, if one would. */
export function inProcessCodec(speech: Speech, job: InProcessJob): 'wav' | CodecKind | undefined {
  if (job.speed !== 1 || job.loudness !== undefined || (job.sampleRate !== undefined && job.sampleRate !== speech.sampleRate)) return undefined;
  if (speech.samples.length === 0) return undefined;
  // WAV is little-endian, and so is an Int16Array on every machine voxreel is built for; a big-endian one uses ffmpeg.
  if (job.encoding === 'wav') return endianness() === 'LE' ? 'wav' : undefined;
  if (speech.samples.length > IN_PROCESS_MAX_SECONDS * speech.sampleRate) return undefined;
  if (job.encoding === 'mp3' && MP3_SAMPLE_RATES.has(speech.sampleRate)) return 'mp3';
  if (job.encoding === 'ogg') return 'ogg';
  return undefined;
}

/**
 * Loads and checks the codecs now (some 60 ms of CPU for a WebAssembly one), so that the first short mp3 or ogg does
 * not wait for it; says where each comes from (undefined: its encodes go to ffmpeg).
 */
export async function prepareInProcessEncoding(): Promise<{ mp3: 'native' | 'wasm' | undefined; ogg: 'wasm' | undefined }> {
  const [native, ogg] = await Promise.all([nativeLame(), wasmCodec('ogg')]);
  const mp3 = native ? 'native' : (await wasmCodec('mp3')) ? 'wasm' : undefined;
  return { mp3, ogg: ogg ? 'wasm' : undefined };
}

/** Where each codec comes from: the system's LAME before the WebAssembly one. */
async function codecSource(codec: CodecKind): Promise<CodecSource | undefined> {
  return codec === 'mp3' ? ((await nativeLame()) ?? wasmCodec('mp3')) : wasmCodec('ogg');
}

/**
 * Writes `speech` to the job's output without starting a process, and says so; false when this job needs ffmpeg
 * (see inProcessCodec) or a codec could not be loaded or failed, having written nothing. Stops with the signal's
 * reason or JOB_TIMEOUT.
 */
export async function encodeInProcess(speech: Speech, job: InProcessJob): Promise<boolean> {
  const codec = inProcessCodec(speech, job);
  if (!codec) return false;
  if (job.signal?.aborted) throw abortError(job.signal.reason);
  if (codec === 'wav') {
    await writeOut(job.output, [wavHeader(speech.samples.byteLength, speech.sampleRate), bytesOf(speech.samples)]);
    return true;
  }
  let encoded: Buffer;
  try {
    const bytes = await encodeSliced(codec, speech, job);
    if (!bytes) return false;
    encoded = bytes;
  } catch (error) {
    if (error instanceof AppError) throw error;
    return false; // ffmpeg then encodes it as before
  }
  await writeOut(job.output, [encoded]);
  return true;
}

async function encodeSliced(codec: CodecKind, speech: Speech, job: InProcessJob): Promise<Buffer | undefined> {
  const source = await codecSource(codec);
  if (!source) return undefined;
  const { samples, sampleRate } = speech;
  const deadline = job.timeoutMs ? performance.now() + job.timeoutMs : Infinity;
  return withCodec(source, async (encoder, call) => {
    call(() => encoder.start(sampleRate));
    const slice = Math.round(SLICE_SECONDS * sampleRate);
    const pieces: Buffer[] = [];
    for (let start = 0; start < samples.length; start += slice) {
      const part = samples.subarray(start, start + slice);
      pieces.push(call(() => encoder.encode(part)));
      // Other requests get the event loop between slices.
      await turn();
      if (job.signal?.aborted) throw abortError(job.signal.reason);
      if (performance.now() > deadline) throw new AppError('JOB_TIMEOUT');
    }
    pieces.push(call(() => encoder.finish()));
    const encoded = Buffer.concat(pieces);
    return source.lame ? withInfoFrame(encoded, { samples: samples.length, encoderDelay: source.lame.delay, encoder: source.lame.encoder }) : encoded;
  });
}

/**
 * Runs `use` with a codec lent by `source`: a codec starts afresh at start(), so one whose encode was stopped is given
 * back to be reused; one whose call (made through `call`) threw is dropped.
 */
async function withCodec<T>(source: CodecSource, use: (codec: Codec, call: <R>(step: () => R) => R) => Promise<T>): Promise<T> {
  const codec = await source.acquire();
  let threw = false;
  const call = <R>(step: () => R): R => {
    try {
      return step();
    } catch (error) {
      threw = true;
      throw error;
    }
  };
  try {
    return await use(codec, call);
  } finally {
    codec.release(!threw);
  }
}

/**
 * A long job's mp3, encoded here as its speech arrives (no process: none of ffmpeg's 50 MB beside the job), LAME's
 * frames written to `output` after room for the Info frame, which is written last (InfoTag): the file ffmpeg would
 * have made of the same samples, frame for frame. False, having read and written nothing, where the job needs ffmpeg
 * (not mp3, another speed, a rate mp3 lacks, a big-endian machine) or no LAME loads. Between pieces of
 * SLICE_SECONDS, the event loop turns; stops with the signal's reason.
 */
export async function encodePcmInProcess(pcm: AsyncIterable<Buffer>, sampleRate: number, job: { encoding: string; speed: number; output: string; signal?: AbortSignal }): Promise<boolean> {
  if (job.encoding !== 'mp3' || job.speed !== 1 || !MP3_SAMPLE_RATES.has(sampleRate) || endianness() !== 'LE') return false;
  const source = await codecSource('mp3');
  const lame = source?.lame;
  if (!source || !lame) return false;
  const file = await open(job.output, 'w').catch(storageFailed);
  try {
    await withCodec(source, async (encoder, call) => {
      call(() => encoder.start(sampleRate));
      const tag = new InfoTag();
      // Frames before the first whole one shows how much room the Info frame takes; then where the next go.
      let held: Buffer[] = [];
      let position: number | undefined;
      const write = async (frames: Buffer) => {
        if (frames.length === 0) return;
        tag.add(frames);
        if (position === undefined) {
          held.push(frames);
          if (tag.reserve === undefined) return;
          position = tag.reserve;
          frames = Buffer.concat(held);
          held = [];
        }
        await file.write(frames, 0, frames.length, position).catch(storageFailed);
        position += frames.length;
      };
      const slice = Math.round(SLICE_SECONDS * sampleRate);
      let samples = 0;
      let carried = Buffer.alloc(0);
      for await (const chunk of pcm) {
        const bytes = carried.length > 0 ? Buffer.concat([carried, chunk]) : chunk;
        const whole = bytes.length - (bytes.length % 2);
        carried = Buffer.from(bytes.subarray(whole));
        // Copied into samples of their own (a Buffer's bytes need not be aligned for an Int16Array).
        const part = new Int16Array(whole / 2);
        Buffer.from(part.buffer).set(bytes.subarray(0, whole));
        samples += part.length;
        for (let start = 0; start < part.length; start += slice) {
          await write(call(() => encoder.encode(part.subarray(start, start + slice))));
          await turn();
          if (job.signal?.aborted) throw abortError(job.signal.reason);
        }
      }
      await write(call(() => encoder.finish()));
      const info = tag.frame({ samples, encoderDelay: lame.delay, encoder: lame.encoder });
      await file.write(info, 0, info.length, 0).catch(storageFailed);
    });
  } finally {
    await file.close();
  }
  return true;
}

/** A canonical 44-byte RIFF/WAVE header for mono 16-bit PCM. */
export function wavHeader(dataBytes: number, sampleRate: number): Buffer {
  const header = Buffer.alloc(44);
  header.write('RIFF', 0, 'latin1');
  header.writeUInt32LE(36 + dataBytes, 4);
  header.write('WAVEfmt ', 8, 'latin1');
  header.writeUInt32LE(16, 16);
  header.writeUInt16LE(1, 20); // PCM
  header.writeUInt16LE(1, 22); // mono
  header.writeUInt32LE(sampleRate, 24);
  header.writeUInt32LE(sampleRate * 2, 28); // bytes a second
  header.writeUInt16LE(2, 32); // bytes a sample frame
  header.writeUInt16LE(16, 34);
  header.write('data', 36, 'latin1');
  header.writeUInt32LE(dataBytes, 40);
  return header;
}

function bytesOf(samples: Int16Array): Buffer {
  return Buffer.from(samples.buffer, samples.byteOffset, samples.byteLength);
}

/** As ffmpeg's runs do: a file written whole, or a stream given the bytes and ended. */
async function writeOut(output: string | Writable, chunks: Buffer[]): Promise<void> {
  if (typeof output === 'string') {
    await writeFile(output, chunks).catch(storageFailed);
    return;
  }
  for (const chunk of chunks) output.write(chunk);
  output.end();
}
