// Worker thread entry of a Piper host: the voices' onnxruntime sessions, one inference at a time in order of
// arrival, so the host's main thread stays free to phonemize the next sentences and to answer its parent.
import { parentPort, workerData } from 'node:worker_threads';
import { PiperModel, type Scales, type SessionSpec } from './model.js';

export type ThreadRequest =
  | { kind: 'load'; id: number; model: SessionSpec }
  | { kind: 'release'; modelPath: string }
  | { kind: 'infer'; id: number; modelPath: string; ids: number[]; scales: Scales; speakerId: number };

export type ThreadReply = { id: number; audio: Float32Array; frames: Float32Array | undefined } | { id: number; loaded: true } | { id: number; error: string };

export interface ThreadData {
  threads: number;
}

const port = parentPort;
if (!port) throw new Error('inference-thread.ts runs as a worker thread of piper-host.ts');
const { threads } = workerData as ThreadData;
const models = new Map<string, Promise<PiperModel>>();

function modelOf(modelPath: string): Promise<PiperModel> {
  return models.get(modelPath) ?? Promise.reject(new Error(`no model loaded from ${modelPath}`));
}

async function answer(request: ThreadRequest): Promise<ThreadReply | undefined> {
  switch (request.kind) {
    case 'load': {
      if (!models.has(request.model.modelPath)) {
        const loading = PiperModel.load(request.model, threads);
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
      const { audio, frames } = await model.infer(request.ids, request.scales, request.speakerId);
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
      if ('id' in request) port.postMessage({ id: request.id, error: error instanceof Error ? error.message : String(error) } satisfies ThreadReply);
    },
  );
});
