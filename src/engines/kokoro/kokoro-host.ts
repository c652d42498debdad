// Child process entry: the Kokoro model, loaded once (as the process starts when a Kokoro voice is the start-up
// voice, else with the first job), and eSpeak NG's phonemizer on this thread; inferences run on ONNX Runtime's own threads (koffi calls them asynchronously), as many at once as the
// host's cores (one at a time on onnxruntime-node's runtime), so the next sentence is phonemized meanwhile.
import { AppError } from '../../errors.js';
import { serveJobs } from '../hosts/host-runtime.js';
import { IdleTrim } from '../onnx/idle-trim.js';
import { loadOnnxRuntime } from '../onnx/runtime.js';
import { Phonemizer } from '../piper/phonemizer.js';
import { japanesePhonemes } from './japanese/index.js';
import { KokoroModel } from './model.js';
import { espeakPhonemes } from './phonemes/espeak.js';
import type { KokoroPhonemized } from './phonemes/types.js';
import { isRefusalCode, type KokoroJob, type KokoroResult } from './protocol.js';
import { styleOf } from './styles.js';
import { speak, withSymbols } from './synthesis.js';
import { RunGate } from './run-gate.js';

const STARTUP_FAILED_EXIT_CODE = 70;

const threads = Math.max(1, Math.trunc(Number(process.argv[2])) || 1);
const library = process.argv[3] || undefined;
const modelPath = process.argv[4] ?? '';
/** `1` when a Kokoro voice is the start-up voice: the model loads as the process starts, else on the first job. */
const preload = process.argv[5] === '1';

// First: OrtLibrary sets koffi's stack size, which koffi refuses once any library (eSpeak NG, libc) is loaded.
const runtime = loadOnnxRuntime(library);
let loading: Promise<KokoroModel> | undefined;
let loaded = false;
/** The model, loaded once (about 0.3 s of CPU to set up; the host rests at about 250 MB with it); a process that cannot load it is of no use and ends. */
function model(): Promise<KokoroModel> {
  if (!loading) {
    loading = runtime.then(({ runtime: ort }) => KokoroModel.load(modelPath, ort, threads));
    void loading.then(() => (loaded = true), () => undefined);
    loading.catch((error: unknown) => {
      process.stderr.write(`the model could not be loaded: ${error instanceof Error ? error.message : String(error)}\n`);
      process.exit(STARTUP_FAILED_EXIT_CODE);
    });
  }
  return loading;
}
if (preload) void model();
/** Said with each job that needs it: Japanese needs no eSpeak NG. */
const phonemizer = runtime.then(() => Phonemizer.create());
phonemizer.catch(() => undefined);
const gate = runtime.then(({ runtime: loaded }) => new RunGate(loaded.source === 'pypi' ? threads : 1));
const idle = runtime.then(() => new IdleTrim());
/** Jobs in progress by ticket, to stop one the engine gave up. */
const running = new Map<number, AbortController>();

/** The native eSpeak NG only: its tied phonemes (t^ʃ) are what misaki's rules rewrite, and the WebAssembly binding gives none. */
async function nativePhonemizer(): Promise<Phonemizer> {
  const made = await phonemizer;
  if (made.build !== 'native') throw new Error(`Kokoro reads this language with eSpeak NG's native library (1.52), which did not load: ${made.fallbackReason ?? ''}`);
  return made;
}

async function phonemesOf(job: KokoroJob & { kind: 'synthesize' }): Promise<KokoroPhonemized> {
  const phonemized = job.language.espeakVoice ? espeakPhonemes(await nativePhonemizer(), job.text, job.language) : await japanesePhonemes(job.text);
  return withSymbols(phonemized, job.phonemes ?? []);
}

serveJobs<KokoroJob, KokoroResult>(async (job) => {
  switch (job.kind) {
    case 'stats':
      return { kind: 'stats', pid: process.pid, loaded, rssBytes: process.memoryUsage().rss, onnxruntime: (await runtime).info };
    case 'cancel':
      running.get(job.ticket)?.abort(new Error('cancelled'));
      return { kind: 'cancelled' };
    case 'synthesize': {
      const controller = new AbortController();
      running.set(job.ticket, controller);
      try {
        // The model's first load goes on while the text is read.
        const loadingModel = model();
        const read = await phonemesOf(job).catch((error: unknown) => {
          if (error instanceof AppError && isRefusalCode(error.code)) return { kind: 'refused' as const, code: error.code, message: error.message };
          throw error;
        });
        if ('kind' in read) return read;
        const [style, kokoro, runs, trim] = await Promise.all([styleOf(job.style), loadingModel, gate, idle]);
        const voice = {
          style,
          infer: (ids: readonly number[], row: Float32Array, speed: number, signal: AbortSignal) =>
            runs.run(signal, () => trim.during(() => kokoro.infer(ids, row, speed))),
        };
        const { samples, words } = await speak(voice, read, job.speed, controller.signal);
        return { kind: 'speech', samples, sampleRate: 24_000, words };
      } finally {
        running.delete(job.ticket);
      }
    }
  }
});
