import { availableParallelism } from 'node:os';
import { AppError } from '../../errors.js';
import type { Voice } from '../voice.js';
import type { Engine, SpeechChunk, SynthesizeOptions, VoiceHandle } from '../types.js';
import { bindVoice } from '../voice-handle.js';
import { hostModulePath } from '../hosts/node-host.js';
import { SharedHost } from '../hosts/shared-host.js';
import { sanitizeText } from '../mapped-text.js';
import { modelSpeed, hostEnvironment, ONNX_HOST_EXEC_ARGV, warmHost, type OnnxEngineOptions } from '../onnx/host-options.js';
import type { OnnxRuntimeInfo } from '../onnx/runtime.js';
import { piperWordTimings } from '../piper/words.js';
import { KokoroCatalog } from './catalog.js';
import { KOKORO_ENGINE } from './packs.js';
import { kokoroSymbols } from './phonemes/ipa.js';
import { isKokoroResult, type KokoroJob, type KokoroResult } from './protocol.js';

/** The model and packs are in `voicesDir`'s kokoro/ folder (script/voices.ts puts them there). */
export type KokoroEngineOptions = OnnxEngineOptions;

/** Whether the start-up voice is one of these: only when WARM_VOICE names it (`auto` passes over Kokoro, a heavy engine: see engines/index.ts). */
function startsWithIt(catalog: KokoroCatalog, choice: string | undefined): boolean {
  return choice !== undefined && choice !== 'auto' && catalog.find(choice) !== undefined;
}

/** What the host process holds, for diagnostics and tests. */
export interface KokoroHostStats {
  pid: number;
  /** The model is loaded: as the process starts when a Kokoro voice is the start-up voice, else with its first job. */
  loaded: boolean;
  rssBytes: number;
  onnxruntime: OnnxRuntimeInfo | null;
}

/**
 * Kokoro-82M (StyleTTS 2 with an iSTFTNet vocoder, 24 kHz) on ONNX Runtime in one child process that loads the
 * model once and takes every job; its voices are style packs, and blends of them.
 */
export class KokoroEngine implements Engine {
  readonly name = KOKORO_ENGINE;
  /** Its speed divides the durations before they are rounded to whole frames: af_heart 2.0× as long at 0.5, 1.85× shorter at 2. */
  readonly naturalSpeedShare = 0.94;
  private nextTicket = 1;
  private fallbackSaid = false;

  private constructor(
    private readonly catalog: KokoroCatalog,
    private readonly host: SharedHost<KokoroJob, KokoroResult>,
    private readonly log: KokoroEngineOptions['log'],
  ) {}

  /** Lists the installed packs; without the model or any pack, no process is ever started. */
  static async create(options: KokoroEngineOptions): Promise<KokoroEngine> {
    const catalog = await KokoroCatalog.scan(options.voicesDir);
    const threads = Math.max(1, Math.min(options.poolSize, availableParallelism()));
    const atStart = startsWithIt(catalog, options.warmVoice);
    const host = new SharedHost<KokoroJob, KokoroResult>({
      module: options.hostModule ?? hostModulePath('kokoro-host', import.meta.url),
      args: [String(threads), options.onnxRuntimeLibrary ?? '', catalog.modelPath ?? '', atStart ? '1' : '0'],
      isResult: isKokoroResult,
      execArgv: ONNX_HOST_EXEC_ARGV,
      env: hostEnvironment(options),
      tempDir: options.tempDir,
      startTimeoutMs: options.startTimeoutMs,
      jobTimeoutMs: options.jobTimeoutMs,
      ping: { kind: 'stats' },
      cancel: (job) => (job.kind === 'synthesize' ? { kind: 'cancel', ticket: job.ticket } : undefined),
    });
    const engine = new KokoroEngine(catalog, host, options.log);
    // Its process (a Node with eSpeak NG, some 60 MB before the model) starts ahead of demand only for the start-up
    // voice; otherwise with the first Kokoro job, as the engines without a model do (`warm: 0`).
    if (catalog.size > 0 && (options.warm ?? (atStart ? 1 : 0)) === 1) {
      await warmHost(host);
      engine.hostStats().catch(() => undefined);
    }
    return engine;
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

  /** `options.speed` is the model's own: it says each phoneme that many times faster (its durations divided by it). */
  async synthesize(voiceId: string, text: string, options: SynthesizeOptions = {}): Promise<SpeechChunk> {
    const choice = this.catalog.find(voiceId);
    if (!choice) throw new AppError('UNKNOWN_VOICE', { field: 'voice' });
    const speed = modelSpeed(options.speed);
    const source = sanitizeText(text);
    const phonemes = (options.phonemes ?? []).map(({ start, end, ipa }) => ({ start, end, symbols: kokoroSymbols(ipa, choice.language, choice.voice.id) }));
    const job: KokoroJob = {
      kind: 'synthesize',
      ticket: this.nextTicket++,
      text: source,
      language: choice.language,
      style: choice.style,
      speed,
      ...(phonemes.length > 0 ? { phonemes } : {}),
    };
    const result = await this.host.run(job, options);
    if (result.kind === 'refused') throw new AppError(result.code, { message: result.message, ...(result.code === 'UNSUPPORTED_TEXT' ? { field: 'text' } : { retryAfter: 30 }) });
    if (result.kind !== 'speech') throw new AppError('ENGINE_FAILED', { message: 'Kokoro answered with something else than speech.' });
    return {
      samples: result.samples,
      sampleRate: result.sampleRate,
      ...(result.words ? { words: piperWordTimings(source, choice.voice.language, result.words, result.sampleRate) } : {}),
    };
  }

  /** What the host process holds (starting it if none runs); a fallback runtime is said once in the log. */
  async hostStats(options: SynthesizeOptions = {}): Promise<KokoroHostStats> {
    const result = await this.host.run({ kind: 'stats' }, options);
    if (result.kind !== 'stats') throw new AppError('ENGINE_FAILED', { message: 'Kokoro answered with something else than its stats.' });
    const { pid, loaded, rssBytes, onnxruntime } = result;
    if (onnxruntime?.fallback && !this.fallbackSaid) {
      this.fallbackSaid = true;
      this.log?.warn({ engine: KOKORO_ENGINE, onnxruntime: onnxruntime.version }, `Kokoro runs on onnxruntime-node's ONNX Runtime ${onnxruntime.version}: ${onnxruntime.fallback}`);
    }
    return { pid, loaded, rssBytes, onnxruntime };
  }

  close(): Promise<void> {
    return this.host.close();
  }

  /** PIDs of the engine's child processes (diagnostics, tests). */
  pids(): number[] {
    return this.host.pids();
  }
}
