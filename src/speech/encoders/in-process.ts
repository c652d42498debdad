import { writeFile } from 'node:fs/promises';
import { endianness } from 'node:os';
import type { Writable } from 'node:stream';
import { setImmediate as turn } from 'node:timers/promises';
import { AppError, abortError } from '../../errors.js';
import { storageFailed } from '../../storage/storage.js';
import type { Speech } from '../speech.js';
import { MP3_SAMPLE_RATES, withInfoFrame } from './mp3-info-frame.js';
import { LAME_ENCODER_DELAY, LAME_VERSION, wasmCodecPool, type WasmCodec } from './wasm-codecs.js';

/**
 * Encodes that need no process: WAV written here, mp3 and Ogg Vorbis through LAME and libvorbis in WebAssembly
 * (wasm-codecs.ts), for speech at its own rate and speed with no loudness target (those need ffmpeg's filters).
 *
 * mp3 and ogg only up to IN_PROCESS_MAX_SECONDS: the WebAssembly codecs take about 1.4× the CPU of ffmpeg's native
 * ones (some 5 ms a second of speech here), so past about 30 s ffmpeg's start (~50 ms of CPU) is paid back, and
 * ffmpeg works on another core while this one would hold the event loop.
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
export function inProcessCodec(speech: Speech, job: InProcessJob): 'wav' | WasmCodec | undefined {
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

async function encodeSliced(codec: WasmCodec, speech: Speech, job: InProcessJob): Promise<Buffer | undefined> {
  const pool = await wasmCodecPool(codec);
  if (!pool) return undefined;
  const { samples, sampleRate } = speech;
  const deadline = job.timeoutMs ? performance.now() + job.timeoutMs : Infinity;
  const encoder = await pool.acquire();
  // configure() starts an encoder afresh, so one whose encode was stopped is reused; one that threw is dropped.
  let threw = false;
  const call = <T>(step: () => T): T => {
    try {
      return step();
    } catch (error) {
      threw = true;
      throw error;
    }
  };
  try {
    call(() => encoder.start(sampleRate));
    const slice = Math.round(SLICE_SECONDS * sampleRate);
    const floats = new Float32Array(slice);
    const pieces: Buffer[] = [];
    for (let start = 0; start < samples.length; start += slice) {
      const count = Math.min(slice, samples.length - start);
      for (let i = 0; i < count; i += 1) floats[i] = (samples[start + i] ?? 0) / 32768;
      pieces.push(call(() => encoder.encode(floats.subarray(0, count))));
      // Other requests get the event loop between slices.
      await turn();
      if (job.signal?.aborted) throw abortError(job.signal.reason);
      if (performance.now() > deadline) throw new AppError('JOB_TIMEOUT');
    }
    pieces.push(call(() => encoder.finish()));
    const encoded = Buffer.concat(pieces);
    return codec === 'mp3' ? withInfoFrame(encoded, { samples: samples.length, encoderDelay: LAME_ENCODER_DELAY, encoder: LAME_VERSION }) : encoded;
  } finally {
    encoder.release(!threw);
  }
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
