import { AppError } from '../errors.js';
import type { Voice } from './voice.js';
import type { Engine, EngineName, Speaker, SpeechChunk, SynthesizeOptions } from './types.js';
import { EspeakEngine } from './espeak/engine.js';
import type { EspeakVariant } from './espeak/voices.js';
import { FestivalEngine } from './festival/engine.js';
import { FliteEngine } from './flite/engine.js';
import { PiperEngine } from './piper/engine.js';
import { RhvoiceEngine } from './rhvoice/engine.js';

export type { EspeakVariant } from './espeak/voices.js';
export type { Engine, Speaker, SpeechChunk, SynthesizeOptions, WordTiming } from './types.js';

export interface EngineOptions {
  /** Processes for eSpeak NG and for Flite, each running one job at a time. Festival runs one process. */
  poolSize: number;
  /** A per-job time limit for callers with no deadline of their own; the service passes each job's deadline in its signal instead. */
  jobTimeoutMs?: number;
  /** Scratch folder for the engines' temporary files; default the OS temp dir. */
  tempDir?: string;
  /** Festival's binary; default `festival` on PATH. */
  festivalPath?: string;
  /** Piper voices (`<voice>.onnx` with `<voice>.onnx.json`); none there or none given, no Piper voices. */
  voicesDir?: string;
}

/** Every engine as one Speaker (findVoice also knows eSpeak NG variant combinations, `espeak-ng:<voice>+<variant>`). */
export interface EngineRegistry extends Speaker {
  /** Every listed voice, sorted by engine then id. */
  listVoices(): Voice[];
  /** What can follow `+` in an eSpeak NG voice id. */
  listEspeakVariants(): EspeakVariant[];
  /** Stops every engine process. */
  close(): Promise<void>;
}

/**
 * Every engine, from the most natural to the most robotic (the first one with a voice for a language is its
 * recommendation): a new engine is its folder and one line here.
 */
const ENGINES: ReadonlyArray<{ name: EngineName; start: (options: EngineOptions) => Promise<Engine> }> = [
  { name: 'piper', start: (options) => PiperEngine.create(options) },
  { name: 'rhvoice', start: ({ poolSize, jobTimeoutMs, tempDir }) => RhvoiceEngine.create({ poolSize, jobTimeoutMs, tempDir }) },
  { name: 'festival', start: ({ jobTimeoutMs, tempDir, festivalPath }) => FestivalEngine.create({ jobTimeoutMs, tempDir, festivalPath }) },
  { name: 'flite', start: (options) => FliteEngine.create(options) },
  { name: 'espeak-ng', start: (options) => EspeakEngine.create(options) },
];
const NATURALNESS = ENGINES.map((engine) => engine.name);

/** Marks one voice per language tag `recommended`: the most natural engine's first voice (by id). */
function markRecommended(voices: readonly Voice[]): Voice[] {
  const best = new Map<string, Voice>();
  const rank = (voice: Voice) => NATURALNESS.indexOf(voice.engine);
  for (const voice of [...voices].sort((a, b) => rank(a) - rank(b) || (a.id < b.id ? -1 : 1))) {
    if (!best.has(voice.language)) best.set(voice.language, voice);
  }
  const chosen = new Set(best.values());
  return voices.map((voice) => (chosen.has(voice) ? { ...voice, recommended: true } : voice));
}

function compareVoices(a: Voice, b: Voice): number {
  if (a.engine !== b.engine) return a.engine < b.engine ? -1 : 1;
  return a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
}

/**
 * Starts the engines (eSpeak NG and Flite warm, Festival when installed, Piper with one process ready when it has
 * voices, each of which it loads on first use, RHVoice with one process ready when installed) and lists their voices once.
 */
export async function createEngines(options: EngineOptions): Promise<EngineRegistry> {
  const started = await Promise.allSettled(ENGINES.map((engine) => engine.start(options)));
  const engines = started.flatMap((result) => (result.status === 'fulfilled' ? [result.value] : []));
  const failure = started.find((result) => result.status === 'rejected');
  if (failure) {
    await Promise.all(engines.map((engine) => engine.close()));
    throw failure.reason;
  }
  return new Registry(engines).load();
}

class Registry implements EngineRegistry {
  private readonly byName: Map<string, Engine>;
  private voices: Voice[] = [];

  private readonly espeak: EspeakEngine;

  constructor(private readonly engines: readonly Engine[]) {
    this.byName = new Map(engines.map((engine) => [engine.name, engine]));
    const espeak = engines.find((engine) => engine instanceof EspeakEngine);
    if (!espeak) throw new Error('the registry needs eSpeak NG, the engine with a voice for every language');
    this.espeak = espeak;
  }

  async load(): Promise<this> {
    const lists = await Promise.all(this.engines.map((engine) => engine.listVoices()));
    this.voices = markRecommended(lists.flat()).sort(compareVoices);
    return this;
  }

  listVoices(): Voice[] {
    return [...this.voices];
  }

  findVoice(voiceId: string): Voice | undefined {
    const colon = voiceId.indexOf(':');
    return colon === -1 ? undefined : this.byName.get(voiceId.slice(0, colon).toLowerCase())?.findVoice(voiceId);
  }

  synthesize(voiceId: string, text: string, options?: SynthesizeOptions): Promise<SpeechChunk> {
    const voice = this.findVoice(voiceId);
    const engine = voice && this.byName.get(voice.engine);
    if (!voice || !engine) return Promise.reject(new AppError('UNKNOWN_VOICE', { field: 'voice' }));
    return engine.synthesize(voice.id, text, options);
  }

  listEspeakVariants(): EspeakVariant[] {
    return this.espeak.listVariants();
  }

  async close(): Promise<void> {
    await Promise.all(this.engines.map((engine) => engine.close()));
  }
}
