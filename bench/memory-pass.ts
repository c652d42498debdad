import { performance } from 'node:perf_hooks';
import type { FrameRate } from '../src/api/video.js';
import { MeasuredFfmpeg, TreeSampler, type ChildKind, type FfmpegPeak, type FfmpegRole } from './memory.js';
import type { RawPipeline } from './raw.js';
import { listVoices, postOk, startService } from './service.js';
import { round } from './stats.js';
import { narrationOf, textOf } from './texts.js';
import { FRAME_RATES, naiveVideo, type VideoCase } from './video.js';

export interface MemoryJob {
  /** `tts:<characters>:<voice>`, `video:<case>:<frame rate>`, `naive:<case>` or `speech:mp3`. */
  id: string;
  /** Wall time of the whole job as its client saw it (ms). */
  ms: number;
  /** The server's largest RSS while the job ran (sampled every 20 ms), MB; null for work done outside the server. */
  serverRssMb: number | null;
  /** Every ffmpeg / ffprobe run of the job with its exact peak RSS, MB. */
  ffmpeg: FfmpegPeak[];
}

export interface MemoryResult {
  /** VmHWM of the server of the timed sections, read when they were over (MB). */
  serverPeakMb: number;
  /** The same read after each timed section: where the peak was reached (MB). */
  serverPeakAfterMb: Record<string, number>;
  /** Largest peak per kind of child process (ffmpeg and ffprobe apart), over the memory pass and the timed server (MB). */
  processes: Partial<Record<ChildKind, number>>;
  /** Largest peak per kind of ffmpeg / ffprobe run over the memory pass (MB). */
  ffmpeg: Partial<Record<FfmpegRole, number>>;
  jobs: MemoryJob[];
}

/**
 * A second server whose ffmpeg and ffprobe run behind GNU time, and a 20 ms sampler on its process tree, then
 * one request of each kind, one after another.
 */
export async function measureMemory(
  raw: RawPipeline,
  options: {
    voice: string;
    videoSeconds: number;
    ttsCharacters: readonly number[];
    otherEngineCharacters: number;
    cases: readonly VideoCase[];
    /** Also the naive pipeline (in this process, through the same wrapper). */
    naive: boolean;
    workDir: string;
  },
): Promise<Omit<MemoryResult, 'serverPeakMb' | 'serverPeakAfterMb'>> {
  const measured = await MeasuredFfmpeg.create(options.workDir);
  const service = await startService({ FFMPEG_PATH: measured.ffmpeg, FFPROBE_PATH: measured.ffprobe });
  const sampler = new TreeSampler(service.pid);
  try {
    const voices = await listVoices(service.baseUrl);
    const otherVoices = ['flite:slt', voices.find((voice) => voice.engine === 'festival')?.id].filter((id) => id !== undefined && voices.some((voice) => voice.id === id));
    const tts = (characters: number, voice: string) => [`tts:${characters}:${voice}`, () => postOk(`${service.baseUrl}/tts`, { text: textOf(characters), voice })] as const;
    const video = (videoCase: VideoCase, frameRate: FrameRate) =>
      [
        `video:${videoCase.label}:${frameRate}`,
        () =>
          postOk(`${service.baseUrl}/tts-video`, {
            text: narrationOf(options.videoSeconds),
            voice: options.voice,
            resolution: videoCase.resolution,
            aspect_ratio: videoCase.aspectRatio,
            frame_rate: frameRate,
          }),
      ] as const;
    const jobs: ReadonlyArray<readonly [string, () => Promise<unknown>]> = [
      ...options.ttsCharacters.map((characters) => tts(characters, options.voice)),
      ...otherVoices.map((voice) => tts(options.otherEngineCharacters, voice as string)),
      ...options.cases.flatMap((videoCase) => FRAME_RATES.map((frameRate) => video(videoCase, frameRate))),
      ...(options.naive ? options.cases : []).map(
        (videoCase) =>
          [
            `naive:${videoCase.label}`,
            () => naiveVideo(raw, { text: narrationOf(options.videoSeconds), voice: options.voice, videoCase, workDir: options.workDir, ffmpegPath: measured.ffmpeg }),
          ] as const,
      ),
    ];
    await measured.take(); // start-up checks
    const results: MemoryJob[] = [];
    for (const [id, run] of jobs) {
      sampler.window();
      const started = performance.now();
      await run();
      const ms = round(performance.now() - started, 0);
      const serverRssMb = sampler.window();
      results.push({ id, ms, serverRssMb: id.startsWith('naive:') ? null : serverRssMb, ffmpeg: await measured.take() });
    }
    const processes = sampler.stop();
    delete processes.ffmpeg; // the wrappers' exact figures instead
    const ffmpeg: MemoryResult['ffmpeg'] = {};
    for (const peak of results.flatMap((job) => job.ffmpeg)) ffmpeg[peak.role] = Math.max(ffmpeg[peak.role] ?? 0, peak.mb);
    console.log(`  processes ${JSON.stringify(processes)}, ffmpeg ${JSON.stringify(ffmpeg)}`);
    return { processes, ffmpeg, jobs: results };
  } finally {
    sampler.stop();
    await service.stop();
  }
}
