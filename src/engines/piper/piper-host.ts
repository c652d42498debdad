// Child process entry: eSpeak NG phonemizes on this thread while onnxruntime infers on one inference thread, so
// one process runs every job of the engine, several at once; each voice's session (the most recently used few) is
// loaded on the voice's first job and kept for the next ones.
import { serveJobs } from '../hosts/host-runtime.js';
import { InferenceThread } from './inference.js';
import { Phonemizer } from './phonemizer.js';
import type { PiperJob, PiperModelSpec, PiperResult } from './protocol.js';
import { speak, type VoiceModel } from './synthesis.js';

/** Sessions kept per process: each holds its model's weights (60 to 120 MB) and onnxruntime's buffers. */
const MAX_MODELS = 2;
const WARM_UP_TEXT = 'The quick brown fox jumps over the lazy dog, twice.';
const PHONEMIZER_WARM_UP_ROUNDS = 3;
const THREAD_FAILED_EXIT_CODE = 70;

/** A voice's session while this process keeps it, and the jobs using it (a dropped voice is released after its last). */
interface Kept {
  model: Promise<VoiceModel>;
  users: number;
  dropped: boolean;
}

const threads = Math.max(1, Math.trunc(Number(process.argv[2])) || 1);
const inference = new InferenceThread(threads, process.argv[3] || undefined, (error) => {
  // Whatever it was running is lost: the parent fails this process's jobs and starts another.
  process.stderr.write(`${error.message}\n`);
  process.exit(THREAD_FAILED_EXIT_CODE);
});
/**
 * eSpeak NG, made and warmed (the first runs of the WebAssembly are slow until V8 has optimized it) while this
 * process already takes jobs: the first voice's model then loads on the inference thread at the same time, which
 * takes the phonemizer's half second off a start. A phonemizer that cannot be made ends the process, as a failed
 * start (the parent starts another).
 */
const phonemizerReady = Phonemizer.create().then((phonemizer) => {
  for (let round = 0; round < PHONEMIZER_WARM_UP_ROUNDS; round++) phonemizer.phonemize(WARM_UP_TEXT, 'en-us');
  return phonemizer;
});
phonemizerReady.catch((error: unknown) => {
  process.stderr.write(`the phonemizer could not be made: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(THREAD_FAILED_EXIT_CODE);
});

/** Voices the engine has described to this process (once each), by model path. */
const specs = new Map<string, PiperModelSpec>();
const kept = new Map<string, Kept>();
/** Jobs in progress by ticket, to stop one the engine gave up. */
const running = new Map<number, AbortController>();
let loads = 0;

async function load(spec: PiperModelSpec): Promise<VoiceModel> {
  const { modelPath, durations, multiSpeaker } = spec;
  await inference.load({ modelPath, durations, multiSpeaker });
  // No run of its own here: the voice's first job (at start-up, WARM_VOICE's sentence) pays onnxruntime's first-run
  // planning either way, and a warm-up sentence first only made it wait longer (about 0.2 s off a start, measured).
  return { spec, infer: (ids, scales, speakerId, signal) => inference.infer(modelPath, ids, scales, speakerId, signal) };
}

function release(path: string, entry: Kept): void {
  if (entry.dropped && entry.users === 0) void entry.model.then(() => inference.release(path)).catch(() => undefined);
}

/** The voice's session, loading it if this process holds none, kept as the most recently used. */
function keep(spec: PiperModelSpec): Kept {
  const path = spec.modelPath;
  let entry = kept.get(path);
  kept.delete(path);
  if (!entry) {
    const loading: Kept = { model: load(spec), users: 0, dropped: false };
    loading.model.catch(() => {
      // The next job for the voice tries again.
      if (kept.get(path) === loading) kept.delete(path);
    });
    loads += 1;
    entry = loading;
  }
  kept.set(path, entry);
  for (const [oldPath, oldest] of kept) {
    if (kept.size <= MAX_MODELS) break;
    kept.delete(oldPath);
    oldest.dropped = true;
    release(oldPath, oldest);
  }
  return entry;
}

/** Runs `use` with the voice's session. */
async function withModel<T>(spec: PiperModelSpec, use: (model: VoiceModel) => Promise<T>): Promise<T> {
  const entry = keep(spec);
  entry.users += 1;
  try {
    return await use(await entry.model);
  } finally {
    entry.users -= 1;
    release(spec.modelPath, entry);
  }
}

/**
 * The start-up voice (the parent's fourth argument: its model spec, JSON) loads now, on the inference thread, while
 * the phonemizer is made on this one; its job then finds it loaded. A failed load is its first job's to report.
 */
const startUp = process.argv[4];
if (startUp) {
  const spec = JSON.parse(startUp) as PiperModelSpec;
  specs.set(spec.modelPath, spec);
  keep(spec).model.catch(() => undefined);
}

serveJobs<PiperJob, PiperResult>(async (job) => {
  switch (job.kind) {
    case 'stats':
      // The runtime is the inference thread's first word, within a few milliseconds of the process's start.
      return {
        kind: 'stats',
        pid: process.pid,
        loads,
        models: [...kept.keys()],
        rssBytes: process.memoryUsage().rss,
        onnxruntime: await inference.runtime,
        phonemes: await phonemizerReady.then((phonemizer) => ({ build: phonemizer.build, fallback: phonemizer.fallbackReason ?? null })),
      };
    case 'cancel':
      running.get(job.ticket)?.abort(new Error('cancelled'));
      return { kind: 'cancelled' };
    case 'synthesize': {
      if (job.model) specs.set(job.voice, job.model);
      const spec = specs.get(job.voice);
      if (!spec) throw new Error(`no voice was described for ${job.voice}`);
      const controller = new AbortController();
      running.set(job.ticket, controller);
      try {
        const options = { speakerId: job.speakerId, lengthScale: job.lengthScale, phonemes: job.phonemes, signal: controller.signal };
        // The model's load (on the inference thread) starts before this waits for the phonemizer.
        const { samples, words } = await withModel(spec, async (model) => speak(await phonemizerReady, model, job.text, options));
        return { kind: 'speech', samples, sampleRate: spec.sampleRate, words };
      } finally {
        running.delete(job.ticket);
      }
    }
  }
});
