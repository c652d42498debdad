import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { createEncoder, type WasmMediaEncoder } from 'wasm-media-encoders';
import { passesSelfCheck, type CodecKind, type CodecLease, type CodecSource } from './codec.js';

/**
 * LAME (mp3) and libvorbis (Ogg Vorbis) compiled to WebAssembly by wasm-media-encoders: memory-safe, anywhere Node
 * runs, at 1.3–1.5× the CPU of the native libraries. Each module is compiled once; its instances (one per encode in
 * flight, each with its own memory) are kept for the next encode.
 */
const MIME_TYPES = { mp3: 'audio/mpeg', ogg: 'audio/ogg' } as const;
/** Encoders kept idle per codec; more run at once when asked, and are dropped when done. */
const IDLE_ENCODERS = 4;

type Instance = WasmMediaEncoder<'audio/mpeg'> | WasmMediaEncoder<'audio/ogg'>;
/** The output rates LAME takes (the callers pass only rates of MP3_SAMPLE_RATES). */
type Mp3Rate = NonNullable<Parameters<WasmMediaEncoder<'audio/mpeg'>['configure']>[0]['outputSampleRate']>;
type Compiled = Parameters<typeof createEncoder>[1];

class CodecKindSource implements CodecSource {
  readonly lame: CodecSource['lame'];
  private readonly idle: Instance[];

  constructor(
    private readonly codec: CodecKind,
    private readonly compiled: Compiled,
    first: Instance,
  ) {
    // The package builds LAME 3.100, whose encoder delay is 576 samples (lame_get_encoder_delay, which it does not export).
    this.lame = codec === 'mp3' ? { encoder: 'LAME3.100', delay: 576 } : undefined;
    this.idle = [first];
  }

  async acquire(): Promise<CodecLease> {
    const instance = this.idle.pop() ?? (await createEncoder(MIME_TYPES[this.codec], this.compiled));
    const codec = this.codec;
    let floats = new Float32Array(0);
    return {
      start(sampleRate) {
        // configure() starts afresh, so an instance whose last encode was stopped midway is as good as new.
        if (codec === 'mp3') (instance as WasmMediaEncoder<'audio/mpeg'>).configure({ channels: 1, sampleRate, bitrate: 64, outputSampleRate: sampleRate as Mp3Rate });
        else (instance as WasmMediaEncoder<'audio/ogg'>).configure({ channels: 1, sampleRate, vbrQuality: 4 });
      },
      encode(samples) {
        if (floats.length < samples.length) floats = new Float32Array(samples.length);
        for (let i = 0; i < samples.length; i += 1) floats[i] = (samples[i] ?? 0) / 32768;
        // The encoder owns the bytes it returns until its next call: copied (Buffer.from copies a view).
        return Buffer.from(instance.encode([floats.subarray(0, samples.length)]));
      },
      finish: () => Buffer.from(instance.finalize()),
      release: (reusable) => {
        if (reusable && this.idle.length < IDLE_ENCODERS) this.idle.push(instance);
      },
    };
  }
}

const sources = new Map<CodecKind, Promise<CodecSource | undefined>>();

/** The codec, or undefined when its module cannot be loaded or fails the self-check. Loaded once. */
export function wasmCodec(codec: CodecKind): Promise<CodecSource | undefined> {
  let source = sources.get(codec);
  if (!source) {
    source = load(codec).catch(() => undefined);
    sources.set(codec, source);
  }
  return source;
}

async function load(codec: CodecKind): Promise<CodecSource | undefined> {
  const file = createRequire(import.meta.url).resolve(`wasm-media-encoders/wasm/${codec}`);
  let compiled: Compiled = await readFile(file);
  // The first instance compiles the module and hands it over; the next ones only instantiate it.
  const first = await createEncoder(MIME_TYPES[codec], compiled, (module) => {
    compiled = module;
  });
  const source = new CodecKindSource(codec, compiled, first);
  return (await passesSelfCheck(codec, source)) ? source : undefined;
}
