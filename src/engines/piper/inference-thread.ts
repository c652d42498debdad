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
 * PyPI's runtime runs inferences side by side, each on one intra-op thread (koffi calls Run on threads of its own):
 * on en_US-joe-medium (6 sentences of 60 to 150 ids, medians of 3 interleaved processes on a shared 2-core machine)
 * two at once took 1239 ms against 1858 for one at a time on two intra-op threads and 1624 on one. Two intra-op
 * threads with two runs at once (measured again, quiet machine, 3 fresh processes each; one thread / two): a lone
 * short sentence 152-174 / 97-126 ms, the first sentence of a long text 240-267 / 322-423 ms, the whole text
 * 1257-1305 / 1425-1590 ms, /tts of 730 characters against piper-tts's synthesize_wav 1.05 / about 0.9 of its
 * speed: one thread a run, except for a lone sentence's latency. A second session on two threads for lone runs
 * would cost about 100 MB more resident (measured); it needs the weights shared between the two first.
 * onnxruntime-node holds this thread for each run: one at a time on all the threads, as before.
 */
const parallel = loaded.runtime.source === 'pypi';
const intraOpThreads = parallel ? 1 : threads;
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
        const loading = PiperModel.load(request.model, loaded.runtime, intraOpThreads);
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
