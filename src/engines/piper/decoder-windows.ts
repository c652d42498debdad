// A Piper (VITS) voice decodes its latent speech (192 channels a frame, 256 samples a frame for the medium voices)
// into audio with a HiFi-GAN generator whose activations grow with the frames decoded at once: a sentence of 400
// phoneme ids (some 860 frames, 10 s) took 335 MB above the model for its decoder alone, and a host running two at
// once grew past 1 GB over a long job. The model is cut at the decoder's input (onnx/graph-split.ts) and the latent
// decoded in windows of WINDOW_FRAMES, each with CONTEXT_FRAMES of the latent on both sides that are decoded and cut
// off again. The generator's reach is short (its convolutions span a few frames), so the samples come out the same as
// decoding the whole: measured on en_US-joe-medium with ONNX Runtime 1.32 (graph optimizations off, one thread), 862
// frames decoded whole and in windows of 96 or 128 frames with 16 of context gave identical samples (64 with 16:
// 3e-7 apart at most; with 8: 7e-4), the decoder's peak 335 MB whole, 66 MB in windows of 128, 0.87 s either way.
import { readModelGraph, splitGraph, type ModelGraph, type SplitModel } from '../onnx/graph-split.js';
import { MalformedMessage } from '../onnx/protobuf.js';
import type { Tensor } from '../onnx/session.js';

/** Frames of latent each decoder run keeps. */
export const WINDOW_FRAMES = 128;
/** Frames of latent decoded on each side of a window for context, then dropped. */
export const CONTEXT_FRAMES = 16;
/** The weight of a Piper decoder's first convolution, as piper_train's export names it. */
const DECODER_FIRST_WEIGHT = 'dec.conv_pre.weight';
/** A Piper model's audio output. */
export const AUDIO_OUTPUT = 'output';

/** The tensor a Piper model's decoder starts from (the input of its first convolution), when the model names it so. */
export function decoderInput(graph: ModelGraph): string | undefined {
  const first = graph.nodes.filter((node) => node.opType === 'Conv' && node.inputs[1] === DECODER_FIRST_WEIGHT);
  return first.length === 1 ? first[0]?.inputs[0] : undefined;
}

/** The model cut at its decoder's input (front: latent and durations; back: the latent's audio), or none when it cannot be. */
export function splitAtDecoder(model: Uint8Array): (SplitModel & { latent: string }) | undefined {
  try {
    const graph = readModelGraph(model);
    const latent = decoderInput(graph);
    const split = latent ? splitGraph(graph, latent, [AUDIO_OUTPUT]) : undefined;
    return split && latent ? { ...split, latent } : undefined;
  } catch (error) {
    // Bytes that do not parse load whole, for ONNX Runtime to say what is wrong with them.
    if (error instanceof MalformedMessage) return undefined;
    throw error;
  }
}

/** Frames [from, to) of a [1, channels, frames] float latent, as a tensor of its own. */
function framesOf(latent: Float32Array, channels: number, frames: number, from: number, to: number): Tensor {
  const width = to - from;
  const data = new Float32Array(channels * width);
  for (let channel = 0; channel < channels; channel++) data.set(latent.subarray(channel * frames + from, channel * frames + to), channel * width);
  return { type: 'float32', data, dims: [1, channels, width] };
}

/** The audio of a [1, channels, frames] latent, decoded by `decode` window by window, in order. */
export async function decodeInWindows(latent: Tensor, decode: (window: Tensor) => Promise<Float32Array>): Promise<Float32Array> {
  const [batch, channels = 0, frames = 0] = latent.dims;
  if (latent.type !== 'float32' || batch !== 1 || latent.dims.length !== 3) throw new Error(`a latent of shape [${latent.dims.join(', ')}]`);
  if (frames <= WINDOW_FRAMES + CONTEXT_FRAMES) return decode(latent);
  let audio: Float32Array | undefined;
  for (let start = 0; start < frames; start += WINDOW_FRAMES) {
    const end = Math.min(frames, start + WINDOW_FRAMES);
    const from = Math.max(0, start - CONTEXT_FRAMES);
    const to = Math.min(frames, end + CONTEXT_FRAMES);
    const decoded = await decode(framesOf(latent.data, channels, frames, from, to));
    const hop = decoded.length / (to - from);
    if (!Number.isInteger(hop) || (audio && audio.length !== frames * hop)) throw new Error(`the decoder gave ${decoded.length} samples for ${to - from} frames`);
    audio ??= new Float32Array(frames * hop);
    audio.set(decoded.subarray((start - from) * hop, (end - from) * hop), start * hop);
  }
  return audio ?? new Float32Array(0);
}
