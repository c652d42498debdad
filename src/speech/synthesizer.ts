import { createReadStream } from 'node:fs';
import path from 'node:path';
import { Readable, type Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { SentenceCache } from './sentence-cache.js';
import type { EngineName, PhonemeSpan, Speaker, SpeechChunk, VoiceHandle } from '../engines/types.js';
import { AUDIO_ENCODINGS, STREAMABLE_ENCODINGS, WarmEncoders, encodePcm, encodeSpeech, type AudioEncoding } from './audio-encoding.js';
import { audioCues, chaptersVttFile, srtFile, webVttFile, type AudioCue } from './captions/cues.js';
import { tagAudio, type AudioTags } from './audio-chapters.js';
import { chapterTimes, type ScriptChapter, type TimedChapter } from './chapters.js';
import { audioDuration } from './audio-duration.js';
import { AppError, abortError } from '../errors.js';
import type { Ffmpeg } from '../media/ffmpeg.js';
import { rethrowAsAppError } from '../media/process.js';
import { encodePcmInProcess } from './encoders/in-process.js';
import { EDGE_SECONDS, GAP_SECONDS, joinSpeech, pcmBytes, SpeechJoiner, type JoinOptions } from './pcm.js';
import { stretchChunk, withGain, writtenWords } from './utterance-audio.js';
import type { Speech, SpokenSpan } from './speech.js';
import type { ScratchSpace } from '../storage/scratch.js';
import { publishFiles, storageFailed, type Companion, type Storage, type StoredFile } from '../storage/storage.js';
import type { Lexicon } from './lexicon.js';
import { RequestBudget, type BudgetLimits } from './request-budget.js';
import { assertSpeakable, isSsml, readScript, type TextType } from './read-script.js';
import { speechMarks, type SpeechMark } from './speech-marks.js';
import { speakable } from './spoken-text.js';
import type { Script, Utterance } from './script.js';
import { speakerTurns, turnOfWord, type SpeakerTurn } from './dialogue.js';
import { resampleChunk } from './resample.js';
import { spokenSpan, timedWords, timedWordsIn, type SpokenWord } from './words.js';
import { onlyEmoji } from '../engines/emoji-text.js';
import { mapInOrder } from './map-in-order.js';
import type { SpokenCheckpoints } from './spoken-checkpoints.js';

/** Told of what synthesis sees that the HTTP layer cannot (metrics). */
export interface SpeechObserver {
  engineFailed(engine: EngineName): void;
  /** A sentence served by the sentence cache (hit: the engine was not called for it), or spoken for it (miss). */
  sentenceCache(hit: boolean): void;
}

export interface SynthesizerOptions {
  /** Sentences spoken before, reused when a voice says the same sentence again; none (or off): every sentence is spoken. */
  sentenceCache?: SentenceCache;
}

export interface SpeakRequest {
  text: string;
  /** `ssml`: text is an SSML document; left out, SSML when it starts with <speak>. */
  textType?: TextType;
  /** Resolved once, by `resolveVoice`: the voice with its engine bound (nothing below looks its id up again). */
  voice: VoiceHandle;
  signal?: AbortSignal;
  /** Spoken this many times faster by the voice itself (only voices with `naturalSpeed`). */
  speed?: number;
  /** Told, after each sentence spoken (not after those read back from checkpoints), the part of the text spoken so far (0 to 1), and how much that is. */
  onProgress?: (fraction: number, spoken: SpokenSoFar) => void;
  /** The sentence cache's partition this request reads and fills (its tenant under CACHE_SCOPE=tenant). */
  cachePartition?: string;
  /** Pronunciation lexicons, in the request's order (lexicon.ts `lexiconRewrites` says where they apply). */
  lexicons?: Lexicon[];
  /** A job's checkpoints: each utterance read back where an earlier run of the job spoke it, else spoken and saved before it counts. */
  checkpoints?: SpokenCheckpoints;
  /** A long job (more text than a request takes at once): the long limits (MAX_LONG_AUDIO_SECONDS...) apply. */
  long?: boolean;
}

/** How far a request's speech has come: characters of its text spoken, of how many, and the seconds they make in its file. */
export interface SpokenSoFar {
  characters: number;
  totalCharacters: number;
  seconds: number;
  /** Of `characters`, those an earlier run of the job had spoken (read back from its checkpoints, not spoken now). */
  readBack: number;
}

/**
 * A playback speed, split between the voice (which speaks faster or slower itself, at a natural rhythm, where it
 * can: `naturalSpeed`) and the tempo filter applied to the joined audio (everywhere else, and for the rest of the
 * rate the voice does not reach); the pauses between sentences are scaled with the voice's share, so that the whole
 * file comes out `speed` times shorter.
 */
function splitSpeed(voices: readonly VoiceHandle[], speed: number): { spoken: number | undefined; tempo: number; join: JoinOptions } {
  const [voice] = voices as [VoiceHandle];
  // Voices that would each take a different share (a dialogue's) all leave the rate to the tempo filter.
  const alike = voices.every((other) => other.naturalSpeed === voice.naturalSpeed && other.speedShare === voice.speedShare);
  if (!voice.naturalSpeed || !alike || speed === 1) return { spoken: undefined, tempo: speed, join: {} };
  const natural = speed ** voice.speedShare;
  return { spoken: speed, tempo: speed / natural, join: { gapSeconds: GAP_SECONDS / natural } };
}

/** What a request may make at most (config.ts `budget`): seconds of the finished file, and the rest of its budget (request-budget.ts). */
export interface OutputLimits {
  audioSeconds: number;
  videoSeconds: number;
  /** Characters of the text as spoken, after lexicons and normalization; default DEFAULT_SPOKEN_CHARACTERS. */
  spokenCharacters?: number;
  /** Scratch bytes one render may write; default DEFAULT_JOB_SCRATCH_BYTES. */
  jobScratchBytes?: number;
  /** Left free after every file written; default none. */
  minFreeDiskBytes?: number;
  /** A long job's seconds of audio and video, and spoken characters; defaults DEFAULT_LONG. */
  longAudioSeconds?: number;
  longVideoSeconds?: number;
  longSpokenCharacters?: number;
}

/** config.ts's defaults, for synthesizers made without them (tests, benchmarks). */
const DEFAULT_SPOKEN_CHARACTERS = 40_000;
const DEFAULT_JOB_SCRATCH_BYTES = 2048 * 1024 ** 2;
const DEFAULT_LONG = { audioSeconds: 4 * 3600, videoSeconds: 1800, spokenCharacters: 250_000 };

export interface AudioRequest extends SpeakRequest {
  encoding: AudioEncoding;
  speed: number;
  /** Also time every word in the file, and publish WebVTT and SRT captions of the same name. */
  timestamps?: boolean;
  /** Also give speech marks (sentences, words, SSML marks). */
  marks?: boolean;
  /** Bring the file to this integrated loudness in LUFS, its true peak under -1 dBTP; by default the voice's own level. */
  loudness?: number;
  /** Publish under this name rather than a fresh one (a queued job's id). */
  name?: string;
  /** Runs before the files are published; a throw publishes nothing (see publishFiles). */
  beforePublish?: () => Promise<void>;
  /** Written into the file where its container takes them (audio-chapters.ts), with its chapters. */
  tags?: Omit<AudioTags, 'chapters'>;
}

export interface AudioResult {
  file: StoredFile;
  /** The written text that word offsets point into (an SSML document's text without its markup). */
  text: string;
  /** With `marks`. */
  marks?: SpeechMark[];
  /** Length of the written file in seconds, as ffprobe reads it. */
  duration: number;
  /** With `timestamps`: every word with its times in the file, its span without the emoji at its ends (words.ts spokenSpan). */
  words?: SpokenWord[];
  /** With `timestamps` or chapters: the whole text's captions. */
  captions?: { vtt: StoredFile; srt: StoredFile };
  /** A text with chapters: each with its span in the file, and their WebVTT. */
  chapters?: TimedChapter[];
  chaptersFile?: StoredFile;
}

export interface StreamRequest extends SpeakRequest {
  encoding: AudioEncoding;
  speed: number;
  /** Resample to this rate; by default the voice's own. */
  sampleRate?: number;
  /**
   * Told the words of each sentence as its audio goes to the encoder (streamAudio), in order: their times in the
   * stream (seconds from its start), their spans in `text`, the written text (words.ts spokenSpan).
   */
  onWords?: (words: SpokenWord[], text: string) => void;
}

/** The part of an audio job's progress that is speaking (the rest is encoding and measuring the file). */
const SPEECH_SHARE = 0.9;

/** Sentences synthesized at once for one request; the engine pool is shared with other requests. */
const SENTENCES_IN_FLIGHT = 2;
/**
 * A long job's sentences one at a time (each inference still on every core the engine has): two long sentences at
 * once are what a neural engine's process peaks at (each inference's buffers, tens of megabytes for the decoder's
 * windows), and a long job is bounded by memory, not by its first byte.
 */
const LONG_SENTENCES_IN_FLIGHT = 1;

/** Text → speech → files in storage. Knows nothing of HTTP. */
export class Synthesizer {
  private readonly encoders: WarmEncoders;
  private readonly sentenceCache: SentenceCache | undefined;

  constructor(
    private readonly engines: Speaker,
    private readonly ffmpeg: Ffmpeg,
    private readonly storage: Storage,
    private readonly scratch: ScratchSpace,
    readonly limits: OutputLimits,
    private readonly observer?: SpeechObserver,
    options: SynthesizerOptions = {},
  ) {
    this.encoders = new WarmEncoders(ffmpeg);
    this.sentenceCache = options.sentenceCache?.enabled ? options.sentenceCache : undefined;
  }

  /** Stops the encoders kept ready for streams. */
  close(): void {
    this.encoders.close();
  }

  /**
   * Checks what the schema cannot, once, before any work is queued: that the voice exists, the text is well-formed
   * Unicode with words to speak, and its SSML (if it is SSML) reads and asks nothing of the voice it cannot do.
   */
  resolveVoice(request: { text: string; voice: string; textType?: TextType }): VoiceHandle {
    const voice = this.voiceOf(request.voice);
    if (!request.text.isWellFormed()) {
      throw new AppError('VALIDATION_ERROR', { field: 'text', message: 'text must be valid Unicode (it holds a lone surrogate).' });
    }
    const script = readScript(request.text, request.textType);
    for (const speaker of [voice, ...this.otherVoices(script)]) assertSpeakable(script, speaker);
    if (onlyEmoji(script.text)) {
      throw new AppError('UNSUPPORTED_TEXT', { field: 'text', message: 'The text holds only emoji, which are drawn in captions but never spoken: add words to speak.' });
    }
    return voice;
  }

  /**
   * The voice with this id, resolved into its handle; 400 UNKNOWN_VOICE, or 503 ENGINE_UNAVAILABLE when its engine
   * could not start (naming `field`: where the id was given).
   */
  voiceOf(voiceId: string, field = 'voice'): VoiceHandle {
    const voice = this.engines.handleOf(voiceId);
    const engine = voiceId.slice(0, voiceId.indexOf(':')).toLowerCase();
    if (!voice && this.engines.unavailable?.().some((unavailable) => unavailable.engine === engine)) {
      throw new AppError('ENGINE_UNAVAILABLE', { field, retryAfter: 30 });
    }
    if (!voice) {
      throw new AppError('UNKNOWN_VOICE', { field, message: `No voice has the id "${voiceId.slice(0, 100)}"; GET /voices lists them.` });
    }
    return voice;
  }

  /** The voices a script names besides the request's (SSML voice: a dialogue's turns), each once. */
  private otherVoices(script: Script): VoiceHandle[] {
    const ids = new Set(script.utterances.flatMap((utterance) => (utterance.voice ? [utterance.voice.toLowerCase()] : [])));
    return [...ids].map((id) => this.voiceOf(id, 'text'));
  }

  /** Every voice a request speaks in, its own first (a dialogue's others after it). */
  private voicesOf(request: Pick<SpeakRequest, 'text' | 'textType' | 'voice'>): VoiceHandle[] {
    return isSsml(request.text, request.textType) ? [request.voice, ...this.otherVoices(readScript(request.text, request.textType))] : [request.voice];
  }

  /** The voice an utterance is said in: its own (a dialogue's turn), else the request's. */
  private utteranceVoice(request: SpeakRequest, utterance: Utterance): VoiceHandle {
    return utterance.voice ? this.voiceOf(utterance.voice, 'text') : request.voice;
  }

  /**
   * The budget of one request (request-budget.ts): made once where the request becomes work, handed down to all
   * that spends it. `tempo`: how much faster than spoken its file plays; `gapSeconds`: its pause between sentences.
   */
  budget(kind: 'audio' | 'video', tempo = 1, gapSeconds = GAP_SECONDS, long = false): RequestBudget {
    const { limits: max } = this;
    const seconds = long
      ? { seconds: kind === 'audio' ? (max.longAudioSeconds ?? DEFAULT_LONG.audioSeconds) : (max.longVideoSeconds ?? DEFAULT_LONG.videoSeconds), secondsVariable: kind === 'audio' ? 'MAX_LONG_AUDIO_SECONDS' : 'MAX_LONG_VIDEO_SECONDS' }
      : { seconds: kind === 'audio' ? max.audioSeconds : max.videoSeconds, secondsVariable: kind === 'audio' ? 'MAX_AUDIO_SECONDS' : 'MAX_VIDEO_SECONDS' };
    const limits: BudgetLimits = {
      ...(seconds as Pick<BudgetLimits, 'seconds' | 'secondsVariable'>),
      spokenCharacters: long ? (max.longSpokenCharacters ?? DEFAULT_LONG.spokenCharacters) : (max.spokenCharacters ?? DEFAULT_SPOKEN_CHARACTERS),
      spokenVariable: long ? 'MAX_LONG_SPOKEN_CHARACTERS' : 'MAX_SPOKEN_CHARACTERS',
      scratchBytes: this.limits.jobScratchBytes ?? DEFAULT_JOB_SCRATCH_BYTES,
      minFreeDiskBytes: this.limits.minFreeDiskBytes ?? 0,
    };
    return new RequestBudget(limits, tempo, gapSeconds);
  }

  /**
   * Checks, before anything is queued or spoken, what the request's text alone shows of its budget: its length as
   * spoken (lexicons, normalization) and the seconds of its breaks and pauses (the front doors of jobs call it).
   */
  checkBudget(request: SpeakRequest & { speed?: number }, kind: 'audio' | 'video'): void {
    const { tempo, join } = kind === 'audio' ? splitSpeed(this.voicesOf(request), request.speed ?? 1) : { tempo: 1, join: {} };
    this.scriptOf(request, this.budget(kind, tempo, join.gapSeconds, request.long));
  }

  /** Speaks the text sentence by sentence, within `budget`, and joins the pieces into one recording at normal speed. */
  async speak(request: SpeakRequest, budget: RequestBudget, join?: JoinOptions): Promise<Speech> {
    const script = this.scriptOf(request, budget);
    const chunks: SpokenSpan[] = [];
    for await (const chunk of this.speakInOrder(request, script, budget)) chunks.push(chunk);
    const turns = this.turnsOf(request, script);
    return { ...joinSpeech(chunks, join), text: script.text, marks: script.marks, ...(script.chapters ? { chapters: script.chapters } : {}), ...(turns ? { turns } : {}) };
  }

  /** What the request says, as its voice is to say it (lexicons, English normalization: spoken-text.ts), checked against `budget` before it is built whole. */
  private scriptOf(request: SpeakRequest, budget: RequestBudget): Script {
    const written = readScript(request.text, request.textType);
    const script = speakable(written, (utterance) => this.utteranceVoice(request, utterance), request.lexicons, (characters) => budget.spokenLength(characters));
    budget.plan(script);
    return script;
  }

  /** A dialogue's turns (speakerTurns), each voice by its id and name; undefined for a text in one voice. */
  private turnsOf(request: SpeakRequest, script: Script): SpeakerTurn[] | undefined {
    return speakerTurns(script, (utterance) => this.utteranceVoice(request, utterance));
  }

  /**
   * Speaks the script utterance by utterance, yielding each in order as soon as it and those before it are spoken.
   * `firstAlone`: nothing else competes with the first one for the cores (streaming waits for it).
   */
  async *speakInOrder(request: SpeakRequest, script: Script, budget: RequestBudget, firstAlone = false): AsyncGenerator<SpokenSpan> {
    const { utterances } = script;
    const characters = utterances.reduce((sum, utterance) => sum + utterance.span.text.length, 0);
    let spokenCharacters = 0;
    let readBackCharacters = 0;
    const indexed = utterances.map((utterance, index) => ({ utterance, index }));
    for await (const { spoken, readBack } of mapInOrder(indexed, request.long ? LONG_SENTENCES_IN_FLIGHT : SENTENCES_IN_FLIGHT, firstAlone, ({ utterance, index }) => this.speakOrResume(request, utterance, index))) {
      budget.spend(spoken.samples.length / spoken.sampleRate, spoken.span.text.length, spoken.pauseBefore);
      spokenCharacters += spoken.span.text.length;
      if (readBack) readBackCharacters += spoken.span.text.length;
      // What an earlier run spoke was told by that run (a job's progress never falls back while it is read again).
      else {
        const soFar = { characters: spokenCharacters, totalCharacters: characters, seconds: budget.fileSeconds, readBack: readBackCharacters };
        request.onProgress?.(spokenCharacters / Math.max(1, characters), soFar);
      }
      yield spoken;
    }
  }

  /**
   * The utterance at `index` as an earlier run of the job spoke it (its checkpoint: `readBack`), when it is the same
   * utterance in the same voice's rate; else spoken now and, for a job, saved.
   */
  private async speakOrResume(request: SpeakRequest, utterance: Utterance, index: number): Promise<{ spoken: SpokenSpan; readBack: boolean }> {
    const { checkpoints, signal } = request;
    const saved = await checkpoints?.load(index, signal);
    const same = saved && saved.span.offset === utterance.span.offset && saved.span.text === utterance.span.text && saved.sampleRate === request.voice.sampleRate;
    if (saved && same) return { spoken: saved, readBack: true };
    const spoken = await this.speakUtterance(request, utterance);
    await checkpoints?.save(index, spoken, signal).catch(storageFailed);
    return { spoken, readBack: false };
  }

  /**
   * One utterance: its spoken text in its voice (a dialogue's turn's, another of the same engine for another language
   * where there is one), at its rate and volume, at the request voice's sample rate.
   */
  private async speakUtterance(request: SpeakRequest, utterance: Utterance): Promise<SpokenSpan> {
    const own = this.utteranceVoice(request, utterance);
    const voice = (utterance.language && this.voiceForLanguage(own, utterance.language)) || own;
    const rate = utterance.rate;
    // The voice says the rate itself where it can (naturalSpeed); elsewhere its audio is stretched.
    const speed = voice.naturalSpeed && rate !== 1 ? (request.speed ?? 1) * rate : request.speed;
    const chunk = await this.speakText({ ...request, voice, speed }, utterance.spoken.text, utterance.phonemes);
    const stretched = !voice.naturalSpeed && rate !== 1 ? await stretchChunk(this.ffmpeg, chunk, rate, request.signal) : chunk;
    return {
      ...resampleChunk(withGain(stretched, utterance.volumeDb), request.voice.sampleRate),
      span: utterance.span,
      ...(stretched.words ? { words: writtenWords(stretched.words, utterance) } : {}),
      ...(utterance.pauseBefore === undefined ? {} : { pauseBefore: utterance.pauseBefore }),
    };
  }

  /** SSML lang: a voice of the same engine and sample rate for `language` (the registry's voiceFor), resolved into its handle. */
  private voiceForLanguage(voice: VoiceHandle, language: string): VoiceHandle | undefined {
    const other = this.engines.voiceFor?.(voice, language);
    return !other || other.id === voice.id ? undefined : this.engines.handleOf(other.id);
  }

  private async speakText(request: SpeakRequest, text: string, phonemes?: PhonemeSpan[]): Promise<SpeechChunk> {
    const { voice, speed, signal } = request;
    const options = { ...(speed === undefined ? {} : { speed }), ...(phonemes ? { phonemes } : {}) };
    const synthesize = (engineSignal: AbortSignal | undefined) =>
      voice.synthesize(text, { signal: engineSignal, ...options }).catch((error: unknown) => {
        if (error instanceof AppError && error.code === 'ENGINE_FAILED') this.observer?.engineFailed(voice.engine);
        throw error;
      });
    if (!this.sentenceCache) return synthesize(signal);
    const key = { voiceId: voice.id, engine: voice.engine, text, partition: request.cachePartition, ...options };
    const { chunk, hit } = await this.sentenceCache.speak(key, synthesize, signal);
    this.observer?.sentenceCache(hit);
    return chunk;
  }

  /** The whole speech for a file at `speed`, and the tempo its encode is still to apply (splitSpeed), within the request's budget. */
  private async speakWhole(request: SpeakRequest & { speed: number }): Promise<{ speech: Speech; tempo: number; budget: RequestBudget }> {
    const { spoken, tempo, join } = splitSpeed(this.voicesOf(request), request.speed);
    const budget = this.budget('audio', tempo, join.gapSeconds);
    // Slowed down, the silence at the ends grows with it: start from less, so the file keeps about EDGE_SECONDS.
    const speech = await this.speak({ ...request, speed: spoken }, budget, { ...join, edgeSeconds: EDGE_SECONDS * Math.min(1, tempo) });
    return { speech, tempo, budget };
  }

  /** Speaks the text and stores it as an audio file; the file (and its captions) appear at their URLs complete or not at all. */
  async renderAudio(request: AudioRequest): Promise<AudioResult> {
    const { onProgress } = request;
    const progress = onProgress && ((fraction: number, spoken: SpokenSoFar) => onProgress(fraction * SPEECH_SHARE, spoken));
    if (request.long) return this.renderLongAudio({ ...request, onProgress: progress });
    const { speech, tempo, budget } = await this.speakWhole({ ...request, onProgress: progress });
    return this.publishAudio(request, { text: speech.text ?? request.text, chapters: speech.chapters, turns: speech.turns }, budget, encodedBytes(speech, tempo), async (output) => {
      await encodeSpeech(this.ffmpeg, speech, { encoding: request.encoding, speed: tempo, loudness: request.loudness, output, signal: request.signal }).catch(rethrowAsAppError('MEDIA_FAILED'));
      return speech;
    });
  }

  /**
   * A long job's audio, spoken into its file as it goes: one ffmpeg encodes the sentences as they come (read back
   * from the job's checkpoints first, where an earlier run spoke them), so memory holds a few sentences, never the
   * whole; the times of sentences and words are kept, not their samples. The voice's own level: a loudness target
   * needs the whole speech before its first byte (a long request asking for one is refused before it is queued).
   */
  private async renderLongAudio(request: AudioRequest): Promise<AudioResult> {
    const { voice, signal } = request;
    const { spoken, tempo, join } = splitSpeed(this.voicesOf(request), request.speed);
    const budget = this.budget('audio', tempo, join.gapSeconds, true);
    const speaking = { ...request, speed: spoken };
    const script = this.scriptOf(speaking, budget);
    const characters = script.utterances.reduce((sum, utterance) => sum + utterance.span.text.length, 0);
    const pauses = script.utterances.reduce((sum, utterance) => sum + (utterance.pauseBefore ?? join.gapSeconds ?? GAP_SECONDS), 0);
    // What a slow voice (10 characters a second) makes of the text, with its pauses, as 16-bit PCM: more than any encoding of it takes.
    const bytes = Math.ceil(((characters / 10 + pauses) / tempo) * voice.sampleRate * 2) + 4096;
    // Times of sentences and words only where the answer has them (chapters start at words): they grow with the text.
    const timed = request.timestamps === true || request.marks === true || script.chapters !== undefined;
    return this.publishAudio(request, { text: script.text, chapters: script.chapters, turns: this.turnsOf(speaking, script) }, budget, bytes, async (output) => {
      const joiner = new SpeechJoiner(voice.sampleRate, { ...join, edgeSeconds: EDGE_SECONDS * Math.min(1, tempo) });
      const timing: Pick<Speech, 'sentences' | 'words'> = { sentences: [], words: [] };
      const keepTimes = (piece: Pick<Speech, 'sentences' | 'words'>) => {
        timing.sentences.push(...piece.sentences);
        timing.words.push(...piece.words);
      };
      const pieces = this.pcmPieces(speaking, script, budget, joiner, timed ? keepTimes : undefined);
      // An mp3 is encoded here where it can be (no ffmpeg process beside the job); anything else by ffmpeg as it goes.
      const options = { encoding: request.encoding, speed: tempo, output, signal };
      await encodeAsSpoken(pieces, async (pcm) => {
        if (!(await encodePcmInProcess(pcm, voice.sampleRate, options))) await encodePcm(this.ffmpeg, pcm, voice.sampleRate, options);
      });
      return { samples: new Int16Array(0), sampleRate: voice.sampleRate, duration: joiner.seconds, ...timing, text: script.text, marks: script.marks, chapters: script.chapters };
    });
  }

  /**
   * Publishes an audio file `encode` writes at `output` (it returns the speech it wrote, for its timing), with its
   * captions when asked or when the text has chapters (then also the chapters' WebVTT, and the chapters, title and
   * cover in the file where its container takes them): they appear at their URLs complete or not at all.
   * `written`: the written text, and its chapters. `bytes`: most the file may take.
   */
  private async publishAudio(request: AudioRequest, written: WrittenText, budget: RequestBudget, bytes: number, encode: (output: string) => Promise<Speech>): Promise<AudioResult> {
    const encoding = AUDIO_ENCODINGS[request.encoding];
    const { text } = written;
    const chaptered = written.chapters !== undefined;
    const captioned = request.timestamps === true || chaptered;
    const companions: Companion<ProducedAudio>[] = [
      ...(captioned
        ? [
            { kind: 'captions' as const, extension: 'vtt', content: ({ cues }: ProducedAudio) => webVttFile(cues ?? []) },
            { kind: 'captions' as const, extension: 'srt', content: ({ cues }: ProducedAudio) => srtFile(cues ?? []) },
          ]
        : []),
      ...(chaptered ? [{ kind: 'captions' as const, extension: 'chapters.vtt', content: ({ chapters }: ProducedAudio) => chaptersVttFile(chapters ?? []) }] : []),
    ];
    const published = await publishFiles(
      this.storage,
      { kind: 'audio', extension: encoding.extension },
      async (output): Promise<ProducedAudio> => {
        const speech = await encode(output);
        const duration = await measureAudio(this.ffmpeg, output, request.encoding, request.signal).catch(rethrowAsAppError('MEDIA_FAILED'));
        const words = captioned || request.marks ? timedWordsIn(text, speech, duration) : undefined;
        const marks = request.marks && words ? speechMarks(text, speech, words, duration) : undefined;
        const chapters = written.chapters && words ? chapterTimes(written.chapters, words, duration) : undefined;
        await tagAudio(this.ffmpeg, output, request.encoding, { ...request.tags, chapters: chapters ?? [] }, request.signal).catch(rethrowAsAppError('MEDIA_FAILED'));
        return { duration, words: captioned ? words : undefined, marks, chapters, cues: captioned && words ? audioCues(words, written.turns && speakerNames(written.turns, words)) : undefined };
      },
      companions,
      { name: request.name, beforeCommit: request.beforePublish, signal: request.signal, beforeWrite: (file) => budget.room(path.dirname(file), bytes) },
    );
    const { duration, words, marks, chapters } = published.produced;
    const [vtt, srt, chaptersFile] = published.companions;
    // The captions show emoji with their word; the timestamps cover what is said (asked for: a book's are many).
    const spoken = request.timestamps && words ? saidWords(text, words) : undefined;
    return {
      file: published.file,
      text,
      duration,
      ...(marks ? { marks } : {}),
      ...(spoken ? { words: spoken } : {}),
      ...(vtt && srt ? { captions: { vtt, srt } } : {}),
      ...(chapters && chaptersFile ? { chapters, chaptersFile } : {}),
    };
  }

  /**
   * Speaks the text into `output` as it goes: one ffmpeg encodes the sentences as they are spoken, the first one
   * first, and its bytes flow on as they are written. Encodings that cannot be streamed are made whole, then sent.
   */
  async streamAudio(request: StreamRequest, output: Writable): Promise<void> {
    const { voice } = request;
    const { spoken, tempo, join } = splitSpeed(this.voicesOf(request), request.speed);
    const options = { encoding: request.encoding, speed: tempo, sampleRate: request.sampleRate, signal: request.signal };
    const speaking = { ...request, speed: spoken };
    const budget = this.budget('audio', tempo, join.gapSeconds);
    if (!STREAMABLE_ENCODINGS.has(request.encoding)) {
      const speech = await this.speak(speaking, budget, join);
      const written = speech.text ?? request.text;
      request.onWords?.(saidWords(written, timedWordsIn(written, speech, speech.duration / tempo)), written);
      const folder = await this.scratch.folder('audio').catch(storageFailed);
      try {
        await budget.room(folder.path, encodedBytes(speech, tempo, request.sampleRate));
        const file = path.join(folder.path, `speech.${AUDIO_ENCODINGS[request.encoding].extension}`);
        await encodeSpeech(this.ffmpeg, speech, { ...options, output: file }).catch(rethrowAsAppError('MEDIA_FAILED'));
        await pipeline(createReadStream(file), output, { signal: request.signal }).catch((cause: unknown) => {
          throw request.signal?.aborted ? abortError(request.signal.reason) : cause;
        });
      } finally {
        await folder.remove();
      }
      return;
    }
    const script = this.scriptOf(speaking, budget);
    const pieces = this.pcmPieces(speaking, script, budget, new SpeechJoiner(voice.sampleRate, join), request.onWords && wordsInTurn(script.text, tempo, request.onWords));
    // Synthesis starts now, not when the encoder first reads.
    const head = pieces.next();
    void head.catch(() => undefined);
    const startedNow = (async function* () {
      const first = await head;
      if (first.done) return;
      yield first.value;
      yield* pieces;
    })();
    await encodeAsSpoken(startedNow, (pcm) => this.encoders.encode(pcm, voice.sampleRate, { ...options, output }));
  }

  /**
   * The PCM speak() would join, piece by piece: each sentence as soon as it and those before it are spoken (and
   * timed, to `onPiece`). The first sentence is spoken alone (a stream waits for it) unless the request is long.
   */
  private async *pcmPieces(request: SpeakRequest, script: Script, budget: RequestBudget, joiner: SpeechJoiner, onPiece?: (piece: Pick<Speech, 'sentences' | 'words'>) => void): AsyncGenerator<Buffer> {
    for await (const chunk of this.speakInOrder(request, script, budget, !request.long)) {
      const piece = joiner.pushTimed(chunk);
      onPiece?.(piece);
      if (piece.samples.length > 0) yield pcmBytes(piece.samples);
    }
    yield pcmBytes(joiner.end());
  }
}

/**
 * Encodes PCM `pieces` through `encode` as they are spoken. A failure of the speech (an engine, the budget) is what
 * the caller gets, not the broken pipe it leaves the encoder with; the encoder's own failure is MEDIA_FAILED.
 */
async function encodeAsSpoken(pieces: AsyncIterable<Buffer>, encode: (pcm: Readable) => Promise<void>): Promise<void> {
  let spokenFailure: unknown;
  const pcm = Readable.from(
    (async function* () {
      try {
        yield* pieces;
      } catch (error) {
        spokenFailure = error;
        throw error;
      }
    })(),
  );
  await encode(pcm).catch((error: unknown) => {
    pcm.destroy();
    return rethrowAsAppError('MEDIA_FAILED')(spokenFailure ?? error);
  });
}

/** Words as they are said: their spans without the emoji at their ends (words.ts spokenSpan). */
function saidWords(text: string, words: readonly SpokenWord[]): SpokenWord[] {
  return words.map((word) => ({ ...word, ...spokenSpan(text, word) }));
}

/**
 * Streamed speech's pieces → their words, told in turn: the words of the text up to the end of each new piece's
 * sentence, timed from every piece so far (timedWords on that much of the text, so no word reaches into sentences
 * still to come), at the stream's clock (`tempo` stretches it), to the millisecond.
 */
function wordsInTurn(text: string, tempo: number, onWords: (words: SpokenWord[], text: string) => void): (piece: Pick<Speech, 'sentences' | 'words'>) => void {
  const sentences: Speech['sentences'] = [];
  const timings: Speech['words'] = [];
  let told = 0;
  return (piece) => {
    if (piece.sentences.length === 0) return;
    sentences.push(...piece.sentences);
    timings.push(...piece.words);
    const end = Math.max(...piece.sentences.map((sentence) => sentence.textOffset + sentence.textLength));
    const last = sentences.at(-1)?.end ?? 0;
    const atClock = (seconds: number) => Math.round((seconds / tempo) * 1000) / 1000;
    const words = timedWords(text.slice(0, end), { samples: new Int16Array(0), sampleRate: 1, duration: last, sentences, words: timings })
      .filter((word) => word.offset >= told)
      .map((word) => ({ ...word, start: atClock(word.start), end: atClock(word.end) }));
    told = end;
    if (words.length > 0) onWords(saidWords(text, words), text);
  };
}

/** Who says each word, by name (a dialogue's captions). */
function speakerNames(turns: readonly SpeakerTurn[], words: readonly SpokenWord[]): (word: number) => string | undefined {
  const turnOf = turnOfWord(turns, words);
  return (word) => turnOf(word)?.name;
}

/** The written text of a file's speech (an SSML document's without its markup), its chapters, and a dialogue's turns. */
interface WrittenText {
  text: string;
  chapters?: ScriptChapter[];
  turns?: SpeakerTurn[];
}

/** What publishing an audio file found, for its answer and its companions. */
interface ProducedAudio {
  duration: number;
  words?: SpokenWord[];
  marks?: SpeechMark[];
  chapters?: TimedChapter[];
  cues?: AudioCue[];
}

/** Most bytes an encoded file of the speech takes: its 16-bit PCM at its rate (no encoding here is larger), and a header's worth. */
function encodedBytes(speech: Speech, tempo: number, sampleRate = speech.sampleRate): number {
  return Math.ceil((speech.duration / tempo) * sampleRate * 2) + 4096;
}

/** Reads our own headers where it can (no process to start), else asks ffprobe. */
function measureAudio(ffmpeg: Ffmpeg, file: string, encoding: AudioEncoding, signal?: AbortSignal): Promise<number> {
  if (encoding === 'mp3' || encoding === 'wav' || encoding === 'ogg') return audioDuration(file, encoding);
  return ffmpeg.probe(file, { signal }).then((info) => info.duration);
}

