import { writeFile } from 'node:fs/promises';
import { AppError } from '../errors.js';
import type { Ffmpeg, MediaInfo } from '../media/ffmpeg.js';
import type { AspectRatio, FrameRate, VideoResolution } from './options.js';
import type { PendingFile, Storage, StoredFile } from '../storage/storage.js';
import { rethrowAsAppError, type Synthesizer } from '../speech/synthesizer.js';
import { assertDrawable } from './font.js';
import { frameSize, layoutCaptions, type FrameSize } from './layout.js';
import { renderVideo } from './render.js';
import { webVtt } from './webvtt.js';

export interface VideoRequest {
  text: string;
  voice: string;
  resolution: VideoResolution;
  aspectRatio: AspectRatio;
  /** Burn the captions into the picture (the WebVTT file is published either way). */
  subtitles: boolean;
  fps: number;
  frameRate: FrameRate;
  signal?: AbortSignal;
}

export interface VideoResult {
  video: StoredFile;
  captions: StoredFile;
  /** Length of the video file in seconds, as ffprobe reads it. */
  duration: number;
  size: FrameSize;
}

/** Text → narrated MP4 + WebVTT in storage, published together under one name or not at all. Knows nothing of HTTP. */
export class VideoMaker {
  constructor(
    private readonly synthesizer: Synthesizer,
    private readonly ffmpeg: Ffmpeg,
    private readonly storage: Storage,
  ) {}

  /** What the schema cannot check, before any work is queued: the voice, and that captions can be drawn. */
  validate(request: Pick<VideoRequest, 'text' | 'voice' | 'subtitles'>): void {
    this.synthesizer.validate(request);
    if (request.subtitles) assertDrawable(request.text);
  }

  async make(request: VideoRequest): Promise<VideoResult> {
    this.validate(request);
    const speech = await this.synthesizer.speak(request);
    const size = frameSize(request.resolution, request.aspectRatio);
    const captions = layoutCaptions({ text: request.text, speech, size, aspectRatio: request.aspectRatio, fps: request.fps });
    const name = this.storage.newName();
    const [video, vtt] = await Promise.all([this.storage.pending('video', name, 'mp4'), this.storage.pending('captions', name, 'vtt')]).catch(
      storageFailed,
    );
    try {
      await writeFile(vtt.path, webVtt(captions)).catch(storageFailed);
      await renderVideo(this.ffmpeg, {
        speech,
        size,
        fps: request.fps,
        frameRate: request.frameRate,
        captions: request.subtitles ? captions : undefined,
        output: video.path,
        signal: request.signal,
      }).catch(rethrowAsAppError('MEDIA_FAILED'));
      const info = await this.ffmpeg.probe(video.path, { signal: request.signal }).catch(rethrowAsAppError('MEDIA_FAILED'));
      assertPlayable(info, size);
      return { ...(await this.publish(video, vtt)), duration: info.duration, size };
    } catch (error) {
      await Promise.all([video.discard(), vtt.discard()]);
      throw error;
    }
  }

  /** Captions first, then the video; if the video cannot be published, the captions are taken back. */
  private async publish(video: PendingFile, vtt: PendingFile): Promise<{ video: StoredFile; captions: StoredFile }> {
    const captions = await vtt.commit().catch(storageFailed);
    try {
      return { video: await video.commit(), captions };
    } catch (cause) {
      await this.storage.delete(captions.key).catch(() => undefined);
      throw new AppError('STORAGE_FAILED', { cause });
    }
  }
}

function storageFailed(cause: unknown): never {
  throw new AppError('STORAGE_FAILED', { cause });
}

/** A last check of what we promise: H.264 at the asked size, AAC, both there. */
function assertPlayable(info: MediaInfo, size: FrameSize): void {
  const video = info.streams.find((stream) => stream.codecType === 'video');
  const audio = info.streams.find((stream) => stream.codecType === 'audio');
  if (video?.codecName !== 'h264' || video.width !== size.width || video.height !== size.height || audio?.codecName !== 'aac') {
    throw new AppError('MEDIA_FAILED', { message: 'The encoder produced an unexpected video.' });
  }
}
