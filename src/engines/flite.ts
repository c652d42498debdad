import { AppError } from '../errors.js';
import type { Voice } from '../schemas.js';
import type { Engine, SpeechChunk, SynthesizeOptions } from './types.js';
import { HostWorker, hostModulePath } from './host-worker.js';
import { sanitizeText } from './text.js';
import { isPcmAudio, type PcmAudio } from './wav.js';
import { WorkerPool } from './worker-pool.js';

export interface FliteJob {
  voice: string;
  text: string;
}

export interface FliteEngineOptions {
  /** Jobs running at once, each in its own process. */
  poolSize: number;
  jobTimeoutMs: number;
  /** Host entry module; tests substitute one that misbehaves on purpose. */
  hostModule?: string;
}

const FLITE_SAMPLE_RATE = 16_000;

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
}));

// Node's WASI, with V8 fast API calls, writes through a stale memory pointer once the module's memory has grown
// (texts over ~800 characters): the heap gets corrupted and the process aborts. Without fast calls it holds.
const HOST_EXEC_ARGV = ['--no-turbo-fast-api-calls', '--disable-warning=ExperimentalWarning'];

/**
 * Flite (WebAssembly on WASI, BSD) with one fresh process per job. A child with the module compiled and instantiated
 * is kept waiting for its job, so the start-up does not count against the request.
 */
export class FliteEngine implements Engine {
  readonly name = 'flite';

  private constructor(private readonly pool: WorkerPool<FliteJob, PcmAudio>) {}

  static async create(options: FliteEngineOptions): Promise<FliteEngine> {
    const module = options.hostModule ?? hostModulePath('flite-host', import.meta.url);
    const pool = new WorkerPool<FliteJob, PcmAudio>({
      size: options.poolSize,
      warm: 1,
      jobTimeoutMs: options.jobTimeoutMs,
      start: () => HostWorker.start<FliteJob, PcmAudio>({ module, isResult: isPcmAudio, execArgv: HOST_EXEC_ARGV, maxJobs: 1 }),
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

  findVoice(voiceId: string): Voice | undefined {
    const id = voiceId.toLowerCase();
    return VOICES.find((voice) => voice.id === id);
  }

  async synthesize(voiceId: string, text: string, options: SynthesizeOptions = {}): Promise<SpeechChunk> {
    const voice = this.findVoice(voiceId);
    if (!voice) throw new AppError('UNKNOWN_VOICE', { field: 'voice' });
    const { samples, sampleRate } = await this.pool.run({ voice: voice.id.slice('flite:'.length), text: sanitizeText(text) }, options);
    return { samples, sampleRate };
  }

  close(): Promise<void> {
    return this.pool.close();
  }

  pids(): number[] {
    return this.pool.pids();
  }
}
