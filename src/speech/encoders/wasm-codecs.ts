import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { createEncoder, type WasmMediaEncoder } from 'wasm-media-encoders';
import { mp3FrameAt } from './mp3-info-frame.js';

/**
 * LAME (mp3) and libvorbis (Ogg Vorbis) compiled to WebAssembly by wasm-media-encoders: each module compiled once,
 * its instances (one per encode in flight, each with its own memory) kept for the next encode.
 */
export type WasmCodec = 'mp3' | 'ogg';

const MIME_TYPES = { mp3: 'audio/mpeg', ogg: 'audio/ogg' } as const;

/** What the package's LAME puts before the source: LAME 3.100's encoder delay (lame_get_encoder_delay). */
export const LAME_ENCODER_DELAY = 576;
export const LAME_VERSION = 'LAME3.100';
/** Encoders kept idle per codec; more run at once when asked, and are dropped when done. */
const IDLE_ENCODERS = 4;

export interface Codec {
  /** Starts an encode of mono audio at `sampleRate` with voxreel's settings (mp3: 64 kb/s CBR; ogg: Vorbis q4). */
  start(sampleRate: number): void;
  /** The encoded bytes for the next samples (floats in [-1, 1]), copied out of the encoder. */
  encode(samples: Float32Array): Buffer;
  /** The last bytes. */
  finish(): Buffer;
}

type Instance = WasmMediaEncoder<'audio/mpeg'> | WasmMediaEncoder<'audio/ogg'>;
/** The output rates LAME takes (the callers pass only rates of MP3_SAMPLE_RATES). */
type Mp3Rate = NonNullable<Parameters<WasmMediaEncoder<'audio/mpeg'>['configure']>[0]['outputSampleRate']>;

class CodecPool {
  private readonly idle: Instance[];

  constructor(
    private readonly codec: WasmCodec,
    private readonly compiled: Parameters<typeof createEncoder>[1],
    first: Instance,
  ) {
    this.idle = [first];
  }

  async acquire(): Promise<Codec & { release(reusable: boolean): void }> {
    const instance = this.idle.pop() ?? (await createEncoder(MIME_TYPES[this.codec], this.compiled));
    const codec = this.codec;
    return {
      start(sampleRate) {
        if (codec === 'mp3') (instance as WasmMediaEncoder<'audio/mpeg'>).configure({ channels: 1, sampleRate, bitrate: 64, outputSampleRate: sampleRate as Mp3Rate });
        else (instance as WasmMediaEncoder<'audio/ogg'>).configure({ channels: 1, sampleRate, vbrQuality: 4 });
      },
      // The encoder owns the bytes it returns until its next call: copied (Buffer.from copies a view).
      encode: (samples) => Buffer.from(instance.encode([samples])),
      finish: () => Buffer.from(instance.finalize()),
      release: (reusable) => {
        // configure() starts afresh, so a stopped encode leaves a reusable instance; one that threw does not.
        if (reusable && this.idle.length < IDLE_ENCODERS) this.idle.push(instance);
      },
    };
  }
}

const pools = new Map<WasmCodec, Promise<CodecPool | undefined>>();

/**
 * The codec's pool, or undefined when its module cannot be loaded or fails the self-check (the caller then uses
 * ffmpeg). Loaded once, on first use or through prepareWasmCodecs.
 */
export function wasmCodecPool(codec: WasmCodec): Promise<CodecPool | undefined> {
  let pool = pools.get(codec);
  if (!pool) {
    pool = load(codec).catch(() => undefined);
    pools.set(codec, pool);
  }
  return pool;
}

async function load(codec: WasmCodec): Promise<CodecPool | undefined> {
  const file = createRequire(import.meta.url).resolve(`wasm-media-encoders/wasm/${codec}`);
  let compiled: Parameters<typeof createEncoder>[1] = await readFile(file);
  // The first instance compiles the module and hands it over; the next ones only instantiate it.
  const first = await createEncoder(MIME_TYPES[codec], compiled, (module) => {
    compiled = module;
  });
  const pool = new CodecPool(codec, compiled, first);
  return (await selfCheck(codec, pool)) ? pool : undefined;
}

/** A tenth of a second of tone, encoded: LAME must give 64 kb/s mono frames at the rate asked, end to end; libvorbis an Ogg stream. */
async function selfCheck(codec: WasmCodec, pool: CodecPool): Promise<boolean> {
  const sampleRate = 22_050;
  const encoder = await pool.acquire();
  encoder.start(sampleRate);
  const tone = Float32Array.from({ length: sampleRate / 10 }, (_, i) => 0.25 * Math.sin(i / 5));
  const bytes = Buffer.concat([encoder.encode(tone), encoder.finish()]);
  encoder.release(true);
  if (codec === 'ogg') return bytes.toString('latin1', 0, 4) === 'OggS' && bytes.includes('\x01vorbis', 0, 'latin1');
  let offset = 0;
  for (let frame = mp3FrameAt(bytes, 0); frame; frame = mp3FrameAt(bytes, offset)) {
    if (frame.sampleRate !== sampleRate || frame.bitrate !== 64_000 || !frame.mono) return false;
    offset += frame.length;
  }
  return offset === bytes.length && offset > 0;
}
