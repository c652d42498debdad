// The host's side of its inference thread (inference-thread.ts): models loaded there, inferences queued here.
import { extname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { OnnxRuntimeError } from '../onnx/session.js';
import type { OnnxRuntimeInfo } from '../onnx/runtime.js';
import type { Inference, Scales, SessionSpec } from './model.js';
import type { ThreadData, ThreadReply, ThreadRequest } from './inference-thread.js';

interface Waiting {
  request: ThreadRequest & { kind: 'infer' };
  resolve: (inference: Inference) => void;
  reject: (error: unknown) => void;
  signal: AbortSignal | undefined;
  onAbort: () => void;
}

/** The thread's module with this one's extension; under tsx (.ts) a worker must register tsx itself (Node 20 runs no --import in workers). */
function startWorker(data: ThreadData): Worker {
  const entry = new URL(`./inference-thread${extname(fileURLToPath(import.meta.url))}`, import.meta.url);
  if (!entry.pathname.endsWith('.ts')) return new Worker(entry, { workerData: data });
  const tsx = JSON.stringify(import.meta.resolve('tsx/esm/api'));
  const bootstrap = `import(${tsx}).then((tsx) => { tsx.register(); return import(${JSON.stringify(entry.href)}); });`;
  return new Worker(bootstrap, { eval: true, workerData: data });
}

/** The thread's error as it was thrown there: ONNX Runtime's keep their type and code. */
function errorOf(reply: ThreadReply): Error {
  if (!('error' in reply)) return new Error('the inference thread answered something else');
  return reply.code ? new OnnxRuntimeError(reply.code, reply.error) : new Error(reply.error);
}

export class InferenceThread {
  private readonly worker: Worker;
  private readonly pending = new Map<number, { resolve: (reply: ThreadReply) => void; reject: (error: unknown) => void }>();
  private readonly waiting: Waiting[] = [];
  private inThread = 0;
  /**
   * Inferences handed to the thread at once: those it runs side by side, and one ready to start; the rest wait
   * here, where a cancelled job can take its own back. None until the thread has said what its runtime runs at once.
   */
  private maxInThread = 0;
  private nextId = 1;
  /** The ONNX Runtime the thread loaded (the first thing it says). */
  readonly runtime: Promise<OnnxRuntimeInfo>;
  private onRuntime: (runtime: OnnxRuntimeInfo) => void = () => undefined;

  /** `onFailure`: the thread died; nothing it held can be trusted or finished. `library`: ONNXRUNTIME_LIBRARY. */
  constructor(
    threads: number,
    library: string | undefined,
    private readonly onFailure: (error: Error) => void,
  ) {
    this.runtime = new Promise((resolve) => (this.onRuntime = resolve));
    this.worker = startWorker({ threads, library } satisfies ThreadData);
    this.worker.on('message', (reply: ThreadReply) => this.receive(reply));
    this.worker.on('error', (error) => this.fail(error));
    this.worker.on('exit', (code) => this.fail(new Error(`the inference thread exited with code ${code}`)));
  }

  async load(model: SessionSpec): Promise<void> {
    const reply = await this.ask({ kind: 'load', id: this.nextId++, model });
    if ('error' in reply) throw errorOf(reply);
  }

  release(modelPath: string): void {
    this.worker.postMessage({ kind: 'release', modelPath } satisfies ThreadRequest);
  }

  /** Rejects with the signal's reason when it aborts before the inference has reached the thread. */
  infer(modelPath: string, ids: number[], scales: Scales, speakerId: number, signal?: AbortSignal): Promise<Inference> {
    if (signal?.aborted) return Promise.reject(signal.reason);
    return new Promise((resolve, reject) => {
      const waiting: Waiting = {
        request: { kind: 'infer', id: this.nextId++, modelPath, ids, scales, speakerId },
        resolve,
        reject,
        signal,
        onAbort: () => {
          const index = this.waiting.indexOf(waiting);
          if (index === -1) return;
          this.waiting.splice(index, 1);
          reject(signal?.reason);
        },
      };
      signal?.addEventListener('abort', waiting.onAbort, { once: true });
      this.waiting.push(waiting);
      this.pump();
    });
  }

  private pump(): void {
    while (this.inThread < this.maxInThread && this.waiting.length > 0) {
      const next = this.waiting.shift() as Waiting;
      next.signal?.removeEventListener('abort', next.onAbort);
      this.inThread += 1;
      this.ask(next.request).then(
        (reply) => {
          this.inThread -= 1;
          this.pump();
          if ('audio' in reply) next.resolve({ audio: reply.audio, frames: reply.frames });
          else next.reject(errorOf(reply));
        },
        (error: unknown) => next.reject(error),
      );
    }
  }

  private ask(request: ThreadRequest & { id: number }): Promise<ThreadReply> {
    return new Promise((resolve, reject) => {
      this.pending.set(request.id, { resolve, reject });
      this.worker.postMessage(request);
    });
  }

  private receive(reply: ThreadReply): void {
    if ('runtime' in reply) {
      this.maxInThread = reply.inFlight + 1;
      this.onRuntime(reply.runtime);
      return this.pump();
    }
    const pending = this.pending.get(reply.id);
    this.pending.delete(reply.id);
    pending?.resolve(reply);
  }

  private fail(error: Error): void {
    for (const { reject } of this.pending.values()) reject(error);
    this.pending.clear();
    for (const { reject } of this.waiting.splice(0)) reject(error);
    this.onFailure(error);
  }
}
