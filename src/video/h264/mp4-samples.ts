/**
 * An Annex B stream (x264's or the splicer's) as the samples of an MP4 track (ISO/IEC 14496-15 §5.3): one sample
 * per picture (access unit, 7.4.1.2.3), its NAL units each behind a 4-byte length instead of a start code, the
 * parameter sets left in place as ffmpeg's muxer leaves them, and the avcC record made from the first SPS and PPS.
 */
import { H264Error, splitNalUnits, toRbsp } from './bitstream.js';
import { NAL_IDR, NAL_PPS, NAL_SLICE, NAL_SPS, parseSps } from './syntax.js';

/** NAL unit types that start a new access unit when they follow a picture's slices (7.4.1.2.3): SEI, SPS, PPS, access unit delimiter, 14-18. */
const STARTS_ACCESS_UNIT = new Set([6, NAL_SPS, NAL_PPS, 9, 14, 15, 16, 17, 18]);
/** profile_idc values whose avcC carries chroma format and bit depths (ISO/IEC 14496-15 §5.3.3.1.1). */
const HIGH_PROFILES = new Set([100, 110, 122, 144]);

export interface Mp4Samples {
  /** Each picture as the pieces of its sample: a 4-byte length, a NAL unit, and so on. */
  samples: Uint8Array[][];
  /** Whether each picture is an IDR picture. */
  sync: boolean[];
  /** The AVCDecoderConfigurationRecord. */
  avcC: Buffer;
}

/** The pictures of a stream as MP4 samples; throws an H264Error on a stream without parameter sets or pictures. */
export function mp4Samples(stream: Uint8Array): Mp4Samples {
  const samples: Uint8Array[][] = [];
  const sync: boolean[] = [];
  let sps: Uint8Array | undefined;
  let pps: Uint8Array | undefined;
  // Whether the access unit being read has a slice yet.
  let sliced = false;
  let pending: Uint8Array[] = [];
  for (const nal of splitNalUnits(stream)) {
    const type = (nal[0] as number) & 0x1f;
    const slice = type === NAL_SLICE || type === NAL_IDR;
    // first_mb_in_slice, the slice header's first ue(v), is 0 when its first bit is 1.
    const startsPicture = slice ? ((nal[1] as number) & 0x80) !== 0 : STARTS_ACCESS_UNIT.has(type);
    if (sliced && startsPicture) {
      samples.push(pending);
      pending = [];
      sliced = false;
    }
    if (slice && !sliced) sync.push(type === NAL_IDR);
    sliced ||= slice;
    if (type === NAL_SPS) sps ??= nal;
    if (type === NAL_PPS) pps ??= nal;
    const length = Buffer.alloc(4);
    length.writeUInt32BE(nal.length);
    pending.push(length, nal);
  }
  if (sliced) samples.push(pending);
  if (!sps || !pps || samples.length === 0) throw new H264Error('A stream without parameter sets or pictures');
  return { samples, sync, avcC: avcConfiguration(sps, pps) };
}

/** The AVCDecoderConfigurationRecord of one SPS and PPS, with 4-byte NAL unit lengths. */
function avcConfiguration(sps: Uint8Array, pps: Uint8Array): Buffer {
  // Checks what the record below takes for granted of a High profile: 4:2:0, 8 bits.
  parseSps(toRbsp(sps));
  const profile = sps[1] as number;
  const length = (nal: Uint8Array) => Buffer.from([nal.length >> 8, nal.length & 0xff]);
  return Buffer.concat([
    Buffer.from([1, profile, sps[2] as number, sps[3] as number, 0xff, 0xe1]),
    length(sps),
    sps,
    Buffer.from([1]),
    length(pps),
    pps,
    ...(HIGH_PROFILES.has(profile) ? [Buffer.from([0xfc | 1, 0xf8, 0xf8, 0])] : []),
  ]);
}
