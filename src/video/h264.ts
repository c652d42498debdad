/**
 * Builds the H.264 stream of a narrated video from small x264 encodes, without encoding a pixel twice.
 *
 * The picture is a still background with captions in one horizontal band. x264 encodes the background once
 * (one full frame, plus the rows above and below the band as their own one-frame encodes) and the band only
 * at the frames where the captions change. Each output picture is then put together from slices: the band's
 * coded slice moved down to its rows, and "skip" P slices elsewhere, whose macroblocks all repeat the previous
 * picture exactly (about a dozen bytes each). A constant-rate stream gets a skip picture for every frame in
 * between; a variable-rate one only the pictures that change. Works on x264's CAVLC output without B-frames
 * or deblocking (preset ultrafast), where a slice decodes the same whichever rows it sits in.
 */

const NAL_SLICE = 1;
const NAL_IDR = 5;
const NAL_SPS = 7;
const NAL_PPS = 8;
const SLICE_P = 0;
const SLICE_I = 2;

export class H264Error extends Error {
  override name = 'H264Error';
}

class BitReader {
  position = 0;

  constructor(readonly bytes: Uint8Array) {}

  bit(): number {
    const byte = this.bytes[this.position >> 3];
    if (byte === undefined) throw new H264Error('Unexpected end of a NAL unit');
    const value = (byte >> (7 - (this.position & 7))) & 1;
    this.position += 1;
    return value;
  }

  bits(count: number): number {
    let value = 0;
    for (let i = 0; i < count; i += 1) value = value * 2 + this.bit();
    return value;
  }

  /** Unsigned Exp-Golomb. */
  ue(): number {
    let zeros = 0;
    while (this.bit() === 0) {
      zeros += 1;
      if (zeros > 31) throw new H264Error('Malformed Exp-Golomb code');
    }
    return 2 ** zeros - 1 + this.bits(zeros);
  }

  /** Signed Exp-Golomb. */
  se(): number {
    const code = this.ue();
    return code % 2 === 1 ? (code + 1) / 2 : -code / 2;
  }

  /** Position of the rbsp_stop_one_bit: the last 1 bit of the RBSP. */
  stopBit(): number {
    for (let index = this.bytes.length - 1; index >= 0; index -= 1) {
      const byte = this.bytes[index] as number;
      if (byte !== 0) return index * 8 + 7 - Math.log2(byte & -byte);
    }
    throw new H264Error('A NAL unit has no stop bit');
  }
}

class BitWriter {
  private bytes = new Uint8Array(64);
  private length = 0;

  private reserve(bits: number): void {
    const needed = (this.length + bits + 7) >> 3;
    if (needed <= this.bytes.length) return;
    const grown = new Uint8Array(Math.max(needed, this.bytes.length * 2));
    grown.set(this.bytes);
    this.bytes = grown;
  }

  bits(value: number, count: number): this {
    this.reserve(count);
    for (let i = count - 1; i >= 0; i -= 1) {
      if (Math.floor(value / 2 ** i) & 1) this.bytes[this.length >> 3] = (this.bytes[this.length >> 3] as number) | (0x80 >> (this.length & 7));
      this.length += 1;
    }
    return this;
  }

  ue(value: number): this {
    const code = value + 1;
    const length = Math.floor(Math.log2(code)) + 1;
    return this.bits(0, length - 1).bits(code, length);
  }

  se(value: number): this {
    return this.ue(value > 0 ? 2 * value - 1 : -2 * value);
  }

  /** Appends bits [from, to) of `source`, a byte at a time. */
  copy(source: Uint8Array, from: number, to: number): this {
    this.reserve(to - from);
    let position = from;
    const shift = position & 7;
    while (to - position >= 8) {
      const index = position >> 3;
      const byte = shift === 0 ? (source[index] as number) : (((source[index] as number) << shift) | ((source[index + 1] ?? 0) >> (8 - shift))) & 0xff;
      const offset = this.length & 7;
      const at = this.length >> 3;
      this.bytes[at] = (this.bytes[at] as number) | (byte >> offset);
      if (offset > 0) this.bytes[at + 1] = (byte << (8 - offset)) & 0xff;
      this.length += 8;
      position += 8;
    }
    const reader = new BitReader(source);
    reader.position = position;
    return this.bits(reader.bits(to - position), to - position);
  }

  /** rbsp_trailing_bits: a stop bit, then zeros to the byte boundary. */
  toRbsp(): Uint8Array {
    this.bits(1, 1);
    return this.bytes.subarray(0, (this.length + 7) >> 3);
  }
}

/** The NAL units of an Annex B byte stream, without their start codes. */
export function splitNalUnits(stream: Uint8Array): Uint8Array[] {
  const starts: number[] = [];
  for (let i = 0; i + 2 < stream.length; i += 1) {
    if (stream[i + 2]! > 1) {
      i += 2; // no start code can begin at i, i + 1 or i + 2
    } else if (stream[i] === 0 && stream[i + 1] === 0 && stream[i + 2] === 1) {
      starts.push(i + 3);
      i += 2;
    }
  }
  return starts.map((start, index) => {
    let end = index + 1 < starts.length ? (starts[index + 1] as number) - 3 : stream.length;
    while (end > start && stream[end - 1] === 0) end -= 1; // trailing zeros belong to the next start code
    return stream.subarray(start, end);
  });
}

/** NAL payload → RBSP: drops the header byte and the emulation-prevention bytes (00 00 03). */
function toRbsp(nal: Uint8Array): Uint8Array {
  const out = new Uint8Array(nal.length);
  let length = 0;
  let zeros = 0;
  for (let i = 1; i < nal.length; i += 1) {
    const byte = nal[i] as number;
    if (zeros >= 2 && byte === 3) {
      zeros = 0;
      continue;
    }
    zeros = byte === 0 ? zeros + 1 : 0;
    out[length++] = byte;
  }
  return out.subarray(0, length);
}

/** Header byte + RBSP → NAL payload with emulation prevention. */
function toNal(header: number, rbsp: Uint8Array): Uint8Array {
  const out = new Uint8Array(rbsp.length + Math.ceil(rbsp.length / 2) + 1);
  out[0] = header;
  let length = 1;
  let zeros = 0;
  for (const byte of rbsp) {
    if (zeros >= 2 && byte <= 3) {
      out[length++] = 3;
      zeros = 0;
    }
    out[length++] = byte;
    zeros = byte === 0 ? zeros + 1 : 0;
  }
  return out.subarray(0, length);
}

interface Sps {
  log2MaxFrameNum: number;
  pocType: number;
  log2MaxPocLsb: number;
  widthMbs: number;
  heightMbs: number;
}

interface Pps {
  id: number;
  sps: Sps;
  bottomFieldPicOrder: boolean;
  defaultRefs: number;
  initQp: number;
  /** Fields every slice put together in one picture must agree on, as text. */
  shared: string;
  deblockingControl: boolean;
  redundantPicCount: boolean;
}

const HIGH_PROFILES = new Set([100, 110, 122, 244, 44, 83, 86, 118, 128, 138, 139, 134, 135]);

function parseSps(rbsp: Uint8Array): { id: number; sps: Sps } {
  const reader = new BitReader(rbsp);
  const profile = reader.bits(8);
  reader.bits(16); // constraint flags, level
  const id = reader.ue();
  if (HIGH_PROFILES.has(profile)) {
    if (reader.ue() !== 1) throw new H264Error('Only 4:2:0 streams are supported');
    if (reader.ue() !== 0 || reader.ue() !== 0) throw new H264Error('Only 8-bit streams are supported');
    reader.bit();
    if (reader.bit()) throw new H264Error('Scaling matrices are not supported');
  }
  const log2MaxFrameNum = reader.ue() + 4;
  const pocType = reader.ue();
  let log2MaxPocLsb = 0;
  if (pocType === 0) log2MaxPocLsb = reader.ue() + 4;
  else if (pocType !== 2) throw new H264Error(`Picture order count type ${pocType} is not supported`);
  reader.ue(); // max_num_ref_frames
  reader.bit(); // gaps_in_frame_num_value_allowed_flag
  const widthMbs = reader.ue() + 1;
  const heightMbs = reader.ue() + 1;
  if (!reader.bit()) throw new H264Error('Interlaced streams are not supported');
  return { id, sps: { log2MaxFrameNum, pocType, log2MaxPocLsb, widthMbs, heightMbs } };
}

function parsePps(rbsp: Uint8Array, spsById: ReadonlyMap<number, Sps>): Pps {
  const reader = new BitReader(rbsp);
  const id = reader.ue();
  const sps = spsById.get(reader.ue());
  if (!sps) throw new H264Error('A picture parameter set refers to an unknown sequence parameter set');
  if (reader.bit()) throw new H264Error('CABAC streams are not supported (encode with CAVLC)');
  const bottomFieldPicOrder = reader.bit() === 1;
  if (reader.ue() !== 0) throw new H264Error('Slice groups are not supported');
  const defaultRefs = reader.ue() + 1;
  reader.ue(); // num_ref_idx_l1_default_active_minus1
  if (reader.bit()) throw new H264Error('Weighted prediction is not supported');
  reader.bits(2); // weighted_bipred_idc
  const initQp = 26 + reader.se();
  reader.se(); // pic_init_qs_minus26 (SP/SI slices only)
  const chromaQpOffset = reader.se();
  const deblockingControl = reader.bit() === 1;
  const constrainedIntra = reader.bit();
  const redundantPicCount = reader.bit() === 1;
  const extension = Array.from(rbsp.subarray(reader.position >> 3)).join('.');
  return {
    id,
    sps,
    bottomFieldPicOrder,
    defaultRefs,
    initQp,
    shared: `${chromaQpOffset}/${constrainedIntra}/${deblockingControl}/${redundantPicCount}/${reader.position & 7}/${extension}`,
    deblockingControl,
    redundantPicCount,
  };
}

/** A slice header, with what the decoder needs to place it, and where its macroblock data starts. */
interface Slice {
  nalRefIdc: number;
  firstMb: number;
  type: typeof SLICE_P | typeof SLICE_I;
  refs: number;
  qp: number;
  deblocking: { idc: number; alpha: number; beta: number };
  rbsp: Uint8Array;
  dataStart: number;
  dataEnd: number;
}

function parseSlice(nal: Uint8Array, ppsById: ReadonlyMap<number, Pps>): Slice {
  const nalRefIdc = (nal[0] as number) >> 5;
  const idr = ((nal[0] as number) & 0x1f) === NAL_IDR;
  const rbsp = toRbsp(nal);
  const reader = new BitReader(rbsp);
  const firstMb = reader.ue();
  const type = reader.ue() % 5;
  if (type !== SLICE_P && type !== SLICE_I) throw new H264Error('Only I and P slices are supported (encode without B-frames)');
  if (nalRefIdc === 0) throw new H264Error('Non-reference pictures are not supported');
  const pps = ppsById.get(reader.ue());
  if (!pps) throw new H264Error('A slice refers to an unknown picture parameter set');
  reader.bits(pps.sps.log2MaxFrameNum); // frame_num
  if (idr) reader.ue(); // idr_pic_id
  if (pps.sps.pocType === 0) {
    reader.bits(pps.sps.log2MaxPocLsb);
    if (pps.bottomFieldPicOrder) reader.se();
  }
  if (pps.redundantPicCount) reader.ue();
  let refs = pps.defaultRefs;
  if (type === SLICE_P) {
    if (reader.bit()) refs = reader.ue() + 1;
    if (reader.bit()) throw new H264Error('Reference list modification is not supported');
  }
  if (idr) reader.bits(2); // no_output_of_prior_pics_flag, long_term_reference_flag
  else if (reader.bit()) throw new H264Error('Adaptive reference marking is not supported');
  const qp = pps.initQp + reader.se();
  const deblocking = { idc: 0, alpha: 0, beta: 0 };
  if (pps.deblockingControl) {
    deblocking.idc = reader.ue();
    if (deblocking.idc !== 1) {
      deblocking.alpha = reader.se();
      deblocking.beta = reader.se();
    }
  }
  if (deblocking.idc !== 1) throw new H264Error('Slices must be encoded without deblocking (x264 --no-deblock)');
  return { nalRefIdc, firstMb, type: type as Slice['type'], refs, qp, deblocking, rbsp, dataStart: reader.position, dataEnd: reader.stopBit() };
}

/** Where a slice goes in the output: which picture, and its place in the picture order. */
interface Placement {
  pps: Pps;
  idr: boolean;
  frameNum: number;
  pocLsb: number;
}

function writeSlice(slice: Slice, placement: Placement, rowShift: number): Uint8Array {
  const { pps, idr } = placement;
  const writer = new BitWriter()
    .ue(slice.firstMb + rowShift * pps.sps.widthMbs)
    .ue(slice.type) // 0-4: the picture may mix I and P slices
    .ue(pps.id)
    .bits(placement.frameNum, pps.sps.log2MaxFrameNum);
  if (idr) writer.ue(0); // idr_pic_id
  if (pps.sps.pocType === 0) {
    writer.bits(placement.pocLsb, pps.sps.log2MaxPocLsb);
    if (pps.bottomFieldPicOrder) writer.se(0);
  }
  if (pps.redundantPicCount) writer.ue(0);
  if (slice.type === SLICE_P) {
    writer.bits(slice.refs === pps.defaultRefs ? 0 : 1, 1);
    if (slice.refs !== pps.defaultRefs) writer.ue(slice.refs - 1);
    writer.bits(0, 1); // ref_pic_list_modification_flag_l0
  }
  writer.bits(0, idr ? 2 : 1); // dec_ref_pic_marking: keep the sliding window
  writer.se(slice.qp - pps.initQp);
  if (pps.deblockingControl) writer.ue(slice.deblocking.idc);
  writer.copy(slice.rbsp, slice.dataStart, slice.dataEnd);
  return toNal((slice.nalRefIdc << 5) | (idr ? NAL_IDR : NAL_SLICE), writer.toRbsp());
}

/** A P slice over `count` macroblocks from `firstMb`, all skipped: the decoder repeats the previous picture there. */
function skipSlice(pps: Pps, firstMb: number, count: number): Slice {
  const data = new BitWriter().ue(count).toRbsp();
  // nal_ref_idc 2: a reference picture, so frame_num counts every frame and no two in a row share a POC.
  return { nalRefIdc: 2, firstMb, type: SLICE_P, refs: pps.defaultRefs, qp: pps.initQp, deblocking: { idc: 1, alpha: 0, beta: 0 }, rbsp: data, dataStart: 0, dataEnd: new BitReader(data).stopBit() };
}

interface ParsedStream {
  sps: Sps;
  pps: Pps;
  /** Non-slice NAL units before the first picture (parameter sets, SEI). */
  headers: Uint8Array[];
  pictures: Slice[][];
}

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
  /** `constant`: a picture for every frame; `variable`: only at frame 0, where the band changes, and the last frame. */
  rate: 'constant' | 'variable';
}

export interface ComposedStream {
  /** Annex B H.264. */
  stream: Buffer;
  /** The frame each picture of the stream stands at. */
  frames: number[];
}

const START_CODE = Uint8Array.of(0, 0, 0, 1);

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
  let next = 0;
  for (let frame = 0; frame < parts.totalFrames; frame += 1) {
    const bandPicture = band && band.frames[next] === frame ? band.parsed.pictures[next++] : undefined;
    if (frame > 0 && !bandPicture && parts.rate === 'variable' && frame !== parts.totalFrames - 1) continue;
    const placement: Placement = {
      pps,
      idr: frame === 0,
      frameNum: frames.length % 2 ** sps.log2MaxFrameNum,
      pocLsb: (2 * frames.length) % 2 ** Math.max(1, sps.log2MaxPocLsb),
    };
    let slices: Array<[Slice, number]>;
    if (frame === 0) {
      chunks.push(...background.headers.flatMap((nal) => [START_CODE, nal]));
      slices = band
        ? [...(edges?.above?.pictures[0] ?? []).map(at(0)), ...(bandPicture ?? []).map(at(band.row)), ...(edges?.below?.pictures[0] ?? []).map(at(bandEnd))]
        : (background.pictures[0] ?? []).map(at(0));
    } else if (band && bandPicture) {
      slices = [...(band.row > 0 ? [aboveSkip] : []).map(at(0)), ...bandPicture.map(at(band.row)), ...(bandEnd < sps.heightMbs ? [belowSkip] : []).map(at(0))];
    } else {
      slices = [[fullSkip, 0]];
    }
    for (const [slice, rowShift] of slices) chunks.push(START_CODE, writeSlice(slice, placement, rowShift));
    frames.push(frame);
  }
  return { stream: Buffer.concat(chunks), frames };
}
