// One Piper voice model on onnxruntime-node: phoneme ids in, float audio and each id's frame count out. Used on the
// host's inference thread (inference-thread.ts), the only place a session lives.
import { open } from 'node:fs/promises';
import ort from 'onnxruntime-node';
import { graphOutputSuffix } from './onnx-durations.js';
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
 * One run at a time on `threads` threads (onnxruntime-node's run holds its JS thread). Idle threads sleep instead of
 * spinning: as fast on an idle machine, and on a busy one spinning took 10 CPU seconds for 80 s of audio instead of 7.
 */
function sessionOptions(threads: number): ort.InferenceSession.SessionOptions {
  return {
    intraOpNumThreads: threads,
    interOpNumThreads: 1,
    executionMode: 'sequential',
    graphOptimizationLevel: 'all',
    extra: { session: { intra_op: { allow_spinning: '0' } } },
  };
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
    readonly spec: SessionSpec,
    private readonly session: ort.InferenceSession,
    private readonly durationsOutput: string | undefined,
  ) {}

  static async load(spec: SessionSpec, threads: number): Promise<PiperModel> {
    // Only in memory: the voice's files stay as they were installed.
    const suffix = spec.durations && !spec.durations.isOutput ? graphOutputSuffix(spec.durations.name) : Buffer.alloc(0);
    const session = await ort.InferenceSession.create(await readWithSuffix(spec.modelPath, suffix), sessionOptions(threads));
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
