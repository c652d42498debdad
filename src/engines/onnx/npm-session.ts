// onnxruntime-node (npm's 1.30) behind the same session interface: the fallback where PyPI's library is absent.
import type ort from 'onnxruntime-node';
import { OnnxRuntimeError, type OnnxRuntime, type OnnxSession, type SessionOptions, type Tensor } from './session.js';

type Ort = typeof ort;

/** onnxruntime-node's errors carry no code: its message is kept, the code is FAIL. */
function typed(error: unknown): OnnxRuntimeError {
  return error instanceof OnnxRuntimeError ? error : new OnnxRuntimeError('FAIL', error instanceof Error ? error.message : String(error), { cause: error });
}

function tensorOf(value: ort.Tensor): Tensor {
  const dims = [...value.dims];
  if (value.data instanceof Float32Array) return { type: 'float32', data: value.data, dims };
  if (value.data instanceof BigInt64Array) return { type: 'int64', data: value.data, dims };
  throw new OnnxRuntimeError('NOT_IMPLEMENTED', `an output of type ${value.type} (only float32 and int64 are read)`);
}

export async function npmRuntime(): Promise<OnnxRuntime> {
  // Its ESM build has named exports only; its CommonJS build, under a default.
  const module = (await import('onnxruntime-node')) as Ort & { default?: Ort };
  const onnx = module.default ?? module;
  return {
    version: onnx.env.versions.common ?? 'unknown',
    source: 'npm',
    async createSession(model, options) {
      try {
        const settings = sessionOptions(options);
        const session = typeof model === 'string' ? await onnx.InferenceSession.create(model, settings) : await onnx.InferenceSession.create(model, settings);
        return new NpmSession(onnx, session);
      } catch (error) {
        throw typed(error);
      }
    },
  };
}

function sessionOptions({ threads, optimization }: SessionOptions): ort.InferenceSession.SessionOptions {
  return {
    intraOpNumThreads: threads,
    interOpNumThreads: 1,
    executionMode: 'sequential',
    graphOptimizationLevel: optimization,
    extra: { session: { intra_op: { allow_spinning: '0' } } },
  };
}

class NpmSession implements OnnxSession {
  constructor(
    private readonly onnx: Ort,
    private readonly session: ort.InferenceSession,
  ) {}

  get inputNames(): readonly string[] {
    return this.session.inputNames;
  }

  get outputNames(): readonly string[] {
    return this.session.outputNames;
  }

  async run(feeds: Readonly<Record<string, Tensor>>, outputNames?: readonly string[]): Promise<Record<string, Tensor>> {
    try {
      const inputs = Object.fromEntries(Object.entries(feeds).map(([name, { type, data, dims }]) => [name, new this.onnx.Tensor(type, data, dims)]));
      const outputs = await (outputNames ? this.session.run(inputs, outputNames) : this.session.run(inputs));
      return Object.fromEntries(Object.entries(outputs).map(([name, value]) => [name, tensorOf(value)]));
    } catch (error) {
      throw typed(error);
    }
  }

  release(): Promise<void> {
    return this.session.release();
  }
}
