// What every ONNX Runtime backend offers a model (Piper's voices, next Kokoro's): named tensors in, named tensors out.

export type Tensor = { type: 'int64'; data: BigInt64Array; dims: readonly number[] } | { type: 'float32'; data: Float32Array; dims: readonly number[] };

export interface OnnxSession {
  readonly inputNames: readonly string[];
  readonly outputNames: readonly string[];
  /** Every output when `outputNames` is left out. Calls may overlap: ONNX Runtime allows concurrent runs of one session. */
  run(feeds: Readonly<Record<string, Tensor>>, outputNames?: readonly string[]): Promise<Record<string, Tensor>>;
  release(): Promise<void>;
}

export interface SessionOptions {
  /** Intra-op threads of each run (1: a run stays on the thread that calls it). */
  threads: number;
  /** ONNX Runtime's graph optimization level; `disabled` starts fastest (see runtime.ts for when that is a loss). */
  optimization: 'disabled' | 'basic' | 'extended' | 'all';
  /**
   * ONNX Runtime's CPU memory arena (on unless false): it keeps the largest run's buffers for the next, so a process
   * stays at its peak; without it a run's buffers go back to the allocator when it ends.
   */
  memoryArena?: boolean;
}

/** Where the runtime in use came from: PyPI's library through voxreel's binding, or onnxruntime-node's. */
export type RuntimeSource = 'pypi' | 'npm';

export interface OnnxRuntime {
  readonly version: string;
  readonly source: RuntimeSource;
  /** A model from its file or its bytes (the bytes may be dropped once this resolves: the session keeps its own copy). */
  createSession(model: string | Uint8Array, options: SessionOptions): Promise<OnnxSession>;
}

/** OrtErrorCode's names (onnxruntime_c_api.h); `FAIL` also stands for errors onnxruntime-node gives without a code. */
export const ORT_ERROR_CODES = [
  'OK',
  'FAIL',
  'INVALID_ARGUMENT',
  'NO_SUCHFILE',
  'NO_MODEL',
  'ENGINE_ERROR',
  'RUNTIME_EXCEPTION',
  'INVALID_PROTOBUF',
  'MODEL_LOADED',
  'NOT_IMPLEMENTED',
  'INVALID_GRAPH',
  'EP_FAIL',
  'MODEL_LOAD_CANCELED',
  'MODEL_REQUIRES_COMPILATION',
  'NOT_FOUND',
] as const;
export type OrtErrorCode = (typeof ORT_ERROR_CODES)[number];

/** An OrtStatus (or onnxruntime-node's error) as a value: the call failed, the process goes on. */
export class OnnxRuntimeError extends Error {
  override readonly name = 'OnnxRuntimeError';

  constructor(
    readonly code: OrtErrorCode,
    message: string,
    options?: ErrorOptions,
  ) {
    super(message, options);
  }

  static fromCode(code: number, message: string): OnnxRuntimeError {
    return new OnnxRuntimeError(ORT_ERROR_CODES[code] ?? 'FAIL', message);
  }
}
