/**
 * The Xing "Info" frame and LAME tag that ffmpeg's mp3 muxer puts before the audio of a file, written here for the
 * bare frames LAME gives in process. Players seek with its table, gapless decoders (ffmpeg's, browsers') trim the
 * encoder delay and padding it carries, and audioDuration (audio-duration.ts) reads its frame count.
 *
 * Sources: the frame header of ISO/IEC 11172-3 §2.4.1.3 (MPEG-1) and ISO/IEC 13818-3 §2.4.2.3 (MPEG-2 lower
 * sampling frequencies; MPEG-2.5 is their unofficial extension with the same layout); the side information sizes of
 * 11172-3 §2.4.1.7 and 13818-3 §2.4.1.7; the Xing header and LAME tag of "Mp3 info tag specifications, rev 1"
 * (gabriel.mp3-tech.org/mp3infotag.html). Checked against ffmpeg's own output by test/speech/in-process-encoding.test.ts.
 */

/** Layer III bitrates in kb/s by bitrate index: MPEG-1, then MPEG-2 and 2.5. */
const BITRATES = {
  mpeg1: [0, 32, 40, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320],
  lsf: [0, 8, 16, 24, 32, 40, 48, 56, 64, 80, 96, 112, 128, 144, 160],
} as const;

/** Sampling frequencies by the header's version bits (3: MPEG-1, 2: MPEG-2, 0: MPEG-2.5) and index. */
const SAMPLE_RATES: Readonly<Record<number, readonly number[]>> = {
  3: [44100, 48000, 32000],
  2: [22050, 24000, 16000],
  0: [11025, 12000, 8000],
};

/** The rates an mp3 can have; any other needs resampling. */
export const MP3_SAMPLE_RATES: ReadonlySet<number> = new Set(Object.values(SAMPLE_RATES).flat());

export interface Mp3Frame {
  mpeg1: boolean;
  sampleRate: number;
  /** Bits per second. */
  bitrate: number;
  mono: boolean;
  /** Bytes, header included. */
  length: number;
  /** Samples per channel. */
  samples: number;
}

/** The Layer III frame whose header starts at `offset`, or undefined if none does. */
export function mp3FrameAt(bytes: Uint8Array, offset: number): Mp3Frame | undefined {
  if (offset + 4 > bytes.length || bytes[offset] !== 0xff) return undefined;
  const [b1, b2, b3] = [bytes[offset + 1] ?? 0, bytes[offset + 2] ?? 0, bytes[offset + 3] ?? 0];
  const version = (b1 >> 3) & 3;
  if ((b1 & 0xe0) !== 0xe0 || ((b1 >> 1) & 3) !== 1) return undefined;
  const mpeg1 = version === 3;
  const kbps = (mpeg1 ? BITRATES.mpeg1 : BITRATES.lsf)[b2 >> 4];
  const sampleRate = SAMPLE_RATES[version]?.[(b2 >> 2) & 3];
  if (!kbps || !sampleRate) return undefined;
  const samples = mpeg1 ? 1152 : 576;
  // 11172-3 §2.4.3.1: a Layer III frame is samples/8 × bitrate / rate bytes, plus one when the padding bit is set.
  const length = Math.floor(((samples / 8) * kbps * 1000) / sampleRate) + ((b2 >> 1) & 1);
  return { mpeg1, sampleRate, bitrate: kbps * 1000, mono: b3 >> 6 === 3, length, samples };
}

/** The LAME tag's fields end with its CRC, computed over this many bytes of the frame (the CRC field as zeros). */
const TAG_CRC_SPAN = 190;
const XING_SIZE = 4 + 4 + 4 + 4 + 100 + 4; // "Info", flags, frames, bytes, seek table, quality
const LAME_TAG_SIZE = 36;
/** Xing flags: frame count, byte count, seek table and quality present. */
const XING_FLAGS = 0x0f;

export interface InfoFrameFacts {
  /** Samples of the source (per channel), before LAME's delay and padding. */
  samples: number;
  /** Samples LAME put before the source (its encoder delay). */
  encoderDelay: number;
  /** The encoder's 9-character name in the tag, e.g. `LAME3.100`. */
  encoder: string;
}

/**
 * `frames` (LAME's whole output: frames of one rate, end to end) with the Info frame in front. Throws when the frames
 * do not tile the buffer or disagree with each other, or when the facts do not fit the tag.
 */
export function withInfoFrame(frames: Uint8Array, facts: InfoFrameFacts): Buffer {
  const tag = new InfoTag();
  tag.add(frames);
  return Buffer.concat([tag.frame(facts), frames]);
}

/**
 * The Info frame of frames given in pieces as an encoder writes them (a long job's mp3, written as it is spoken): each
 * piece's frames read as they come, only their starts and a running CRC kept; `frame()` once all are in. Its length
 * is known from the first frame (`reserve`), so a file can leave room for it and write it last.
 */
export class InfoTag {
  private first: Mp3Frame | undefined;
  private header: number[] = [];
  /** Where each frame starts in the audio (after the Info frame). */
  private readonly offsets: number[] = [];
  private bytes = 0;
  private crc = 0;
  /** The end of a frame cut at the end of the last piece: its bytes so far. */
  private carried: Uint8Array = new Uint8Array(0);

  /** Reads the next piece of frames; throws on bytes that are not a frame like the first. */
  add(piece: Uint8Array): void {
    this.crc = crc16(piece, this.crc);
    const bytes = this.carried.length > 0 ? Buffer.concat([this.carried, piece]) : piece;
    let offset = 0;
    while (offset + 4 <= bytes.length) {
      const frame = mp3FrameAt(bytes, offset);
      const { first } = this;
      if (!frame || (first && (frame.sampleRate !== first.sampleRate || frame.mono !== first.mono || frame.mpeg1 !== first.mpeg1))) {
        throw new Error(`no mp3 frame like the first at byte ${this.bytes + offset}`);
      }
      if (offset + frame.length > bytes.length) break;
      if (!first) {
        this.first = frame;
        // The first frame's header, unpadded and without CRC, so that every decoder takes the frame for one like the rest.
        this.header = [0xff, (bytes[offset + 1] ?? 0) | 0x01, (bytes[offset + 2] ?? 0) & ~0x03, bytes[offset + 3] ?? 0];
      }
      this.offsets.push(this.bytes + offset);
      offset += frame.length;
    }
    this.bytes += offset;
    this.carried = bytes.slice(offset);
  }

  /** The Info frame's length: that of an unpadded frame like the first (undefined before one is read). */
  get reserve(): number | undefined {
    const { first } = this;
    return first && Math.floor(((first.samples / 8) * first.bitrate) / first.sampleRate);
  }

  /** The Info frame of every frame read; throws when the last one was cut short, none was read, or the facts do not fit the tag. */
  frame(facts: InfoFrameFacts): Buffer {
    const { first, offsets, reserve } = this;
    if (this.carried.length > 0) throw new Error('the last mp3 frame is cut short');
    if (!first || reserve === undefined) throw new Error('no mp3 frames');
    const padding = offsets.length * first.samples - facts.samples - facts.encoderDelay;
    if (padding < 0 || padding > 0xfff || facts.encoderDelay > 0xfff) throw new Error(`delay ${facts.encoderDelay} and padding ${padding} do not fit the LAME tag`);
    const info = Buffer.alloc(reserve);
    const xing = 4 + (first.mpeg1 ? (first.mono ? 17 : 32) : first.mono ? 9 : 17); // after the side information, left zero
    if (info.length < Math.max(TAG_CRC_SPAN, xing + XING_SIZE + LAME_TAG_SIZE)) throw new Error(`a ${info.length}-byte frame cannot hold the Info tag`);
    const total = info.length + this.bytes;
    info.set(this.header, 0);
    info.write('Info', xing, 'latin1');
    info.writeUInt32BE(XING_FLAGS, xing + 4);
    info.writeUInt32BE(offsets.length, xing + 8);
    info.writeUInt32BE(total, xing + 12);
    // Seek table: where in the audio each hundredth of the frames starts, in 256ths of the audio's bytes (as ffmpeg's).
    for (let percent = 0; percent < 100; percent += 1) {
      const start = offsets[Math.floor((percent * offsets.length) / 100)] ?? 0;
      info[xing + 16 + percent] = Math.min(255, Math.floor((256 * start) / this.bytes));
    }
    // Quality (xing + 116) stays 0, as ffmpeg writes it.
    const tag = xing + XING_SIZE;
    info.write(facts.encoder.padEnd(9, ' ').slice(0, 9), tag, 'latin1');
    info[tag + 9] = 0x01; // tag revision 0, bitrate method 1: constant
    info[tag + 20] = Math.min(255, first.bitrate / 1000);
    info.writeUIntBE((facts.encoderDelay << 12) | padding, tag + 21, 3);
    info.writeUInt32BE(total, tag + 28); // music length: the whole file, as ffmpeg writes it
    info.writeUInt16BE(this.crc, tag + 32);
    info.writeUInt16BE(crc16(info.subarray(0, TAG_CRC_SPAN)), tag + 34);
    return info;
  }
}

let crcTable: Uint16Array | undefined;

/** CRC-16/ARC (polynomial 0x8005 reflected, initial 0): the LAME tag's two checksums; `crc` goes on from an earlier piece's. */
export function crc16(bytes: Uint8Array, crc = 0): number {
  crcTable ??= Uint16Array.from({ length: 256 }, (_, byte) => {
    let crc = byte;
    for (let bit = 0; bit < 8; bit += 1) crc = crc & 1 ? (crc >>> 1) ^ 0xa001 : crc >>> 1;
    return crc;
  });
  let running = crc;
  for (const byte of bytes) running = (running >>> 8) ^ (crcTable[(running ^ byte) & 0xff] ?? 0);
  return running;
}
