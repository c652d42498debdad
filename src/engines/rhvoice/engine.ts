import { AppError } from '../../errors.js';
import type { Voice } from '../voice.js';
import type { Engine, SpeechChunk, SynthesizeOptions, VoiceHandle } from '../types.js';
import { bindVoice } from '../voice-handle.js';
import { HOST_IDLE_MS, NodeHost, hostModulePath } from '../hosts/node-host.js';
import { sanitizeText } from '../mapped-text.js';
import { HostPool } from '../hosts/host-pool.js';
import { isRhvoiceResult, type RhvoiceJob, type RhvoiceResult } from './protocol.js';
import { installedRhvoiceVoices, RHVOICE_ENGINE } from './voices.js';
import { rhvoiceWordTimings } from './words.js';

export interface RhvoiceEngineOptions {
  /** Child processes, each running one job at a time; one is started ahead of demand. */
  poolSize: number;
  /** A per-job time limit for callers with no deadline of their own; the service passes each job's deadline in its signal instead. */
  jobTimeoutMs?: number;
  /** Where the engine's processes keep temporary files (their TMPDIR); default the OS temp dir. */
  tempDir?: string;
  /** Host entry module; tests substitute one that misbehaves on purpose. */
  hostModule?: string;
  /** How long a host may take to start (a loaded machine starts processes slowly). */
  startTimeoutMs?: number;
}

/** RHVoice (Debian's librhvoice5 and rhvoice-english, LGPL) in child processes; no voices when it is not installed. */
export class RhvoiceEngine implements Engine {
  readonly name = RHVOICE_ENGINE;

  private readonly byId: ReadonlyMap<string, Voice>;

  private constructor(
    private readonly pool: HostPool<RhvoiceJob, RhvoiceResult> | undefined,
    voices: readonly Voice[],
  ) {
    this.byId = new Map(voices.map((voice) => [voice.id, voice]));
  }

  static async create(options: RhvoiceEngineOptions): Promise<RhvoiceEngine> {
    // Checked before any process starts: nothing to start where the voices are not installed.
    const installed = await installedRhvoiceVoices();
    if (installed.length === 0) return new RhvoiceEngine(undefined, []);
    const module = options.hostModule ?? hostModulePath('rhvoice-host', import.meta.url);
    const pool = new HostPool<RhvoiceJob, RhvoiceResult>({
      size: options.poolSize,
      // Started to list the voices, then on demand; stopped when idle.
      warm: 0,
      idleMs: HOST_IDLE_MS,
      jobTimeoutMs: options.jobTimeoutMs,
      start: () => NodeHost.start<RhvoiceJob, RhvoiceResult>({ startTimeoutMs: options.startTimeoutMs, module, isResult: isRhvoiceResult, tempDir: options.tempDir }),
    });
    try {
      await pool.warmUp();
      const description = await pool.run({ kind: 'describe' });
      if (description.kind !== 'description') throw new Error('RHVoice did not list its voices.');
      const known = new Set(description.voices);
      const voices = installed
        .filter((voice) => known.has(voiceName(voice.id)))
        .map((voice) => ({ ...voice, sampleRate: description.sampleRate }));
      await pool.trim();
      if (voices.length > 0 && description.sampleRate > 0) return new RhvoiceEngine(pool, voices);
    } catch {
      // The voices are there but the library is missing or broken: like an engine not installed.
    }
    await pool.close();
    return new RhvoiceEngine(undefined, []);
  }

  listVoices(): Promise<Voice[]> {
    return Promise.resolve([...this.byId.values()]);
  }

  handleOf(voiceId: string): VoiceHandle | undefined {
    return bindVoice(this, voiceId);
  }

  findVoice(voiceId: string): Voice | undefined {
    return this.byId.get(voiceId.toLowerCase());
  }

  async synthesize(voiceId: string, text: string, options: SynthesizeOptions = {}): Promise<SpeechChunk> {
    const voice = this.findVoice(voiceId);
    if (!this.pool || !voice) throw new AppError('UNKNOWN_VOICE', { field: 'voice' });
    const source = sanitizeText(text);
    const result = await this.pool.run({ kind: 'synthesize', voice: voiceName(voice.id), text: source }, options);
    if (result.kind !== 'speech') {
      throw new AppError('ENGINE_FAILED', { message: 'RHVoice answered with something else than speech.' });
    }
    return {
      samples: result.samples,
      sampleRate: result.sampleRate,
      words: rhvoiceWordTimings(source, result.words, result.sampleRate, result.samples.length),
    };
  }

  async close(): Promise<void> {
    await this.pool?.close();
  }

  /** PIDs of the engine's child processes (diagnostics, tests). */
  pids(): number[] {
    return this.pool?.pids() ?? [];
  }
}

function voiceName(voiceId: string): string {
  return voiceId.slice(RHVOICE_ENGINE.length + 1);
}
