// One Piper voice model on onnxruntime-node: phoneme ids in, float audio and each id's frame count out.
import { open } from 'node:fs/promises';
import ort from 'onnxruntime-node';
import { graphOutputSuffix } from './onnx-durations.js';
import type { PiperModelSpec } from './protocol.js';

// One thread, run to completion: the service runs one job per process and as many processes as it has cores.
const SESSION_OPTIONS: ort.InferenceSession.SessionOptions = {
  intraOpNumThreads: 1,
  interOpNumThreads: 1,
  executionMode: 'sequential',
  graphOptimizationLevel: 'all',
};

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

/** The file and `suffix` in one buffer. */
async function readWithSuffix(file: string, suffix: Uint8Array): Promise<Uint8Array> {
  const handle = await open(file);
  try {
    const { size } = await handle.stat();
    const bytes = new Uint8Array(size + suffix.length);
    const { bytesRead } = await handle.read(bytes, 0, size, 0);
    if (bytesRead !== size) throw new Error(`${file} changed while it was read`);
    bytes.set(suffix, size);
    return bytes;
  } finally {
    await handle.close();
  }
}

export class PiperModel {
  private constructor(
    readonly spec: PiperModelSpec,
    private readonly session: ort.InferenceSession,
    private readonly durationsOutput: string | undefined,
  ) {}

  static async load(spec: PiperModelSpec): Promise<PiperModel> {
    // Only in memory: the voice's files stay as they were installed.
    const suffix = spec.durations && !spec.durations.isOutput ? graphOutputSuffix(spec.durations.name) : Buffer.alloc(0);
    const session = await ort.InferenceSession.create(await readWithSuffix(spec.modelPath, suffix), SESSION_OPTIONS);
    // onnxruntime keeps its own copy: the file's bytes (60 to 120 MB) need not wait for some later collection.
    (globalThis as { gc?: () => void }).gc?.();
    const durationsOutput = spec.durations && session.outputNames.includes(spec.durations.name) ? spec.durations.name : undefined;
    return new PiperModel(spec, session, durationsOutput);
  }

  async infer(ids: readonly number[], scales: Scales, speakerId: number): Promise<Inference> {
    const feeds: Record<string, ort.Tensor> = {
      input: new ort.Tensor('int64', BigInt64Array.from(ids, BigInt), [1, ids.length]),
      input_lengths: new ort.Tensor('int64', BigInt64Array.of(BigInt(ids.length)), [1]),
      scales: new ort.Tensor('float32', Float32Array.of(scales.noise, scales.length, scales.noiseW), [3]),
    };
    if (this.spec.multiSpeaker) feeds.sid = new ort.Tensor('int64', BigInt64Array.of(BigInt(speakerId)), [1]);
    const outputs = await this.session.run(feeds);
    const audio = outputs.output?.data;
    if (!(audio instanceof Float32Array)) throw new Error('the model gave no float audio');
    const frames = this.durationsOutput ? outputs[this.durationsOutput]?.data : undefined;
    return { audio, frames: frames instanceof Float32Array && frames.length === ids.length ? frames : undefined };
  }

  release(): Promise<void> {
    return this.session.release();
  }
}
