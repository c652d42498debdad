// ONNX Runtime's C API (onnxruntime_c_api.h) through koffi, on a library file of our choosing (PyPI's 1.32; see
// runtime.ts). Only engine hosts import this module: a fault in the library takes down that child, never the server.
import koffi from 'koffi';
import { OnnxRuntimeError, type OnnxRuntime, type OnnxSession, type SessionOptions, type Tensor } from './session.js';

/** The OrtApi version asked for: each entry used below is older, so 1.30's library answers it as well as 1.32's. */
const API_VERSION = 20;

/**
 * Positions in the OrtApi table, which only ever grows at its end (counted in the 1.29 header; the same entries
 * in 1.32, checked by calling them: a wrong one would crash the tests, not pass them).
 */
const ENTRY = {
  GetErrorCode: 1,
  GetErrorMessage: 2,
  CreateEnv: 3,
  DisableTelemetryEvents: 6,
  CreateSession: 7,
  CreateSessionFromArray: 8,
  Run: 9,
  CreateSessionOptions: 10,
  SetSessionExecutionMode: 13,
  DisableCpuMemArena: 19,
  SetSessionGraphOptimizationLevel: 23,
  SetIntraOpNumThreads: 24,
  SetInterOpNumThreads: 25,
  SessionGetInputCount: 30,
  SessionGetOutputCount: 31,
  SessionGetInputName: 36,
  SessionGetOutputName: 37,
  CreateTensorAsOrtValue: 48,
  GetTensorMutableData: 51,
  GetTensorElementType: 60,
  GetDimensionsCount: 61,
  GetDimensions: 62,
  GetTensorTypeAndShape: 65,
  AllocatorFree: 76,
  GetAllocatorWithDefaultOptions: 78,
  ReleaseStatus: 93,
  ReleaseSession: 95,
  ReleaseValue: 96,
  ReleaseTensorTypeAndShapeInfo: 99,
  ReleaseSessionOptions: 100,
  AddSessionConfigEntry: 130,
} as const;

const LOGGING_LEVEL_WARNING = 2;
const EXECUTION_MODE_SEQUENTIAL = 0;
const OPTIMIZATION_LEVELS: Record<SessionOptions['optimization'], number> = { disabled: 0, basic: 1, extended: 2, all: 99 };
const ELEMENT_TYPES = { float32: 1, int64: 7 } as const;
/**
 * Native code called through koffi runs on koffi's own stack, 128 KiB for an asynchronous call by default: too little
 * for a session's set-up and a run's kernels, so they get a thread's usual 8 MiB (allocated per call in flight).
 */
const ASYNC_STACK_BYTES = 8 * 1024 * 1024;

type Pointer = bigint;
type NativeFunction = ((...args: unknown[]) => unknown) & { async: (...args: unknown[]) => void };

const Status = (signature: string) => koffi.proto(`void *${signature}`);
const PROTOS = {
  GetErrorCode: koffi.proto('int OrtGetErrorCode(void *status)'),
  GetErrorMessage: koffi.proto('const char *OrtGetErrorMessage(void *status)'),
  CreateEnv: Status('OrtCreateEnv(int level, const char *id, void *env)'),
  DisableTelemetryEvents: Status('OrtDisableTelemetryEvents(void *env)'),
  CreateSession: Status('OrtCreateSession(void *env, const char *path, void *options, void *session)'),
  CreateSessionFromArray: Status('OrtCreateSessionFromArray(void *env, void *data, size_t length, void *options, void *session)'),
  Run: Status(
    'OrtRun(void *session, void *runOptions, const char **inputNames, void *inputs, size_t inputCount, const char **outputNames, size_t outputCount, void *outputs)',
  ),
  CreateSessionOptions: Status('OrtCreateSessionOptions(void *options)'),
  SetSessionExecutionMode: Status('OrtSetSessionExecutionMode(void *options, int mode)'),
  DisableCpuMemArena: Status('OrtDisableCpuMemArena(void *options)'),
  SetSessionGraphOptimizationLevel: Status('OrtSetSessionGraphOptimizationLevel(void *options, int level)'),
  SetIntraOpNumThreads: Status('OrtSetIntraOpNumThreads(void *options, int threads)'),
  SetInterOpNumThreads: Status('OrtSetInterOpNumThreads(void *options, int threads)'),
  SessionGetInputCount: Status('OrtSessionGetInputCount(void *session, void *count)'),
  SessionGetOutputCount: Status('OrtSessionGetOutputCount(void *session, void *count)'),
  SessionGetInputName: Status('OrtSessionGetInputName(void *session, size_t index, void *allocator, void *name)'),
  SessionGetOutputName: Status('OrtSessionGetOutputName(void *session, size_t index, void *allocator, void *name)'),
  CreateTensorAsOrtValue: Status('OrtCreateTensorAsOrtValue(void *allocator, void *shape, size_t rank, int type, void *value)'),
  GetTensorMutableData: Status('OrtGetTensorMutableData(void *value, void *data)'),
  GetTensorElementType: Status('OrtGetTensorElementType(void *info, void *type)'),
  GetDimensionsCount: Status('OrtGetDimensionsCount(void *info, void *count)'),
  GetDimensions: Status('OrtGetDimensions(void *info, void *dims, size_t count)'),
  GetTensorTypeAndShape: Status('OrtGetTensorTypeAndShape(void *value, void *info)'),
  AllocatorFree: Status('OrtAllocatorFree(void *allocator, void *pointer)'),
  GetAllocatorWithDefaultOptions: Status('OrtGetAllocatorWithDefaultOptions(void *allocator)'),
  AddSessionConfigEntry: Status('OrtAddSessionConfigEntry(void *options, const char *key, const char *value)'),
  ReleaseStatus: koffi.proto('void OrtReleaseStatus(void *p)'),
  ReleaseSession: koffi.proto('void OrtReleaseSession(void *p)'),
  ReleaseValue: koffi.proto('void OrtReleaseValue(void *p)'),
  ReleaseTensorTypeAndShapeInfo: koffi.proto('void OrtReleaseTensorTypeAndShapeInfo(void *p)'),
  ReleaseSessionOptions: koffi.proto('void OrtReleaseSessionOptions(void *p)'),
} satisfies Record<keyof typeof ENTRY, unknown>;
const GetApi = koffi.proto('void *OrtGetApi(uint32_t version)');
const GetVersionString = koffi.proto('const char *OrtGetVersionString()');

type Api = Record<keyof typeof ENTRY, NativeFunction>;

/** A pointer-sized output slot (the C API returns its objects through `T **` arguments). */
function slot(): BigUint64Array {
  return new BigUint64Array(1);
}

function first(out: BigUint64Array): bigint {
  return out[0] as bigint;
}

/** One library file, its OrtApi table and one OrtEnv: what every session of the process shares. */
export class OrtLibrary implements OnnxRuntime {
  readonly source = 'pypi';

  private constructor(
    private readonly api: Api,
    private readonly env: Pointer,
    private readonly allocator: Pointer,
    readonly version: string,
  ) {}

  /** Throws when the file cannot be loaded or is no ONNX Runtime (the caller falls back to onnxruntime-node). */
  static load(file: string): OrtLibrary {
    koffi.config({ ...koffi.config(), async_stack_size: ASYNC_STACK_BYTES });
    const library = koffi.load(file);
    const getApiBase = library.func('void *OrtGetApiBase()') as () => Pointer;
    const base = getApiBase();
    const [getApi, getVersion] = [0, 8].map((offset) => koffi.decode(base, offset, 'void *') as Pointer);
    const version = (koffi.decode(getVersion, GetVersionString) as () => string)();
    const table = (koffi.decode(getApi, GetApi) as (version: number) => Pointer)(API_VERSION);
    if (!table) throw new Error(`${file} (ONNX Runtime ${version}) does not offer the OrtApi version ${API_VERSION}`);
    const api = Object.fromEntries(
      Object.entries(ENTRY).map(([name, index]) => [name, koffi.decode(koffi.decode(table, index * 8, 'void *'), PROTOS[name as keyof typeof ENTRY])]),
    ) as Api;
    const check = statusChecker(api);
    const env = slot();
    // PyPI's build carries Microsoft's telemetry client (1DS): its events are turned off before any session exists.
    // (ORT_DISABLE_TELEMETRY=1, which keeps it from starting at all, makes 1.32 crash on the first session.)
    check(api.CreateEnv(LOGGING_LEVEL_WARNING, 'voxreel', env));
    check(api.DisableTelemetryEvents(first(env)));
    const allocator = slot();
    check(api.GetAllocatorWithDefaultOptions(allocator));
    return new OrtLibrary(api, first(env), first(allocator), version);
  }

  /** Set up on one of koffi's threads: the calling thread stays free while the graph is read and planned. */
  async createSession(model: string | Uint8Array, options: SessionOptions): Promise<OnnxSession> {
    const { api } = this;
    const check = statusChecker(api);
    const settings = slot();
    check(api.CreateSessionOptions(settings));
    const handle = slot();
    try {
      const set = first(settings);
      check(api.SetIntraOpNumThreads(set, options.threads));
      check(api.SetInterOpNumThreads(set, 1));
      check(api.SetSessionExecutionMode(set, EXECUTION_MODE_SEQUENTIAL));
      check(api.SetSessionGraphOptimizationLevel(set, OPTIMIZATION_LEVELS[options.optimization]));
      if (options.memoryArena === false) check(api.DisableCpuMemArena(set));
      // Idle intra-op threads sleep: as fast on an idle machine, far less CPU on a busy one (see piper/model.ts).
      check(api.AddSessionConfigEntry(set, 'session.intra_op.allow_spinning', '0'));
      check(
        await (typeof model === 'string'
          ? callAsync(api.CreateSession, this.env, model, set, handle)
          : callAsync(api.CreateSessionFromArray, this.env, model, model.byteLength, set, handle)),
      );
    } finally {
      api.ReleaseSessionOptions(first(settings));
    }
    const session = first(handle);
    try {
      return new OrtLibrarySession(api, this.allocator, session, this.names(session, 'input'), this.names(session, 'output'));
    } catch (error) {
      api.ReleaseSession(session);
      throw error;
    }
  }

  private names(session: Pointer, kind: 'input' | 'output'): string[] {
    const { api } = this;
    const check = statusChecker(api);
    const count = slot();
    check((kind === 'input' ? api.SessionGetInputCount : api.SessionGetOutputCount)(session, count));
    return Array.from({ length: Number(first(count)) }, (_, index) => {
      const name = slot();
      check((kind === 'input' ? api.SessionGetInputName : api.SessionGetOutputName)(session, index, this.allocator, name));
      try {
        return koffi.decode(first(name), 'char', -1) as string;
      } finally {
        check(api.AllocatorFree(this.allocator, first(name)));
      }
    });
  }
}

/** Throws an OrtStatus as an OnnxRuntimeError, after releasing it. */
function statusChecker(api: Api): (status: unknown) => void {
  return (status) => {
    if (!status) return;
    const code = api.GetErrorCode(status) as number;
    const message = api.GetErrorMessage(status) as string;
    api.ReleaseStatus(status);
    throw OnnxRuntimeError.fromCode(code, message);
  };
}

function callAsync(fn: NativeFunction, ...args: unknown[]): Promise<unknown> {
  return new Promise((resolve, reject) => fn.async(...args, (error: unknown, result: unknown) => (error ? reject(error) : resolve(result))));
}

class OrtLibrarySession implements OnnxSession {
  private readonly running = new Set<Promise<unknown>>();
  private released = false;

  constructor(
    private readonly api: Api,
    private readonly allocator: Pointer,
    private readonly session: Pointer,
    readonly inputNames: readonly string[],
    readonly outputNames: readonly string[],
  ) {}

  async run(feeds: Readonly<Record<string, Tensor>>, outputNames: readonly string[] = this.outputNames): Promise<Record<string, Tensor>> {
    if (this.released) throw new OnnxRuntimeError('FAIL', 'the session was released');
    const { api } = this;
    const check = statusChecker(api);
    const names = Object.keys(feeds);
    const inputs = new BigUint64Array(names.length);
    const outputs = new BigUint64Array(outputNames.length);
    const running = (async () => {
      names.forEach((name, index) => (inputs[index] = this.tensorValue(feeds[name] as Tensor)));
      check(await callAsync(api.Run, this.session, null, names, inputs, names.length, [...outputNames], outputNames.length, outputs));
      return Object.fromEntries(outputNames.map((name, index) => [name, this.tensorOf(outputs[index] as bigint)]));
    })();
    this.running.add(running);
    try {
      return await running;
    } finally {
      this.running.delete(running);
      for (const value of [...inputs, ...outputs]) if (value) api.ReleaseValue(value);
    }
  }

  /** After the runs in flight: a session released under a run would free what the run reads. */
  async release(): Promise<void> {
    if (this.released) return;
    this.released = true;
    await Promise.allSettled(this.running);
    this.api.ReleaseSession(this.session);
  }

  /** A tensor ONNX Runtime allocates, filled with the feed's data. */
  private tensorValue(tensor: Tensor): Pointer {
    // Dims that disagree with the data are the caller's error, said here rather than read past the data.
    if (tensor.dims.reduce((product, dim) => product * dim, 1) !== tensor.data.length) {
      throw new OnnxRuntimeError('INVALID_ARGUMENT', `a tensor of dims [${tensor.dims.join(', ')}] cannot hold ${tensor.data.length} values`);
    }
    const check = statusChecker(this.api);
    const value = slot();
    check(this.api.CreateTensorAsOrtValue(this.allocator, BigInt64Array.from(tensor.dims, BigInt), tensor.dims.length, ELEMENT_TYPES[tensor.type], value));
    try {
      if (tensor.data.length > 0) {
        const data = slot();
        check(this.api.GetTensorMutableData(first(value), data));
        const bytes = koffi.view(first(data), tensor.data.byteLength);
        if (tensor.type === 'int64') new BigInt64Array(bytes).set(tensor.data);
        else new Float32Array(bytes).set(tensor.data);
      }
    } catch (error) {
      this.api.ReleaseValue(first(value));
      throw error;
    }
    return first(value);
  }

  /** A copy of an output's data (its OrtValue is released after). */
  private tensorOf(value: Pointer): Tensor {
    const { api } = this;
    const check = statusChecker(api);
    const info = slot();
    check(api.GetTensorTypeAndShape(value, info));
    try {
      const type = new Int32Array(1);
      check(api.GetTensorElementType(first(info), type));
      const rank = slot();
      check(api.GetDimensionsCount(first(info), rank));
      const dimensions = new BigInt64Array(Number(first(rank)));
      check(api.GetDimensions(first(info), dimensions, dimensions.length));
      const dims = Array.from(dimensions, Number);
      const count = dims.reduce((product, dim) => product * dim, 1);
      const bytesPer = type[0] === ELEMENT_TYPES.float32 ? 4 : type[0] === ELEMENT_TYPES.int64 ? 8 : 0;
      if (bytesPer === 0) throw new OnnxRuntimeError('NOT_IMPLEMENTED', `an output of element type ${type[0]} (only float32 and int64 are read)`);
      const data = slot();
      if (count > 0) check(api.GetTensorMutableData(value, data));
      const copy = count > 0 ? koffi.view(first(data), count * bytesPer).slice(0) : new ArrayBuffer(0);
      return bytesPer === 4 ? { type: 'float32', data: new Float32Array(copy), dims } : { type: 'int64', data: new BigInt64Array(copy), dims };
    } finally {
      api.ReleaseTensorTypeAndShapeInfo(first(info));
    }
  }
}
