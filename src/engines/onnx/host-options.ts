// What the engines on ONNX Runtime (Piper, Kokoro) are made with, and how their host processes are started.
import { existsSync } from 'node:fs';
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
  /** ENGINE_ALLOCATOR: the C allocator its process runs with (onnxHostEnv); default `auto`. */
  allocator?: HostAllocator;
  /** Where the engine says, once, that it runs on a fallback (onnxruntime-node's runtime, eSpeak NG's WebAssembly build). */
  log?: { warn(obj: object, msg: string): void };
}

// A host collects the garbage once a model is loaded (see piper/model.ts), and keeps a small young generation (as
// bin/voxreel does): 50-120 MB less resident after a few sentences, measured.
export const ONNX_HOST_EXEC_ARGV: readonly string[] = ['--expose-gc', '--max-semi-space-size=2'];

/** ENGINE_ALLOCATOR: jemalloc where installed (`auto`), jemalloc (said where missing), or glibc's. */
export type HostAllocator = 'auto' | 'jemalloc' | 'glibc';

/** Where Debian and Ubuntu (libjemalloc2), Fedora and Alpine put jemalloc's library. */
const JEMALLOC_LIBRARIES = [
  `/usr/lib/${process.arch === 'arm64' ? 'aarch64' : 'x86_64'}-linux-gnu/libjemalloc.so.2`,
  '/usr/lib64/libjemalloc.so.2',
  '/usr/lib/libjemalloc.so.2',
  '/usr/local/lib/libjemalloc.so.2',
];

/**
 * jemalloc as a host runs it: two arenas (koffi runs each inference on a thread of its own); what is freed given back
 * to the system by its background thread within seconds (dirty, then muzzy pages decay over 5 s), so the next
 * sentence's buffers reuse pages still there; large buffers in the same arenas (`oversize_threshold:0`: jemalloc's own
 * arena for them purges at once, and faulting a decoder window's 100 MB back in each time cost about 15 % of a long
 * job's time). Measured on a 15,000-character Piper job: 170 MB above rest in 51.5 s, where decay after 1 s and the
 * large-buffer arena took 140-161 MB in 58.5 s, and glibc 311-328 MB in 49-51 s.
 */
const JEMALLOC_CONF = 'background_thread:true,narenas:2,dirty_decay_ms:5000,muzzy_decay_ms:5000,oversize_threshold:0';

/** jemalloc's library where it is installed. */
export function jemallocLibrary(candidates: readonly string[] = JEMALLOC_LIBRARIES): string | undefined {
  return process.platform === 'linux' ? candidates.find((file) => existsSync(file)) : undefined;
}

/**
 * The environment of a Piper or Kokoro host: the CI variables cleared (runtime.ts), and its C allocator. An
 * inference's buffers (the decoder's windows, the front's tensors: tens of megabytes each, freed at its end) are what
 * the allocator is given back; glibc keeps most of it as fragments in its arenas, jemalloc returns it (JEMALLOC_CONF
 * has the figures).
 * With glibc (`glibc`, or no jemalloc installed): at most two arenas, each of koffi's threads would otherwise get one of
 * its own and keep what the run freed there, and the idle trim (idle-trim.ts) hands whole free pages back after a run.
 */
export function onnxHostEnv(allocator: HostAllocator, library: string | undefined): { env: Readonly<Record<string, string>>; allocator: 'jemalloc' | 'glibc' } {
  if (allocator === 'glibc' || !library) return { env: { ...ORT_HOST_ENV, MALLOC_ARENA_MAX: '2' }, allocator: 'glibc' };
  const preload = [library, process.env.LD_PRELOAD].filter(Boolean).join(':');
  // An operator's own MALLOC_CONF is jemalloc's tuning, kept.
  return { env: { ...ORT_HOST_ENV, LD_PRELOAD: preload, MALLOC_CONF: process.env.MALLOC_CONF ?? JEMALLOC_CONF }, allocator: 'jemalloc' };
}

/** A host's environment for the allocator asked for; where `jemalloc` was asked for and is not installed, said once in `log`. */
export function hostEnvironment(options: Pick<OnnxEngineOptions, 'allocator' | 'log'>, findJemalloc = jemallocLibrary): Readonly<Record<string, string>> {
  const chosen = onnxHostEnv(options.allocator ?? 'auto', options.allocator === 'glibc' ? undefined : findJemalloc());
  if (options.allocator === 'jemalloc' && chosen.allocator !== 'jemalloc') {
    options.log?.warn({ looked: JEMALLOC_LIBRARIES }, 'ENGINE_ALLOCATOR=jemalloc, but jemalloc is not installed (apt install libjemalloc2): the engine runs on glibc\'s allocator');
  }
  return chosen.env;
}

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
