import { AppError } from '../../errors.js';
import type { Voice } from '../voice.js';
import type { Engine, PhonemeSpan, SpeechChunk, SynthesizeOptions, VoiceHandle } from '../types.js';
import { bindVoice } from '../voice-handle.js';
import { isEspeakResult, type EspeakDescription, type EspeakJob, type EspeakResult } from './protocol.js';
import { recordedDescription } from './voices-recorded.js';
import { IpaSpeller } from './ipa.js';
import { buildEspeakWordTimings, toEspeakSsml, type SpelledSpan } from './text.js';
import { ESPEAK_ENGINE, EspeakVoiceCatalog, type EspeakVariant } from './voices.js';
import { HOST_IDLE_MS, NodeHost, hostModulePath } from '../hosts/node-host.js';
import { sanitizeText } from '../mapped-text.js';
import { HostPool } from '../hosts/host-pool.js';

export interface EspeakEngineOptions {
  /** Warm child processes, each running one job at a time. */
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

/** eSpeak NG (WebAssembly, GPL-3.0) in a pool of persistent child processes. */
export class EspeakEngine implements Engine {
  readonly name = ESPEAK_ENGINE;
  /** Each voice's IPA speller, once asked of eSpeak. */
  private readonly spellers = new Map<string, Promise<IpaSpeller>>();

  private constructor(
    private readonly pool: HostPool<EspeakJob, EspeakResult>,
    private readonly catalog: EspeakVoiceCatalog,
  ) {}

  static async create(options: EspeakEngineOptions): Promise<EspeakEngine> {
    const pool = newPool(options);
    try {
      // The voices recorded for the installed release (voices-recorded.ts), else a host's own list: one put in
      // place of the engine's own (a test's) describes itself.
      const recorded = options.hostModule ? undefined : recordedDescription();
      const { voices, variants, sampleRate } = recorded ?? (await describeByHost(pool));
      return new EspeakEngine(pool, new EspeakVoiceCatalog(voices, variants, sampleRate));
    } catch (error) {
      await pool.close();
      throw error;
    }
  }

  /** Asks a host of its own for the voices (what script/record-espeak-voices.ts records). */
  static async describe(options: Pick<EspeakEngineOptions, 'startTimeoutMs' | 'tempDir'> = {}): Promise<EspeakDescription> {
    const pool = newPool({ poolSize: 1, ...options });
    try {
      return await describeByHost(pool);
    } finally {
      await pool.close();
    }
  }

  listVoices(): Promise<Voice[]> {
    return Promise.resolve(this.catalog.list());
  }

  handleOf(voiceId: string): VoiceHandle | undefined {
    return bindVoice(this, voiceId);
  }

  /** Any `espeak-ng:<voice>+<variant>` combination, not only the listed ones. */
  findVoice(voiceId: string): Voice | undefined {
    return this.catalog.find(voiceId)?.voice;
  }

  listVariants(): EspeakVariant[] {
    return this.catalog.listVariants();
  }

  async synthesize(voiceId: string, text: string, options: SynthesizeOptions = {}): Promise<SpeechChunk> {
    const choice = this.catalog.find(voiceId);
    if (!choice) throw new AppError('UNKNOWN_VOICE', { field: 'voice' });
    const source = sanitizeText(text);
    const spelled = options.phonemes?.length ? await this.spell(choice.espeakName, voiceId, options.phonemes) : [];
    const ssml = toEspeakSsml(source, spelled);
    const result = await this.pool.run({ kind: 'synthesize', voice: choice.espeakName, ssml: ssml.text }, options);
    if (result.kind !== 'speech') {
      throw new AppError('ENGINE_FAILED', { message: 'eSpeak NG answered with something else than speech.' });
    }
    const duration = result.samples.length / result.sampleRate;
    return {
      samples: result.samples,
      sampleRate: result.sampleRate,
      words: buildEspeakWordTimings(source, ssml, result.events, duration, choice.voice.language),
    };
  }

  /** The spans' IPA in the voice's phoneme mnemonics; its table is asked of eSpeak once per voice. */
  private async spell(espeakName: string, voiceId: string, spans: readonly PhonemeSpan[]): Promise<SpelledSpan[]> {
    let speller = this.spellers.get(espeakName);
    if (!speller) {
      speller = this.pool.run({ kind: 'phoneme-table', voice: espeakName }).then((result) => {
        if (result.kind !== 'phoneme-table') throw new AppError('ENGINE_FAILED', { message: 'eSpeak NG did not list its phonemes.' });
        return new IpaSpeller(result.entries);
      });
      speller.catch(() => this.spellers.delete(espeakName));
      this.spellers.set(espeakName, speller);
    }
    const ready = await speller;
    return spans.map(({ start, end, ipa }) => ({ start, end, mnemonics: ready.spell(ipa, voiceId) }));
  }

  close(): Promise<void> {
    return this.pool.close();
  }

  /** PIDs of the engine's child processes (diagnostics, tests). */
  pids(): number[] {
    return this.pool.pids();
  }
}

/** Hosts started on demand (the first request pays ~0.1 s more), stopped when idle. */
function newPool(options: EspeakEngineOptions): HostPool<EspeakJob, EspeakResult> {
  const module = options.hostModule ?? hostModulePath('espeak-host', import.meta.url);
  return new HostPool<EspeakJob, EspeakResult>({
    size: options.poolSize,
    warm: 0,
    idleMs: HOST_IDLE_MS,
    jobTimeoutMs: options.jobTimeoutMs,
    start: () => NodeHost.start<EspeakJob, EspeakResult>({ startTimeoutMs: options.startTimeoutMs, module, isResult: isEspeakResult, tempDir: options.tempDir }),
  });
}

/** Starts a host to list the voices (a second or more), then lets it go until the first request. */
async function describeByHost(pool: HostPool<EspeakJob, EspeakResult>): Promise<EspeakDescription> {
  await pool.warmUp();
  const description = await pool.run({ kind: 'describe' });
  if (description.kind !== 'description') {
    throw new AppError('ENGINE_FAILED', { message: 'eSpeak NG did not list its voices.' });
  }
  await pool.trim();
  const { sampleRate, voices, variants } = description;
  return { sampleRate, voices, variants };
}
