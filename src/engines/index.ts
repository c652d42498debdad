import { AppError } from '../errors.js';
import type { Voice } from './voice.js';
import type { Engine, EngineName, Speaker, SpeechChunk, SynthesizeOptions, VoiceHandle } from './types.js';
import type { HostAllocator } from './onnx/host-options.js';
import { EspeakEngine } from './espeak/engine.js';
import type { EspeakVariant } from './espeak/voices.js';
import { FestivalEngine } from './festival/engine.js';
import { FliteEngine } from './flite/engine.js';
import { KokoroEngine } from './kokoro/engine.js';
import { PiperEngine } from './piper/engine.js';
import { RhvoiceEngine } from './rhvoice/engine.js';
import { matchesLanguage } from './language-tags.js';
import { markRecommended, startUpVoice, WARM_TEXT } from './recommended.js';

export type { EspeakVariant } from './espeak/voices.js';
export type { Engine, Speaker, SpeechChunk, SynthesizeOptions, VoiceHandle, WordTiming } from './types.js';

export interface EngineOptions {
  /** Processes for eSpeak NG and for Flite, each running one job at a time. Festival runs one process. */
  poolSize: number;
  /** A per-job time limit for callers with no deadline of their own; the service passes each job's deadline in its signal instead. */
  jobTimeoutMs?: number;
  /** Scratch folder for the engines' temporary files; default the OS temp dir. */
  tempDir?: string;
  /** Festival's binary; default `festival` on PATH. */
  festivalPath?: string;
  /** Piper voices (`<voice>.onnx` with `<voice>.onnx.json`) and Kokoro's model and packs (its kokoro/ folder); none there or none given, none of theirs. */
  voicesDir?: string;
  /** How long an engine's host process may take to start (ENGINE_START_TIMEOUT_MS); a start that misses it is tried once more. */
  startTimeoutMs?: number;
  /** The start-up voice (WARM_VOICE: `auto` or an id): an engine that has it may start loading it as it starts. */
  warmVoice?: string;
  /** Host entry modules in place of the engines' own (tests put in hosts that hang or crash). */
  hostModules?: Partial<Record<EngineName, string>>;
  /** ONNXRUNTIME_LIBRARY: Piper's and Kokoro's ONNX Runtime library, or `npm` for onnxruntime-node's; none, the installed one. */
  onnxRuntimeLibrary?: string;
  /** ENGINE_ALLOCATOR: the C allocator of Piper's and Kokoro's processes (onnx/host-options.ts). */
  allocator?: HostAllocator;
}

/** Every engine as one Speaker (findVoice also knows eSpeak NG variant combinations, `espeak-ng:<voice>+<variant>`). */
export interface EngineRegistry extends Speaker {
  /** Every listed voice, sorted by engine then id. */
  listVoices(): Voice[];
  /** What can follow `+` in an eSpeak NG voice id. */
  listEspeakVariants(): EspeakVariant[];
  /** Engines that could not start (they are tried again now and then), and why. */
  unavailable(): UnavailableEngine[];
  /** The ONNX Runtime version and eSpeak NG build Piper's voices run on, once its process has said (none without Piper voices). */
  piperRuntime(): Promise<{ onnxruntime: string; phonemes: string } | undefined>;
  /** Stops every engine process. */
  close(): Promise<void>;
}

/**
 * Every engine, from the most natural to the most robotic (the first one with a voice for a language is its
 * recommendation): a new engine is its folder and one line here. `heavy`: its model takes long to load and much
 * memory to hold (Kokoro: about 1 s and 120 MB), so `WARM_VOICE=auto` passes over it; it loads on its first
 * request, or at start-up when WARM_VOICE names one of its voices.
 */
const ENGINES: ReadonlyArray<{ name: EngineName; heavy?: true; start: (options: EngineOptions, log?: EngineLog) => Promise<Engine> }> = [
  { name: 'kokoro', heavy: true, start: (options, log) => KokoroEngine.create({ ...options, hostModule: options.hostModules?.kokoro, log }) },
  { name: 'piper', start: (options, log) => PiperEngine.create({ ...options, hostModule: options.hostModules?.piper, log }) },
  { name: 'rhvoice', start: ({ poolSize, jobTimeoutMs, tempDir, startTimeoutMs, hostModules }) => RhvoiceEngine.create({ poolSize, jobTimeoutMs, tempDir, startTimeoutMs, hostModule: hostModules?.rhvoice }) },
  { name: 'festival', start: ({ jobTimeoutMs, tempDir, festivalPath }) => FestivalEngine.create({ jobTimeoutMs, tempDir, festivalPath }) },
  { name: 'flite', start: (options) => FliteEngine.create({ ...options, hostModule: options.hostModules?.flite }) },
  { name: 'espeak-ng', start: (options) => EspeakEngine.create({ ...options, hostModule: options.hostModules?.['espeak-ng'] }) },
];
const NATURALNESS = ENGINES.map((engine) => engine.name);
const HEAVY = new Set<string>(ENGINES.flatMap((engine) => (engine.heavy ? [engine.name] : [])));

function compareVoices(a: Voice, b: Voice): number {
  if (a.engine !== b.engine) return a.engine < b.engine ? -1 : 1;
  return a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
}

/** An engine that could not start: it has no voices until a later try starts it. */
export interface UnavailableEngine {
  engine: EngineName;
  reason: string;
}

export interface EngineLog {
  warn(obj: object, msg: string): void;
  info(obj: object, msg: string): void;
}

/** An engine that failed to start is tried again after this, then after each doubling, up to an hour. */
const RETRY_ENGINE_MS = 30_000;
const MAX_RETRY_ENGINE_MS = 3_600_000;

/**
 * Starts the engines (each starts its processes on demand, but for those it needs to list its voices) and lists
 * their voices once. An engine that cannot start, even once more, is left out and said so in one line: the others
 * serve, and it is tried again in the background now and then.
 */
export async function createEngines(options: EngineOptions, log?: EngineLog): Promise<EngineRegistry> {
  const started = await Promise.allSettled(ENGINES.map((engine) => engine.start(options, log)));
  const engines = started.flatMap((result) => (result.status === 'fulfilled' ? [result.value] : []));
  const unavailable = started.flatMap((result, index) =>
    result.status === 'rejected' ? [{ engine: (ENGINES[index] as (typeof ENGINES)[number]).name, reason: reasonOf(result.reason) }] : [],
  );
  for (const { engine, reason } of unavailable) log?.warn({ engine, reason }, `the ${engine} engine could not start: its voices are unavailable for now`);
  const registry = await new Registry(engines, unavailable, options, log).load();
  registry.retryUnavailable(RETRY_ENGINE_MS);
  return registry;
}

/**
 * Speaks one short sentence with the voice (`auto`: the most natural English one of an engine that is not heavy),
 * so that its engine's process and model are loaded and the first request is as fast as the next; resolves with the
 * voice spoken, undefined for none.
 */
export async function warmVoice(engines: EngineRegistry, choice: string): Promise<string | undefined> {
  const light = engines.listVoices().filter((voice) => !HEAVY.has(voice.engine));
  const voice = startUpVoice(markRecommended(light, NATURALNESS), choice, (id) => engines.findVoice(id));
  if (!voice) return undefined;
  await engines.synthesize(voice.id, WARM_TEXT);
  return voice.id;
}

/** The first line of what went wrong, the underlying cause where the error wraps one (a host's start). */
function reasonOf(error: unknown): string {
  const cause = error instanceof Error && error.cause instanceof Error ? error.cause : error;
  return (cause instanceof Error ? cause.message : String(cause)).split('\n')[0] as string;
}

class Registry implements EngineRegistry {
  private readonly byName = new Map<string, Engine>();
  private voices: Voice[] = [];
  private retry: NodeJS.Timeout | undefined;
  private closed = false;

  constructor(
    private engines: Engine[],
    private unavailableEngines: UnavailableEngine[],
    private readonly options: EngineOptions,
    private readonly log: EngineLog | undefined,
  ) {}

  async load(): Promise<this> {
    const lists = await Promise.all(this.engines.map((engine) => engine.listVoices()));
    this.byName.clear();
    for (const engine of this.engines) this.byName.set(engine.name, engine);
    this.voices = markRecommended(lists.flat(), NATURALNESS).sort(compareVoices);
    return this;
  }

  unavailable(): UnavailableEngine[] {
    return [...this.unavailableEngines];
  }

  /** Tries the engines that could not start again after `delayMs`, and again later while some still cannot. */
  retryUnavailable(delayMs: number): void {
    if (this.unavailableEngines.length === 0 || this.closed) return;
    this.retry = setTimeout(() => void this.startUnavailable().finally(() => this.retryUnavailable(Math.min(delayMs * 2, MAX_RETRY_ENGINE_MS))), delayMs);
    this.retry.unref();
  }

  private async startUnavailable(): Promise<void> {
    for (const { engine: name } of this.unavailableEngines) {
      const entry = ENGINES.find((engine) => engine.name === name);
      const engine = await entry?.start(this.options, this.log).catch(() => undefined);
      if (!engine) continue;
      if (this.closed) return void (await engine.close());
      this.engines = [...this.engines, engine].sort((a, b) => NATURALNESS.indexOf(a.name) - NATURALNESS.indexOf(b.name));
      this.unavailableEngines = this.unavailableEngines.filter((unavailable) => unavailable.engine !== name);
      await this.load();
      this.log?.info({ engine: name }, `the ${name} engine started: its voices are available`);
    }
  }

  listVoices(): Voice[] {
    return [...this.voices];
  }

  findVoice(voiceId: string): Voice | undefined {
    const colon = voiceId.indexOf(':');
    return colon === -1 ? undefined : this.byName.get(voiceId.slice(0, colon).toLowerCase())?.findVoice(voiceId);
  }

  /** SSML lang: a voice of the same engine and sample rate (so that its audio joins the rest) for `language`, the recommended one first. */
  voiceFor(voice: Voice, language: string): Voice | undefined {
    if (matchesLanguage(language, voice.language)) return voice;
    const like = (query: string) => this.voices.filter((other) => other.engine === voice.engine && other.sampleRate === voice.sampleRate && matchesLanguage(query, other.language));
    // fr-FR finds fr-FR first, else any French voice.
    const candidates = [like(language), like(language.split('-')[0] ?? language)].find((found) => found.length > 0) ?? [];
    return candidates.find((other) => other.recommended) ?? candidates[0];
  }

  /** Resolved once: the engine the id names, then that engine's own handle (it speaks without the registry). */
  handleOf(voiceId: string): VoiceHandle | undefined {
    const voice = this.findVoice(voiceId);
    return voice && this.byName.get(voice.engine)?.handleOf(voice.id);
  }

  synthesize(voiceId: string, text: string, options?: SynthesizeOptions): Promise<SpeechChunk> {
    const voice = this.findVoice(voiceId);
    const engine = voice && this.byName.get(voice.engine);
    if (!voice || !engine) return Promise.reject(new AppError('UNKNOWN_VOICE', { field: 'voice' }));
    return engine.synthesize(voice.id, text, options);
  }

  listEspeakVariants(): EspeakVariant[] {
    const espeak = this.engines.find((engine) => engine instanceof EspeakEngine);
    return espeak instanceof EspeakEngine ? espeak.listVariants() : [];
  }

  async piperRuntime(): Promise<{ onnxruntime: string; phonemes: string } | undefined> {
    const piper = this.engines.find((engine) => engine instanceof PiperEngine);
    const runtimes = piper instanceof PiperEngine ? await piper.runtimes().catch(() => undefined) : undefined;
    return runtimes && { onnxruntime: runtimes.onnxruntime.version, phonemes: `espeak-ng ${runtimes.phonemes.build}` };
  }

  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.retry);
    await Promise.all(this.engines.map((engine) => engine.close()));
  }
}
