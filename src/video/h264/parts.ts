import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { Ffmpeg } from '../../media/ffmpeg.js';
import type { ProcessLimits } from '../../media/process.js';
import { assScript } from '../ass.js';
import type { Captions } from '../captions.js';
import type { FrameSize } from '../frame.js';
import { keyFrames } from '../layout.js';
import type { FrameRate } from '../options.js';
import { captionBand, type CaptionBand } from './band.js';
import { composeStream, type ComposedStream, type StreamParts } from './compose.js';

/**
 * Every x264 encode uses these, so their slices can share one picture (see compose.ts): CAVLC rather than CABAC
 * (7.3.4), no B-frames (only I and P slices, every picture a reference), no deblocking across slice edges (8.7),
 * one IDR at the start (keyint=infinite, scenecut=0), one fixed quantizer. With these x264 writes Constrained
 * Baseline (A.2.1).
 */
export const X264_OPTIONS = ['-c:v', 'libx264', '-preset', 'ultrafast', '-qp', '20', '-bf', '0', '-x264-params', 'keyint=infinite:scenecut=0:no-deblock=1'];

/** How the picture is drawn, as ffmpeg filters; the plain render draws it with the same ones (see render.ts). */
export interface PictureFilters {
  /** The background at `fps`, as a lavfi source of any size. */
  source(fps: number): string;
  /** Scales the background up to width × height (square pixels, yuv420p). */
  scale(width: number, height: number): string;
  /** Keeps only these frames (ascending). */
  select(frames: readonly number[]): string;
  /** Burns in the ASS script in `file`. */
  captions(file: string): string;
}

export interface PartsJob extends ProcessLimits {
  size: FrameSize;
  fps: number;
  captions?: Captions;
  picture: PictureFilters;
  workDir: string;
}

export type PictureParts = Pick<StreamParts, 'background' | 'band'>;

/** One ffmpeg run, one encode per part: the background frame, and with captions the band and the rows around it. */
export async function encodePictureParts(ffmpeg: Ffmpeg, job: PartsJob): Promise<PictureParts> {
  const { width, height } = job.size;
  const { picture } = job;
  const still = (name: string, rows: number) => ({ name, chain: `trim=end_frame=1,${picture.scale(width, rows)}`, frames: 1 });
  const encodes = [still('background', height)];
  let band: { area: CaptionBand; frames: number[] } | undefined;
  if (job.captions) {
    const area = captionBand(job.captions.box);
    const frames = keyFrames(job.captions);
    const script = path.join(job.workDir, 'captions.ass');
    await writeFile(script, assScript(job.captions, area));
    band = { area, frames };
    encodes.push({
      name: 'band',
      chain: [`trim=end_frame=${job.captions.frames}`, picture.select(frames), picture.scale(width, area.height), picture.captions(script)].join(','),
      frames: frames.length,
    });
    if (area.top > 0) encodes.push(still('above', area.top));
    if (area.top + area.height < height) encodes.push(still('below', height - area.top - area.height));
  }
  const outputs = encodes.map((encode) => ({
    output: path.join(job.workDir, `${encode.name}.h264`),
    // passthrough: keep the selected frames' own times, add no duplicates for the gaps.
    outputOptions: ['-map', `[${encode.name}]`, '-frames:v', String(encode.frames), ...X264_OPTIONS, '-fps_mode', 'passthrough', '-f', 'h264'],
  }));
  const [first, ...more] = outputs;
  if (!first) throw new Error('No picture to encode');
  await ffmpeg.run({
    inputs: [{ source: picture.source(job.fps), options: ['-f', 'lavfi'] }],
    complexFilter: [
      `[0:v]split=${encodes.length}${encodes.map((encode) => `[${encode.name}-in]`).join('')}`,
      ...encodes.map((encode) => `[${encode.name}-in]${encode.chain}[${encode.name}]`),
    ].join(';'),
    ...first,
    moreOutputs: more,
    signal: job.signal,
    timeoutMs: job.timeoutMs,
    killGraceMs: job.killGraceMs,
  });
  const read = (name: string) => readFile(path.join(job.workDir, `${name}.h264`));
  if (!band) return { background: await read('background') };
  const [background, stream, above, below] = await Promise.all(
    ['background', 'band', 'above', 'below'].map((name) => (encodes.some((encode) => encode.name === name) ? read(name) : undefined)),
  );
  if (!background || !stream) throw new Error('An encode is missing');
  // A band top is a whole number of macroblock rows (band.ts).
  return { background, band: { stream, row: band.area.top / 16, frames: band.frames, above, below } };
}

export type Splice = typeof composeStream;

export interface SpliceJob extends PartsJob {
  frameRate: FrameRate;
  totalFrames: number;
  /** The real splicer unless a test puts a failing one in its place. */
  splice?: Splice;
}

/** The whole picture through the splicer: the parts encode, then the stream put together from them. */
export async function splicePicture(ffmpeg: Ffmpeg, job: SpliceJob): Promise<ComposedStream> {
  const parts = await encodePictureParts(ffmpeg, job);
  return (job.splice ?? composeStream)({ ...parts, totalFrames: job.totalFrames, rate: job.frameRate });
}
