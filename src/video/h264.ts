/**
 * Constant-rate H.264 from a render of only the frames that change: between two coded frames we insert
 * P slices whose every macroblock is skipped (an exact copy of the previous picture, about 12 bytes each),
 * so x264 never encodes a duplicate frame. Works on x264's CAVLC output without B-frames (preset ultrafast).
 */

const NAL_SLICE = 1;
const NAL_IDR = 5;
const NAL_SPS = 7;
const NAL_PPS = 8;

export class H264Error extends Error {
  override name = 'H264Error';
}

class BitReader {
  position = 0;

  constructor(private readonly bytes: Uint8Array) {}

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
}

class BitWriter {
  private readonly values: number[] = [];

  bits(value: number, count: number): this {
    for (let i = count - 1; i >= 0; i -= 1) this.values.push(Math.floor(value / 2 ** i) & 1);
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

  /** rbsp_trailing_bits: a stop bit, then zeros to the byte boundary. */
  toRbsp(): Uint8Array {
    this.values.push(1);
    while (this.values.length % 8 !== 0) this.values.push(0);
    const bytes = new Uint8Array(this.values.length / 8);
    this.values.forEach((bit, index) => {
      bytes[index >> 3] = (bytes[index >> 3] ?? 0) | (bit << (7 - (index & 7)));
    });
    return bytes;
  }
}

function writeBits(bytes: Uint8Array, position: number, count: number, value: number): void {
  for (let i = 0; i < count; i += 1) {
    const bit = Math.floor(value / 2 ** (count - 1 - i)) & 1;
    const at = position + i;
    const mask = 1 << (7 - (at & 7));
    bytes[at >> 3] = bit ? (bytes[at >> 3] ?? 0) | mask : (bytes[at >> 3] ?? 0) & ~mask;
  }
}

/** The NAL units of an Annex B byte stream, without their start codes. */
export function splitNalUnits(stream: Uint8Array): Uint8Array[] {
  const starts: number[] = [];
  for (let i = 0; i + 2 < stream.length; i += 1) {
    if (stream[i] === 0 && stream[i + 1] === 0 && stream[i + 2] === 1) {
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

/** NAL payload → RBSP: drops emulation-prevention bytes (00 00 03). */
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
  const out: number[] = [header];
  let zeros = 0;
  for (const byte of rbsp) {
    if (zeros >= 2 && byte <= 3) {
      out.push(3);
      zeros = 0;
    }
    out.push(byte);
    zeros = byte === 0 ? zeros + 1 : 0;
  }
  return Uint8Array.from(out);
}

interface Sps {
  log2MaxFrameNum: number;
  pocType: number;
  log2MaxPocLsb: number;
  macroblocks: number;
}

interface Pps {
  id: number;
  sps: Sps;
  bottomFieldPicOrder: boolean;
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
    const chromaFormat = reader.ue();
    if (chromaFormat === 3) reader.bit();
    reader.ue(); // bit depths
    reader.ue();
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
  const heightMapUnits = reader.ue() + 1;
  if (!reader.bit()) throw new H264Error('Interlaced streams are not supported');
  return { id, sps: { log2MaxFrameNum, pocType, log2MaxPocLsb, macroblocks: widthMbs * heightMapUnits } };
}

function parsePps(rbsp: Uint8Array, spsById: ReadonlyMap<number, Sps>): Pps {
  const reader = new BitReader(rbsp);
  const id = reader.ue();
  const sps = spsById.get(reader.ue());
  if (!sps) throw new H264Error('A picture parameter set refers to an unknown sequence parameter set');
  if (reader.bit()) throw new H264Error('CABAC streams are not supported (encode with CAVLC)');
  const bottomFieldPicOrder = reader.bit() === 1;
  if (reader.ue() !== 0) throw new H264Error('Slice groups are not supported');
  reader.ue(); // num_ref_idx_l0_default_active_minus1
  reader.ue();
  if (reader.bit()) throw new H264Error('Weighted prediction is not supported');
  reader.bits(2);
  reader.se(); // pic_init_qp_minus26, pic_init_qs_minus26, chroma_qp_index_offset
  reader.se();
  reader.se();
  const deblockingControl = reader.bit() === 1;
  reader.bit(); // constrained_intra_pred_flag
  const redundantPicCount = reader.bit() === 1;
  return { id, sps, bottomFieldPicOrder, deblockingControl, redundantPicCount };
}

interface AccessUnit {
  nals: Uint8Array[];
  idr: boolean;
}

function nalType(nal: Uint8Array): number {
  return (nal[0] ?? 0) & 0x1f;
}

function isSlice(nal: Uint8Array): boolean {
  return nalType(nal) === NAL_SLICE || nalType(nal) === NAL_IDR;
}

/** Groups NAL units into pictures: a slice with first_mb_in_slice 0 starts one, with the parameter sets before it. */
function accessUnits(nals: readonly Uint8Array[]): AccessUnit[] {
  const units: AccessUnit[] = [];
  let pending: Uint8Array[] = [];
  for (const nal of nals) {
    if (isSlice(nal) && new BitReader(toRbsp(nal)).ue() === 0) {
      units.push({ nals: [...pending, nal], idr: nalType(nal) === NAL_IDR });
      pending = [];
    } else if (isSlice(nal)) {
      const last = units.at(-1);
      if (!last) throw new H264Error('A slice continues a picture that never started');
      last.nals.push(...pending, nal);
      pending = [];
    } else {
      pending.push(nal);
    }
  }
  return units;
}

/** Sets frame_num (and the POC LSB for POC type 0) of a coded slice, in place in its RBSP. */
function renumberSlice(nal: Uint8Array, ppsById: ReadonlyMap<number, Pps>, frameNum: number, pocLsb: number): Uint8Array {
  if (((nal[0] ?? 0) >> 5) === 0) throw new H264Error('Non-reference pictures are not supported (encode without B-frames)');
  const rbsp = toRbsp(nal);
  const reader = new BitReader(rbsp);
  reader.ue(); // first_mb_in_slice
  reader.ue(); // slice_type
  const pps = ppsById.get(reader.ue());
  if (!pps) throw new H264Error('A slice refers to an unknown picture parameter set');
  writeBits(rbsp, reader.position, pps.sps.log2MaxFrameNum, frameNum);
  reader.position += pps.sps.log2MaxFrameNum;
  if (nalType(nal) === NAL_IDR) reader.ue(); // idr_pic_id
  if (pps.sps.pocType === 0) writeBits(rbsp, reader.position, pps.sps.log2MaxPocLsb, pocLsb);
  return toNal(nal[0] as number, rbsp);
}

/** A P slice that skips every macroblock: the decoder repeats the previous picture exactly. */
function skipSlice(pps: Pps, frameNum: number, pocLsb: number): Uint8Array {
  const writer = new BitWriter()
    .ue(0) // first_mb_in_slice
    .ue(0) // slice_type P
    .ue(pps.id)
    .bits(frameNum, pps.sps.log2MaxFrameNum);
  if (pps.sps.pocType === 0) {
    writer.bits(pocLsb, pps.sps.log2MaxPocLsb);
    if (pps.bottomFieldPicOrder) writer.se(0);
  }
  if (pps.redundantPicCount) writer.ue(0);
  writer
    .bits(0, 1) // num_ref_idx_active_override_flag
    .bits(0, 1) // ref_pic_list_modification_flag_l0
    .bits(0, 1) // adaptive_ref_pic_marking_mode_flag
    .se(0); // slice_qp_delta
  if (pps.deblockingControl) writer.ue(1); // disable_deblocking_filter_idc
  writer.ue(pps.sps.macroblocks); // mb_skip_run
  // nal_ref_idc 2: a reference picture, so frame_num counts every frame and no two in a row share a POC.
  return toNal((2 << 5) | NAL_SLICE, writer.toRbsp());
}

const START_CODE = Uint8Array.of(0, 0, 0, 1);

/**
 * Spreads the coded pictures of `stream` over `totalFrames` constant-rate frames: picture k goes to frame
 * `frames[k]`, and every frame between repeats the one before it. Returns an Annex B stream.
 */
export function weaveConstantRate(stream: Uint8Array, frames: readonly number[], totalFrames: number): Buffer {
  const nals = splitNalUnits(stream);
  const spsById = new Map<number, Sps>();
  const ppsById = new Map<number, Pps>();
  for (const nal of nals) {
    if (nalType(nal) === NAL_SPS) {
      const { id, sps } = parseSps(toRbsp(nal));
      spsById.set(id, sps);
    } else if (nalType(nal) === NAL_PPS) {
      const pps = parsePps(toRbsp(nal), spsById);
      ppsById.set(pps.id, pps);
    }
  }
  const units = accessUnits(nals);
  if (units.length !== frames.length) {
    throw new H264Error(`The stream has ${units.length} pictures, expected ${frames.length}`);
  }
  if (frames[0] !== 0 || !units[0]?.idr) throw new H264Error('The first picture must be an IDR picture at frame 0');
  frames.forEach((frame, index) => {
    if (index > 0 && frame <= (frames[index - 1] as number)) throw new H264Error('Frame numbers must increase');
    if (frame >= totalFrames) throw new H264Error('A picture lies past the last frame');
  });

  const pps = [...ppsById.values()][0] as Pps;
  const { log2MaxFrameNum, log2MaxPocLsb } = pps.sps;
  const chunks: Uint8Array[] = [];
  let next = 0;
  let frameNum = 0;
  let idrFrame = 0;
  for (let frame = 0; frame < totalFrames; frame += 1) {
    const unit = frames[next] === frame ? units[next++] : undefined;
    if (unit?.idr) {
      frameNum = 0;
      idrFrame = frame;
    } else {
      frameNum = (frameNum + 1) % 2 ** log2MaxFrameNum;
    }
    const pocLsb = (2 * (frame - idrFrame)) % 2 ** (log2MaxPocLsb || 1);
    const pictureNals = unit
      ? unit.nals.map((nal) => (isSlice(nal) ? renumberSlice(nal, ppsById, frameNum, pocLsb) : nal))
      : [skipSlice(pps, frameNum, pocLsb)];
    for (const nal of pictureNals) chunks.push(START_CODE, nal);
  }
  return Buffer.concat(chunks);
}
