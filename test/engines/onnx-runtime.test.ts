// The ONNX Runtime binding (src/engines/onnx) on PyPI's 1.32 library, in this process: sessions, and errors as values.
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_ONNXRUNTIME_LIBRARY, loadOnnxRuntime, ORT_HOST_ENV, PYPI_ONNXRUNTIME_VERSION } from '../../src/engines/onnx/runtime.js';
import { OnnxRuntimeError, type OnnxRuntime, type OnnxSession, type Tensor } from '../../src/engines/onnx/session.js';
import { useTempDir } from '../helpers/temp-dir.js';
import { readModelGraph, splitGraph } from '../../src/engines/onnx/graph-split.js';
import { seedNoise } from '../../src/engines/onnx/seeded-noise.js';
import { graphOutputSuffix } from '../../src/engines/piper/onnx-durations.js';
import { AUDIO_OUTPUT, CONTEXT_FRAMES, WINDOW_FRAMES, decodeInWindows, decoderInput, splitAtDecoder } from '../../src/engines/piper/decoder-windows.js';

const MODEL = fileURLToPath(new URL('../../voices/en_US-joe-medium.onnx', import.meta.url));
const installed = existsSync(DEFAULT_ONNXRUNTIME_LIBRARY) && existsSync(MODEL);
// Under CI a missing library or voice fails here rather than passing unseen.
const run = installed || Boolean(process.env.CI);
// This process loads the library itself: cleared as a host's environment is (runtime.ts, ORT_HOST_ENV), or under
// CI=1 it is killed by SIGSEGV on its first one-thread run.
Object.assign(process.env, ORT_HOST_ENV);
if (!installed) console.warn(`onnx-runtime.test.ts skipped: ${DEFAULT_ONNXRUNTIME_LIBRARY} or ${MODEL} is missing; script/setup installs both.`);

const IDS = [1, 0, 20, 0, 59, 0, 27, 0, 100, 0, 3, 0, 25, 0, 61, 0, 2];

/** The library, loaded once for the whole file (a process loads it once: a second load falls back to onnxruntime-node's). */
let loading: ReturnType<typeof loadOnnxRuntime> | undefined;
const loadOnce = () => (loading ??= loadOnnxRuntime(undefined));

function piperFeeds(ids: readonly number[]): Record<string, Tensor> {
  return {
    input: { type: 'int64', data: BigInt64Array.from(ids, BigInt), dims: [1, ids.length] },
    input_lengths: { type: 'int64', data: BigInt64Array.of(BigInt(ids.length)), dims: [1] },
    scales: { type: 'float32', data: Float32Array.of(0, 1, 0), dims: [3] },
  };
}

/** The promise's rejection, which must be an OnnxRuntimeError. */
async function ortError(promise: Promise<unknown>): Promise<OnnxRuntimeError> {
  const error: unknown = await promise.then(
    () => undefined,
    (reason: unknown) => reason,
  );
  expect(error).toBeInstanceOf(OnnxRuntimeError);
  return error as OnnxRuntimeError;
}

describe.runIf(run)('ONNX Runtime 1.32 through koffi', () => {
  const dir = useTempDir('voxreel-onnx-');
  let runtime: OnnxRuntime;
  let session: OnnxSession;

  beforeAll(async () => {
    const loaded = await loadOnce();
    expect(loaded.info).toEqual({ version: PYPI_ONNXRUNTIME_VERSION, source: 'pypi', fallback: null });
    runtime = loaded.runtime;
    session = await runtime.createSession(MODEL, { threads: 1, optimization: 'disabled' });
  });

  afterAll(() => session?.release());

  it("names the model's inputs and outputs", () => {
    expect(session.inputNames).toEqual(['input', 'input_lengths', 'scales']);
    expect(session.outputNames).toEqual(['output']);
  });

  it('speaks: the same audio for the same ids (no noise), overlapping runs included', async () => {
    const [first, second] = await Promise.all([session.run(piperFeeds(IDS)), session.run(piperFeeds(IDS))]);
    const audio = first?.output;
    expect(audio?.type).toBe('float32');
    expect(audio?.dims.slice(0, 3)).toEqual([1, 1, 1]);
    expect(audio?.data.length).toBe(audio?.dims[3]);
    // About 60 ms a phoneme: not silence, not a stub.
    expect(audio?.data.length).toBeGreaterThan(IDS.length * 600);
    const peak = (audio?.data as Float32Array).reduce((max, sample) => Math.max(max, Math.abs(sample)), 0);
    expect(peak).toBeGreaterThan(0.05);
    expect(second?.output?.data).toEqual(audio?.data);
  });

  it('reads a model from bytes as from its file', async () => {
    const fromBytes = await runtime.createSession(await readFile(MODEL), { threads: 1, optimization: 'all' });
    try {
      const [a, b] = [await fromBytes.run(piperFeeds(IDS)), await session.run(piperFeeds(IDS))];
      expect(a.output?.data.length).toBe(b.output?.data.length);
    } finally {
      await fromBytes.release();
    }
  });

  it('a missing model file is an OnnxRuntimeError NO_SUCHFILE', async () => {
    const error = await ortError(runtime.createSession(path.join(dir, 'missing.onnx'), { threads: 1, optimization: 'disabled' }));
    expect(error.code).toBe('NO_SUCHFILE');
  });

  it('corrupt model bytes are an OnnxRuntimeError INVALID_PROTOBUF', async () => {
    const bytes = (await readFile(MODEL)).subarray(0, 4096);
    bytes.fill(0xff, 16);
    const error = await ortError(runtime.createSession(bytes, { threads: 1, optimization: 'disabled' }));
    expect(error.code).toBe('INVALID_PROTOBUF');
  });

  it('a wrong input name, type or shape is an OnnxRuntimeError INVALID_ARGUMENT, and the session still runs', async () => {
    const feeds = piperFeeds(IDS);
    const misnamed: Record<string, Tensor> = { ...feeds, text: feeds.input as Tensor };
    delete misnamed.input;
    expect((await ortError(session.run(misnamed))).code).toBe('INVALID_ARGUMENT');
    const mistyped = { ...feeds, scales: { type: 'int64', data: BigInt64Array.of(0n, 1n, 0n), dims: [3] } as Tensor };
    expect((await ortError(session.run(mistyped))).code).toBe('INVALID_ARGUMENT');
    const misshaped = { ...feeds, input: { type: 'int64', data: BigInt64Array.from(IDS, BigInt), dims: [IDS.length] } as Tensor };
    expect((await ortError(session.run(misshaped))).code).toBe('INVALID_ARGUMENT');
    const short = { ...feeds, input: { type: 'int64', data: BigInt64Array.of(1n), dims: [1, IDS.length] } as Tensor };
    expect((await ortError(session.run(short))).message).toMatch(/cannot hold 1 values/);
    expect((await ortError(session.run(feeds, ['nothing']))).code).toBe('INVALID_ARGUMENT');
    expect((await session.run(feeds)).output?.data.length).toBeGreaterThan(0);
  });

  it('a released session refuses to run', async () => {
    const other = await runtime.createSession(MODEL, { threads: 1, optimization: 'disabled' });
    const running = other.run(piperFeeds(IDS));
    await other.release();
    expect((await running).output?.data.length).toBeGreaterThan(0);
    await ortError(other.run(piperFeeds(IDS)));
  });
});

describe.runIf(run)('Piper\'s decoder in windows, on 1.32 in this process', () => {
  /** About 880 ids of made-up phonemes, blanks between as Piper puts them: some 1700 frames of latent. */
  const ids = [1, ...Array.from({ length: 440 }, (_, index) => [0, 3 + ((index * 37) % 120)]).flat(), 0, 2];
  const feeds: Record<string, Tensor> = {
    input: { type: 'int64', data: BigInt64Array.from(ids, BigInt), dims: [1, ids.length] },
    input_lengths: { type: 'int64', data: BigInt64Array.of(BigInt(ids.length)), dims: [1] },
    scales: { type: 'float32', data: Float32Array.of(0.667, 1, 0.8), dims: [3] },
  };
  const options = { threads: 1, optimization: 'disabled', memoryArena: false } as const;
  const maxDifference = (a: Float32Array, b: Float32Array) => a.reduce((max, value, index) => Math.max(max, Math.abs(value - (b[index] ?? Infinity))), 0);

  it('cuts the model at its decoder, and decodes a long latent window by window as the whole model does', async () => {
    const { runtime } = await loadOnce();
    const { model } = seedNoise(await readFile(MODEL));
    const split = splitAtDecoder(model);
    expect(split?.latent).toBe('/Mul_7_output_0');
    if (!split) return;
    // The decoder's weights went with it: the front is the smaller model by them.
    expect(split.back.length).toBeLessThan(model.length / 5);
    expect(split.front.length + split.back.length).toBeLessThan(model.length + 64 * 1024);
    const whole = await runtime.createSession(model, options);
    const front = await runtime.createSession(split.front, options);
    const back = await runtime.createSession(split.back, options);
    try {
      const expected = (await whole.run(feeds, [AUDIO_OUTPUT]))[AUDIO_OUTPUT]?.data as Float32Array;
      const latent = (await front.run(feeds, [split.latent]))[split.latent] as Tensor;
      const frames = latent.dims[2] ?? 0;
      expect(frames).toBeGreaterThan(6 * WINDOW_FRAMES);
      const windows: number[] = [];
      const audio = await decodeInWindows(latent, async (window) => {
        windows.push(window.dims[2] ?? 0);
        return (await back.run({ [split.latent]: window }, [AUDIO_OUTPUT]))[AUDIO_OUTPUT]?.data as Float32Array;
      });
      expect(windows.length).toBe(Math.ceil(frames / WINDOW_FRAMES));
      expect(Math.max(...windows)).toBe(WINDOW_FRAMES + 2 * CONTEXT_FRAMES);
      expect(audio.length).toBe(expected.length);
      expect(audio.length).toBe(frames * 256);
      expect(Math.sqrt(audio.reduce((sum, value) => sum + value * value, 0) / audio.length)).toBeGreaterThan(0.01);
      // The same samples as the model not cut, but for float rounding (measured: 2e-9 at most).
      expect(maxDifference(audio, expected)).toBeLessThan(1e-6);
    } finally {
      await Promise.all([whole, front, back].map((session) => session.release()));
    }
  });

  it('leaves a model whole where the cut would not stand', async () => {
    const graph = readModelGraph(seedNoise(await readFile(MODEL)).model);
    expect(splitGraph(graph, 'no such tensor', [AUDIO_OUTPUT])).toBeUndefined();
    expect(splitGraph(graph, '/Mul_7_output_0', ['no such output'])).toBeUndefined();
    // A cut early in the graph would leave most of it to the back, run once a window.
    expect(splitGraph(graph, '/enc_p/emb/Gather_output_0', [AUDIO_OUTPUT])).toBeUndefined();
    expect(splitAtDecoder(Buffer.from([0x3a, 0xff, 0xff]))).toBeUndefined();
    expect(decoderInput(readModelGraph(graphOutputSuffix('frames')))).toBeUndefined();
  });
});
