import type { FileHandle } from 'node:fs/promises';

/** What an upload is for: a background picture, a music track, a background clip (its sound never used), or a book to read (EPUB). */
export const ASSET_KINDS = ['image', 'audio', 'video', 'book'] as const;
export type AssetKind = (typeof ASSET_KINDS)[number];

/** What an upload's content is, read from its bytes. */
export const ASSET_FORMATS = ['png', 'jpeg', 'webp', 'wav', 'mp3', 'ogg', 'm4a', 'aac', 'flac', 'mp4', 'mov', 'webm', 'epub'] as const;
export type AssetFormat = (typeof ASSET_FORMATS)[number];

export interface FormatSpec {
  kind: AssetKind;
  /** The stored file's extension. */
  extension: string;
  /** ffmpeg's demuxer for it: every run is forced to it, so ffmpeg never guesses another format from the content. */
  demuxer: string;
  /** Codecs ffprobe may find in it. */
  codecs: readonly string[];
}

/** What a video clip may be coded as: what phones, cameras and editors write, and what ffmpeg here decodes. */
const VIDEO_CODECS = ['h264', 'vp9', 'av1'];

export const FORMATS: Readonly<Record<AssetFormat, FormatSpec>> = {
  png: { kind: 'image', extension: 'png', demuxer: 'png_pipe', codecs: ['png'] },
  jpeg: { kind: 'image', extension: 'jpg', demuxer: 'jpeg_pipe', codecs: ['mjpeg'] },
  webp: { kind: 'image', extension: 'webp', demuxer: 'webp_pipe', codecs: ['webp'] },
  wav: {
    kind: 'audio',
    extension: 'wav',
    demuxer: 'wav',
    codecs: ['pcm_u8', 'pcm_s16le', 'pcm_s24le', 'pcm_s32le', 'pcm_f32le', 'pcm_f64le', 'pcm_alaw', 'pcm_mulaw'],
  },
  mp3: { kind: 'audio', extension: 'mp3', demuxer: 'mp3', codecs: ['mp3'] },
  ogg: { kind: 'audio', extension: 'ogg', demuxer: 'ogg', codecs: ['vorbis', 'opus'] },
  m4a: { kind: 'audio', extension: 'm4a', demuxer: 'mov', codecs: ['aac'] },
  aac: { kind: 'audio', extension: 'aac', demuxer: 'aac', codecs: ['aac'] },
  flac: { kind: 'audio', extension: 'flac', demuxer: 'flac', codecs: ['flac'] },
  mp4: { kind: 'video', extension: 'mp4', demuxer: 'mov', codecs: VIDEO_CODECS },
  mov: { kind: 'video', extension: 'mov', demuxer: 'mov', codecs: VIDEO_CODECS },
  webm: { kind: 'video', extension: 'webm', demuxer: 'matroska', codecs: ['vp9', 'av1'] },
  // Read by assets/epub.ts, never by ffmpeg.
  epub: { kind: 'book', extension: 'epub', demuxer: 'none', codecs: [] },
};

/** Bytes enough to recognise every format (an ID3 tag only announces where the audio starts). */
export const SNIFF_BYTES = 16;

/** What the first bytes are: a format, `id3` (a tag whose end `id3End` gives, the audio after it), or unknown. */
export type Sniffed = AssetFormat | 'id3' | undefined;

/**
 * The format a file's first bytes announce, by their signatures alone (never a name or a Content-Type). SVG, HTML,
 * text, GIF and everything else are unknown. Formats that may follow an ID3 tag: mp3, aac, flac. An ISO BMFF file
 * of a general brand (isom, mp42…) is `mp4` here, and an MP4 with sound and no picture turns out `m4a` once its
 * streams are read (inspect.ts).
 */
export function sniff(head: Buffer): Sniffed {
  const ascii = (start: number, end: number) => head.toString('latin1', start, end);
  if (head.length >= 8 && head.readUInt32BE(0) === 0x89504e47 && head.readUInt32BE(4) === 0x0d0a1a0a) return 'png';
  if (head.length >= 3 && head[0] === 0xff && head[1] === 0xd8 && head[2] === 0xff) return 'jpeg';
  if (head.length >= 12 && ascii(0, 4) === 'RIFF' && ascii(8, 12) === 'WEBP') return 'webp';
  if (head.length >= 12 && ascii(0, 4) === 'RIFF' && ascii(8, 12) === 'WAVE') return 'wav';
  if (head.length >= 10 && ascii(0, 3) === 'ID3') return 'id3';
  if (head.length >= 4 && ascii(0, 4) === 'OggS') return 'ogg';
  // A zip's local file header (APPNOTE 4.3.7): an EPUB's container (its package is checked by assets/epub.ts).
  if (head.length >= 4 && head.readUInt32LE(0) === 0x04034b50) return 'epub';
  if (head.length >= 4 && ascii(0, 4) === 'fLaC') return 'flac';
  // ISO BMFF (ISO 14496-12 §4.3): the major brand says audio (M4A, M4B), QuickTime, or one of the general brands.
  if (head.length >= 12 && ascii(4, 8) === 'ftyp') {
    const brand = ascii(8, 12);
    if (/^(M4A |M4B )$/.test(brand)) return 'm4a';
    if (brand === 'qt  ') return 'mov';
    if (/^(mp41|mp42|isom|iso[2-6]|avc1|av01|M4V |dash|mmp4|MSNV)$/.test(brand)) return 'mp4';
  }
  // EBML (RFC 8794 §8.1): Matroska, whose WebM subset is what is taken (its codecs are checked by its streams).
  if (head.length >= 4 && head.readUInt32BE(0) === 0x1a45dfa3) return 'webm';
  if (head.length >= 2 && head[0] === 0xff) {
    const second = head[1] ?? 0;
    // ADTS: 12 sync bits, layer 00 (ISO 13818-7 §6.2). MPEG audio: 11 sync bits, a version that exists, layer III (ISO 11172-3 §2.4.2.3).
    if ((second & 0xf6) === 0xf0) return 'aac';
    if ((second & 0xe0) === 0xe0 && (second & 0x18) !== 0x08 && (second & 0x06) === 0x02) return 'mp3';
  }
  return undefined;
}

/** Where the audio after an ID3v2 tag starts: its 10-byte header, its syncsafe size, and a footer when flagged. */
export function id3End(head: Buffer): number {
  const size = ((head[6] ?? 0) << 21) | ((head[7] ?? 0) << 14) | ((head[8] ?? 0) << 7) | (head[9] ?? 0);
  const footer = ((head[5] ?? 0) & 0x10) !== 0 ? 10 : 0;
  return 10 + size + footer;
}

export interface ImageHeader {
  width: number;
  height: number;
  /** An animated WebP (ffmpeg decodes only still ones). */
  animated?: boolean;
}

/**
 * The dimensions an image's header declares, read without decoding anything, so that a decompression bomb (a few
 * kilobytes declaring 20000×20000) is refused before any program sees it. Undefined when the header is not there.
 */
export async function readImageHeader(file: FileHandle, format: AssetFormat, size: number): Promise<ImageHeader | undefined> {
  const head = await readAt(file, 0, 32);
  if (format === 'png') {
    // PNG §5.3, §11.2.2: IHDR is the first chunk, width and height its first 8 bytes.
    if (head.length < 24 || head.toString('latin1', 12, 16) !== 'IHDR') return undefined;
    return { width: head.readUInt32BE(16), height: head.readUInt32BE(20) };
  }
  if (format === 'webp') return webpHeader(head);
  if (format === 'jpeg') return jpegHeader(file, size);
  return undefined;
}

/** RFC 9649 §2.5 (VP8X), §2.6 and RFC 6386 §9.1 (VP8), §3 of the lossless bitstream (VP8L). */
function webpHeader(head: Buffer): ImageHeader | undefined {
  if (head.length < 30) return undefined;
  const chunk = head.toString('latin1', 12, 16);
  if (chunk === 'VP8X') return { width: head.readUIntLE(24, 3) + 1, height: head.readUIntLE(27, 3) + 1, animated: ((head[20] ?? 0) & 0x02) !== 0 };
  if (chunk === 'VP8 ' && head[23] === 0x9d && head[24] === 0x01 && head[25] === 0x2a) {
    return { width: head.readUInt16LE(26) & 0x3fff, height: head.readUInt16LE(28) & 0x3fff };
  }
  if (chunk === 'VP8L' && head[20] === 0x2f) {
    const bits = head.readUInt32LE(21);
    return { width: (bits & 0x3fff) + 1, height: ((bits >>> 14) & 0x3fff) + 1 };
  }
  return undefined;
}

const MAX_JPEG_SEGMENTS = 10_000;

/** Walks the JPEG markers (ITU T.81 §B.1.1.3) to the first start-of-frame, whose header gives the size (§B.2.2). */
async function jpegHeader(file: FileHandle, size: number): Promise<ImageHeader | undefined> {
  let position = 2;
  // A real JPEG has a few dozen segments before its frame; a file of endless tiny ones is not worth walking.
  for (let segments = 0; position + 4 <= size && segments < MAX_JPEG_SEGMENTS; segments += 1) {
    const marker = await readAt(file, position, 9);
    if (marker[0] !== 0xff) return undefined;
    const code = marker[1] ?? 0;
    if (code === 0xff) {
      position += 1; // fill byte
      continue;
    }
    if (code === 0x01 || (code >= 0xd0 && code <= 0xd7)) {
      position += 2; // markers without a length
      continue;
    }
    const isFrame = code >= 0xc0 && code <= 0xcf && code !== 0xc4 && code !== 0xc8 && code !== 0xcc;
    if (isFrame) return marker.length < 9 ? undefined : { width: marker.readUInt16BE(7), height: marker.readUInt16BE(5) };
    if (code === 0xd9 || code === 0xda || marker.length < 4) return undefined; // end of image or scan data before any frame
    position += 2 + marker.readUInt16BE(2);
  }
  return undefined;
}

async function readAt(file: FileHandle, position: number, length: number): Promise<Buffer> {
  const buffer = Buffer.alloc(length);
  const { bytesRead } = await file.read(buffer, 0, length, position);
  return buffer.subarray(0, bytesRead);
}
