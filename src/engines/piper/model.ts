// One Piper voice model on an ONNX Runtime session (engines/onnx): phoneme ids in, float audio and each id's frame
// count out. Used on the host's inference thread (inference-thread.ts), the only place a session lives.
import type { OnnxRuntime, OnnxSession, SessionOptions, Tensor } from '../onnx/session.js';
import { graphOutputSuffix, readWithSuffix } from './onnx-durations.js';
import { seedNoise } from '../onnx/seeded-noise.js';
import { AUDIO_OUTPUT, decodeInWindows, splitAtDecoder } from './decoder-windows.js';
import type { PiperModelSpec } from './protocol.js';

/** What the inference thread needs of a voice. */
export type SessionSpec = Pick<PiperModelSpec, 'modelPath' | 'durations' | 'multiSpeaker'>;

export interface Scales {
  noise: number;
  length: number;
  noiseW: number;
}

export interface Inference {
  audio: Float32Array;
  /** Frames each id lasts, or undefined without durations. */
  frames: Float32Array | undefined;
}

/**
 * Piper's VITS graphs are set up on 1.32 with ONNX Runtime's graph optimizations off: on en_US-joe-medium (medians
 * of 4 interleaved fresh processes, one intra-op thread, 3 sentences of 60 to 180 ids, CPU ms) the session's set-up
 * takes 215 ms instead of 550 (`all`) or 625 (`extended`), while a round of the 3 sentences takes 895 against 851 and
 * 886: within the noise of a shared machine. onnxruntime-node's 1.30 keeps `all` (its set-up cost is its allocation
 * planner's, which no option removes). Another kind of model (Kokoro) measures its own.
 */
function optimization(runtime: OnnxRuntime): SessionOptions['optimization'] {
  return runtime.source === 'pypi' ? 'disabled' : 'all';
}

/** The model's decoder as a session of its own (decoder-windows.ts), and the latent it starts from. */
interface Decoder {
  session: OnnxSession;
  latent: string;
}

export class PiperModel {
  private constructor(
    readonly spec: SessionSpec,
    /** The whole model, or all of it before its decoder when `decoder` is set. */
    private readonly session: OnnxSession,
    private readonly decoder: Decoder | undefined,
    private readonly durationsOutput: string | undefined,
  ) {}

  /** `threads`: intra-op threads of each run (see inference-thread.ts for how many run at once). */
  static async load(spec: SessionSpec, runtime: OnnxRuntime, threads: number): Promise<PiperModel> {
    // Only in memory: the voice's files stay as they were installed.
    const suffix = spec.durations && !spec.durations.isOutput ? graphOutputSuffix(spec.durations.name) : Buffer.alloc(0);
    // Runs side by side on 1.32 without ONNX Runtime's arena, which would keep both runs' peak for good (a host at
    // about 600 MB after speaking): their buffers go back to the system when the runs are over (idle-trim.ts).
    const options: SessionOptions = { threads, optimization: optimization(runtime), memoryArena: runtime.source !== 'pypi' };
    // Its noise from a fixed table (seeded-noise.ts): a sentence comes out the same in every run and every process.
    const { model } = seedNoise(await readWithSuffix(spec.modelPath, suffix));
    // Its decoder apart, run in windows of the latent: a long sentence's peak stays small (decoder-windows.ts).
    const split = splitAtDecoder(model);
    const session = await runtime.createSession(split?.front ?? model, options);
    const decoder = split && { session: await runtime.createSession(split.back, options), latent: split.latent };
    // onnxruntime keeps its own copy: the file's bytes (60 to 120 MB) need not wait for some later collection.
    (globalThis as { gc?: () => void }).gc?.();
    const durationsOutput = spec.durations && session.outputNames.includes(spec.durations.name) ? spec.durations.name : undefined;
    return new PiperModel(spec, session, decoder, durationsOutput);
  }

  async infer(ids: readonly number[], scales: Scales, speakerId: number): Promise<Inference> {
    const feeds: Record<string, Tensor> = {
      input: { type: 'int64', data: BigInt64Array.from(ids, BigInt), dims: [1, ids.length] },
      input_lengths: { type: 'int64', data: BigInt64Array.of(BigInt(ids.length)), dims: [1] },
      scales: { type: 'float32', data: Float32Array.of(scales.noise, scales.length, scales.noiseW), dims: [3] },
    };
    if (this.spec.multiSpeaker) feeds.sid = { type: 'int64', data: BigInt64Array.of(BigInt(speakerId)), dims: [1] };
    const durations = this.durationsOutput ? [this.durationsOutput] : [];
    const outputs = await this.session.run(feeds, [this.decoder?.latent ?? AUDIO_OUTPUT, ...durations]);
    const audio = this.decoder ? await this.decode(this.decoder, outputs[this.decoder.latent], feeds) : outputs[AUDIO_OUTPUT]?.data;
    if (!(audio instanceof Float32Array)) throw new Error('the model gave no float audio');
    const frames = this.durationsOutput ? outputs[this.durationsOutput]?.data : undefined;
    return { audio, frames: frames instanceof Float32Array && frames.length === ids.length ? frames : undefined };
  }

  /** The latent's audio, window by window; the decoder gets the model's inputs it reads (a speaker's id) as they were. */
  private decode(decoder: Decoder, latent: Tensor | undefined, feeds: Readonly<Record<string, Tensor>>): Promise<Float32Array> {
    if (!latent) throw new Error('the model gave no latent');
    const inputs = Object.fromEntries(Object.entries(feeds).filter(([name]) => decoder.session.inputNames.includes(name)));
    return decodeInWindows(latent, async (window) => {
      const audio = (await decoder.session.run({ ...inputs, [decoder.latent]: window }, [AUDIO_OUTPUT]))[AUDIO_OUTPUT]?.data;
      if (!(audio instanceof Float32Array)) throw new Error('the decoder gave no float audio');
      return audio;
    });
  }

  async release(): Promise<void> {
    await Promise.all([this.session.release(), this.decoder?.session.release()]);
  }
}
