import { AppError } from '../errors.js';
import { freeBytes } from '../storage/disk-space.js';
import type { ScratchBudget } from '../storage/scratch.js';
import type { Script } from './script.js';

/** Speech made before the budget trusts its projection: early sentences say little about a whole text. */
const PROJECT_AFTER_SECONDS = 60;
/** How far past the limit a projection must reach to refuse: ordinary texts vary less than that along their length. */
const PROJECTION_MARGIN = 1.5;
/** Retry-After of STORAGE_FULL: the sweep or another job's end frees space in about that time. */
const DISK_RETRY_SECONDS = 60;

/** What one request may spend (config.ts `budget`), each limit with the variable that sets it. */
export interface BudgetLimits {
  /** Seconds of the finished file (after speed), set by `secondsVariable`. */
  seconds: number;
  secondsVariable: 'MAX_AUDIO_SECONDS' | 'MAX_VIDEO_SECONDS' | 'MAX_LONG_AUDIO_SECONDS' | 'MAX_LONG_VIDEO_SECONDS';
  /** MAX_SPOKEN_CHARACTERS: the text as the engine is given it, after lexicons and normalization. */
  spokenCharacters: number;
  spokenVariable?: 'MAX_SPOKEN_CHARACTERS' | 'MAX_LONG_SPOKEN_CHARACTERS';
  /** JOB_SCRATCH_MB: files a render writes in scratch space. */
  scratchBytes: number;
  /** MIN_FREE_DISK_MB: left free after any file the request writes. */
  minFreeDiskBytes: number;
}

/**
 * The most one request may make, counted where each cost is made and refused (422, the limit named) before the work
 * that would pass it: the spoken length before the script is rewritten and spoken, the seconds its breaks and pauses
 * take before any sentence is spoken, each sentence's seconds as it comes (and, once a minute of speech exists, a
 * pace that would take the text half as far again past the limit), scratch bytes before they are written, and free
 * disk (503) before any generated file or scratch file is written. One per request, made by the synthesizer or the
 * video maker and handed down.
 */
export class RequestBudget implements ScratchBudget {
  private seconds = 0;
  private characters = 0;
  private totalCharacters = 0;
  private scratch = 0;
  private started = false;

  /**
   * `tempo`: how much faster than spoken the file plays (a file of N seconds holds N × tempo seconds of speech);
   * `gapSeconds`: the pause between sentences where no break stands.
   */
  constructor(
    readonly limits: BudgetLimits,
    private readonly tempo = 1,
    private readonly gapSeconds = 0,
  ) {}

  /** The limit in seconds of speech as spoken (before the tempo). */
  private get maxSpeechSeconds(): number {
    return this.limits.seconds * this.tempo;
  }

  /** Refuses a spoken text longer than MAX_SPOKEN_CHARACTERS, before it is built (lexicon aliases) or spoken. */
  spokenLength(characters: number): void {
    if (characters <= this.limits.spokenCharacters) return;
    throw new AppError('OUTPUT_TOO_LONG', {
      field: 'text',
      message:
        `The text is ${characters} characters long as spoken (after lexicon aliases and normalization), more than ${this.limits.spokenVariable ?? 'MAX_SPOKEN_CHARACTERS'} (${this.limits.spokenCharacters}); ` +
        'shorten it or its aliases, or split it into several requests.',
    });
  }

  /**
   * Checks the script before anything is spoken: its spoken length, and the seconds its pauses alone take (every
   * SSML break, and the usual pause between sentences); counts its characters for the projection.
   */
  plan(script: Script): void {
    const audible = script.utterances.filter((utterance) => utterance.volumeDb !== -Infinity);
    const spoken = audible.reduce((sum, utterance) => sum + utterance.spoken.text.length, 0);
    this.spokenLength(spoken);
    this.totalCharacters = script.utterances.reduce((sum, utterance) => sum + utterance.span.text.length, 0);
    const pauses = audible.reduce((sum, utterance, index) => sum + (utterance.pauseBefore ?? (index === 0 ? 0 : this.gapSeconds)), 0);
    if (pauses > this.maxSpeechSeconds) this.refuseSeconds(pauses, 'its breaks and pauses alone');
  }

  /** Seconds of the file spoken so far (pauses included, after the tempo). */
  get fileSeconds(): number {
    return this.seconds / this.tempo;
  }

  /** Counts a spoken piece and the pause before it (its break, else the usual); throws OUTPUT_TOO_LONG when the text has made, or is set to make, too much. */
  spend(seconds: number, characters: number, pauseBefore?: number): void {
    this.seconds += seconds + (pauseBefore ?? (this.started ? this.gapSeconds : 0));
    this.started = true;
    this.characters += characters;
    const max = this.maxSpeechSeconds;
    const projected = (this.seconds * Math.max(this.totalCharacters, this.characters)) / Math.max(1, this.characters);
    if (this.seconds > max) this.refuseSeconds(this.seconds, 'what is spoken so far');
    if (this.seconds >= Math.min(PROJECT_AFTER_SECONDS, max / 2) && projected > max * PROJECTION_MARGIN) this.refuseSeconds(projected, 'its pace so far');
  }

  private refuseSeconds(speechSeconds: number, what: string): never {
    const { seconds, secondsVariable } = this.limits;
    throw new AppError('OUTPUT_TOO_LONG', {
      field: 'text',
      message:
        `The text makes more than ${secondsVariable} (${Math.round(seconds)} s): about ${Math.round(speechSeconds / this.tempo)} s by ${what}; ` +
        'split it into several requests.',
    });
  }

  /** Takes `bytes` of the job's scratch (JOB_SCRATCH_MB) for `what`, and checks the disk of `folder` has room, before they are written. */
  async reserveScratch(folder: string, bytes: number, what: string): Promise<void> {
    const { scratchBytes } = this.limits;
    if (this.scratch + bytes > scratchBytes) {
      const mb = (value: number) => Math.ceil(value / 1024 ** 2);
      throw new AppError('RENDER_TOO_LARGE', {
        message:
          `The render needs ${mb(this.scratch + bytes)} MB of scratch space (${what}: ${mb(bytes)} MB), more than JOB_SCRATCH_MB (${mb(scratchBytes)}); ` +
          'use fewer clips or images, a lower fps or resolution.',
      });
    }
    // Taken at once, before the disk is asked: scenes prepared side by side each see what the others took.
    this.scratch += bytes;
    await this.room(folder, bytes);
  }

  /** Whether the scratch budget has room for `bytes` more (a render that can do without them chooses so). */
  scratchFits(bytes: number): boolean {
    return this.scratch + bytes <= this.limits.scratchBytes;
  }

  /** 503 STORAGE_FULL, before a file of about `bytes` is written in `folder`, when that would leave less than MIN_FREE_DISK_MB free. */
  async room(folder: string, bytes: number): Promise<void> {
    if ((await freeBytes(folder)) - bytes >= this.limits.minFreeDiskBytes) return;
    throw new AppError('STORAGE_FULL', { retryAfter: DISK_RETRY_SECONDS });
  }
}
