/**
 * The parts of H.264 syntax the splicer reads and rewrites: parameter sets (7.3.2.1, 7.3.2.2) and slice headers
 * (7.3.3), plus the skip slice it writes itself (7.3.4). Anything outside x264's CAVLC output without B-frames or
 * deblocking (preset ultrafast, see parts.ts) is refused with an H264Error rather than guessed at.
 */
import { BitReader, BitWriter, H264Error, toNal, toRbsp } from './bitstream.js';

/** nal_unit_type, Table 7-1. */
export const NAL_SLICE = 1;
export const NAL_IDR = 5;
export const NAL_SPS = 7;
export const NAL_PPS = 8;
/** slice_type % 5, Table 7-6. */
const SLICE_P = 0;
const SLICE_I = 2;

export interface Sps {
  log2MaxFrameNum: number;
  pocType: number;
  log2MaxPocLsb: number;
  widthMbs: number;
  heightMbs: number;
}

export interface Pps {
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

/** profile_idc values whose SPS carries chroma format, bit depths and scaling matrices (7.3.2.1.1). */
const HIGH_PROFILES = new Set([100, 110, 122, 244, 44, 83, 86, 118, 128, 138, 139, 134, 135]);

/** seq_parameter_set_data, 7.3.2.1.1 (semantics 7.4.2.1.1). */
export function parseSps(rbsp: Uint8Array): { id: number; sps: Sps } {
  const reader = new BitReader(rbsp);
  const profile = reader.bits(8);
  reader.bits(16); // constraint flags, level (A.3: the output keeps the background's, set for the full picture)
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

/** pic_parameter_set_rbsp, 7.3.2.2 (semantics 7.4.2.2). */
export function parsePps(rbsp: Uint8Array, spsById: ReadonlyMap<number, Sps>): Pps {
  const reader = new BitReader(rbsp);
  const id = reader.ue();
  const sps = spsById.get(reader.ue());
  if (!sps) throw new H264Error('A picture parameter set refers to an unknown sequence parameter set');
  // CABAC slice data starts byte-aligned (cabac_alignment_one_bit, 7.3.4): it could not follow a rewritten header as is.
  if (reader.bit()) throw new H264Error('CABAC streams are not supported (encode with CAVLC)');
  const bottomFieldPicOrder = reader.bit() === 1;
  // Slice groups (FMO) are outside Constrained Baseline (A.2.1) anyway.
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
export interface Slice {
  nalRefIdc: number;
  /** Part of an IDR picture (nal_unit_type 5): I slices only, all references dropped before it (8.2.1). */
  idr: boolean;
  firstMb: number;
  type: typeof SLICE_P | typeof SLICE_I;
  refs: number;
  qp: number;
  deblocking: { idc: number; alpha: number; beta: number };
  rbsp: Uint8Array;
  dataStart: number;
  dataEnd: number;
}

/** slice_layer_without_partitioning_rbsp: slice_header, 7.3.3 (semantics 7.4.3). */
export function parseSlice(nal: Uint8Array, ppsById: ReadonlyMap<number, Pps>): Slice {
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
    // 7.3.3.1: the output lists every picture in order, so the default list (8.2.4.2.1: the latest first) must do.
    if (reader.bit()) throw new H264Error('Reference list modification is not supported');
  }
  // 7.3.3.3: the output marks by sliding window (8.2.5.3) only.
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
  // 8.7: with idc 0 the filter crosses slice edges, so a moved slice's edges would decode differently.
  if (deblocking.idc !== 1) throw new H264Error('Slices must be encoded without deblocking (x264 --no-deblock)');
  return { nalRefIdc, idr, firstMb, type: type as Slice['type'], refs, qp, deblocking, rbsp, dataStart: reader.position, dataEnd: reader.stopBit() };
}

/** Where a slice goes in the output: which picture, and its place in the picture order. */
export interface Placement {
  pps: Pps;
  idr: boolean;
  /** 7.4.3: two IDR pictures in a row must differ in idr_pic_id. */
  idrPicId: number;
  frameNum: number;
  pocLsb: number;
}

/**
 * A slice header for its new place (7.3.3), then the slice's own macroblock data bit for bit. first_mb_in_slice
 * (7.4.3) moves it down `rowShift` macroblock rows; its data decodes the same there, because intra prediction,
 * motion vector prediction and CAVLC's nC never look at a macroblock of another slice (6.4, 8.3, 8.4.1.3, 9.2.1).
 */
export function writeSlice(slice: Slice, placement: Placement, rowShift: number): Uint8Array {
  const { pps, idr } = placement;
  const writer = new BitWriter()
    .ue(slice.firstMb + rowShift * pps.sps.widthMbs)
    .ue(slice.type) // 0-4: the picture may mix I and P slices
    .ue(pps.id)
    .bits(placement.frameNum, pps.sps.log2MaxFrameNum);
  if (idr) writer.ue(placement.idrPicId);
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
  writer.bits(0, idr ? 2 : 1); // dec_ref_pic_marking (7.3.3.3): keep the sliding window
  writer.se(slice.qp - pps.initQp); // slice_qp_delta: the same QP against the output's pic_init_qp
  if (pps.deblockingControl) writer.ue(slice.deblocking.idc);
  writer.copy(slice.rbsp, slice.dataStart, slice.dataEnd);
  return toNal((slice.nalRefIdc << 5) | (idr ? NAL_IDR : NAL_SLICE), writer.toRbsp());
}

/**
 * A P slice over `count` macroblocks from `firstMb`, all skipped: its data is one mb_skip_run (7.3.4). Each P_Skip
 * macroblock takes the predicted motion vector (8.4.1.1), which is zero for the first (no neighbour of its slice is
 * available, 6.4) and so for all after it: the decoder repeats the previous picture there exactly.
 */
export function skipSlice(pps: Pps, firstMb: number, count: number): Slice {
  const data = new BitWriter().ue(count).toRbsp();
  // nal_ref_idc 2: a reference picture, so frame_num counts every frame (7.4.3) and no two in a row share a POC.
  return { nalRefIdc: 2, idr: false, firstMb, type: SLICE_P, refs: pps.defaultRefs, qp: pps.initQp, deblocking: { idc: 1, alpha: 0, beta: 0 }, rbsp: data, dataStart: 0, dataEnd: new BitReader(data).stopBit() };
}
