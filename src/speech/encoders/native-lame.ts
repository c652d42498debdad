import koffi from 'koffi';
import { passesSelfCheck, type CodecLease, type CodecSource } from './codec.js';

/**
 * LAME itself, libmp3lame.so.0 (the library Debian's ffmpeg encodes mp3 with, LGPL), called through koffi: ffmpeg's
 * speed (some 3.5 ms of CPU a second of speech here, against 5.5 for the WebAssembly build) without its process.
 *
 * Native code in the server's own process, so kept narrow: lame.h's calls only, the settings ffmpeg's libmp3lame
 * wrapper makes for `-b:a 64k` on mono (no quality override, reservoir on, no tag: ours is written after), our own
 * PCM in, output buffers of lame.h's worst case, a self-check before first use; absent or failing, the WebAssembly
 * build encodes instead.
 */
const LIBRARY = 'libmp3lame.so.0';
/** lame.h's MPEG_mode MONO. */
const MONO = 3;

interface Lame {
  init: () => unknown;
  setNumChannels: (gfp: unknown, value: number) => number;
  setInRate: (gfp: unknown, value: number) => number;
  setOutRate: (gfp: unknown, value: number) => number;
  setBitrate: (gfp: unknown, value: number) => number;
  setMode: (gfp: unknown, value: number) => number;
  setWriteVbrTag: (gfp: unknown, value: number) => number;
  initParams: (gfp: unknown) => number;
  encode: (gfp: unknown, left: Int16Array, right: Int16Array, samples: number, out: Buffer, size: number) => number;
  flush: (gfp: unknown, out: Buffer, size: number) => number;
  close: (gfp: unknown) => number;
  delay: (gfp: unknown) => number;
  version: () => string;
}

function bind(): Lame {
  const library = koffi.load(LIBRARY);
  const setter = (name: string) => library.func(`int ${name}(void *gfp, int value)`) as (gfp: unknown, value: number) => number;
  return {
    init: library.func('void *lame_init(void)') as () => unknown,
    setNumChannels: setter('lame_set_num_channels'),
    setInRate: setter('lame_set_in_samplerate'),
    setOutRate: setter('lame_set_out_samplerate'),
    setBitrate: setter('lame_set_brate'),
    setMode: setter('lame_set_mode'),
    setWriteVbrTag: setter('lame_set_bWriteVbrTag'),
    initParams: library.func('int lame_init_params(void *gfp)') as (gfp: unknown) => number,
    encode: library.func('int lame_encode_buffer(void *gfp, const int16_t *left, const int16_t *right, int samples, _Out_ uint8_t *out, int size)') as Lame['encode'],
    flush: library.func('int lame_encode_flush(void *gfp, _Out_ uint8_t *out, int size)') as Lame['flush'],
    close: library.func('int lame_close(void *gfp)') as (gfp: unknown) => number,
    delay: library.func('int lame_get_encoder_delay(void *gfp)') as (gfp: unknown) => number,
    version: library.func('const char *get_lame_short_version(void)') as () => string,
  };
}

/** lame.h: the output of `samples` samples needs at most 1.25 × samples + 7200 bytes; a flush at most 7200. */
const outputBytes = (samples: number) => Math.ceil(1.25 * samples) + 7200;

class NativeLameSource implements CodecSource {
  readonly lame: { encoder: string; delay: number };

  constructor(private readonly api: Lame) {
    const gfp = this.open(22_050);
    this.lame = { encoder: `LAME${api.version()}`, delay: api.delay(gfp) };
    api.close(gfp);
  }

  /** A LAME state set up as ffmpeg sets it up for mono at 64 kb/s. */
  private open(sampleRate: number): unknown {
    const api = this.api;
    const gfp = api.init();
    if (!gfp) throw new Error('lame_init failed');
    const statuses = [
      api.setNumChannels(gfp, 1),
      api.setMode(gfp, MONO),
      api.setInRate(gfp, sampleRate),
      api.setOutRate(gfp, sampleRate),
      api.setBitrate(gfp, 64),
      api.setWriteVbrTag(gfp, 0),
      api.initParams(gfp),
    ];
    if (statuses.some((status) => status < 0)) {
      api.close(gfp);
      throw new Error(`LAME refused mono 64 kb/s at ${sampleRate} Hz`);
    }
    return gfp;
  }

  acquire(): Promise<CodecLease> {
    const api = this.api;
    let gfp: unknown;
    let out = Buffer.alloc(0);
    const lease: CodecLease = {
      start: (sampleRate) => {
        if (gfp) api.close(gfp);
        gfp = undefined;
        gfp = this.open(sampleRate);
      },
      encode: (samples) => {
        if (out.length < outputBytes(samples.length)) out = Buffer.alloc(outputBytes(samples.length));
        const written = api.encode(gfp, samples, samples, samples.length, out, out.length);
        if (written < 0) throw new Error(`lame_encode_buffer failed (${written})`);
        return Buffer.from(out.subarray(0, written));
      },
      finish: () => {
        if (out.length < outputBytes(0)) out = Buffer.alloc(outputBytes(0));
        const written = api.flush(gfp, out, out.length);
        if (written < 0) throw new Error(`lame_encode_flush failed (${written})`);
        return Buffer.from(out.subarray(0, written));
      },
      release: () => {
        if (gfp) api.close(gfp);
        gfp = undefined;
      },
    };
    return Promise.resolve(lease);
  }
}

let source: Promise<CodecSource | undefined> | undefined;

/** The system's LAME, or undefined when it is not installed or fails the self-check. Loaded once. */
export function nativeLame(): Promise<CodecSource | undefined> {
  source ??= (async () => {
    const candidate = new NativeLameSource(bind());
    return (await passesSelfCheck('mp3', candidate)) ? candidate : undefined;
  })().catch(() => undefined);
  return source;
}
