import { AppError } from '../../errors.js';
import type { Voice } from '../voice.js';
import type { Engine, SpeechChunk, SynthesizeOptions } from '../types.js';
import { NodeHost, hostModulePath } from '../hosts/node-host.js';
import { sanitizeText } from '../mapped-text.js';
import { HostPool } from '../hosts/host-pool.js';
import { PIPER_ENGINE, PiperVoiceCatalog } from './catalog.js';
import { isPiperResult, type PiperJob, type PiperResult } from './protocol.js';
import { piperWordTimings } from './words.js';

export interface PiperEngineOptions {
  /** Where the voices are (`<voice>.onnx` with `<voice>.onnx.json`, in any subfolder); none: no voices. */
  voicesDir?: string;
  /** Processes at most, each running one job at a time on one core. */
  poolSize: number;
  /** Processes kept started ahead of demand (each loads a voice on its first job for it). */
  warm?: 0 | 1;
  /** A per-job time limit for callers with no deadline of their own; the service passes each job's deadline in its signal instead. */
  jobTimeoutMs?: number;
  /** Where the engine's processes keep temporary files (their TMPDIR); default the OS temp dir. */
  tempDir?: string;
  /** Host entry module; tests substitute one that misbehaves on purpose. */
  hostModule?: string;
}

// A host collects the garbage once a model is loaded (see model.ts).
const HOST_EXEC_ARGV = ['--expose-gc'];

/** What a host process holds, for diagnostics and tests. */
export interface PiperHostStats {
  pid: number;
  /** Models the process has loaded (a model loads once per process, unless dropped for others). */
  loads: number;
  models: string[];
  rssBytes: number;
}

/** Piper neural voices (VITS models on onnxruntime, phonemes from eSpeak NG) in a pool of child processes. */
export class PiperEngine implements Engine {
  readonly name = PIPER_ENGINE;

  private constructor(
    private readonly catalog: PiperVoiceCatalog,
    private readonly pool: HostPool<PiperJob, PiperResult>,
  ) {}

  /** Lists the installed voices; without any, no process is ever started. */
  static async create(options: PiperEngineOptions): Promise<PiperEngine> {
    const catalog = await PiperVoiceCatalog.scan(options.voicesDir);
    const module = options.hostModule ?? hostModulePath('piper-host', import.meta.url);
    const pool = new HostPool<PiperJob, PiperResult>({
      size: options.poolSize,
      warm: catalog.size > 0 ? (options.warm ?? 1) : 0,
      jobTimeoutMs: options.jobTimeoutMs,
      start: () => NodeHost.start<PiperJob, PiperResult>({ module, isResult: isPiperResult, execArgv: HOST_EXEC_ARGV, tempDir: options.tempDir }),
    });
    try {
      await pool.warmUp();
    } catch (error) {
      await pool.close();
      throw error;
    }
    return new PiperEngine(catalog, pool);
  }

  listVoices(): Promise<Voice[]> {
    return Promise.resolve(this.catalog.list());
  }

  findVoice(voiceId: string): Voice | undefined {
    return this.catalog.find(voiceId)?.voice;
  }

  /** `options.speed` is honoured: the model speaks faster or slower (its length scale), at its own pitch. */
  async synthesize(voiceId: string, text: string, options: SynthesizeOptions = {}): Promise<SpeechChunk> {
    const choice = this.catalog.find(voiceId);
    if (!choice) throw new AppError('UNKNOWN_VOICE', { field: 'voice' });
    const speed = options.speed ?? 1;
    if (!(speed > 0 && Number.isFinite(speed))) throw new AppError('VALIDATION_ERROR', { field: 'speed', message: 'speed must be a positive number.' });
    const source = sanitizeText(text);
    const job: PiperJob = {
      kind: 'synthesize',
      model: choice.model,
      speakerId: choice.speakerId,
      text: source,
      lengthScale: choice.model.scales.length / speed,
    };
    const result = await this.pool.run(job, options);
    if (result.kind !== 'speech') throw new AppError('ENGINE_FAILED', { message: 'Piper answered with something else than speech.' });
    return {
      samples: result.samples,
      sampleRate: result.sampleRate,
      ...(result.words ? { words: piperWordTimings(source, choice.voice.language, result.words, result.sampleRate) } : {}),
    };
  }

  /** What one host process holds (whichever takes the job; with a pool of one, the only one). */
  async hostStats(options: SynthesizeOptions = {}): Promise<PiperHostStats> {
    const result = await this.pool.run({ kind: 'stats' }, options);
    if (result.kind !== 'stats') throw new AppError('ENGINE_FAILED', { message: 'Piper answered with something else than its stats.' });
    const { pid, loads, models, rssBytes } = result;
    return { pid, loads, models, rssBytes };
  }

  close(): Promise<void> {
    return this.pool.close();
  }

  /** PIDs of the engine's child processes (diagnostics, tests). */
  pids(): number[] {
    return this.pool.pids();
  }
}
