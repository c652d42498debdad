import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { Ffmpeg, type MediaInfo } from '../../src/media/ffmpeg.js';
import { runProcess, type RunResult } from '../../src/media/process.js';
import { resolveMediaTools } from '../../src/media/tools.js';
import { descendantsOf, processesMatching, type ProcessEntry } from './process-table.js';

/** The tests' one Ffmpeg, on the tools the app resolves; it needs neither the app nor the engines. */
export const ffmpeg = new Ffmpeg(resolveMediaTools());

export function probe(file: string): Promise<MediaInfo> {
  return ffmpeg.probe(file);
}

/** ffmpeg itself, for the checks the Ffmpeg class does not offer. */
export function runFfmpeg(args: readonly string[], timeoutMs = 30_000): Promise<RunResult> {
  return runProcess(ffmpeg.tools.ffmpeg, ['-nostdin', ...args], { timeoutMs });
}

/** Loudness of a decoded audio file: mean volume in dBFS as ffmpeg's volumedetect reads it (-91 is digital silence). */
export async function meanVolume(file: string): Promise<number> {
  const { stderr } = await runFfmpeg(['-hide_banner', '-i', file, '-map', '0:a:0', '-af', 'volumedetect', '-f', 'null', '-']);
  const match = /mean_volume:\s*(-?[\d.]+) dB/.exec(stderr);
  if (!match?.[1]) throw new Error(`volumedetect printed no mean volume:\n${stderr}`);
  return Number(match[1]);
}

/** Integrated loudness (LUFS) and true peak (dBTP) of a file (or ffmpeg input options) as ffmpeg's own EBU R128 meter reads them. */
export async function ebur128(input: string | readonly string[]): Promise<{ integrated: number; truePeak: number }> {
  const { stderr } = await runFfmpeg(['-hide_banner', ...(typeof input === 'string' ? ['-i', input] : input), '-map', '0:a:0', '-af', 'ebur128=peak=true:framelog=verbose', '-f', 'null', '-']);
  const summary = stderr.slice(stderr.lastIndexOf('Summary:'));
  const integrated = /I:\s+(-?[\d.]+) LUFS/.exec(summary)?.[1];
  const peak = /True peak:\s+Peak:\s+(-?[\d.]+|-inf) dBFS/.exec(summary)?.[1];
  if (integrated === undefined || peak === undefined) throw new Error(`ebur128 printed no summary:\n${stderr}`);
  return { integrated: Number(integrated), truePeak: peak === '-inf' ? -Infinity : Number(peak) };
}

/** What ffmpeg reports decoding the whole file with every error fatal: empty for a clean file. */
export async function decodeErrors(file: string): Promise<string> {
  return (await runFfmpeg(['-v', 'error', '-err_detect', 'explode', '-xerror', '-i', file, '-f', 'null', '-'], 60_000)).stderr;
}

/** ffprobe's own stream fields (sample aspect ratio, frame rates, frame counts) that MediaInfo leaves out. */
export async function rawStreams(file: string): Promise<Array<Record<string, string | number | undefined>>> {
  const { stdout } = await runProcess(ffmpeg.tools.ffprobe, ['-v', 'error', '-print_format', 'json', '-show_streams', file], { timeoutMs: 30_000 });
  return (JSON.parse(stdout.toString('utf8')) as { streams: Array<Record<string, string | number | undefined>> }).streams;
}

/** One decoded frame as RGB24, taken at frame `index` of the video decoded at a constant `fps`. */
export async function decodeFrame(file: string, index: number, fps: number): Promise<Buffer> {
  const { stdout } = await runFfmpeg(['-v', 'error', '-i', file, '-vf', `fps=${fps},select=eq(n\\,${index})`, '-frames:v', '1', '-f', 'rawvideo', '-pix_fmt', 'rgb24', 'pipe:1']);
  return stdout;
}

/** Frames `indices` (ascending) of a video as RGB24 at `width`×`height`, decoded in one pass (frame numbers as decoded: a constant-rate file's). */
export async function decodeFrames(file: string, indices: readonly number[], { width, height }: { width: number; height: number }): Promise<Buffer[]> {
  const select = indices.map((index) => `eq(n\\,${index})`).join('+');
  const { stdout } = await runFfmpeg(['-v', 'error', '-i', file, '-vf', `select=${select}`, '-fps_mode', 'passthrough', '-f', 'rawvideo', '-pix_fmt', 'rgb24', 'pipe:1'], 60_000);
  const bytes = width * height * 3;
  return indices.map((_, index) => stdout.subarray(index * bytes, (index + 1) * bytes));
}

/** MD5 of every frame of the first video stream, in order: read as `format` if given, passed through `filter` if given. */
export async function frameHashes(file: string, { format, filter }: { format?: string; filter?: string } = {}): Promise<string[]> {
  const input = format ? ['-f', format, '-i', file] : ['-i', file];
  const { stdout } = await runFfmpeg(['-v', 'error', ...input, '-map', '0:v:0', ...(filter ? ['-vf', filter] : []), '-f', 'framemd5', 'pipe:1'], 60_000);
  return stdout
    .toString('utf8')
    .split('\n')
    .filter((line) => line && !line.startsWith('#'))
    .map((line) => line.split(',').at(-1)?.trim() ?? '');
}

/** PIDs of the ffmpeg processes among `processes`: by default, those this test process started (idle spares included). */
export function ffmpegPids(processes: ProcessEntry[] = descendantsOf(process.pid)): number[] {
  return processesMatching(/^(\S*\/)?ffmpeg\s/, processes).map(({ pid }) => pid);
}

/** Presentation times of the sync samples (keyframes) of the video track, as ffprobe reads the MP4's index. */
export async function keyframeTimes(file: string): Promise<number[]> {
  const args = ['-v', 'error', '-select_streams', 'v:0', '-show_entries', 'packet=pts_time,flags', '-of', 'csv=p=0', file];
  const { stdout } = await runProcess(ffmpeg.tools.ffprobe, args, { timeoutMs: 30_000 });
  return stdout
    .toString('utf8')
    .split('\n')
    .map((line) => line.split(','))
    .filter(([, flags]) => flags?.startsWith('K'))
    .map(([time]) => Number(time));
}

/** Frame `frame` of a video as test-results/<folder>/<name>.png, for a person to look at. */
export async function screenshot(folder: string, name: string, file: string, frame: number): Promise<void> {
  const dir = path.resolve('test-results', folder);
  await mkdir(dir, { recursive: true });
  await runFfmpeg(['-v', 'error', '-i', file, '-vf', `select=eq(n\\,${frame})`, '-frames:v', '1', '-y', path.join(dir, `${name}.png`)]);
}
