import { AppError } from '../../errors.js';
import type { Voice } from '../voice.js';
import type { Engine, SpeechChunk, SynthesizeOptions, VoiceHandle } from '../types.js';
import { bindVoice } from '../voice-handle.js';
import { HOST_IDLE_MS, NodeHost, hostModulePath } from '../hosts/node-host.js';
import { sanitizeText } from '../mapped-text.js';
import { isPcmAudio, type PcmAudio } from '../wav.js';
import { HostPool } from '../hosts/host-pool.js';

export interface FliteJob {
  voice: string;
  text: string;
}

export interface FliteEngineOptions {
  /** Processes, each running one job at a time. */
  poolSize: number;
  /** A per-job time limit for callers with no deadline of their own; the service passes each job's deadline in its signal instead. */
  jobTimeoutMs?: number;
  /** Where the engine's processes keep temporary files (their TMPDIR); default the OS temp dir. */
  tempDir?: string;
  /** Jobs before a process is replaced by a fresh one (each job always gets a fresh WebAssembly instance). */
  jobsPerProcess?: number;
  /** Host entry module; tests substitute one that misbehaves on purpose. */
  hostModule?: string;
  /** How long a host may take to start (a loaded machine starts processes slowly). */
  startTimeoutMs?: number;
}

const FLITE_SAMPLE_RATE = 16_000;
const DEFAULT_JOBS_PER_PROCESS = 50;

const VOICES: readonly Voice[] = [
  { name: 'AWB, Scottish English', voice: 'awb', language: 'en-GB-scotland', gender: 'male' as const },
  { name: 'KAL16, US English', voice: 'kal16', language: 'en-US', gender: 'male' as const },
  { name: 'RMS, US English', voice: 'rms', language: 'en-US', gender: 'male' as const },
  { name: 'SLT, US English', voice: 'slt', language: 'en-US', gender: 'female' as const },
].map(({ voice, ...rest }) => ({
  id: `flite:${voice}`,
  ...rest,
  engine: 'flite' as const,
  sampleRate: FLITE_SAMPLE_RATE,
  // Flite can print phone durations but not where its words are in the text.
  wordTimings: false,
  phonemes: false,
}));

// Node's WASI, called through V8 fast API calls, writes through a stale pointer once the module's memory has grown
// (a text over ~800 characters, in a fresh instance or not): the heap gets corrupted and the process aborts or
// segfaults. Without fast calls, hundreds of jobs of up to 5000 characters run in one process.
const HOST_EXEC_ARGV = ['--no-turbo-fast-api-calls', '--disable-warning=ExperimentalWarning'];

/**
 * Flite (WebAssembly on WASI, BSD) in child processes that compile the module once and run each job in a fresh
 * instance, prepared before the job arrives. A process is replaced after `jobsPerProcess` jobs; one stays warm.
 */
export class FliteEngine implements Engine {
  readonly name = 'flite';

  private constructor(private readonly pool: HostPool<FliteJob, PcmAudio>) {}

  static async create(options: FliteEngineOptions): Promise<FliteEngine> {
    const module = options.hostModule ?? hostModulePath('flite-host', import.meta.url);
    const pool = new HostPool<FliteJob, PcmAudio>({
      size: options.poolSize,
      // Started on first use (the first Flite request pays ~0.1 s more), stopped when idle.
      warm: 0,
      idleMs: HOST_IDLE_MS,
      jobTimeoutMs: options.jobTimeoutMs,
      start: () =>
        NodeHost.start<FliteJob, PcmAudio>({
          startTimeoutMs: options.startTimeoutMs,
          module,
          isResult: isPcmAudio,
          execArgv: HOST_EXEC_ARGV,
          maxJobs: options.jobsPerProcess ?? DEFAULT_JOBS_PER_PROCESS,
          tempDir: options.tempDir,
        }),
    });
    try {
      await pool.warmUp();
    } catch (error) {
      await pool.close();
      throw error;
    }
    return new FliteEngine(pool);
  }

  listVoices(): Promise<Voice[]> {
    return Promise.resolve([...VOICES]);
  }

  handleOf(voiceId: string): VoiceHandle | undefined {
    return bindVoice(this, voiceId);
  }

  findVoice(voiceId: string): Voice | undefined {
    const id = voiceId.toLowerCase();
    return VOICES.find((voice) => voice.id === id);
  }

  async synthesize(voiceId: string, text: string, options: SynthesizeOptions = {}): Promise<SpeechChunk> {
    const voice = this.findVoice(voiceId);
    if (!voice) throw new AppError('UNKNOWN_VOICE', { field: 'voice' });
    const job = { voice: voice.id.slice('flite:'.length), text: sanitizeText(text) };
    const { samples, sampleRate } = await this.pool.run(job, options);
    return { samples, sampleRate };
  }

  close(): Promise<void> {
    return this.pool.close();
  }

  pids(): number[] {
    return this.pool.pids();
  }
}
