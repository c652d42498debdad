import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { Ffmpeg } from '../../media/ffmpeg.js';
import type { ProcessLimits } from '../../media/process.js';
import type { FrameRate, FrameSize } from '../frame-shapes.js';
import type { CaptionBand, CaptionDrawing } from './drawing.js';
import { composeStream, type ComposedStream, type StreamParts } from './compose.js';

/** E.2.1 VUI colour description: BT.709 primaries, transfer and matrix, as browsers assume for HD pictures. */
export const BT709_VUI = 'colorprim=bt709:transfer=bt709:colormatrix=bt709';
/** The same as the MP4's colr box gives it (ISO/IEC 23091-2 code points, those of H.264 Tables E-3 to E-5). */
export const BT709_COLOUR = { primaries: 1, transfer: 1, matrix: 1 } as const;

/**
 * The frames where an IDR picture goes: every `interval` frames from 0 (only 0 without an interval). A player seeks
 * to the IDR picture before the time asked and decodes from there.
 */
export function idrFrames(totalFrames: number, interval?: number): number[] {
  const step = interval ?? totalFrames;
  return Array.from({ length: Math.ceil(totalFrames / step) }, (_, index) => index * step);
}

/** The frames a variable-rate video holds: where the picture changes, the first and last, and the IDR frames. */
export function pictureFrames(captions: Pick<CaptionDrawing, 'frames' | 'changes'>, keyframeInterval?: number): number[] {
  return [...new Set([...captions.changes, ...idrFrames(captions.frames, keyframeInterval)])].sort((a, b) => a - b);
}

/**
 * ffmpeg options that make x264 encode an IDR picture at each of these frames, given as frame numbers of a
 * 1/fps time base (the encoder compares each frame's time with the list; a time rounds to its exact frame).
 */
export function forceIdrOptions(frames: readonly number[], fps: number): string[] {
  if (frames.length <= 1) return [];
  return ['-force_key_frames', frames.map((frame) => (frame / fps).toFixed(6)).join(','), '-forced-idr', '1'];
}

/** Every band picture an IDR picture: coded without reference to any other (see PictureFilters.flat). */
const INTRA_ONLY = ['-force_key_frames', 'expr:1', '-forced-idr', '1'];

/**
 * Every x264 encode uses these, so their slices can share one picture (see compose.ts): CAVLC rather than CABAC
 * (7.3.4), no B-frames (only I and P slices, every picture a reference), no deblocking across slice edges (8.7),
 * one IDR at the start (keyint=infinite, scenecut=0), one fixed quantizer. With these x264 writes Constrained
 * Baseline (A.2.1).
 */
export const X264_OPTIONS = ['-c:v', 'libx264', '-preset', 'ultrafast', '-qp', '20', '-bf', '0', '-x264-params', `keyint=infinite:scenecut=0:no-deblock=1:${BT709_VUI}`];

/** How the picture is drawn, as ffmpeg filters; the plain render draws it with the same ones (see render.ts). */
export interface PictureFilters {
  /** The background as ffmpeg's one input: a lavfi source or a file, with its input options. */
  input(fps: number): { source: string; options: string[] };
  /** Filters that make the input a stream of frames at `fps` from frame 0, if it is not one already. */
  clock?: string;
  /**
   * The same frames from `startFrame` on (a move's expressions counting from there), for a picture encoded in parts;
   * absent where a layer with a clock cannot start later (a clip). A layer without a clock starts anywhere alike.
   */
  clockFrom?(startFrame: number): string;
  /** Rows `top` to `top + rows` of the background at full `width` (square pixels, yuv420p). */
  region(width: number, top: number, rows: number): string;
  /**
   * One flat colour: every row looks the same, so band pictures may be predicted from the band's previous picture
   * (see drawing.ts). Otherwise each band picture is coded on its own (intra), since a motion vector may reach past
   * the band's edge, where the band's encode sees its edge rows repeated and the full picture its real rows.
   */
  flat: boolean;
  /** Keeps only these frames (ascending). */
  select(frames: readonly number[]): string;
  /** Burns in the ASS script in `file`. */
  captions(file: string): string;
  /** The last filter of every picture: what x264 gets is yuv420p, its colours BT.709 (see BT709_VUI). */
  output: string;
}

/** The part of the picture filters a background gives: where frames come from and how a band of rows is cut from them. */
export type PictureLayer = Pick<PictureFilters, 'input' | 'clock' | 'clockFrom' | 'region' | 'flat'>;

/** A still background from frame `start` to the next scene's start (or the end): one scene of a video. */
export interface PictureScene {
  layer: PictureLayer;
  start: number;
}

export interface PartsJob extends ProcessLimits {
  size: FrameSize;
  fps: number;
  /** The captions, drawn by the caller (video/caption-drawing.ts). */
  captions?: CaptionDrawing;
  picture: PictureFilters;
  /** The still backgrounds in turn, the first at frame 0; without, `picture`'s own for the whole video. */
  scenes?: readonly PictureScene[];
  workDir: string;
  /** Frames from one IDR picture to the next (see compose.ts); the band gets an IDR picture at each. */
  keyframeInterval?: number;
  /** Frames in the whole video, where the last scene ends; default the captions'. */
  totalFrames?: number;
}

export type PictureParts = Pick<StreamParts, 'background' | 'band'>;

/** One scene's parts: its background, band and rows, its band frames counted from `start`, which it shows until `end`. */
export type SceneParts = PictureParts & { start: number; end: number };

/** One ffmpeg run, one encode per part: the background frame, and with captions the band and the rows around it. */
export async function encodePictureParts(ffmpeg: Ffmpeg, job: PartsJob): Promise<PictureParts> {
  const [only] = await encodeSceneParts(ffmpeg, { ...job, scenes: undefined });
  if (!only) throw new Error('No picture to encode');
  return only;
}

/**
 * The parts of every scene in one ffmpeg run (one input per scene's background). A scene's band is encoded over its
 * own frames only, from an IDR picture at its first frame, with one every `keyframeInterval` frames from there: each
 * scene is put together on its own (compose.ts) and the streams follow each other (splicePicture).
 */
export async function encodeSceneParts(ffmpeg: Ffmpeg, job: PartsJob): Promise<SceneParts[]> {
  const { width, height } = job.size;
  const { picture, captions } = job;
  const totalFrames = job.totalFrames ?? captions?.frames ?? 1;
  const scenes = job.scenes ?? [{ layer: picture, start: 0 }];
  const bands = captions && (await bandScripts(captions, job.workDir));
  const changes = captions ? captions.changes : [];
  const encodes: Array<{ name: string; input: number; chain: string; frames: number; options: string[] }> = [];
  const planned = sceneSegments(scenes, totalFrames, captions?.titleSpans ?? []).map((segment, index) => {
    const { start, end } = segment;
    const layer = { ...picture, ...segment.layer };
    const still = (part: string, top: number, rows: number) =>
      encodes.push({ name: `${index}-${part}`, input: segment.input, chain: `trim=end_frame=1,${layer.region(width, top, rows)},${layer.output}`, frames: 1, options: [] });
    still('background', 0, height);
    const band = bands && (segment.titled ? bands.titled : bands.plain);
    if (!band) return { start, end, band: undefined };
    const { area, script } = band;
    const idr = idrFrames(end - start, job.keyframeInterval).map((frame) => frame + start);
    const frames = [...new Set([start, ...changes.filter((frame) => frame > start && frame < end), ...idr])].sort((x, y) => x - y);
    encodes.push({
      name: `${index}-band`,
      input: segment.input,
      // The segment's frames only; the captions are drawn at each frame's own time.
      chain: [`trim=start_frame=${start}:end_frame=${end}`, layer.select(frames.map((frame) => frame - start)), layer.region(width, area.top, area.height), layer.captions(script), layer.output].join(','),
      frames: frames.length,
      options: layer.flat ? forceIdrOptions(idr, job.fps) : INTRA_ONLY,
    });
    if (area.top > 0) still('above', 0, area.top);
    if (area.top + area.height < height) still('below', area.top + area.height, height - area.top - area.height);
    return { start, end, band: { area, frames: frames.map((frame) => frame - start) } };
  });
  const outputs = encodes.map((encode) => ({
    output: path.join(job.workDir, `${encode.name}.h264`),
    // passthrough: keep the selected frames' own times, add no duplicates for the gaps.
    outputOptions: ['-map', `[${encode.name}]`, '-frames:v', String(encode.frames), ...X264_OPTIONS, ...encode.options, '-fps_mode', 'passthrough', '-f', 'h264'],
  }));
  const [first, ...more] = outputs;
  if (!first) throw new Error('No picture to encode');
  await ffmpeg.run({
    inputs: scenes.map((scene) => scene.layer.input(job.fps)),
    complexFilter: [
      ...scenes.map((scene, index) => {
        const own = encodes.filter((encode) => encode.input === index);
        return `[${index}:v]${scene.layer.clock ? `${scene.layer.clock},` : ''}split=${own.length}${own.map((encode) => `[${encode.name}-in]`).join('')}`;
      }),
      ...encodes.map((encode) => `[${encode.name}-in]${encode.chain}[${encode.name}]`),
    ].join(';'),
    ...first,
    moreOutputs: more,
    scriptDir: job.workDir,
    signal: job.signal,
    timeoutMs: job.timeoutMs,
    killGraceMs: job.killGraceMs,
  });
  const read = (name: string) => (encodes.some((encode) => encode.name === name) ? readFile(path.join(job.workDir, `${name}.h264`)) : undefined);
  return Promise.all(
    planned.map(async ({ start, end, band }, index) => {
      const [background, stream, above, below] = await Promise.all(['background', 'band', 'above', 'below'].map((part) => read(`${index}-${part}`)));
      if (!background) throw new Error('An encode is missing');
      if (!band) return { start, end, background };
      if (!stream) throw new Error('An encode is missing');
      // A band top is a whole number of macroblock rows (drawing.ts bandAround).
      return { start, end, background, band: { stream, row: band.area.top / 16, frames: band.frames, above, below } };
    }),
  );
}

/** A stretch of one scene put together on its own: the scene's input, its frames, and whether the title shows in them. */
interface Segment {
  layer: PictureLayer;
  input: number;
  start: number;
  end: number;
  titled: boolean;
}

/**
 * The scenes' frames, a scene cut where a title (the hook, a chapter's card) comes and goes: while one shows, the
 * band reaches up to the titles; otherwise it is the captions' own rows, so that a caption change re-encodes no more
 * than them.
 */
function sceneSegments(scenes: readonly PictureScene[], totalFrames: number, titles: ReadonlyArray<{ startFrame: number; endFrame: number }>): Segment[] {
  return titledSegments(scenes, totalFrames, titles).flatMap((segment) => {
    const pieces: Segment[] = [];
    for (let start = segment.start; start < segment.end; start += MAX_SEGMENT_FRAMES) pieces.push({ ...segment, start, end: Math.min(segment.end, start + MAX_SEGMENT_FRAMES) });
    return pieces;
  });
}

/**
 * Frames of one segment at most. A segment's band frames are picked by one `select` expression, a term a caption
 * change, and ffmpeg 5.1 cannot set up one of some 8,000 terms ("Cannot allocate memory": a 14-minute video at
 * 30 fps); a longer stretch is put together in segments of this many frames, 5 minutes at 30 fps (no video of
 * MAX_VIDEO_SECONDS is cut).
 */
const MAX_SEGMENT_FRAMES = 9000;

function titledSegments(scenes: readonly PictureScene[], totalFrames: number, titles: ReadonlyArray<{ startFrame: number; endFrame: number }>): Segment[] {
  const titledAt = (frame: number) => titles.some((title) => title.startFrame <= frame && frame < title.endFrame);
  return scenes.flatMap((scene, input) => {
    const end = scenes[input + 1]?.start ?? totalFrames;
    const cuts = [...new Set([scene.start, ...titles.flatMap((title) => [title.startFrame, title.endFrame]).filter((frame) => frame > scene.start && frame < end)])].sort((a, b) => a - b);
    const segments = cuts.map((start, index) => ({ layer: scene.layer, input, start, end: cuts[index + 1] ?? end, titled: titledAt(start) }));
    // Neighbours alike are one segment: titles back to back, or a title's end where the next one starts.
    return segments.reduce<Segment[]>((joined, segment) => {
      const last = joined.at(-1);
      if (last && last.titled === segment.titled) last.end = segment.end;
      else joined.push(segment);
      return joined;
    }, []);
  });
}

/** The band's rows and ASS script with the titles (while one shows) and without them. */
async function bandScripts(captions: CaptionDrawing, workDir: string): Promise<Record<'titled' | 'plain', { area: CaptionBand; script: string }>> {
  const write = async (name: string, titled: boolean) => {
    const { area, script } = captions.draw(titled);
    const file = path.join(workDir, `${name}.ass`);
    await writeFile(file, script);
    return { area, script: file };
  };
  const plain = await write('captions', false);
  return { plain, titled: captions.titleSpans?.length ? await write('captions-titled', true) : plain };
}

export type Splice = typeof composeStream;

export interface SpliceJob extends PartsJob {
  frameRate: FrameRate;
  totalFrames: number;
  /** The real splicer unless a test puts a failing one in its place. */
  splice?: Splice;
}

/**
 * The whole picture through the splicer: the parts encode, then each scene's stream put together from them, one after
 * the other (each starts with its parameter sets and an IDR picture, 7.4.1.2.1), its pictures' frames counted on.
 */
export async function splicePicture(ffmpeg: Ffmpeg, job: SpliceJob): Promise<ComposedStream> {
  const scenes = await encodeSceneParts(ffmpeg, job);
  const streams: Buffer[] = [];
  const frames: number[] = [];
  let nextIdrPicId = 0;
  for (const { start, end, ...parts } of scenes) {
    const composed = (job.splice ?? composeStream)({
      ...parts,
      totalFrames: end - start,
      rate: job.frameRate,
      keyframeInterval: job.keyframeInterval,
      firstIdrPicId: nextIdrPicId,
    });
    streams.push(composed.stream);
    frames.push(...composed.frames.map((frame) => frame + start));
    nextIdrPicId = composed.nextIdrPicId;
  }
  return { stream: Buffer.concat(streams), frames, nextIdrPicId };
}
