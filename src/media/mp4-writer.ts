/**
 * An MP4 (ISO/IEC 14496-12 and -14) of one H.264 track and one AAC track, written here rather than by an ffmpeg mux
 * (a process of some 100 ms on the path of every video): the moov box first, so that playback starts before the whole
 * file is there, then the media in chunks of both tracks in turn. What it writes follows what ffmpeg's mov muxer
 * writes for the same tracks (avcC, colr, pasp; esds, the AAC priming cut by an edit list, the roll group).
 */
import { open } from 'node:fs/promises';
import { AAC_FRAME, audioSpecificConfig, type AdtsStream } from './adts.js';

export interface Mp4Video {
  width: number;
  height: number;
  /** The AVCDecoderConfigurationRecord (ISO/IEC 14496-15 §5.3.3.1) for the avcC box. */
  avcC: Uint8Array;
  /** colr nclx: colour primaries, transfer characteristics, matrix coefficients (ISO/IEC 23091-2), limited range. */
  colour: { primaries: number; transfer: number; matrix: number };
  /**
   * Each picture as an MP4 sample (NAL units behind 4-byte lengths), given as the pieces it is written from, in
   * decoding order, which is display order (no B-frames).
   */
  samples: ReadonlyArray<readonly Uint8Array[]>;
  /** Which samples are sync samples (IDR pictures). */
  sync: readonly boolean[];
  /** Each sample's start in `timescale` units, ascending, the first 0. */
  starts: readonly number[];
  /** Where the last sample ends, in `timescale` units. */
  end: number;
  timescale: number;
}

export interface Mp4Audio extends Omit<AdtsStream, 'frames'> {
  frames: readonly Uint8Array[];
  /** Samples the encoder put before the sound (1024 for ffmpeg's AAC encoder): cut by the edit list. */
  priming: number;
  /** Samples per channel of the sound itself; the last frame plays only up to its end. */
  length: number;
}

/** Seconds of each track per chunk: the two tracks take turns this often in the media. */
const CHUNK_SECONDS = 0.5;
/** The movie's own timescale (mvhd, tkhd, elst), in units per second. */
const MOVIE_TIMESCALE = 1000;
const VIDEO_TRACK = 1;
const AUDIO_TRACK = 2;
/** tkhd's unity matrix (ISO/IEC 14496-12 §8.3.2). */
const MATRIX = [0x10000, 0, 0, 0, 0x10000, 0, 0, 0, 0x40000000];
/** 'und' in the packed ISO-639-2/T form of mdhd (three 5-bit letters, each less 0x60). */
const LANGUAGE_UND = 0x55c4;

/** Writes `file`: ftyp, moov, mdat. */
export async function writeMp4(file: string, video: Mp4Video, audio: Mp4Audio): Promise<void> {
  const parts = mp4Parts(video, audio);
  const handle = await open(file, 'w');
  try {
    // writev takes a bounded number of buffers at a time.
    for (let from = 0; from < parts.length; from += 512) await handle.writev(parts.slice(from, from + 512));
  } finally {
    await handle.close();
  }
}

interface Chunk {
  track: typeof VIDEO_TRACK | typeof AUDIO_TRACK;
  /** Offset of its first byte within the mdat payload. */
  offset: number;
  samples: number;
}

/** The file as the buffers to write one after the other. */
function mp4Parts(video: Mp4Video, audio: Mp4Audio): Uint8Array[] {
  if (video.samples.length === 0 || video.samples.length !== video.starts.length || video.sync.length !== video.samples.length) {
    throw new Error('MP4: the pictures, their times and their sync flags do not match');
  }
  if (audio.frames.length * AAC_FRAME < audio.priming + audio.length) throw new Error('MP4: fewer AAC frames than the sound needs');
  // The media: in each CHUNK_SECONDS, the pictures that start in it, then the AAC frames that do.
  const chunks: Chunk[] = [];
  const media: Uint8Array[] = [];
  let mediaBytes = 0;
  let picture = 0;
  let frame = 0;
  const addChunk = (track: Chunk['track'], pieces: (index: number) => readonly Uint8Array[], from: number, to: number) => {
    if (to === from) return;
    chunks.push({ track, offset: mediaBytes, samples: to - from });
    for (let index = from; index < to; index += 1) {
      for (const piece of pieces(index)) {
        media.push(piece);
        mediaBytes += piece.length;
      }
    }
  };
  for (let window = 1; picture < video.samples.length || frame < audio.frames.length; window += 1) {
    const end = window * CHUNK_SECONDS;
    const pictureFrom = picture;
    while (picture < video.samples.length && (video.starts[picture] as number) / video.timescale < end) picture += 1;
    addChunk(VIDEO_TRACK, (index) => video.samples[index] as readonly Uint8Array[], pictureFrom, picture);
    const frameFrom = frame;
    while (frame < audio.frames.length && (frame * AAC_FRAME - audio.priming) / audio.sampleRate < end) frame += 1;
    addChunk(AUDIO_TRACK, (index) => [audio.frames[index] as Uint8Array], frameFrom, frame);
  }
  const ftyp = box('ftyp', ascii('isom'), u32(0x200), ascii('isomiso2avc1mp41'));
  // The chunk offsets are known once the moov box's size is, which its offsets' values do not change: a first build
  // with them relative to the media gives it. 64-bit offsets only past 4 GiB (then the size with them).
  const narrow = moov(video, audio, chunks, 0, false).length;
  const wide = ftyp.length + narrow + 8 + mediaBytes > 0xffffffff;
  const size = wide ? moov(video, audio, chunks, 0, true).length : narrow;
  const mdatHeader = mdatHeaderFor(mediaBytes, wide);
  const moovBox = moov(video, audio, chunks, ftyp.length + size + mdatHeader.length, wide);
  return [ftyp, moovBox, mdatHeader, ...media];
}

function mdatHeaderFor(mediaBytes: number, wide: boolean): Buffer {
  if (!wide) return Buffer.concat([u32(8 + mediaBytes), ascii('mdat')]);
  const header = Buffer.alloc(16);
  header.writeUInt32BE(1, 0);
  header.write('mdat', 4, 'latin1');
  header.writeBigUInt64BE(BigInt(16 + mediaBytes), 8);
  return header;
}

function moov(video: Mp4Video, audio: Mp4Audio, chunks: readonly Chunk[], mediaStart: number, wide: boolean): Buffer {
  const videoSeconds = video.end / video.timescale;
  const audioSeconds = audio.length / audio.sampleRate;
  const movieDuration = Math.round(Math.max(videoSeconds, audioSeconds) * MOVIE_TIMESCALE);
  const offsetsOf = (track: Chunk['track']) => {
    const own = chunks.filter((chunk) => chunk.track === track);
    return { offsets: own.map((chunk) => mediaStart + chunk.offset), perChunk: own.map((chunk) => chunk.samples) };
  };
  const mvhd = fullBox('mvhd', 0, 0, u32(0), u32(0), u32(MOVIE_TIMESCALE), u32(movieDuration), u32(0x10000), u16(0x100), zeros(10), u32s(MATRIX), zeros(24), u32(AUDIO_TRACK + 1));
  return box('moov', mvhd, videoTrak(video, offsetsOf(VIDEO_TRACK), wide), audioTrak(audio, offsetsOf(AUDIO_TRACK), wide));
}

interface ChunkTable {
  offsets: number[];
  perChunk: number[];
}

function videoTrak(video: Mp4Video, chunks: ChunkTable, wide: boolean): Buffer {
  const seconds = video.end / video.timescale;
  const durations = video.starts.map((start, index) => (video.starts[index + 1] ?? video.end) - start);
  if (durations.some((duration) => duration <= 0)) throw new Error('MP4: a picture that lasts no time');
  const avc1 = box(
    'avc1',
    visualSampleEntry(video.width, video.height),
    box('avcC', video.avcC),
    box('colr', ascii('nclx'), u16(video.colour.primaries), u16(video.colour.transfer), u16(video.colour.matrix), u8(0)),
    box('pasp', u32(1), u32(1)),
  );
  const syncSamples = video.sync.flatMap((sync, index) => (sync ? [index + 1] : []));
  const stbl = box(
    'stbl',
    fullBox('stsd', 0, 0, u32(1), avc1),
    timeToSample(durations),
    // Every sample a sync sample: no stss (§8.6.2.1).
    ...(syncSamples.length === video.samples.length ? [] : [fullBox('stss', 0, 0, u32(syncSamples.length), u32s(syncSamples))]),
    sampleToChunk(chunks.perChunk),
    sampleSizes(video.samples.map((pieces) => pieces.reduce((sum, piece) => sum + piece.length, 0))),
    chunkOffsets(chunks.offsets, wide),
  );
  const minf = box('minf', fullBox('vmhd', 0, 1, zeros(8)), dataInformation(), stbl);
  return track(VIDEO_TRACK, seconds, { width: video.width, height: video.height }, 0, video.timescale, video.end, 'vide', 'VideoHandler', minf);
}

function audioTrak(audio: Mp4Audio, chunks: ChunkTable, wide: boolean): Buffer {
  const config = audioSpecificConfig(audio);
  const largest = audio.frames.reduce((most, frame) => Math.max(most, frame.length), 0);
  const bytes = audio.frames.reduce((sum, frame) => sum + frame.length, 0);
  const mediaLength = audio.priming + audio.length;
  const bitrate = Math.round((bytes * 8 * audio.sampleRate) / mediaLength);
  // ES_Descriptor ⊃ DecoderConfigDescriptor (AAC, audio stream) ⊃ DecoderSpecificInfo, then the SLConfigDescriptor (ISO/IEC 14496-1 §7.2.6).
  const decoderConfig = descriptor(0x04, u8(0x40), u8(0x15), u24(largest), u32(bitrate), u32(bitrate), descriptor(0x05, config));
  const esds = fullBox('esds', 0, 0, descriptor(0x03, u16(AUDIO_TRACK), u8(0), decoderConfig, descriptor(0x06, u8(0x02))));
  // AudioSampleEntry: 2 channels and 16 bits as the MP4 template has them; the real channels are in the config.
  const mp4a = box('mp4a', zeros(6), u16(1), zeros(8), u16(2), u16(16), u16(0), u16(0), u32(audio.sampleRate * 0x10000), esds);
  // Each frame 1024 samples but the last, which plays only up to the sound's end.
  const last = mediaLength - (audio.frames.length - 1) * AAC_FRAME;
  const durations = audio.frames.map((_, index) => (index === audio.frames.length - 1 ? Math.max(1, Math.min(AAC_FRAME, last)) : AAC_FRAME));
  const mediaDuration = durations.reduce((sum, duration) => sum + duration, 0);
  const stbl = box(
    'stbl',
    fullBox('stsd', 0, 0, u32(1), mp4a),
    timeToSample(durations),
    sampleToChunk(chunks.perChunk),
    sampleSizes(audio.frames.map((frame) => frame.length)),
    chunkOffsets(chunks.offsets, wide),
    // AAC's roll recovery: a frame decodes right only after the one before it (-1), as ffmpeg marks it (§10.1).
    fullBox('sgpd', 1, 0, ascii('roll'), u32(2), u32(1), u16(0xffff)),
    fullBox('sbgp', 0, 0, ascii('roll'), u32(1), u32(audio.frames.length), u32(1)),
  );
  const minf = box('minf', fullBox('smhd', 0, 0, zeros(4)), dataInformation(), stbl);
  return track(AUDIO_TRACK, audio.length / audio.sampleRate, undefined, audio.priming, audio.sampleRate, mediaDuration, 'soun', 'SoundHandler', minf);
}

/** trak: tkhd, an edit list that plays the media from `mediaTime` for `seconds`, mdia. */
function track(id: number, seconds: number, size: { width: number; height: number } | undefined, mediaTime: number, timescale: number, mediaDuration: number, handler: string, name: string, minf: Buffer): Buffer {
  const duration = Math.round(seconds * MOVIE_TIMESCALE);
  const tkhd = fullBox(
    'tkhd', 0, 0x3, u32(0), u32(0), u32(id), u32(0), u32(duration), zeros(8),
    // layer, alternate group (the sound alone is in group 1), volume (full for sound)
    u16(0), u16(size ? 0 : 1), u16(size ? 0 : 0x100), u16(0),
    u32s(MATRIX), u32((size?.width ?? 0) * 0x10000), u32((size?.height ?? 0) * 0x10000),
  );
  const edts = box('edts', fullBox('elst', 0, 0, u32(1), u32(duration), u32(mediaTime), u32(0x10000)));
  const mdhd = fullBox('mdhd', 0, 0, u32(0), u32(0), u32(timescale), u32(mediaDuration), u16(LANGUAGE_UND), u16(0));
  const hdlr = fullBox('hdlr', 0, 0, u32(0), ascii(handler), zeros(12), ascii(`${name}\0`));
  return box('trak', tkhd, edts, box('mdia', mdhd, hdlr, minf));
}

/** VisualSampleEntry's fields before its boxes (§8.5.2.2, §12.1.3). */
function visualSampleEntry(width: number, height: number): Buffer {
  return Buffer.concat([zeros(6), u16(1), zeros(16), u16(width), u16(height), u32(0x480000), u32(0x480000), u32(0), u16(1), zeros(32), u16(0x18), u16(0xffff)]);
}

function dataInformation(): Buffer {
  return box('dinf', fullBox('dref', 0, 0, u32(1), fullBox('url ', 0, 1)));
}

/** stts: the durations, runs of equal ones as one entry. */
function timeToSample(durations: readonly number[]): Buffer {
  const runs: Array<[number, number]> = [];
  for (const duration of durations) {
    const run = runs[runs.length - 1];
    if (run && run[1] === duration) run[0] += 1;
    else runs.push([1, duration]);
  }
  return fullBox('stts', 0, 0, u32(runs.length), u32s(runs.flat()));
}

/** stsc: samples per chunk, an entry where the count changes. */
function sampleToChunk(perChunk: readonly number[]): Buffer {
  const entries = perChunk.flatMap((samples, index) => (index === 0 || perChunk[index - 1] !== samples ? [[index + 1, samples]] : []));
  return fullBox('stsc', 0, 0, u32(entries.length), u32s(entries.flatMap(([chunk, samples]) => [chunk as number, samples as number, 1])));
}

function sampleSizes(sizes: readonly number[]): Buffer {
  return fullBox('stsz', 0, 0, u32(0), u32(sizes.length), u32s(sizes));
}

function chunkOffsets(offsets: readonly number[], wide: boolean): Buffer {
  return wide ? fullBox('co64', 0, 0, u32(offsets.length), u64s(offsets)) : fullBox('stco', 0, 0, u32(offsets.length), u32s(offsets));
}

/** An MPEG-4 descriptor: its tag, its size (7 bits a byte, high bit = more), its payload. */
function descriptor(tag: number, ...payload: Uint8Array[]): Buffer {
  const body = Buffer.concat(payload);
  const size: number[] = [];
  for (let rest = body.length; ; rest >>= 7) {
    size.unshift((rest & 0x7f) | (size.length ? 0x80 : 0));
    if (rest < 0x80) break;
  }
  return Buffer.concat([u8(tag), Buffer.from(size), body]);
}

function box(type: string, ...payload: Uint8Array[]): Buffer {
  const body = Buffer.concat(payload);
  return Buffer.concat([u32(8 + body.length), ascii(type), body]);
}

function fullBox(type: string, version: number, flags: number, ...payload: Uint8Array[]): Buffer {
  return box(type, u32(version * 0x1000000 + flags), ...payload);
}

function u8(value: number): Buffer {
  return Buffer.from([value]);
}

function u16(value: number): Buffer {
  const bytes = Buffer.alloc(2);
  bytes.writeUInt16BE(value);
  return bytes;
}

function u24(value: number): Buffer {
  return u32(Math.min(value, 0xffffff)).subarray(1);
}

function u32(value: number): Buffer {
  const bytes = Buffer.alloc(4);
  bytes.writeUInt32BE(value >>> 0);
  return bytes;
}

/** Big-endian 32-bit values, one after the other (a table's entries). */
function u32s(values: readonly number[]): Buffer {
  const bytes = Buffer.alloc(4 * values.length);
  values.forEach((value, index) => bytes.writeUInt32BE(value >>> 0, 4 * index));
  return bytes;
}

function u64s(values: readonly number[]): Buffer {
  const bytes = Buffer.alloc(8 * values.length);
  values.forEach((value, index) => bytes.writeBigUInt64BE(BigInt(value), 8 * index));
  return bytes;
}

function zeros(count: number): Buffer {
  return Buffer.alloc(count);
}

function ascii(text: string): Buffer {
  return Buffer.from(text, 'latin1');
}
