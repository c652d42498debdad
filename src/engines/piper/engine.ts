import { availableParallelism } from 'node:os';
import { spokenIpa, unspeakableIpa } from '../spoken-ipa.js';
import { AppError } from '../../errors.js';
import type { Voice } from '../voice.js';
import type { Engine, SpeechChunk, SynthesizeOptions, VoiceHandle } from '../types.js';
import { bindVoice } from '../voice-handle.js';
import { hostModulePath } from '../hosts/node-host.js';
import { sanitizeText } from '../mapped-text.js';
import { SharedHost } from '../hosts/shared-host.js';
import { PIPER_ENGINE, PiperVoiceCatalog } from './catalog.js';
import { isPiperResult, type PhonemesInfo, type PiperJob, type PiperResult } from './protocol.js';
import { piperWordTimings } from './words.js';
import { markRecommended, startUpVoice } from '../recommended.js';
import { modelSpeed, hostEnvironment, ONNX_HOST_EXEC_ARGV, warmHost, type OnnxEngineOptions } from '../onnx/host-options.js';
import type { OnnxRuntimeInfo } from '../onnx/runtime.js';

/** Piper's voices are `<voice>.onnx` with `<voice>.onnx.json`, in any subfolder of `voicesDir`. */
export type PiperEngineOptions = OnnxEngineOptions;

/** What a host process holds, for diagnostics and tests. */
export interface PiperHostStats {
  pid: number;
  /** Models the process has loaded (a model loads once per process, unless dropped for others). */
  loads: number;
  models: string[];
  rssBytes: number;
  onnxruntime: OnnxRuntimeInfo;
  phonemes: PhonemesInfo;
}

/** What the voices run on: the ONNX Runtime and eSpeak NG's build (/readyz names both). */
export type PiperRuntime = Pick<PiperHostStats, 'onnxruntime' | 'phonemes'>;

/** Tells each process a voice's spec with its first job for that voice only; a job names the voice by its model path. */
function describeOnce(job: PiperJob, told: Set<string>): PiperJob {
  if (job.kind !== 'synthesize' || !job.model) return job;
  if (!told.has(job.voice)) {
    told.add(job.voice);
    return job;
  }
  const known = { ...job };
  delete known.model;
  return known;
}

/**
 * The start-up voice's model as a host argument, when it is one of these voices: the host loads it as soon as it
 * runs, while its phonemizer is made, the other engines start and the service loads (the slowest part of a start).
 */
function startUpModel(catalog: PiperVoiceCatalog, choice: string | undefined): string[] {
  if (choice === undefined) return [];
  const voice = startUpVoice(markRecommended(catalog.list()), choice, (id) => catalog.find(id)?.voice);
  const model = voice && catalog.find(voice.id)?.model;
  return model ? [JSON.stringify(model)] : [];
}

/**
 * Piper neural voices (VITS models on onnxruntime, phonemes from eSpeak NG) in one child process that loads each
 * voice once and takes every job, several at once (see piper-host.ts).
 */
export class PiperEngine implements Engine {
  readonly name = PIPER_ENGINE;
  /** Its length scale: en_US-joe-medium 0.57× the length at speed 0.5 where 0.5 was asked, 1.6× shorter at 2. */
  readonly naturalSpeedShare = 0.74;
  private nextTicket = 1;
  private runtime: Promise<PiperRuntime> | undefined;

  private constructor(
    private readonly catalog: PiperVoiceCatalog,
    private readonly host: SharedHost<PiperJob, PiperResult>,
    private readonly log: PiperEngineOptions['log'],
  ) {}

  /** Lists the installed voices; without any, no process is ever started. */
  static async create(options: PiperEngineOptions): Promise<PiperEngine> {
    const catalog = await PiperVoiceCatalog.scan(options.voicesDir);
    const threads = Math.max(1, Math.min(options.poolSize, availableParallelism()));
    const host = new SharedHost<PiperJob, PiperResult>({
      module: options.hostModule ?? hostModulePath('piper-host', import.meta.url),
      args: [String(threads), options.onnxRuntimeLibrary ?? '', ...startUpModel(catalog, options.warmVoice)],
      isResult: isPiperResult,
      execArgv: ONNX_HOST_EXEC_ARGV,
      env: hostEnvironment(options),
      tempDir: options.tempDir,
      startTimeoutMs: options.startTimeoutMs,
      jobTimeoutMs: options.jobTimeoutMs,
      ping: { kind: 'stats' },
      cancel: (job) => (job.kind === 'synthesize' ? { kind: 'cancel', ticket: job.ticket } : undefined),
      prepare: describeOnce,
    });
    const engine = new PiperEngine(catalog, host, options.log);
    if (catalog.size > 0 && (options.warm ?? 1) === 1) {
      await warmHost(host);
      // Said at start-up, while the first voice loads: the fallback's line in the log.
      engine.runtimes().catch(() => undefined);
    }
    return engine;
  }

  /** The ONNX Runtime the voices run on, as the host reports it (see runtimes()). */
  async onnxRuntime(): Promise<OnnxRuntimeInfo | undefined> {
    return (await this.runtimes())?.onnxruntime;
  }

  /**
   * The ONNX Runtime and the eSpeak NG build the voices run on, as the host reports them: asked once, of a running
   * host (none is started for this alone). A fallback (onnxruntime-node's runtime, eSpeak NG's WebAssembly build)
   * is said once in the log, with why.
   */
  runtimes(): Promise<PiperRuntime | undefined> {
    if (!this.runtime && this.host.pids().length > 0) {
      const asking = this.hostStats().then(({ onnxruntime, phonemes }) => {
        if (onnxruntime.fallback) {
          this.log?.warn({ engine: PIPER_ENGINE, onnxruntime: onnxruntime.version }, `Piper runs on onnxruntime-node's ONNX Runtime ${onnxruntime.version}: ${onnxruntime.fallback}`);
        }
        if (phonemes.fallback) {
          this.log?.warn({ engine: PIPER_ENGINE, phonemes: phonemes.build }, `Piper phonemizes with eSpeak NG's WebAssembly build, about 3 times slower: ${phonemes.fallback}`);
        }
        return { onnxruntime, phonemes };
      });
      asking.catch(() => {
        if (this.runtime === asking) this.runtime = undefined;
      });
      this.runtime = asking;
    }
    return this.runtime ?? Promise.resolve(undefined);
  }

  listVoices(): Promise<Voice[]> {
    return Promise.resolve(this.catalog.list());
  }

  handleOf(voiceId: string): VoiceHandle | undefined {
    return bindVoice(this, voiceId);
  }

  findVoice(voiceId: string): Voice | undefined {
    return this.catalog.find(voiceId)?.voice;
  }

  /** `options.speed` is honoured: the model speaks faster or slower (its length scale), at its own pitch. */
  async synthesize(voiceId: string, text: string, options: SynthesizeOptions = {}): Promise<SpeechChunk> {
    const choice = this.catalog.find(voiceId);
    if (!choice) throw new AppError('UNKNOWN_VOICE', { field: 'voice' });
    const speed = modelSpeed(options.speed);
    const source = sanitizeText(text);
    for (const span of options.phonemes ?? []) assertSpeakableIpa(span.ipa, choice.model.phonemeIds, voiceId);
    const job: PiperJob = {
      kind: 'synthesize',
      ticket: this.nextTicket++,
      voice: choice.model.modelPath,
      model: choice.model,
      speakerId: choice.speakerId,
      text: source,
      lengthScale: choice.model.scales.length / speed,
      ...(options.phonemes?.length ? { phonemes: options.phonemes } : {}),
    };
    const result = await this.host.run(job, options);
    if (result.kind !== 'speech') throw new AppError('ENGINE_FAILED', { message: 'Piper answered with something else than speech.' });
    return {
      samples: result.samples,
      sampleRate: result.sampleRate,
      ...(result.words ? { words: piperWordTimings(source, choice.voice.language, result.words, result.sampleRate) } : {}),
    };
  }

  /** What the host process holds (starting it if none runs). */
  async hostStats(options: SynthesizeOptions = {}): Promise<PiperHostStats> {
    const result = await this.host.run({ kind: 'stats' }, options);
    if (result.kind !== 'stats') throw new AppError('ENGINE_FAILED', { message: 'Piper answered with something else than its stats.' });
    const { pid, loads, models, rssBytes, onnxruntime, phonemes } = result;
    return { pid, loads, models, rssBytes, onnxruntime, phonemes };
  }

  close(): Promise<void> {
    return this.host.close();
  }

  /** PIDs of the engine's child processes (diagnostics, tests): one, and any being replaced. */
  pids(): number[] {
    return this.host.pids();
  }
}

/**
 * 422 UNSUPPORTED_SSML naming the first symbol of the IPA the model has no id for (Piper would leave it out unsaid),
 * as the model takes it (spokenIpa, then decomposed as Piper maps it).
 */
function assertSpeakableIpa(ipa: string, phonemeIds: Record<string, number[]>, voiceId: string): void {
  for (const symbol of spokenIpa(ipa).normalize('NFD')) {
    if (!phonemeIds[symbol]) throw unspeakableIpa(ipa, symbol, voiceId);
  }
}
