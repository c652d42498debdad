// Child process entry: eSpeak NG for the phonemes, and one onnxruntime session per voice, loaded on the voice's
// first job and kept for the next ones (the most recently used few).
import { serveJobs } from '../hosts/host-runtime.js';
import { PiperModel } from './model.js';
import { Phonemizer } from './phonemizer.js';
import type { PiperJob, PiperModelSpec, PiperResult } from './protocol.js';
import { speak } from './synthesis.js';

/** Sessions kept per process: each holds its model's weights (60 to 120 MB) and onnxruntime's buffers. */
const MAX_MODELS = 2;
const WARM_UP_TEXT = 'The quick brown fox jumps over the lazy dog, twice.';
const PHONEMIZER_WARM_UP_ROUNDS = 3;

const phonemizer = await Phonemizer.create();
// The first runs of the WebAssembly are slow until V8 has optimized it: pay for that before saying ready.
for (let round = 0; round < PHONEMIZER_WARM_UP_ROUNDS; round++) phonemizer.phonemize(WARM_UP_TEXT, 'en-us');

const models = new Map<string, Promise<PiperModel>>();
let loads = 0;

async function load(spec: PiperModelSpec): Promise<PiperModel> {
  const model = await PiperModel.load(spec);
  // onnxruntime's first run allocates and plans: before the voice's first job, not during it.
  await speak(phonemizer, model, WARM_UP_TEXT, { speakerId: 0, lengthScale: spec.scales.length });
  return model;
}

function modelFor(spec: PiperModelSpec): Promise<PiperModel> {
  const kept = models.get(spec.modelPath);
  // Most recently used last.
  models.delete(spec.modelPath);
  const model = kept ?? load(spec);
  models.set(spec.modelPath, model);
  if (!kept) {
    loads += 1;
    model.catch(() => models.delete(spec.modelPath));
  }
  for (const [path, oldest] of models) {
    if (models.size <= MAX_MODELS) break;
    models.delete(path);
    void oldest.then((dropped) => dropped.release()).catch(() => undefined);
  }
  return model;
}

serveJobs<PiperJob, PiperResult>(async (job) => {
  if (job.kind === 'stats') {
    return { kind: 'stats', pid: process.pid, loads, models: [...models.keys()], rssBytes: process.memoryUsage().rss };
  }
  const model = await modelFor(job.model);
  const { samples, words } = await speak(phonemizer, model, job.text, { speakerId: job.speakerId, lengthScale: job.lengthScale });
  return { kind: 'speech', samples, sampleRate: job.model.sampleRate, words };
});
