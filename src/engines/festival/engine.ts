import { access, constants } from 'node:fs/promises';
import { delimiter, join } from 'node:path';
import { AppError } from '../../errors.js';
import { runProcess } from '../../media/process.js';
import type { Voice } from '../voice.js';
import type { Engine, SpeechChunk, SynthesizeOptions, WordTiming, VoiceHandle } from '../types.js';
import { bindVoice } from '../voice-handle.js';
import { FestivalHost, type FestivalSpeech, type FestivalToken } from './festival-host.js';
import { forEachCodePoint, MappedTextBuilder, sanitizeText, type MappedText } from '../mapped-text.js';
import { HostPool } from '../hosts/host-pool.js';

const FESTIVAL_VOICE = 'cmu_us_slt_arctic_hts';
const PROBE_TIMEOUT_MS = 20_000;
const PROBE_MARKER = 'VOXREEL-VOICE';
// Synthesizes one letter to learn the voice's real sample rate.
const PROBE = `(if (member_string "${FESTIVAL_VOICE}" (voice.list))
  (begin
    (voice_${FESTIVAL_VOICE})
    (format t "${PROBE_MARKER} %d\\n" (cadr (assoc 'sample_rate (wave.info (utt.wave (utt.synth (Utterance Text "a")))))))))
`;

export interface FestivalEngineOptions {
  /** A per-job time limit for callers with no deadline of their own; the service passes each job's deadline in its signal instead. */
  jobTimeoutMs?: number;
  /** Where the engine's processes keep temporary files (their TMPDIR); default the OS temp dir. */
  tempDir?: string;
  /** Festival processes (~330 MB each); started on first use, then kept. */
  processes?: number;
  /** Defaults to `festival` on PATH. */
  festivalPath?: string;
}

export interface FestivalInstallation {
  path: string;
  sampleRate: number;
}

async function findOnPath(program: string): Promise<string | undefined> {
  for (const directory of (process.env.PATH ?? '').split(delimiter).filter(Boolean)) {
    const candidate = join(directory, program);
    try {
      await access(candidate, constants.X_OK);
      return candidate;
    } catch {
      // Not in this directory.
    }
  }
  return undefined;
}

/** Festival with the HTS voice, or undefined when either is missing or does not work. */
export async function detectFestival(festivalPath?: string): Promise<FestivalInstallation | undefined> {
  const path = festivalPath ?? (await findOnPath('festival'));
  if (!path) return undefined;
  try {
    const { stdout } = await runProcess(path, ['--pipe'], { input: PROBE, timeoutMs: PROBE_TIMEOUT_MS });
    const match = new RegExp(`^${PROBE_MARKER} (\\d+)$`, 'm').exec(stdout.toString('utf8'));
    return match?.[1] ? { path, sampleRate: Number(match[1]) } : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Festival's English front end reads bytes: accented letters lose their accents (é → e) so that it says the
 * letter instead of skipping it; each unit still knows where it came from.
 */
export function toFestivalText(text: string): MappedText {
  const builder = new MappedTextBuilder();
  forEachCodePoint(text, (char, offset) => {
    builder.append(char.normalize('NFKD').replace(/\p{M}/gu, ''), offset, offset + char.length);
  });
  return builder.build();
}

/** Festival's tokens are the text's whitespace-separated tokens minus surrounding punctuation: find them in order. */
export function festivalWordTimings(source: string, spoken: MappedText, tokens: readonly FestivalToken[]): WordTiming[] {
  const words: WordTiming[] = [];
  let cursor = 0;
  for (const token of tokens) {
    const index = spoken.text.indexOf(token.name, cursor);
    const span = index === -1 ? undefined : spoken.sourceSpan(index, index + token.name.length);
    if (!span) continue;
    cursor = index + token.name.length;
    words.push({
      word: source.slice(span.offset, span.offset + span.length),
      start: token.start,
      end: token.end,
      textOffset: span.offset,
      textLength: span.length,
    });
  }
  return words;
}

/** Festival (Debian package) with the CMU SLT HTS voice, in a persistent process started on first use. */
export class FestivalEngine implements Engine {
  readonly name = 'festival';

  private constructor(
    private readonly pool: HostPool<string, FestivalSpeech> | undefined,
    private readonly voices: readonly Voice[],
  ) {}

  static async create(options: FestivalEngineOptions): Promise<FestivalEngine> {
    const installation = await detectFestival(options.festivalPath);
    if (!installation) return new FestivalEngine(undefined, []);
    const pool = new HostPool<string, FestivalSpeech>({
      size: options.processes ?? 1,
      warm: 0,
      jobTimeoutMs: options.jobTimeoutMs,
      start: () =>
        FestivalHost.start({
          festivalPath: installation.path,
          voiceCommand: `(voice_${FESTIVAL_VOICE})`,
          sampleRate: installation.sampleRate,
          tempDir: options.tempDir,
        }),
    });
    const voice: Voice = {
      id: 'festival:slt-hts',
      name: 'SLT (HTS), US English',
      language: 'en-US',
      gender: 'female',
      engine: 'festival',
      sampleRate: installation.sampleRate,
      wordTimings: true,
      phonemes: false,
    };
    return new FestivalEngine(pool, [voice]);
  }

  listVoices(): Promise<Voice[]> {
    return Promise.resolve([...this.voices]);
  }

  handleOf(voiceId: string): VoiceHandle | undefined {
    return bindVoice(this, voiceId);
  }

  findVoice(voiceId: string): Voice | undefined {
    const id = voiceId.toLowerCase();
    return this.voices.find((voice) => voice.id === id);
  }

  async synthesize(voiceId: string, text: string, options: SynthesizeOptions = {}): Promise<SpeechChunk> {
    if (!this.pool || !this.findVoice(voiceId)) throw new AppError('UNKNOWN_VOICE', { field: 'voice' });
    const source = sanitizeText(text);
    const spoken = toFestivalText(source);
    const speech = await this.pool.run(spoken.text, options);
    return {
      samples: speech.samples,
      sampleRate: speech.sampleRate,
      words: festivalWordTimings(source, spoken, speech.tokens),
    };
  }

  async close(): Promise<void> {
    await this.pool?.close();
  }

  pids(): number[] {
    return this.pool?.pids() ?? [];
  }
}
