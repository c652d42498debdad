import { mp3FrameAt } from './mp3-info-frame.js';

/** The encodings a codec here writes. */
export type CodecKind = 'mp3' | 'ogg';

/** An encoder of mono 16-bit speech, with voxreel's settings: mp3 64 kb/s CBR (LAME), Ogg Vorbis q4 (libvorbis). */
export interface Codec {
  /** Starts an encode at `sampleRate` (for mp3, one of MP3_SAMPLE_RATES: LAME resamples nothing). */
  start(sampleRate: number): void;
  /** The encoded bytes for the next samples, the caller's to keep. */
  encode(samples: Int16Array): Buffer;
  /** The last bytes. */
  finish(): Buffer;
}

/** A codec lent for one encode; given back reusable unless one of its calls threw. */
export interface CodecLease extends Codec {
  release(reusable: boolean): void;
}

export interface CodecSource {
  /** What the mp3's LAME tag names as its encoder, and the samples LAME puts before the source. */
  readonly lame?: { encoder: string; delay: number };
  acquire(): Promise<CodecLease>;
}

/**
 * Two seconds of tone, encoded: an mp3 codec must give 64 kb/s mono frames at the rate asked, end to end; an Ogg
 * codec an Ogg Vorbis stream. Long enough that V8 has optimized a WebAssembly codec's hot functions before a request
 * needs them (the first 12 s encode then takes ~1.5× a later one, not 2.5×).
 */
export async function passesSelfCheck(kind: CodecKind, source: CodecSource): Promise<boolean> {
  const sampleRate = 22_050;
  const codec = await source.acquire();
  let bytes: Buffer;
  try {
    codec.start(sampleRate);
    const tone = Int16Array.from({ length: 2 * sampleRate }, (_, i) => Math.round(8000 * Math.sin(i / 5)));
    bytes = Buffer.concat([codec.encode(tone), codec.finish()]);
  } finally {
    codec.release(true);
  }
  if (kind === 'ogg') return bytes.toString('latin1', 0, 4) === 'OggS' && bytes.includes('\x01vorbis', 0, 'latin1');
  let offset = 0;
  for (let frame = mp3FrameAt(bytes, 0); frame; frame = mp3FrameAt(bytes, offset)) {
    if (frame.sampleRate !== sampleRate || frame.bitrate !== 64_000 || !frame.mono) return false;
    offset += frame.length;
  }
  return offset === bytes.length && offset > 0;
}
