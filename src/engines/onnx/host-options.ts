// What the engines on ONNX Runtime (Piper, Kokoro) are made with, and how their host processes are started.
import { AppError } from '../../errors.js';
import { ORT_HOST_ENV } from './runtime.js';

export interface OnnxEngineOptions {
  /** VOICES_DIR: where the engine's models are; none: no voices. */
  voicesDir?: string;
  /** Cores one inference may use (its threads, at most the machine's); one process runs every job of the engine. */
  poolSize: number;
  /** 1: the process is started ahead of demand; 0: on the first job. */
  warm?: 0 | 1;
  /** A per-job time limit for callers with no deadline of their own; the service passes each job's deadline in its signal instead. */
  jobTimeoutMs?: number;
  /** How long its process may take to start; a start that misses it is tried once more. */
  startTimeoutMs?: number;
  /** Where the engine's processes keep temporary files (their TMPDIR); default the OS temp dir. */
  tempDir?: string;
  /** The start-up voice (`auto` or an id): when it is one of the engine's voices, its model loads as soon as the process is up. */
  warmVoice?: string;
  /** Host entry module; tests substitute one that misbehaves on purpose. */
  hostModule?: string;
  /** ONNXRUNTIME_LIBRARY: the ONNX Runtime library file, or `npm` for onnxruntime-node's; none, the installed 1.32 (runtime.ts). */
  onnxRuntimeLibrary?: string;
  /** Where the engine says, once, that it runs on a fallback (onnxruntime-node's runtime, eSpeak NG's WebAssembly build). */
  log?: { warn(obj: object, msg: string): void };
}

// A host collects the garbage once a model is loaded (see piper/model.ts), and keeps a small young generation (as
// bin/voxreel does): 50-120 MB less resident after a few sentences, measured.
export const ONNX_HOST_EXEC_ARGV: readonly string[] = ['--expose-gc', '--max-semi-space-size=2'];
/**
 * glibc's allocator in at most two arenas: each of koffi's threads that runs an inference would otherwise get one of
 * its own and keep what the run freed there. With the idle trim (idle-trim.ts), a host that has spoken
 * rests at about 270 MB instead of 340 (one arena a thread) or 600 (ONNX Runtime's own arena), for 3-5 % more CPU
 * (en_US-joe-medium, 5 sentences 3 times, two in flight, 3 interleaved runs each). The CI variables are cleared (runtime.ts).
 */
export const ONNX_HOST_ENV: Readonly<Record<string, string>> = { ...ORT_HOST_ENV, MALLOC_ARENA_MAX: '2' };

/** The `speed` a model is given: 1 by default; 400 VALIDATION_ERROR when it is not a positive number. */
export function modelSpeed(speed: number | undefined): number {
  const value = speed ?? 1;
  if (!(value > 0 && Number.isFinite(value))) throw new AppError('VALIDATION_ERROR', { field: 'speed', message: 'speed must be a positive number.' });
  return value;
}

/** Starts the engine's host ahead of its first job (a host that cannot start is closed, and the engine's start fails). */
export async function warmHost(host: { warmUp(): Promise<void>; close(): Promise<void> }): Promise<void> {
  try {
    await host.warmUp();
  } catch (error) {
    await host.close();
    throw error;
  }
}
