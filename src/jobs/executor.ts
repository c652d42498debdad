import { readFile } from 'node:fs/promises';
import type { AssetStore } from '../assets/store.js';
import type { Config } from '../config.js';
import { AppError, isAppError } from '../errors.js';
import type { VoiceHandle } from '../engines/types.js';
import type { LexiconStore } from '../speech/lexicon-store.js';
import { roundSeconds, ttsCost, videoCost } from './pricing.js';
import type { Synthesizer } from '../speech/synthesizer.js';
import type { Background } from '../video/background.js';
import type { VideoMaker } from '../video/maker.js';
import type { BackgroundOption } from '../api/video-options.js';
import { PLATFORMS } from '../video/platforms.js';
import { soundtrackChannels, VIDEO_LOUDNESS } from '../video/soundtrack.js';
import { checkSceneOrder, type SceneRequest } from '../video/scenes.js';
import type { TtsResponse } from '../api/speech.js';
import type { TtsVideoResponse } from '../api/video.js';
import { isLongJob, syncTextLimit, type JobOutcome, type JobSpec, type TtsSpec, type TtsVideoSpec } from './spec.js';
import { SpokenCheckpoints } from '../speech/spoken-checkpoints.js';
import type { AudioTags } from '../speech/audio-chapters.js';
import type { TimedChapter } from '../speech/chapters.js';
import type { SpokenSoFar } from '../speech/synthesizer.js';
import type { CheckpointStore } from '../storage/checkpoints.js';
import { storageFailed } from '../storage/storage.js';
import { requestCacheKey } from './results/request-cache.js';

export interface ExecuteOptions {
  signal: AbortSignal;
  /** Whose job it is (the client id): the assets it names must be this client's. */
  tenant: string;
  /** Publish under this name (a queued job's id: a re-run after a crash replaces rather than duplicates). */
  name?: string;
  /** Runs before the files are published; a throw publishes nothing (a worker that lost its job to another). */
  beforePublish?: () => Promise<void>;
  /** Told how far the job is, 0 to 1, and, while it speaks, how much of its text that is. */
  onProgress?: (fraction: number, spoken?: SpokenSoFar) => void;
  onWarning?: (message: string, cause: unknown) => void;
  /** A long job run again (a takeover, a restart): told how many of its sentences an earlier run had already spoken. */
  onResumed?: (sentences: number) => void;
}

/** The parts a job needs, wherever it runs (the API process, or a worker). */
export interface ExecutorDeps {
  synthesizer: Synthesizer;
  maker: VideoMaker;
  assets: AssetStore;
  lexicons: LexiconStore;
  pricing: Config['pricing'];
  /** The sentence cache's partition of a tenant (CACHE_SCOPE). */
  partition: (tenant: string) => string | undefined;
  /** Where a long job keeps what it has spoken (storage's), for a run after a crash or a takeover; none: long jobs start over. */
  checkpoints?: CheckpointStore;
}

/**
 * Turns a job's request into its files and its answer: the one place `/tts` and `/tts-video` bodies are made, so
 * a job run here, in another process, or read back later answers alike. Knows nothing of HTTP or queues.
 */
export class JobExecutor {
  constructor(private readonly deps: ExecutorDeps) {}

  /** What the schema cannot check, before the job is queued (and again where it runs): the voice, drawable captions, assets, lexicons. */
  async check(spec: JobSpec, tenant: string): Promise<VoiceHandle> {
    const voice = spec.operation === 'tts' ? this.deps.synthesizer.resolveVoice(spec.request) : this.deps.maker.resolveVoice(videoJob(spec.request));
    if (spec.operation === 'tts-video') await this.videoInputs(spec.request, tenant);
    else await this.coverImage(spec.request, tenant);
    const lexicons = await this.deps.lexicons.resolve(spec.request.lexicons, tenant);
    // What the text alone shows of the budget (its spoken length, its breaks), refused before the job is queued.
    const { text, text_type: textType } = spec.request;
    const speed = spec.operation === 'tts' ? spec.request.speed : undefined;
    const long = isLongJob(spec);
    if (long && spec.operation === 'tts' && typeof spec.request.loudness === 'number') {
      throw new AppError('VALIDATION_ERROR', {
        field: 'loudness',
        message: `loudness needs the whole speech before the file's first byte: a long job (over ${syncTextLimit('tts')} characters) is spoken into its file as it goes, at the voice's own level.`,
      });
    }
    this.deps.synthesizer.checkBudget({ text, textType, voice, lexicons, speed, long }, spec.operation === 'tts' ? 'audio' : 'video');
    return voice;
  }

  /** The sentence cache's partition of a tenant's speech, for the speech use case (streams, spoken without a queued job). */
  cachePartition(tenant: string): string | undefined {
    return this.deps.partition(tenant);
  }

  async execute(spec: JobSpec, options: ExecuteOptions): Promise<JobOutcome> {
    const long = isLongJob(spec);
    const checkpoints = long ? await this.checkpointsOf(spec, options) : undefined;
    const run = { ...options, long, checkpoints };
    try {
      const outcome = await (spec.operation === 'tts' ? this.speech(spec.request, run) : this.video(spec.request, run));
      await this.clearCheckpoints(checkpoints, options);
      return outcome;
    } catch (error) {
      // Kept for the next run where there may be one: a crash, a stop, a failure of this machine, a job cancelled and
      // asked for again; not past an answer that would not change (the sweep removes the rest after 2 days).
      if (isAppError(error) && error.statusCode < 500 && error.code !== 'JOB_CANCELLED' && error.code !== 'CLIENT_CLOSED') await this.clearCheckpoints(checkpoints, options);
      throw error;
    }
  }

  /**
   * A long job's checkpoints as an earlier run left them: kept under its request and its client (checkpointKey), so
   * that a worker taking the job over, or the same request sent again after a cancel or a restart, continues it.
   */
  private async checkpointsOf(spec: JobSpec, options: ExecuteOptions): Promise<SpokenCheckpoints | undefined> {
    const { checkpoints } = this.deps;
    if (!checkpoints) return undefined;
    const voice = this.deps.synthesizer.voiceOf(spec.request.voice);
    const opened = await SpokenCheckpoints.open(checkpoints, checkpointKey(spec, voice, options.tenant), options.signal).catch(storageFailed);
    if (opened.found > 0) options.onResumed?.(opened.found);
    return opened;
  }

  private async clearCheckpoints(checkpoints: SpokenCheckpoints | undefined, options: ExecuteOptions): Promise<void> {
    await checkpoints?.clear().catch((error: unknown) => options.onWarning?.('the job\'s checkpoints could not be removed (the sweep will)', error));
  }

  private async speech(request: TtsSpec, options: RunOptions): Promise<JobOutcome<'tts'>> {
    const { text, text_type: textType, voice, format, speed, timestamps, marks, loudness } = effectiveTts(request);
    const resolved = this.deps.synthesizer.resolveVoice({ text, voice, textType });
    // Read again where the job runs (a worker): a lexicon deleted since the request was checked is refused, as an asset is.
    const lexicons = await this.deps.lexicons.resolve(request.lexicons, options.tenant);
    const result = await this.deps.synthesizer.renderAudio({
      text,
      textType,
      voice: resolved,
      lexicons,
      encoding: format,
      speed,
      timestamps,
      marks,
      loudness: loudness === false ? undefined : loudness,
      signal: options.signal,
      name: options.name,
      beforePublish: options.beforePublish,
      onProgress: options.onProgress,
      cachePartition: this.deps.partition(options.tenant),
      long: options.long,
      checkpoints: options.checkpoints,
      tags: await this.audioTags(request, options.tenant),
    });
    const body: TtsResponse = {
      status: 'success',
      url: result.file.url,
      duration: roundSeconds(result.duration),
      // SSML is billed by its text, not its markup.
      cost: ttsCost(this.deps.pricing, result.text.length),
      currency: this.deps.pricing.currency,
      format,
      voice,
      characters: result.text.length,
      bytes: result.file.bytes,
      ...(result.marks ? { marks: result.marks } : {}),
      ...(result.words
        ? {
            words: result.words.map((word) => ({
              word: result.text.slice(word.offset, word.offset + word.length),
              start: word.start,
              end: word.end,
              text_offset: word.offset,
              text_length: word.length,
            })),
          }
        : {}),
      ...(result.captions ? { captionsUrl: result.captions.vtt.url, srtUrl: result.captions.srt.url } : {}),
      ...(result.chapters && result.chaptersFile ? { chapters: result.chapters.map(roundChapter), chaptersUrl: result.chaptersFile.url } : {}),
    };
    const files = [result.file.key, ...(result.captions ? [result.captions.vtt.key, result.captions.srt.key] : []), ...(result.chaptersFile ? [result.chaptersFile.key] : [])];
    return { body, files };
  }

  private async video(request: TtsVideoSpec, options: RunOptions): Promise<JobOutcome<'tts-video'>> {
    const job = videoJob(request);
    const resolved = this.deps.maker.resolveVoice(job);
    const { background, scenes, music } = await this.videoInputs(request, options.tenant);
    const lexicons = await this.deps.lexicons.resolve(request.lexicons, options.tenant);
    const loudness = videoLoudness(request);
    const made = this.deps.maker.make({
      ...job,
      voice: resolved,
      background,
      scenes,
      music,
      lexicons,
      loudness: loudness === false ? null : loudness,
      channels: request.channels,
      cachePartition: this.deps.partition(options.tenant),
      signal: options.signal,
      name: options.name,
      beforePublish: options.beforePublish,
      onProgress: options.onProgress,
      onWarning: options.onWarning,
      long: options.long,
      checkpoints: options.checkpoints,
    });
    const result = await made.catch(async (error: unknown) => {
      // An asset deleted (or expired past its grace) while the video was made fails ffmpeg: say which, not that ffmpeg failed.
      if (isAppError(error) && error.code === 'MEDIA_FAILED') await this.videoInputs(request, options.tenant);
      throw error;
    });
    const body: TtsVideoResponse = {
      status: 'success',
      url: result.video.url,
      captionsUrl: result.captions.url,
      duration: roundSeconds(result.duration),
      cost: videoCost(this.deps.pricing, result.characters, result.duration),
      currency: this.deps.pricing.currency,
      width: result.size.width,
      height: result.size.height,
      fps: job.fps,
      frameRate: result.frameRate,
      subtitles: job.subtitles,
      voice: job.voice,
      characters: result.characters,
      bytes: result.video.bytes,
      renderPath: result.renderPath,
      ...(result.chapters && result.chaptersFile ? { chapters: result.chapters.map(roundChapter), chaptersUrl: result.chaptersFile.url } : {}),
    };
    return { body, files: [result.video.key, result.captions.key, ...(result.chaptersFile ? [result.chaptersFile.key] : [])] };
  }

  /** The uploaded images and music a video uses, looked up (they may have expired since the request was checked). */
  /**
   * What an audio file is tagged with besides its chapters: `title`, and `cover` (an image of the client's, JPEG or
   * PNG); a book's own title and cover where the request gives none.
   */
  private async audioTags(request: TtsSpec, tenant: string): Promise<Omit<AudioTags, 'chapters'> | undefined> {
    const book = request.book && (!request.title || !request.cover) ? await this.deps.assets.book(request.book, tenant, 'book', { cover: true }) : undefined;
    const image = await this.coverImage(request, tenant);
    const cover = image ? { data: await readFile(image.path), format: image.format } : book?.cover?.data && { data: book.cover.data, format: book.cover.format };
    const title = request.title ?? book?.title;
    return title || cover ? { ...(title ? { title } : {}), ...(cover ? { cover } : {}) } : undefined;
  }

  /** The request's `cover`: one of the client's images, JPEG or PNG (what MP4 and ID3 take); else 422 or 400 naming it. */
  private async coverImage(request: TtsSpec, tenant: string): Promise<{ path: string; format: 'jpeg' | 'png' } | undefined> {
    if (!request.cover) return undefined;
    const { path, format } = await this.deps.assets.resolve(request.cover, tenant, 'image', 'cover');
    if (format !== 'jpeg' && format !== 'png') {
      throw new AppError('VALIDATION_ERROR', { field: 'cover', message: `A cover is a JPEG or PNG image (what MP4 and ID3 take); this one is ${format}.` });
    }
    return { path, format };
  }

  private async videoInputs(
    request: TtsVideoSpec,
    tenant: string,
  ): Promise<{ background?: Background; scenes?: SceneRequest[]; music?: { file: string; loudness?: number; volume?: number } }> {
    const { assets } = this.deps;
    const background = await backgroundOf(request.background, assets, tenant, 'background');
    if (request.scenes) checkSceneOrder(request.scenes);
    const scenes =
      request.scenes &&
      (await Promise.all(
        request.scenes.map(async ({ background: option, ...start }, index) => ({ ...start, background: (await backgroundOf(option, assets, tenant, `scenes[${index}].background`)) as Background })),
      ));
    const track = request.music && (await assets.resolve(request.music.id, tenant, 'audio', 'music.id'));
    const music = request.music && track ? { file: track.path, loudness: track.loudness, volume: request.music.volume } : undefined;
    return { background, scenes, music };
  }
}

/** A run of a job: its options, whether it is long, and its checkpoints where it keeps them. */
interface RunOptions extends ExecuteOptions {
  long: boolean;
  checkpoints?: SpokenCheckpoints;
}

/**
 * Where a long job's checkpoints are kept: the request cache's key of its request (every option, the voice and its
 * engine, the release) in its client's partition, whatever the cache's scope: another request, another client's
 * same request, or another release never reads them (and a sentence read back is checked against the one to say).
 */
function checkpointKey(spec: JobSpec, voice: VoiceHandle, tenant: string): string {
  const effective = spec.operation === 'tts' ? effectiveTts(spec.request) : effectiveVideo(spec.request);
  return requestCacheKey(spec.operation, effective, voice, `checkpoints:${tenant}`);
}

/** The fields that are set (a request without them keys as before they existed). */
function definedOf<T extends Record<string, unknown>>(fields: T): Partial<T> {
  return Object.fromEntries(Object.entries(fields).filter(([, value]) => value !== undefined)) as Partial<T>;
}

/** A chapter's times to the millisecond, as word times are. */
function roundChapter(chapter: TimedChapter): TimedChapter {
  return { title: chapter.title, start: Math.round(chapter.start * 1000) / 1000, end: Math.round(chapter.end * 1000) / 1000 };
}

/** A /tts request with every default filled in (the request cache keys on exactly this). */
export function effectiveTts(request: TtsSpec) {
  const { text, text_type, voice, format = 'mp3', speed = 1, timestamps = false, marks = false, loudness = false, title, cover, book } = request;
  return { text, text_type, voice, format, speed, timestamps, marks, loudness, ...lexiconsOf(request), ...definedOf({ title, cover, book }) };
}

/** Everything that makes a /tts-video what it is, defaults filled in (the request cache keys on exactly this). */
export function effectiveVideo(request: TtsVideoSpec) {
  const { background, scenes, music } = request;
  const loudness = videoLoudness(request);
  const channels = soundtrackChannels(request.channels, music !== undefined);
  return { ...videoJob(request), background, scenes, music: music && { id: music.id, volume: music.volume ?? null }, loudness, channels, ...lexiconsOf(request) };
}

/** The soundtrack's loudness target: the request's, else its platform's, else VIDEO_LOUDNESS; false keeps the voice's level. */
function videoLoudness(request: TtsVideoSpec): number | false {
  return request.loudness ?? (request.platform ? PLATFORMS[request.platform].loudness : VIDEO_LOUDNESS);
}

/** The lexicon ids, when there are any: a lexicon never changes under its id, so the ids stand for their content (requests without keep their keys). */
function lexiconsOf(request: { lexicons?: string[] }): { lexicons?: string[] } {
  return request.lexicons?.length ? { lexicons: request.lexicons } : {};
}

/** A /tts-video request as the renderer takes it, with every default filled in. */
export function videoJob(request: TtsVideoSpec) {
  const { text, text_type: textType, voice, subtitles = true, fps = 30, frame_rate = 'constant', platform, progress_bar: progressBar = false, transition = 'cut' } = request;
  const preset = platform && PLATFORMS[platform];
  const { resolution = preset?.resolution ?? '1080p', aspect_ratio = preset?.aspectRatio ?? '16:9' } = request;
  const { caption_style, font, caption_color, highlight_color, position, font_size, caption_case, caption_outline, highlight_box } = request;
  const look = {
    style: caption_style,
    family: font,
    textColour: hex(caption_color),
    highlightColour: hex(highlight_color),
    position,
    scale: font_size,
    textCase: caption_case,
    outline: caption_outline,
    highlightBox: highlight_box,
    platform,
  };
  const title = request.title === undefined ? undefined : { text: request.title, seconds: request.title_seconds ?? TITLE_SECONDS };
  const speakers =
    request.speakers && Object.fromEntries(Object.entries(request.speakers).map(([key, asked]) => [key, { textColour: hex(asked.caption_color), highlightColour: hex(asked.highlight_color) }]));
  return { text, textType, voice, resolution, aspectRatio: aspect_ratio, subtitles, fps, frameRate: frame_rate, look, progressBar, transition, ...(title ? { title } : {}), ...(speakers ? { speakers } : {}) };
}

/** Seconds a title is shown unless asked otherwise. */
const TITLE_SECONDS = 3;

/** "#ffd23f" → "FFD23F", as the renderer takes colours. */
function hex(colour: string | undefined): string | undefined {
  return colour?.replace(/^#/, '').toUpperCase();
}

/** The request's background (or a scene's, under `field`) for the renderer; an image asset is looked up in the asset store. */
async function backgroundOf(option: BackgroundOption | undefined, assets: AssetStore, tenant: string, field: string): Promise<Background | undefined> {
  if (option === undefined) return undefined;
  if (typeof option === 'string') return { type: 'color', color: hex(option) as string };
  if ('gradient' in option) {
    const [from, to] = option.gradient.map((colour) => hex(colour) as string) as [string, string];
    return { type: 'gradient', colors: [from, to], direction: option.direction ?? 'vertical' };
  }
  if ('video' in option) {
    const clip = await assets.resolve(option.video, tenant, 'video', `${field}.video`);
    return { type: 'video', file: clip.path, ...(clip.width && clip.height ? { size: { width: clip.width, height: clip.height } } : {}), bt709: clip.bt709 === true, ...(clip.duration ? { seconds: clip.duration } : {}) };
  }
  const file = (await assets.resolve(option.image, tenant, 'image', `${field}.image`)).path;
  return { type: 'image', file, ...(option.motion ? { motion: option.motion } : {}) };
}
