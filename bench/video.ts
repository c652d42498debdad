import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import type { AspectRatio, FrameRate, VideoResolution } from '../src/api/video.js';
import { assScript } from '../src/video/ass.js';
import { FONTS_DIR } from '../src/video/font.js';
import { frameSize } from '../src/video/frame.js';
import { layoutCaptions } from '../src/video/layout.js';
import { BACKGROUND_COLOUR, filterValue } from '../src/video/render.js';
import { pcmBytes, type RawPipeline } from './raw.js';
import { postOk, type Service } from './service.js';
import { inRounds, round, timings, type Timings } from './stats.js';
import { narrationOf } from './texts.js';

const FPS = 30;
export const FRAME_RATES: readonly FrameRate[] = ['constant', 'variable'];

export interface VideoCase {
  label: string;
  resolution: VideoResolution;
  aspectRatio: AspectRatio;
}

export const PORTRAIT: VideoCase = { label: '1080×1920', resolution: '1080p', aspectRatio: '9:16' };
export const LANDSCAPE: VideoCase = { label: '1280×720', resolution: '720p', aspectRatio: '16:9' };

export interface NaiveTimings {
  /** The text spoken by the raw pipeline (the same engine, split and joined as the service does). */
  synthesis: Timings;
  /** Captions laid out, .ass and PCM written, and the one naive ffmpeg run. */
  render: Timings;
  /** synthesis + render of each run. */
  total: Timings;
}

export interface VideoRow {
  case: string;
  /** Narration asked for, in seconds (the text is scaled to it); `duration` is what it came to. */
  plannedSeconds: number;
  characters: number;
  /** Length of the video the service made, in seconds. */
  duration: number;
  /** POST /tts-video, end to end (answer read), per frame_rate. */
  service: Record<FrameRate, Timings>;
  naive?: NaiveTimings;
  /** Seconds of video per second of wall time, from the p50s. */
  timesRealTime: Record<FrameRate | 'naive', number | null>;
  /** naive total p50 / service p50. */
  speedUpOverNaive: Record<FrameRate, number> | null;
}

interface VideoResponse {
  duration: number;
}

export interface VideoItem {
  videoCase: VideoCase;
  /** Narration to ask for, in seconds. */
  seconds: number;
  /** Also the naive pipeline on the same text. */
  naive: boolean;
}

/**
 * `runs` rounds over the items, each visit: the service's constant-rate video, its variable-rate video and, with
 * `naive`, the naive pipeline on the same text (VIDEO-NOTES: a 30 fps colour source as long as the audio, the
 * `subtitles` filter on the same captions as .ass, libx264 preset medium, ffmpeg's default AAC).
 */
export async function measureVideo(
  service: Service,
  raw: RawPipeline,
  options: { voice: string; items: readonly VideoItem[]; runs: number; workDir: string },
): Promise<VideoRow[]> {
  const { voice, runs, workDir } = options;
  const measured = options.items.map((item) => ({
    ...item,
    text: narrationOf(item.seconds),
    duration: 0,
    serviceMs: { constant: [] as number[], variable: [] as number[] },
    naiveMs: { synthesis: [] as number[], render: [] as number[], total: [] as number[] },
  }));
  await inRounds(
    measured,
    () => runs,
    async (item) => {
      for (const frameRate of FRAME_RATES) {
        const answer = await postOk<VideoResponse>(`${service.baseUrl}/tts-video`, {
          text: item.text,
          voice,
          resolution: item.videoCase.resolution,
          aspect_ratio: item.videoCase.aspectRatio,
          frame_rate: frameRate,
        });
        item.duration = answer.body.duration;
        item.serviceMs[frameRate].push(answer.ms);
      }
      if (item.naive) {
        const { synthesisMs, renderMs } = await naiveVideo(raw, { text: item.text, voice, videoCase: item.videoCase, workDir });
        item.naiveMs.synthesis.push(synthesisMs);
        item.naiveMs.render.push(renderMs);
        item.naiveMs.total.push(synthesisMs + renderMs);
      }
    },
  );
  return measured.map((item) => {
    const byRate = { constant: timings(item.serviceMs.constant), variable: timings(item.serviceMs.variable) };
    const naive = item.naive
      ? { synthesis: timings(item.naiveMs.synthesis), render: timings(item.naiveMs.render), total: timings(item.naiveMs.total) }
      : undefined;
    const realTime = (ms: number) => round(item.duration / (ms / 1000), 1);
    console.log(
      `  /tts-video ${item.videoCase.label}, ${item.duration.toFixed(1)} s: constant ${byRate.constant.p50} ms, variable ${byRate.variable.p50} ms` +
        (naive ? `, naive ${naive.total.p50} ms (render ${naive.render.p50} ms)` : ''),
    );
    return {
      case: item.videoCase.label,
      plannedSeconds: item.seconds,
      characters: item.text.length,
      duration: item.duration,
      service: byRate,
      ...(naive ? { naive } : {}),
      timesRealTime: { constant: realTime(byRate.constant.p50), variable: realTime(byRate.variable.p50), naive: naive ? realTime(naive.total.p50) : null },
      speedUpOverNaive: naive ? { constant: round(naive.total.p50 / byRate.constant.p50, 1), variable: round(naive.total.p50 / byRate.variable.p50, 1) } : null,
    };
  });
}

/** Text → naive MP4; the two phases timed apart. */
export async function naiveVideo(
  raw: RawPipeline,
  job: { text: string; voice: string; videoCase: VideoCase; workDir: string; ffmpegPath?: string },
): Promise<{ synthesisMs: number; renderMs: number }> {
  const started = performance.now();
  const speech = await raw.speak(job.text, job.voice);
  const spoken = performance.now();
  const size = frameSize(job.videoCase.resolution, job.videoCase.aspectRatio);
  const captions = layoutCaptions({ text: job.text, speech, size, aspectRatio: job.videoCase.aspectRatio, fps: FPS });
  const script = path.join(job.workDir, 'naive.ass');
  const audio = path.join(job.workDir, 'naive.pcm');
  await writeFile(script, assScript(captions));
  await writeFile(audio, pcmBytes(speech));
  await raw.ffmpeg(
    [
      ...['-f', 'lavfi', '-i', `color=c=0x${BACKGROUND_COLOUR}:s=${size.width}x${size.height}:r=${FPS}:d=${speech.duration}`],
      ...['-f', 's16le', '-ar', String(speech.sampleRate), '-ac', '1', '-i', audio],
    ],
    [
      ...['-filter_complex', `[0:v]subtitles=filename=${filterValue(script)}:fontsdir=${filterValue(FONTS_DIR)}[v]`],
      ...['-map', '[v]', '-map', '1:a', '-c:v', 'libx264', '-preset', 'medium', '-pix_fmt', 'yuv420p', '-c:a', 'aac'],
      ...['-movflags', '+faststart', '-f', 'mp4', '-y', path.join(job.workDir, 'naive.mp4')],
    ],
    undefined,
    job.ffmpegPath,
  );
  return { synthesisMs: spoken - started, renderMs: performance.now() - spoken };
}
