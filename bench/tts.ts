import path from 'node:path';
import type { RawPipeline, RawTimes } from './raw.js';
import { postOk, type Service } from './service.js';
import { inRounds, median, round, timings, type Timings } from './stats.js';
import { textOf } from './texts.js';

export interface TtsRow {
  characters: number;
  /** Seconds of audio in the file, as the service measured it. */
  audioSeconds: number;
  service: Timings;
  raw: Timings;
  /** service p50 / raw p50. */
  ratio: number;
  /** p50 of the raw pipeline's phases. */
  rawPhases: { synthesisMs: number; encodeMs: number };
}

interface TtsResponse {
  duration: number;
}

export interface ProcessStart {
  /** p50 of `ffmpeg -version` and `ffprobe -version`, interleaved: what any run of either costs before it does anything. */
  ffmpegMs: number;
  ffprobeMs: number;
  runs: number;
}

/** Start-up cost of the programs the service runs: ffmpeg once per /tts request, ffprobe once per video. */
export async function measureProcessStart(raw: RawPipeline, runs: number): Promise<ProcessStart> {
  const ffmpeg: number[] = [];
  const ffprobe: number[] = [];
  for (let run = 0; run < runs; run += 1) {
    ffmpeg.push(await raw.startupMs('ffmpeg'));
    ffprobe.push(await raw.startupMs('ffprobe'));
  }
  return { ffmpegMs: round(median(ffmpeg), 1), ffprobeMs: round(median(ffprobe), 1), runs };
}

/**
 * For each size: `runs` pairs of one HTTP POST /tts (mp3, end to end, answer read) and one raw pipeline run on the
 * same text, back to back so that both see the same machine, which goes first alternating; the sizes in rounds.
 */
export async function measureTts(service: Service, raw: RawPipeline, voice: string, sizes: ReadonlyArray<{ characters: number; runs: number }>, workDir: string): Promise<TtsRow[]> {
  const measured = sizes.map((size) => ({ ...size, text: textOf(size.characters), serviceMs: [] as number[], rawRuns: [] as RawTimes[], audioSeconds: 0 }));
  await inRounds(
    measured,
    (size) => size.runs,
    async (size, run) => {
      const viaService = async () => {
        const answer = await postOk<TtsResponse>(`${service.baseUrl}/tts`, { text: size.text, voice, format: 'mp3' });
        size.audioSeconds = answer.body.duration;
        size.serviceMs.push(answer.ms);
      };
      const viaRaw = async () => {
        size.rawRuns.push(await raw.mp3(size.text, voice, path.join(workDir, 'raw.mp3')));
      };
      for (const step of run % 2 ? [viaRaw, viaService] : [viaService, viaRaw]) await step();
    },
  );
  return measured.map(({ characters, serviceMs, rawRuns, audioSeconds }) => {
    const serviceTimings = timings(serviceMs);
    const rawTimings = timings(rawRuns.map((times) => times.totalMs));
    const phase = (name: keyof RawTimes) => round(median(rawRuns.map((times) => times[name])), 1);
    console.log(`  /tts ${characters} chars: service ${serviceTimings.p50} ms, raw ${rawTimings.p50} ms (${serviceMs.length} runs)`);
    return {
      characters,
      audioSeconds,
      service: serviceTimings,
      raw: rawTimings,
      ratio: round(serviceTimings.p50 / rawTimings.p50, 3),
      rawPhases: { synthesisMs: phase('synthesisMs'), encodeMs: phase('encodeMs') },
    };
  });
}
