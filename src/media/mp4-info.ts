import type { MediaInfo, MediaStream } from './ffmpeg.js';
import { withFileRanges, type ReadRange } from './file-ranges.js';

/**
 * What ffprobe says of an MP4 we muxed (H.264 and AAC), read from its `moov` box without starting a process (ffprobe
 * costs 60-80 ms here, on the path of every video): the file's length (mvhd), each track's kind, codec and length
 * (hdlr, stsd, mdhd), the picture's size and the sound's rate and channels (the sample entries, ISO/IEC 14496-12
 * §8.5.2 and 14496-14). A file without a readable `moov` throws.
 */
export function mp4Info(file: string): Promise<MediaInfo> {
  return withFileRanges(file, async (read, size) => {
    for await (const box of boxesOf(read, size)) {
      if (box.type === 'moov') return { formatName: 'mov,mp4,m4a,3gp,3g2,mj2', size, ...readMoov(await read(box.offset + box.header, box.size - box.header)) };
    }
    throw new Error(`no moov box in ${file}`);
  });
}

/** The file's top-level boxes in order (ftyp, moov, free, mdat…), each's type, offset and size, headers alone read. */
export function topLevelBoxes(file: string): Promise<Array<Box & { offset: number }>> {
  return withFileRanges(file, async (read, size) => {
    const found: Array<Box & { offset: number }> = [];
    for await (const box of boxesOf(read, size)) found.push(box);
    return found;
  });
}

/** The top-level boxes as their headers are read, one after the other. */
async function* boxesOf(read: ReadRange, size: number): AsyncGenerator<Box & { offset: number }> {
  for (let offset = 0; offset + 8 <= size; ) {
    const box = boxAt(await read(offset, 16), 0, size - offset);
    if (!box) return;
    yield { ...box, offset };
    offset += box.size;
  }
}

export interface Box {
  type: string;
  /** Whole box, header included. */
  size: number;
  /** Bytes of header (8, or 16 with a 64-bit size). */
  header: number;
}

/** The box starting at `offset`; `room` is what is left of its parent (a size of 0 runs to the end of it). */
function boxAt(data: Buffer, offset: number, room: number): Box | undefined {
  if (offset + 8 > data.length) return undefined;
  const small = data.readUInt32BE(offset);
  const type = data.toString('latin1', offset + 4, offset + 8);
  if (small === 1) {
    if (offset + 16 > data.length) return undefined;
    return { type, size: Number(data.readBigUInt64BE(offset + 8)), header: 16 };
  }
  const size = small === 0 ? room : small;
  return size < 8 ? undefined : { type, size, header: 8 };
}

/** The boxes in a box's payload, in order, each as its type and its own payload. */
function boxesIn(payload: Buffer): Array<{ type: string; payload: Buffer }> {
  const found: Array<{ type: string; payload: Buffer }> = [];
  for (let offset = 0; offset + 8 <= payload.length; ) {
    const box = boxAt(payload, offset, payload.length - offset);
    if (!box) break;
    found.push({ type: box.type, payload: payload.subarray(offset + box.header, offset + box.size) });
    offset += box.size;
  }
  return found;
}

/** The child boxes of a box's payload, by type (the first of each). */
function children(payload: Buffer): Map<string, Buffer> {
  const found = new Map<string, Buffer>();
  for (const box of boxesIn(payload)) if (!found.has(box.type)) found.set(box.type, box.payload);
  return found;
}

/** Timescale and duration of an mvhd or mdhd payload (version 0: 32-bit times; version 1: 64-bit). */
function timing(payload: Buffer): { timescale: number; duration: number } {
  return payload[0] === 1
    ? { timescale: payload.readUInt32BE(20), duration: Number(payload.readBigUInt64BE(24)) }
    : { timescale: payload.readUInt32BE(12), duration: payload.readUInt32BE(16) };
}

function seconds({ timescale, duration }: { timescale: number; duration: number }): number {
  return timescale > 0 ? duration / timescale : Number.NaN;
}

const CODECS: Record<string, string> = { avc1: 'h264', avc3: 'h264', hvc1: 'hevc', hev1: 'hevc', mp4a: 'aac', 'Opus': 'opus', av01: 'av1', vp09: 'vp9' };
const KINDS: Record<string, string> = { vide: 'video', soun: 'audio' };

function readMoov(moov: Buffer): Pick<MediaInfo, 'duration' | 'streams'> {
  const boxes = children(moov);
  const mvhd = boxes.get('mvhd');
  if (!mvhd) throw new Error('the moov box has no mvhd');
  const movieTimescale = timing(mvhd).timescale;
  const tracks = boxesIn(moov).filter((box) => box.type === 'trak');
  const streams = tracks.map(({ payload: trak }, index): MediaStream => {
    const boxesOfTrak = children(trak);
    const mdia = children(boxesOfTrak.get('mdia') ?? Buffer.alloc(0));
    const handler = mdia.get('hdlr')?.toString('latin1', 8, 12) ?? '';
    const mdhd = mdia.get('mdhd');
    const stsd = children(children(mdia.get('minf') ?? Buffer.alloc(0)).get('stbl') ?? Buffer.alloc(0)).get('stsd');
    // stsd: version and flags, entry count, then the first sample entry (a box).
    const entry = stsd && stsd.length >= 16 ? stsd.subarray(8) : Buffer.alloc(0);
    const format = entry.length >= 8 ? entry.toString('latin1', 4, 8) : '';
    const kind = KINDS[handler] ?? handler;
    // An edit list (AAC's priming samples left out) says how much of the media plays, as ffprobe reports it.
    const edited = editedDuration(children(boxesOfTrak.get('edts') ?? Buffer.alloc(0)).get('elst'));
    const duration = edited !== undefined ? seconds({ timescale: movieTimescale, duration: edited }) : mdhd ? seconds(timing(mdhd)) : undefined;
    const stream: MediaStream = { index, codecType: kind, codecName: CODECS[format] ?? format, duration };
    // Sample entries: 8 bytes of box header, 6 reserved, 2 data reference index, then the visual or audio fields.
    if (kind === 'video' && entry.length >= 36) Object.assign(stream, { width: entry.readUInt16BE(32), height: entry.readUInt16BE(34) });
    if (kind === 'audio' && entry.length >= 36) {
      // ffmpeg writes 2 in an MP4's AAC entry whatever the channels: the AudioSpecificConfig in its esds is the truth.
      const config = format === 'mp4a' ? aacConfig(children(entry.subarray(36)).get('esds')) : undefined;
      Object.assign(stream, { channels: config?.channels ?? entry.readUInt16BE(24), sampleRate: entry.readUInt32BE(32) >>> 16 });
    }
    return stream;
  });
  return { duration: seconds(timing(mvhd)), streams };
}

/** The movie-timescale length of an elst payload's edits that play media (an empty edit, media time −1, only delays). */
function editedDuration(elst: Buffer | undefined): number | undefined {
  if (!elst || elst.length < 8) return undefined;
  const wide = elst[0] === 1;
  const entrySize = wide ? 20 : 12;
  let total = 0;
  for (let entry = 0, offset = 8; entry < elst.readUInt32BE(4) && offset + entrySize <= elst.length; entry += 1, offset += entrySize) {
    const mediaTime = wide ? Number(elst.readBigInt64BE(offset + 8)) : elst.readInt32BE(offset + 4);
    if (mediaTime !== -1) total += wide ? Number(elst.readBigUInt64BE(offset)) : elst.readUInt32BE(offset);
  }
  return total;
}

/** Tags of the MPEG-4 descriptors in an esds box (ISO/IEC 14496-1 §7.2.2.1). */
const ES_DESCRIPTOR = 0x03;
const DECODER_CONFIG = 0x04;
const DECODER_SPECIFIC_INFO = 0x05;

/** The channel configuration of an esds payload's AudioSpecificConfig (ISO/IEC 14496-3 §1.6.2.1), when it has one. */
function aacConfig(esds: Buffer | undefined): { channels: number } | undefined {
  if (!esds) return undefined;
  let offset = 4; // version and flags
  // A descriptor: a tag, its size in 7-bit groups (the high bit says another follows), then its payload.
  const descriptor = (): { tag: number; end: number } | undefined => {
    if (offset >= esds.length) return undefined;
    const tag = esds[offset++] as number;
    let size = 0;
    for (let byte = 0x80; byte & 0x80 && offset < esds.length; ) {
      byte = esds[offset++] as number;
      size = (size << 7) | (byte & 0x7f);
    }
    return { tag, end: offset + size };
  };
  const es = descriptor();
  if (es?.tag !== ES_DESCRIPTOR) return undefined;
  const flags = esds[offset + 2] ?? 0;
  offset += 3; // ES_ID, then the flags
  if (flags & 0x80) offset += 2; // dependsOn_ES_ID
  if (flags & 0x40) offset += 1 + (esds[offset] ?? 0); // URL
  if (flags & 0x20) offset += 2; // OCR_ES_Id
  if (descriptor()?.tag !== DECODER_CONFIG) return undefined;
  offset += 13; // objectTypeIndication, streamType, bufferSizeDB, maxBitrate, avgBitrate
  const specific = descriptor();
  if (specific?.tag !== DECODER_SPECIFIC_INFO || specific.end > esds.length) return undefined;
  const config = esds.subarray(offset, specific.end);
  // audioObjectType (5 bits; 31 escapes to 6 more), samplingFrequencyIndex (4; 15 escapes to a 24-bit rate), channelConfiguration (4).
  let bit = 0;
  const bits = (count: number): number => {
    let value = 0;
    for (let i = 0; i < count; i += 1, bit += 1) value = (value << 1) | (((config[bit >> 3] ?? 0) >> (7 - (bit & 7))) & 1);
    return value;
  };
  if (bits(5) === 31) bits(6);
  if (bits(4) === 15) bits(24);
  const channels = bits(4);
  return channels > 0 && channels < 7 ? { channels } : channels === 7 ? { channels: 8 } : undefined;
}
