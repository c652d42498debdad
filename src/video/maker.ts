import type { SpeakerLook } from './speakers.js';
import path from 'node:path';
import { AppError } from '../errors.js';
import type { VoiceHandle } from '../engines/types.js';
import type { Ffmpeg, MediaInfo } from '../media/ffmpeg.js';
import { rethrowAsAppError } from '../media/process.js';
import type { AspectRatio, FrameRate, VideoResolution } from './frame-shapes.js';
import type { Scratch } from '../storage/scratch.js';
import { publishFiles, type Storage, type StoredFile } from '../storage/storage.js';
import type { Lexicon } from '../speech/lexicon.js';
import type { SpokenSoFar, Synthesizer } from '../speech/synthesizer.js';
import type { SpokenCheckpoints } from '../speech/spoken-checkpoints.js';
import { writtenText, type TextType } from '../speech/read-script.js';
import { assertDrawable, captionFont } from './font.js';
import type { Background } from './background.js';
import { placeScenes, type SceneRequest, type Transition } from './scenes.js';
import type { Channels, Music } from './soundtrack.js';
import { resolveLook, type CaptionLook } from './caption-style.js';
import { frameSize, type FrameSize } from './frame.js';
import { layoutCaptions } from './layout.js';
import { encodedVideoBytes, renderVideo, type RenderPath } from './render.js';
import { webVtt } from './webvtt.js';
import { titlesOf } from './captions.js';
import { chaptersVttFile } from '../speech/captions/cues.js';
import type { TimedChapter } from '../speech/chapters.js';

export interface VideoRequest {
  text: string;
  /** Resolved once, by `check`, before the job is queued. */
  voice: VoiceHandle;
  resolution: VideoResolution;
  aspectRatio: AspectRatio;
  /** Burn the captions into the picture (the WebVTT file is published either way). */
  subtitles: boolean;
  fps: number;
  frameRate: FrameRate;
  /** Caption style, font, colours, position and size; the karaoke defaults where absent. */
  look?: Partial<CaptionLook>;
  /** A title (hook) over the first seconds. */
  title?: { text: string; seconds: number };
  /** A dialogue's speakers' caption colours, by voice id or name (speakers.ts). */
  speakers?: Readonly<Record<string, SpeakerLook>>;
  /** Behind the captions; the dark default colour where absent. */
  background?: Background;
  /** Backgrounds in turn from a time or a sentence on (`background` before the first). */
  scenes?: SceneRequest[];
  /** How one scene gives way to the next; default a cut. */
  transition?: Transition;
  /** A thin bar along the bottom that grows with the video, in the captions' highlight colour. */
  progressBar?: boolean;
  /** LUFS of the soundtrack; null keeps the voice's level; the renderer's default (-14) where absent. */
  loudness?: number | null;
  music?: Music;
  /** The soundtrack's channels; by default stereo with music, mono without. */
  channels?: Channels;
  signal?: AbortSignal;
  /** Publish under this name rather than a fresh one (a queued job's id). */
  name?: string;
  /** Told how far the video is, 0 to 1: up to a half as the narration is spoken (with how much of the text that is), then 1 once it is published (the render reports nothing on its way). */
  onProgress?: (fraction: number, spoken?: SpokenSoFar) => void;
  /** A long job (SpeakRequest.long): the long limits apply. */
  long?: boolean;
  /** A long job's checkpoints (SpeakRequest.checkpoints). */
  checkpoints?: SpokenCheckpoints;
  /** Told when the splicer failed and the video was rendered the plain way instead. */
  onWarning?: (message: string, cause: unknown) => void;
  /** The sentence cache's partition the narration reads and fills (SpeakRequest.cachePartition). */
  cachePartition?: string;
  /** Pronunciation lexicons of the narration (SpeakRequest.lexicons). */
  lexicons?: Lexicon[];
  /** Runs before the files are published; a throw publishes nothing (see publishFiles). */
  beforePublish?: () => Promise<void>;
}

export interface VideoResult {
  video: StoredFile;
  captions: StoredFile;
  /** Length of the video file in seconds, as ffprobe reads it. */
  duration: number;
  size: FrameSize;
  /** Characters billed: the text's, without SSML markup. */
  characters: number;
  /** How the picture was encoded (render.ts). */
  renderPath: RenderPath;
  /** The frame rate it has: the one asked for, but constant for a picture that moves. */
  frameRate: FrameRate;
  /** A text with chapters: each with its span in the video, and their WebVTT. */
  chapters?: TimedChapter[];
  chaptersFile?: StoredFile;
}

/** Text → narrated MP4 + WebVTT in storage, published together under one name or not at all. Knows nothing of HTTP. */
export interface VideoMakerDeps {
  synthesizer: Synthesizer;
  ffmpeg: Ffmpeg;
  storage: Storage;
  /** The splicer's start-up self-check: when it failed, videos are rendered the plain way from the start. */
  splicer?: { works(): Promise<boolean> };
  scratch?: Scratch;
  /** Seconds between keyframes; the renderer's default otherwise. */
  keyframeSeconds?: number;
}

/** The part of a video's progress that is its narration (measured: about half of a 60 s video's time). */
const SPEECH_SHARE = 0.5;

export class VideoMaker {
  private readonly synthesizer: Synthesizer;

  constructor(private readonly deps: VideoMakerDeps) {
    this.synthesizer = deps.synthesizer;
  }

  /** What the schema cannot check, once, before any work is queued: the voice, and that captions can be drawn. */
  resolveVoice(request: { text: string; textType?: TextType; voice: string; subtitles: boolean; look?: Partial<CaptionLook>; title?: { text: string } }): VoiceHandle {
    const voice = this.synthesizer.resolveVoice(request);
    const font = captionFont(resolveLook(request.look).family);
    if (request.subtitles) assertDrawable(writtenText(request.text, request.textType), font);
    if (request.title) assertDrawable(request.title.text, font);
    return voice;
  }

  async make(request: VideoRequest): Promise<VideoResult> {
    const { onProgress } = request;
    // One budget for the whole job: its narration's seconds, then its render's scratch and files.
    const budget = this.synthesizer.budget('video', undefined, undefined, request.long);
    const speech = await this.synthesizer.speak({ ...request, onProgress: onProgress && ((fraction, spoken) => onProgress(fraction * SPEECH_SHARE, spoken)) }, budget);
    const size = frameSize(request.resolution, request.aspectRatio);
    const captions = layoutCaptions({ text: speech.text ?? request.text, speech, size, aspectRatio: request.aspectRatio, fps: request.fps, look: request.look, language: request.voice.language, title: request.title, speakers: request.speakers });
    const scenes = request.scenes && placeScenes(request.scenes, speech.sentences, request.fps, captions.frames);
    // Titles (the hook, chapter cards) are drawn with the captions; without subtitles they are drawn alone.
    const drawn = request.subtitles ? captions : titlesOf(captions).length > 0 ? { ...captions, cues: [], states: [] } : undefined;
    const { chapters } = captions;
    const published = await publishFiles(
      this.deps.storage,
      { kind: 'video', extension: 'mp4' },
      async (output) => {
        const { ffmpeg, splicer, scratch, keyframeSeconds } = this.deps;
        const info = await renderVideo(ffmpeg, {
          speech,
          size,
          fps: request.fps,
          frameRate: request.frameRate,
          captions: drawn,
          output,
          signal: request.signal,
          splice: (await splicer?.works()) === false ? false : undefined,
          onWarning: request.onWarning,
          scratch,
          budget,
          keyframeSeconds,
          background: request.background,
          scenes,
          transition: request.transition,
          loudness: request.loudness,
          music: request.music,
          channels: request.channels,
          progressBar: request.progressBar ? { colour: resolveLook(request.look).highlightColour, platform: resolveLook(request.look).platform } : undefined,
        }).catch(rethrowAsAppError('MEDIA_FAILED'));
        assertPlayable(info, size);
        return { duration: info.duration, renderPath: info.renderPath, frameRate: info.frameRate };
      },
      [
        { kind: 'captions', extension: 'vtt', content: () => webVtt(captions) },
        ...(chapters ? [{ kind: 'captions' as const, extension: 'chapters.vtt', content: () => chaptersVttFile(chapters) }] : []),
      ],
      { name: request.name, beforeCommit: request.beforePublish, signal: request.signal, beforeWrite: (file) => budget.room(path.dirname(file), encodedVideoBytes(speech.duration, size)) },
    );
    onProgress?.(1);
    const [vtt, chaptersFile] = published.companions;
    if (!vtt) throw new AppError('STORAGE_FAILED', { message: 'The captions were not published.' });
    const { duration, renderPath, frameRate } = published.produced;
    return {
      video: published.file,
      captions: vtt,
      duration,
      size,
      characters: (speech.text ?? request.text).length,
      renderPath,
      frameRate,
      ...(chapters && chaptersFile ? { chapters, chaptersFile } : {}),
    };
  }
}

/** About the most bytes a video's file takes: a picture that changes in every frame at 1080p, about 1 MB a second (render.ts MOVING_X264 measured 60 MB a minute at ultrafast). */
/** A last check of what we promise: H.264 at the asked size, AAC, both there. */
function assertPlayable(info: MediaInfo, size: FrameSize): void {
  const video = info.streams.find((stream) => stream.codecType === 'video');
  const audio = info.streams.find((stream) => stream.codecType === 'audio');
  if (video?.codecName !== 'h264' || video.width !== size.width || video.height !== size.height || audio?.codecName !== 'aac') {
    throw new AppError('MEDIA_FAILED', { message: 'The encoder produced an unexpected video.' });
  }
}
