// The Kokoro-82M model on an ONNX Runtime session (engines/onnx): tokens, a style vector and a speed in, 24 kHz audio
// and each token's frame count out. Lives in the Kokoro host (kokoro-host.ts), loaded once.
import type { OnnxRuntime, OnnxSession, SessionOptions } from '../onnx/session.js';
import { graphOutputSuffix, readWithSuffix } from '../piper/onnx-durations.js';
import { STYLE_SIZE } from './packs.js';

/**
 * The duration predictor's rounded frame counts (int64 [1, tokens]), which the export leaves internal: listed among
 * the graph's outputs in memory, as Piper's Ceil (piper/onnx-durations.ts). Each frame is SAMPLES_PER_FRAME samples.
 */
export const DURATIONS_TENSOR = '/encoder/Cast_output_0';
export const SAMPLES_PER_FRAME = 600;
/** The pad token at both ends of every inference. */
export const PAD = 0;

export interface KokoroInference {
  audio: Float32Array;
  /** Frames of each token, the pads' included; undefined when the graph did not give them. */
  frames: Float64Array | undefined;
}

/**
 * Optimizations off on 1.32, as Piper's graphs (piper/model.ts): on this int8 model the session's set-up then takes
 * about 0.5 s of CPU; `all` fuses little of its quantized convolutions and starts later. onnxruntime-node keeps `all`.
 */
function optimization(runtime: OnnxRuntime): SessionOptions['optimization'] {
  return runtime.source === 'pypi' ? 'disabled' : 'all';
}

export class KokoroModel {
  private constructor(
    private readonly session: OnnxSession,
    private readonly durations: boolean,
  ) {}

  /** `threads`: intra-op threads of each run. */
  static async load(modelPath: string, runtime: OnnxRuntime, threads: number): Promise<KokoroModel> {
    // Read straight into one buffer with the suffix: the 92 MB file is not held twice.
    const bytes = await readWithSuffix(modelPath, graphOutputSuffix(DURATIONS_TENSOR));
    // Without ONNX Runtime's arena on 1.32: a run's buffers go back to the system once the runs are over (idle-trim.ts).
    const session = await runtime.createSession(bytes, { threads, optimization: optimization(runtime), memoryArena: runtime.source !== 'pypi' });
    (globalThis as { gc?: () => void }).gc?.();
    return new KokoroModel(session, session.outputNames.includes(DURATIONS_TENSOR));
  }

  /** `ids`: the phoneme tokens without the pads (1 to PACK_ROWS of them); `style`: the pack's row for their count. */
  async infer(ids: readonly number[], style: Float32Array, speed: number): Promise<KokoroInference> {
    if (style.length !== STYLE_SIZE) throw new Error(`a style vector of ${style.length} values, not ${STYLE_SIZE}`);
    const tokens = BigInt64Array.from([PAD, ...ids, PAD], BigInt);
    const outputs = await this.session.run(
      {
        tokens: { type: 'int64', data: tokens, dims: [1, tokens.length] },
        style: { type: 'float32', data: style, dims: [1, STYLE_SIZE] },
        speed: { type: 'float32', data: Float32Array.of(speed), dims: [1] },
      },
      ['audio', ...(this.durations ? [DURATIONS_TENSOR] : [])],
    );
    const audio = outputs.audio?.data;
    if (!(audio instanceof Float32Array)) throw new Error('the model gave no float audio');
    const frames = outputs[DURATIONS_TENSOR]?.data;
    return { audio, frames: frames instanceof BigInt64Array && frames.length === tokens.length ? Float64Array.from(frames, Number) : undefined };
  }

  release(): Promise<void> {
    return this.session.release();
  }
}
