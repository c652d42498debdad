/**
 * Builds the H.264 stream of a narrated video from small x264 encodes, without encoding a pixel twice.
 *
 * The picture is a still background with captions in one horizontal band. x264 encodes the background once
 * (one full frame, plus the rows above and below the band as their own one-frame encodes) and the band only
 * at the frames where the captions change. Each output picture is then put together from slices: the band's
 * coded slice moved down to its rows, and "skip" P slices elsewhere, whose macroblocks all repeat the previous
 * picture exactly (about a dozen bytes each). A constant-rate stream gets a skip picture for every frame in
 * between; a variable-rate one only the pictures that change. Works on x264's CAVLC output without B-frames
 * or deblocking (preset ultrafast), where a slice decodes the same whichever rows it sits in (see syntax.ts).
 *
 * The output is Constrained Baseline (A.2.1) like its parts: one SPS and PPS (the background's, whose level, A.3,
 * covers the full picture at the nominal rate), slices in rising first_mb_in_slice order (no arbitrary slice
 * order), every picture a reference picture, frame_num and POC rising by one picture each from the last IDR
 * picture (7.4.3, 8.2.1). An IDR picture every `keyframeInterval` frames lets players seek: it is put together from
 * the one-frame encodes around the band and the band's own IDR picture at that frame (parts.ts forces one there),
 * so only the band is encoded again; without captions it is the background's picture again.
 */
import { H264Error, splitNalUnits, toRbsp } from './bitstream.js';
import { NAL_IDR, NAL_PPS, NAL_SLICE, NAL_SPS, parsePps, parseSlice, parseSps, skipSlice, writeSlice, type Placement, type Pps, type Slice, type Sps } from './syntax.js';

interface ParsedStream {
  sps: Sps;
  pps: Pps;
  /** Non-slice NAL units before the first picture (parameter sets, SEI). */
  headers: Uint8Array[];
  pictures: Slice[][];
}

/** x264's pictures start with first_mb_in_slice 0 (it uses no arbitrary slice order; compare 7.4.1.2.4). */
function parseStream(stream: Uint8Array): ParsedStream {
  const spsById = new Map<number, Sps>();
  const ppsById = new Map<number, Pps>();
  const headers: Uint8Array[] = [];
  const pictures: Slice[][] = [];
  for (const nal of splitNalUnits(stream)) {
    const type = (nal[0] as number) & 0x1f;
    if (type === NAL_SLICE || type === NAL_IDR) {
      const slice = parseSlice(nal, ppsById);
      if (slice.firstMb === 0) pictures.push([]);
      const picture = pictures.at(-1);
      if (!picture) throw new H264Error('A slice continues a picture that never started');
      if (pictures.length === 1 && type !== NAL_IDR) throw new H264Error('The stream must start with an IDR picture');
      picture.push(slice);
      continue;
    }
    if (type === NAL_SPS) {
      const { id, sps } = parseSps(toRbsp(nal));
      spsById.set(id, sps);
    } else if (type === NAL_PPS) {
      const pps = parsePps(toRbsp(nal), spsById);
      ppsById.set(pps.id, pps);
    }
    if (pictures.length === 0) headers.push(nal);
  }
  const pps = [...ppsById.values()];
  if (pps.length !== 1 || !pps[0] || pictures.length === 0) throw new H264Error('Expected one parameter set and at least one picture');
  return { sps: pps[0].sps, pps: pps[0], headers, pictures };
}

export interface StreamParts {
  /** One full-size frame of the background: its parameter sets become the output's. */
  background: Uint8Array;
  /** The caption band, encoded only at `frames` (ascending, the first 0), and the one-frame encodes of the rows above and below it. */
  band?: {
    stream: Uint8Array;
    /** First macroblock row of the band in the full picture. */
    row: number;
    frames: readonly number[];
    above?: Uint8Array;
    below?: Uint8Array;
  };
  totalFrames: number;
  /** `constant`: a picture for every frame; `variable`: only at frame 0, where the band changes, the IDR frames and the last frame. */
  rate: 'constant' | 'variable';
  /** Frames from one IDR picture to the next; the band must have an IDR picture at each of them. Default: only frame 0. */
  keyframeInterval?: number;
  /**
   * idr_pic_id of the first IDR picture, 0 or 1: a stream that follows another (the next scene, see parts.ts) starts
   * with the other value when the one before ended on an IDR picture, since two IDR pictures in a row must differ in
   * it (7.4.3). Default 0.
   */
  firstIdrPicId?: number;
}

export interface ComposedStream {
  /** Annex B H.264. */
  stream: Buffer;
  /** The frame each picture of the stream stands at. */
  frames: number[];
  /** The idr_pic_id a stream put after this one starts with (StreamParts.firstIdrPicId). */
  nextIdrPicId: number;
}

/** B.1: a four-byte start code (zero_byte + start_code_prefix_one_3bytes) before every NAL unit. */
const START_CODE = Uint8Array.of(0, 0, 0, 1);

/**
 * The slices of IDR pictures as written: the rows above and below the band (or the whole background) come back at
 * every keyframe with the same header but for idr_pic_id, which alternates (frame_num and POC are 0 there), so each
 * is written twice in all rather than at every keyframe (an image background's rows are most of a video's bytes).
 */
class WrittenSlices {
  private readonly written = new Map<Slice, Map<string, Uint8Array>>();

  write(slice: Slice, placement: Placement, rowShift: number): Uint8Array {
    const key = `${placement.idrPicId}/${placement.frameNum}/${placement.pocLsb}/${rowShift}`;
    let bySlice = this.written.get(slice);
    if (!bySlice) this.written.set(slice, (bySlice = new Map()));
    let nal = bySlice.get(key);
    if (!nal) bySlice.set(key, (nal = writeSlice(slice, placement, rowShift)));
    return nal;
  }
}

/** Puts the output stream together; see the file comment. Throws H264Error on streams it cannot splice. */
export function composeStream(parts: StreamParts): ComposedStream {
  const background = parseStream(parts.background);
  const { pps, sps } = background;
  const band = parts.band && { ...parts.band, parsed: parseStream(parts.band.stream) };
  const edges = band && { above: band.above && parseStream(band.above), below: band.below && parseStream(band.below) };
  const bandRows = band?.parsed.sps.heightMbs ?? 0;
  const bandEnd = (band?.row ?? 0) + bandRows;
  if (band && edges) {
    const check = (part: ParsedStream | undefined, rows: number, name: string) => {
      if (rows === 0 && !part) return;
      if (part?.sps.widthMbs !== sps.widthMbs || part.sps.heightMbs !== rows) throw new H264Error(`The ${name} does not fit the picture`);
      if (part.pps.shared !== pps.shared) throw new H264Error(`The ${name} was encoded with other settings than the background`);
    };
    check(edges.above, band.row, 'rows above the band');
    check(band.parsed, bandRows, 'band');
    check(edges.below, sps.heightMbs - bandEnd, 'rows below the band');
    if (band.frames.length !== band.parsed.pictures.length) {
      throw new H264Error(`The band has ${band.parsed.pictures.length} pictures, expected ${band.frames.length}`);
    }
    band.frames.forEach((frame, index) => {
      if (index === 0 ? frame !== 0 : frame <= (band.frames[index - 1] as number)) throw new H264Error('Band frames must rise from 0');
      if (frame >= parts.totalFrames) throw new H264Error('A band picture lies past the last frame');
    });
  }

  const chunks: Uint8Array[] = [];
  const frames: number[] = [];
  const fullSkip = skipSlice(pps, 0, sps.widthMbs * sps.heightMbs);
  const aboveSkip = skipSlice(pps, 0, (band?.row ?? 0) * sps.widthMbs);
  const belowSkip = skipSlice(pps, bandEnd * sps.widthMbs, (sps.heightMbs - bandEnd) * sps.widthMbs);
  const at = (row: number) => (slice: Slice): [Slice, number] => [slice, row];
  const interval = parts.keyframeInterval ?? Infinity;
  if (!(interval >= 1)) throw new H264Error('The keyframe interval must be at least one frame');
  const keyframeSlices = new WrittenSlices();
  let next = 0;
  let idrPictures = parts.firstIdrPicId ?? 0;
  let sinceIdr = 0;
  for (let frame = 0; frame < parts.totalFrames; frame += 1) {
    const bandPicture = band && band.frames[next] === frame ? band.parsed.pictures[next++] : undefined;
    const idr = frame % interval === 0;
    if (!idr && !bandPicture && parts.rate === 'variable' && frame !== parts.totalFrames - 1) continue;
    if (idr) sinceIdr = 0;
    // frame_num counts reference pictures since the IDR (7.4.3); a POC of type 0 rises by 2 a frame, as in the parts (8.2.1.1).
    const placement: Placement = {
      pps,
      idr,
      idrPicId: idr ? idrPictures++ % 2 : 0,
      frameNum: sinceIdr % 2 ** sps.log2MaxFrameNum,
      pocLsb: (2 * sinceIdr) % 2 ** Math.max(1, sps.log2MaxPocLsb),
    };
    sinceIdr += 1;
    let slices: Array<[Slice, number]>;
    // 7.4.1.2.1: the parameter sets come before the first slice that uses them.
    if (frame === 0) chunks.push(...background.headers.flatMap((nal) => [START_CODE, nal]));
    if (idr) {
      // 7.4.1.2.4: every slice of an IDR picture is an IDR slice.
      if (band && !bandPicture?.every((slice) => slice.idr)) throw new H264Error(`The band has no IDR picture at keyframe ${frame}`);
      slices = band
        ? [...(edges?.above?.pictures[0] ?? []).map(at(0)), ...(bandPicture ?? []).map(at(band.row)), ...(edges?.below?.pictures[0] ?? []).map(at(bandEnd))]
        : (background.pictures[0] ?? []).map(at(0));
    } else if (band && bandPicture) {
      // The band's P slices refer to its previous picture, which the output holds in the same rows (refIdx 0, 8.2.4.2.1).
      slices = [...(band.row > 0 ? [aboveSkip] : []).map(at(0)), ...bandPicture.map(at(band.row)), ...(bandEnd < sps.heightMbs ? [belowSkip] : []).map(at(0))];
    } else {
      slices = [[fullSkip, 0]];
    }
    for (const [slice, rowShift] of slices) chunks.push(START_CODE, idr ? keyframeSlices.write(slice, placement, rowShift) : writeSlice(slice, placement, rowShift));
    frames.push(frame);
  }
  return { stream: Buffer.concat(chunks), frames, nextIdrPicId: idrPictures % 2 };
}
