import { readFile, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { Ffmpeg } from '../media/ffmpeg.js';
import type { ProcessLimits } from '../media/process.js';
import type { ScratchBudget } from '../storage/scratch.js';
import type { FrameSize } from './frame.js';
import type { PictureLayer } from './h264/index.js';
import { forBt601Drawing, rgbToYuv420 } from './colour.js';

/** What fills the frame behind the captions. Colours are RGB hex without `#`. */
export type Background =
  | { type: 'color'; color: string }
  | { type: 'gradient'; colors: readonly [string, string]; direction: GradientDirection }
  /** `file`: a checked PNG, JPEG or WebP (an uploaded asset), scaled to cover the frame and cropped to it; `motion` moves over it. */
  | { type: 'image'; file: string; motion?: Motion }
  /**
   * `file`: a checked clip (an uploaded video asset), its frames at the video's rate, scaled to cover, looped; its sound
   * never used. `size` and `bt709` (yuv420p, BT.709, limited range) as found on upload: such a clip at the frame's size is used as it is.
   * `seconds`: how long it plays, as found on upload; a clip known to loop is decoded once (prepareBackground).
   */
  | { type: 'video'; file: string; size?: FrameSize; bt709?: boolean; seconds?: number };

/** Slow moves over an image background (Ken Burns). */
export const MOTIONS = ['zoom-in', 'zoom-out', 'pan'] as const;
export type Motion = (typeof MOTIONS)[number];

/** How much larger than the frame a moving image is prepared: the room its move travels (zoomed to and from, panned across). */
const MOTION_ROOM = 1.2;

/** Whether the background changes from frame to frame (a moving picture is encoded whole: render.ts). */
export function isMoving(background: Background | undefined): boolean {
  return background?.type === 'video' || (background?.type === 'image' && background.motion !== undefined);
}

type Clip = Extract<Background, { type: 'video' }>;

/**
 * A decoded clip at most this large (raw frames at the video's size and rate) is decoded once, when it loops, and
 * its frames read again from the work folder: a 10 s 1080×1920 clip at 30 fps is 933 MB. Decoding H.264 is most of a
 * looped clip's cost: 60 s of 1080×1920 over that clip, without captions, took 15.3 s decoded as it played and
 * 12.3 s decoded once (1.2 s of it the decode).
 */
const DECODED_CLIP_MAX_BYTES = 1024 ** 3;

/** The filters that make a clip's frames the video's: its rate, scaled until both sides cover the frame, the middle kept, BT.709. */
function clipFrames(clip: Clip, size: FrameSize, fps: number): string {
  // A clip already at the frame's size in BT.709 needs no scaler: the conversion alone took half of the filters' time
  // (a 10 s 1080×1920 clip looped to 60 s: 9.8 s with it, 5.0 s without).
  const asItIs = clip.bt709 === true && clip.size?.width === size.width && clip.size.height === size.height;
  const fit = asItIs
    ? ''
    : `${cover(size, ':out_color_matrix=bt709:out_range=tv')},`;
  return `fps=${fps},${fit}setsar=1,format=yuv420p`;
}

/**
 * "Cover" as ffmpeg filters: the middle of the picture cut to the frame's shape, then scaled to the frame (bicubic:
 * sharp, and faster than lanczos), with `scaleOptions` for the scaler. Cut first, so that only what is kept is scaled
 * (a 1920x1080 picture under a 1080x1920 frame: a third of it, not all of it at 3413x1920).
 */
function cover({ width, height }: FrameSize, scaleOptions = ''): string {
  return `crop=w='min(iw,ih*${width}/${height})':h='min(ih,iw*${height}/${width})',scale=${width}:${height}:flags=bicubic${scaleOptions}`;
}

/**
 * A clip, decoded as it plays (its sound never read), looped for as long as its scene lasts (a longer one is cut
 * there), its frames made the video's (clipFrames).
 */
function clipLayer(clip: Clip, size: FrameSize, fps: number): PictureLayer {
  return {
    input: () => ({ source: clip.file, options: ['-stream_loop', '-1', '-an', '-sn', '-dn'] }),
    // No clockFrom: a part starting later would decode the clip's frames up to it only to drop them (measured: a 60 s
    // 1080×1920 video over a looped 10 s clip took 23 s in two halves, 21 s whole).
    clock: `${clipFrames(clip, size, fps)},setpts=N`,
    region: cropRows,
    flat: false,
  };
}

/** Frames of a clip decoded at `fps` (one more than its length gives: the rate filter may round up), if its length is known. */
function decodedFrames(clip: Clip, fps: number): number | undefined {
  return clip.seconds === undefined ? undefined : Math.ceil(clip.seconds * fps) + 1;
}

/** Whether a clip plays more than once in `timing`'s frames and its frames, decoded, fit DECODED_CLIP_MAX_BYTES and what is left of the job's scratch. */
function decodedOnce(clip: Clip, size: FrameSize, timing: VideoTiming, budget?: ScratchBudget): boolean {
  const frames = decodedFrames(clip, timing.fps);
  if (frames === undefined || frames - 1 >= timing.frames) return false;
  const bytes = frames * rawFrameBytes(size);
  return bytes <= DECODED_CLIP_MAX_BYTES && budget?.scratchFits(bytes) !== false;
}

/** Bytes of one yuv420p frame. */
function rawFrameBytes(size: FrameSize): number {
  return size.width * size.height * 1.5;
}

/** A clip's frames, decoded once into `file` (raw yuv420p at the video's size and rate, never more than its budget took), looped from there. */
async function decodeClip(ffmpeg: Ffmpeg, clip: Clip, size: FrameSize, fps: number, file: string, limits: ProcessLimits, budget?: ScratchBudget): Promise<PictureLayer> {
  const most = decodedFrames(clip, fps) ?? 0;
  await budget?.reserveScratch(path.dirname(file), most * rawFrameBytes(size), 'a decoded clip');
  await ffmpeg.run({
    inputs: [{ source: clip.file, options: ['-an', '-sn', '-dn'] }],
    output: file,
    outputOptions: ['-map', '0:v:0', '-vf', clipFrames(clip, size, fps), '-frames:v', String(most), '-f', 'rawvideo'],
    ...limits,
  });
  const frames = Math.floor((await stat(file)).size / rawFrameBytes(size));
  // No frames (the upload's checks make that unlikely): what decoding as it plays makes of the clip, as before.
  if (frames === 0) return clipLayer(clip, size, fps);
  // A part of the video encoded on its own (render.ts) starts where the loop has got to: it skips at most one loop's
  // frames, read again from the file, not decoded.
  const clockFrom = (start: number) => `${start % frames > 0 ? `trim=start_frame=${start % frames},` : ''}setpts=N`;
  return {
    input: () => ({ source: file, options: ['-stream_loop', '-1', ...rawInput(size, fps)] }),
    clock: clockFrom(0),
    clockFrom,
    region: cropRows,
    flat: false,
  };
}

/** A frame's rows [top, top + rows), as a part of the picture encodes them. */
const cropRows: PictureLayer['region'] = (width, top, rows) => `crop=${width}:${rows}:0:${top},setsar=1`;

/** How ffmpeg reads a file of raw yuv420p frames. */
function rawInput(size: FrameSize, fps: number): string[] {
  return ['-f', 'rawvideo', '-pixel_format', 'yuv420p', '-video_size', `${size.width}x${size.height}`, '-framerate', String(fps)];
}

export type GradientDirection = 'vertical' | 'horizontal' | 'diagonal';

/** One colour: a 16×16 lavfi source scaled up without interpolation, so every pixel is exactly the colour. */
export function colourLayer(rgb: string): PictureLayer {
  return {
    // The colour source converts with BT.601 (see colour.ts).
    input: (fps) => ({ source: `color=c=0x${forBt601Drawing(rgb)}:s=16x16:r=${fps}`, options: ['-f', 'lavfi'] }),
    region: (width, _top, rows) => `scale=${width}:${rows}:flags=neighbor,setsar=1,format=yuv420p`,
    flat: true,
  };
}

/**
 * A still full frame, made once as raw yuv420p with BT.709 coefficients: read once, repeated as the frames at `fps` (the `loop` filter holds the
 * one decoded frame; `-loop 1` would decode the file again for every frame), each encode cutting its rows.
 */
function stillLayer(file: string, size: FrameSize): PictureLayer {
  return {
    input: (fps) => ({ source: file, options: rawInput(size, fps) }),
    clock: STILL_CLOCK,
    clockFrom: () => STILL_CLOCK,
    region: cropRows,
    flat: false,
  };
}

/** The one decoded frame held and repeated, each copy timed by its number. */
const STILL_CLOCK = 'loop=loop=-1:size=1:start=0,setpts=N';

/**
 * A pan's bank: copies of the prepared image, each shifted left by a further 1/PAN_STEPS pixel, covering two pixels
 * (yuv420p is cropped at even columns only). Cropping copy k at column 2m shows the image from 2m + k/PAN_STEPS: the
 * window moves on by the same fraction of a pixel in every frame (within 1/16 px), nothing computed per frame.
 */
const PAN_STEPS = 8;
const PAN_COPIES = 2 * PAN_STEPS;

/**
 * The pan's bank of `frame` (raw yuv420p at `size`): one raw frame PAN_COPIES times as tall, copy k (rows k·height on)
 * moved left by k/PAN_STEPS px (linear interpolation). About 0.75 s of arithmetic at 1080×1920: the event loop gets a
 * turn between copies.
 */
export async function panBank(frame: Buffer, size: FrameSize): Promise<Buffer> {
  const { width, height } = size;
  const planes = [
    { offset: 0, width, height, scale: 1 },
    { offset: width * height, width: width / 2, height: height / 2, scale: 2 },
    { offset: width * height * 1.25, width: width / 2, height: height / 2, scale: 2 },
  ];
  const bank = Buffer.alloc(frame.length * PAN_COPIES);
  for (let k = 0; k < PAN_COPIES; k += 1) {
    for (const plane of planes) {
      // A chroma sample is two pixels wide: it moves half as many samples.
      const shift = k / PAN_STEPS / plane.scale;
      const whole = Math.floor(shift);
      const part = shift - whole;
      // One tall frame: its luma plane is every copy's luma, one under the other, then the same for each chroma plane.
      const into = plane.offset * PAN_COPIES + k * plane.width * plane.height;
      const lastColumn = plane.width - 1;
      for (let y = 0; y < plane.height; y += 1) {
        const row = plane.offset + y * plane.width;
        const out = into + y * plane.width;
        for (let x = 0; x < plane.width; x += 1) {
          const a = frame[row + Math.min(lastColumn, x + whole)] as number;
          const b = frame[row + Math.min(lastColumn, x + whole + 1)] as number;
          bank[out + x] = Math.round(a + (b - a) * part);
        }
      }
    }
    await new Promise<void>((resolve) => setImmediate(resolve));
  }
  return bank;
}

/**
 * A still image larger than the frame (MOTION_ROOM), one raw frame, moved over for `frames` frames: zoompan makes
 * every frame of a zoom from that one; a pan crops a window sliding from the left edge to the right from its bank
 * (panBank: `prepared` is one copy, the file holds PAN_COPIES of them stacked).
 */
function movingLayer(file: string, prepared: FrameSize, size: FrameSize, motion: Motion, timing: VideoTiming): PictureLayer {
  const last = Math.max(1, timing.frames - 1);
  const room = MOTION_ROOM - 1;
  // Where the window's left edge is, in 1/PAN_STEPS px (two pixels short of the edge: the bank's last copy reads two past it).
  const travel = prepared.width - size.width - 2;
  const input = motion === 'pan' ? { width: prepared.width, height: prepared.height * PAN_COPIES } : prepared;
  // Frame numbers count from `start`: a part of the video encoded on its own (render.ts) moves on from where the one before stopped.
  const clockFrom = (start: number) => {
    if (motion === 'pan') {
      const eighths = `round(${travel * PAN_STEPS}*(n+${start})/${last})`;
      const x = `2*floor(${eighths}/${PAN_COPIES})`;
      const y = `${prepared.height}*mod(${eighths},${PAN_COPIES})+${2 * Math.round((prepared.height - size.height) / 4)}`;
      return `${STILL_CLOCK},crop=${size.width}:${size.height}:x='${x}':y='${y}'`;
    }
    const zoom = motion === 'zoom-in' ? `1+${room}*(on+${start})/${last}` : `${MOTION_ROOM}-${room}*(on+${start})/${last}`;
    return `zoompan=z='${zoom}':x='(iw-iw/zoom)/2':y='(ih-ih/zoom)/2':d=${timing.frames}:s=${size.width}x${size.height}:fps=${timing.fps},setpts=N`;
  };
  return {
    input: (fps) => ({ source: file, options: rawInput(input, fps) }),
    clock: clockFrom(0),
    clockFrom,
    region: cropRows,
    flat: false,
  };
}

/** How many frames a video has, at what rate: what a moving background is laid out over. */
export interface VideoTiming {
  frames: number;
  fps: number;
}

/** What the backgrounds of one video share: the job's scratch budget, and the clips decoded so far (by file). */
export interface SharedScratch {
  budget?: ScratchBudget;
  decodedClips?: Map<string, Promise<PictureLayer>>;
}

/**
 * Makes what the background needs (a raw BT.709 frame for gradients and images, a looped clip's frames) in `workDir`
 * as `name` and gives its layer; each file taken from the job's scratch budget before it is written.
 */
export async function prepareBackground(
  ffmpeg: Ffmpeg,
  background: Background,
  size: FrameSize,
  workDir: string,
  limits: ProcessLimits,
  timing: VideoTiming,
  name = 'background',
  shared: SharedScratch = {},
): Promise<PictureLayer> {
  if (background.type === 'color') return colourLayer(background.color);
  const file = path.join(workDir, `${name}.yuv`);
  if (background.type === 'video') {
    const earlier = shared.decodedClips?.get(background.file);
    if (earlier) return earlier;
    // A clip the job's scratch has no room for is decoded as it plays: slower, no scratch. Decided and taken from the
    // budget at once (decodeClip reserves before its first wait), so scenes prepared side by side never overdraw it.
    if (!decodedOnce(background, size, timing, shared.budget)) return clipLayer(background, size, timing.fps);
    const decoded = decodeClip(ffmpeg, background, size, timing.fps, file, limits, shared.budget);
    shared.decodedClips?.set(background.file, decoded);
    return decoded;
  }
  const motion = background.type === 'image' ? background.motion : undefined;
  const even = (pixels: number) => 2 * Math.round((pixels * MOTION_ROOM) / 2);
  const prepared = motion ? { width: even(size.width), height: even(size.height) } : size;
  await shared.budget?.reserveScratch(workDir, rawFrameBytes(prepared), `the ${background.type} background`);
  if (background.type === 'gradient') {
    await writeFile(file, rgbToYuv420(gradientPixels(background.colors, background.direction, size), size.width, size.height));
  } else {
    // Cover (the middle cut to the frame's shape, scaled to it), then BT.709 YUV.
    await ffmpeg.run({
      inputs: [{ source: background.file }],
      output: file,
      outputOptions: [
        '-map', '0:v:0', '-frames:v', '1',
        '-vf',
        `${cover(prepared)},setsar=1,format=rgb24,` +
          'scale=out_color_matrix=bt709:out_range=tv,format=yuv420p',
        '-f', 'rawvideo',
      ],
      ...limits,
    });
  }
  if (motion === 'pan') {
    await shared.budget?.reserveScratch(workDir, PAN_COPIES * rawFrameBytes(prepared), 'the pan\'s shifted copies');
    const bank = path.join(workDir, `${name}-pan.yuv`);
    await writeFile(bank, await panBank(await readFile(file), prepared));
    return movingLayer(bank, prepared, size, motion, timing);
  }
  return motion ? movingLayer(file, prepared, size, motion, timing) : stillLayer(file, size);
}

/** A two-colour linear gradient as raw RGB24, computed here (some tens of milliseconds for 1080×1920). */
export function gradientPixels(colors: readonly [string, string], direction: GradientDirection, size: FrameSize): Buffer {
  const [from, to] = colors.map((hex) => [0, 2, 4].map((at) => parseInt(hex.slice(at, at + 2), 16))) as [number[], number[]];
  const { width, height } = size;
  const pixels = Buffer.alloc(width * height * 3);
  const span = direction === 'vertical' ? height - 1 : direction === 'horizontal' ? width - 1 : width + height - 2;
  const row = Buffer.alloc(width * 3);
  for (let y = 0; y < height; y += 1) {
    for (let x = 0; x < width; x += 1) {
      const along = direction === 'vertical' ? y : direction === 'horizontal' ? x : x + y;
      const t = span > 0 ? along / span : 0;
      for (let c = 0; c < 3; c += 1) row[x * 3 + c] = Math.round((from[c] as number) + ((to[c] as number) - (from[c] as number)) * t);
    }
    row.copy(pixels, y * width * 3);
  }
  return pixels;
}
