// Worker thread entry of a Piper host: the voices' ONNX Runtime sessions (engines/onnx), inferences in order of
// arrival, so the host's main thread stays free to phonemize the next sentences and to answer its parent.
import { parentPort, workerData } from 'node:worker_threads';
import { OnnxRuntimeError, type OrtErrorCode } from '../onnx/session.js';
import { IdleTrim } from '../onnx/idle-trim.js';
import { loadOnnxRuntime, type OnnxRuntimeInfo } from '../onnx/runtime.js';
import { PiperModel, type Scales, type SessionSpec } from './model.js';

export type ThreadRequest =
  | { kind: 'load'; id: number; model: SessionSpec }
  | { kind: 'release'; modelPath: string }
  | { kind: 'infer'; id: number; modelPath: string; ids: number[]; scales: Scales; speakerId: number };

export type ThreadReply =
  | { id: number; audio: Float32Array; frames: Float32Array | undefined }
  | { id: number; loaded: true }
  /** `code`: ONNX Runtime's, when the error was its. */
  | { id: number; error: string; code?: OrtErrorCode }
  /** Sent once, first: the runtime the sessions run on, and how many inferences run at once on it. */
  | { id: 0; runtime: OnnxRuntimeInfo; inFlight: number };

export interface ThreadData {
  /** The cores the host may use. */
  threads: number;
  /** ONNXRUNTIME_LIBRARY: a library file, or `npm`; none, the installed one. */
  library: string | undefined;
}

const port = parentPort;
if (!port) throw new Error('inference-thread.ts runs as a worker thread of piper-host.ts');
const { threads, library } = workerData as ThreadData;
const loaded = await loadOnnxRuntime(library);
/**
 * PyPI's runtime runs inferences side by side (koffi calls Run on threads of its own), each session on the host's
 * cores as intra-op threads, as piper-tts and wyoming-piper run theirs. Measured on en_US-joe-medium, two runs at
 * once, one intra-op thread a session against two (quiet machine, fresh processes): a lone short sentence 142-174
 * against 86-126 ms, the first sentence of a long text 227-267 against 239-423 ms, 6 sentences 1150-1305 against
 * 1278-1590 ms (one run at a time on two threads: 1858). One thread a run is some 11 % faster on a long text; two
 * answer a lone sentence (Home Assistant's commands, a stream's first audio) in two thirds of the time, which is
 * what a user waits for. A second session kept for lone runs would cost about 100 MB more resident (measured).
 * onnxruntime-node holds this thread for each run: one at a time on all the threads, as before.
 */
const parallel = loaded.runtime.source === 'pypi';
port.postMessage({ id: 0, runtime: loaded.info, inFlight: parallel ? threads : 1 } satisfies ThreadReply);
const models = new Map<string, Promise<PiperModel>>();
/** A run's buffers go back to the system once the runs are over (the sessions run without ONNX Runtime's arena). */
const idle = new IdleTrim();

function modelOf(modelPath: string): Promise<PiperModel> {
  return models.get(modelPath) ?? Promise.reject(new Error(`no model loaded from ${modelPath}`));
}

async function answer(request: ThreadRequest): Promise<ThreadReply | undefined> {
  switch (request.kind) {
    case 'load': {
      if (!models.has(request.model.modelPath)) {
        const loading = PiperModel.load(request.model, loaded.runtime, threads);
        loading.catch(() => models.delete(request.model.modelPath));
        models.set(request.model.modelPath, loading);
      }
      await modelOf(request.model.modelPath);
      return { id: request.id, loaded: true };
    }
    case 'release': {
      const model = models.get(request.modelPath);
      models.delete(request.modelPath);
      await model?.then((loaded) => loaded.release());
      return undefined;
    }
    case 'infer': {
      const model = await modelOf(request.modelPath);
      const { audio, frames } = await idle.during(() => model.infer(request.ids, request.scales, request.speakerId));
      return { id: request.id, audio, frames };
    }
  }
}

port.on('message', (request: ThreadRequest) => {
  answer(request).then(
    (reply) => {
      if (!reply) return;
      // Moved, not copied: the outputs are this thread's own buffers.
      const buffers = 'audio' in reply ? [reply.audio.buffer, ...(reply.frames ? [reply.frames.buffer] : [])] : [];
      port.postMessage(reply, buffers as ArrayBuffer[]);
    },
    (error: unknown) => {
      if (!('id' in request)) return;
      const message = error instanceof Error ? error.message : String(error);
      port.postMessage({ id: request.id, error: message, ...(error instanceof OnnxRuntimeError ? { code: error.code } : {}) } satisfies ThreadReply);
    },
  );
});
