import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { Ffmpeg, MediaInfo } from '../media/ffmpeg.js';
import type { Speech } from '../speech/speech.js';
import { osTempScratch, type Scratch, type ScratchBudget } from '../storage/scratch.js';
import { ProcessError, type ProcessLimits } from '../media/process.js';
import { AAC_FRAME, parseAdts } from '../media/adts.js';
import { mp4Info } from '../media/mp4-info.js';
import { writeMp4 } from '../media/mp4-writer.js';
import type { FrameRate } from './frame-shapes.js';
import { assScript } from './ass.js';
import { fontsDirFor } from './font.js';
import { BT709_COLOUR, BT709_VUI, forceIdrOptions, H264Error, idrFrames, mp4Samples, pictureFrames, splicePicture, type PictureFilters, type PictureScene, type Splice } from './h264/index.js';
import type { Captions } from './captions.js';
import { blankTimeline, captionDrawing } from './caption-drawing.js';
import { progressBarArea, type FrameSize } from './frame.js';
import { frameCount } from './layout.js';
import { colourLayer, prepareBackground, type Background } from './background.js';
import { crossfadeFrames, sceneTimeline, scenesMove, type Scene, type Transition } from './scenes.js';
import { forBt601Drawing } from './colour.js';
import type { PlatformName } from './platforms.js';
import { AAC_PRIMING, encodeUnderCeiling, soundtrackLength, VIDEO_LOUDNESS, type Channels, type Music, type SoundtrackOptions } from './soundtrack.js';

export const BACKGROUND_COLOUR = '0F172A';

export interface RenderOptions extends ProcessLimits {
  speech: Speech;
  size: FrameSize;
  fps: number;
  /** `constant`: a frame every 1/fps. `variable`: a frame only where the picture changes (and a last one). */
  frameRate: FrameRate;
  /** Burned-in captions; without them the picture is the plain background. */
  captions?: Captions;
  /** The finished MP4 (H.264 yuv420p + AAC, moov first). */
  output: string;
  /**
   * The H.264 splicer (the real one unless a test puts a failing one in its place); `false` renders the plain way
   * straight away, as when the start-up self-check found the splicer broken on this machine.
   */
  splice?: Splice | false;
  /** Told when the splicer failed and the video was rendered the plain way instead. */
  onWarning?: (message: string, cause: unknown) => void;
  /** Where the parts are made; the service's scratch space, else the OS temp dir. */
  scratch?: Scratch;
  /** The job's share of scratch (JOB_SCRATCH_MB): raw background frames and decoded clips are taken from it before they are written; none: unbounded. */
  budget?: ScratchBudget;
  /** Seconds from one keyframe (IDR picture) to the next, so players can seek; default KEYFRAME_SECONDS. */
  keyframeSeconds?: number;
  /** Behind the captions; default the dark BACKGROUND_COLOUR. */
  background?: Background;
  /** Backgrounds from their first frames on (rising), `background` before the first where it starts later than frame 0. */
  scenes?: readonly Scene[];
  /** How one scene gives way to the next; default `cut` (a cross-fade changes the picture in every frame of it: the moving path). */
  transition?: Transition;
  /** Integrated loudness of the soundtrack in LUFS (VIDEO_LOUDNESS by default); null keeps the voice's own level. */
  loudness?: number | null;
  /** Music under the narration, ducked while it speaks. */
  music?: Music;
  /** The soundtrack's channels; by default stereo with music, mono without (soundtrackChannels). */
  channels?: Channels;
  /** A thin bar that grows with the video, in this colour (RGB hex): along the bottom edge, or above the band `platform`'s app covers (frame.ts progressBarArea). */
  progressBar?: { colour: string; platform?: PlatformName };
  /** The x264 options of the moving path in place of MOVING_X264 (the benchmark's slow reference of the same frames). */
  movingX264?: readonly string[];
}

/**
 * How the picture was encoded: `spliced` (the background once, the caption band where it changes, put together by
 * the H.264 splicer), `plain` (one x264 pass over every frame: the splicer's fallback), or `moving` (one x264 pass
 * at MOVING_X264's preset, for a picture that changes every frame: a moving background or a progress bar).
 */
export type RenderPath = 'spliced' | 'plain' | 'moving';

/** The file as ffprobe reads it, how its picture was encoded, and at what frame rate (a moving one is always constant). */
export type RenderedVideo = MediaInfo & { renderPath: RenderPath; frameRate: FrameRate };

const DEFAULT_BACKGROUND: Background = { type: 'color', color: BACKGROUND_COLOUR };

/** Players seek to the keyframe before the time asked and decode on from it: at most 2 s to decode. */
export const KEYFRAME_SECONDS = 2;

/** More than about 150 `eq` terms in one sum exhaust ffmpeg's expression evaluator; sums of sums are fine. */
const EXPRESSION_GROUP = 20;

/**
 * The picture: a background layer (the default colour here; see background.ts) and the ASS captions, drawn in
 * yuv420p with colours chosen so that the pixels come out BT.709 (colour.ts). Both render paths draw it.
 */
export const PICTURE: PictureFilters = {
  ...colourLayer(BACKGROUND_COLOUR),
  output: 'format=yuv420p',
  select: (frames) => `select='${sumOf(frames.map((frame) => `eq(n,${frame})`))}'`,
  captions: (file) => `ass=filename=${filterValue(file)}:fontsdir=${filterValue(fontsDirFor(file))}:shaping=complex`,
};

/** The plain way's x264: none of the splicer's constraints; no B-frames, since the MP4 times the pictures in decode order (mux). */
const PLAIN_X264 = ['-c:v', 'libx264', '-preset', 'ultrafast', '-bf', '0', '-x264-params', BT709_VUI];

/**
 * A moving picture's x264: every frame differs, so the preset decides both the time and the size. Measured on a
 * zooming 1080×1920 image: ultrafast 2.3 s for 10 s of video and 60 MB a minute, superfast 2.8 s and 31 MB,
 * veryfast 3.2 s and 13 MB (PSNR against a slow CRF 12 reference 52, 51 and 47 dB): veryfast, a file a fifth the size.
 * Its sub-pixel refinement cut to the least (subme 1, against veryfast's 2): 20 s of that zoom with zoompan took
 * 5.3-5.4 s rather than 6.2 s, the same size, 0.22 dB lower against a lossless encode of the same frames (43.2 dB).
 * Its motion search the simplest (diamond, against veryfast's hexagon): 60 s at 1080×1920 zooming took 13.5 s rather
 * than 14.0-14.4 s, the same size; over a looped clip 13.4-13.6 s rather than 13.6-14.0 s, 1 % larger.
 */
const MOVING_X264 = ['-c:v', 'libx264', '-preset', 'veryfast', '-bf', '0', '-x264-params', `subme=1:me=dia:${BT709_VUI}`];

/** A scene's background layer, and the frames it is made for: its own and those of the cross-fade that ends it. */
interface SceneLayer extends PictureScene {
  frames: number;
}

interface PictureJob extends RenderOptions {
  picture: PictureFilters;
  /** With scenes, each one's background layer from its first frame; `picture` is then the first's. */
  layers?: SceneLayer[];
  /** Frames of each cross-fade into the next scene (crossfadeFrames); none for cuts. */
  fades: readonly number[];
  /** The x264 options of the pass that encodes every frame. */
  x264: readonly string[];
  workDir: string;
  totalFrames: number;
  keyframeInterval: number;
}

/** About what a video of `seconds` at `size` comes to, encoded (about 8 Mbit/s at 1080p, with its soundtrack): for the disk and scratch checks before it is written. */
export function encodedVideoBytes(seconds: number, size: FrameSize): number {
  return Math.ceil(seconds * ((size.width * size.height) / (1920 * 1080)) * 1024 ** 2);
}

/** A raw H.264 picture track (Annex B) and the frame each of its pictures stands at. */
interface EncodedPicture {
  stream: Buffer;
  frames: number[];
  spliced: boolean;
}

/**
 * Speech + captions → MP4: the AAC soundtrack and the picture encoded side by side on both cores (ffmpeg runs), then
 * both written into the MP4 here (mux), whose moov box is read back (what it resolves with). The picture run encodes the background once
 * and the caption band only where the captions change; the splicer (h264/) then puts the full pictures together
 * from those slices and skip slices, so no duplicate frame is ever encoded. Should the splicer fail (it refuses the
 * parts, or what it made fails the check after the mux), the same picture is rendered the plain way and a warning
 * is given: a splicer failure never fails the video. Cancellation and timeouts are not splicer failures.
 */
export async function renderVideo(ffmpeg: Ffmpeg, options: RenderOptions): Promise<RenderedVideo> {
  const folder = await (options.scratch ?? osTempScratch).folder('video');
  const workDir = folder.path;
  const keyframeInterval = Math.max(1, Math.round((options.keyframeSeconds ?? KEYFRAME_SECONDS) * options.fps));
  const totalFrames = options.captions?.frames ?? frameCount(options.speech, options.fps);
  // The encoded picture (its parts, and the whole again once spliced) and the soundtrack are scratch too.
  await options.budget?.reserveScratch(workDir, 2 * encodedVideoBytes(totalFrames / options.fps, options.size), 'the encoded picture and soundtrack').catch(async (error: unknown) => {
    await folder.remove();
    throw error;
  });
  const controller = new AbortController();
  // The caller's reason (client gone, deadline, shutdown) travels on to the processes it stops.
  const stop = () => controller.abort(options.signal?.reason);
  if (options.signal?.aborted) stop();
  options.signal?.addEventListener('abort', stop, { once: true });
  const limits: ProcessLimits = { signal: controller.signal, timeoutMs: options.timeoutMs, killGraceMs: options.killGraceMs };
  // The first failure is the one to report; the sibling it cancels fails after it.
  const cancelOthersOnFailure = (error: unknown): never => {
    stop();
    throw error;
  };
  const timeline = sceneTimeline(options.background ?? DEFAULT_BACKGROUND, options.scenes ?? []);
  const transition = options.transition ?? 'cut';
  // A picture that changes in every frame: nothing to splice, every frame encoded.
  const moving = scenesMove(timeline, transition) || options.progressBar !== undefined;
  const job: PictureJob = {
    ...options,
    ...limits,
    // A picture that changes in every frame has a frame for every 1/fps.
    frameRate: moving ? 'constant' : options.frameRate,
    picture: PICTURE,
    x264: moving ? (options.movingX264 ?? MOVING_X264) : PLAIN_X264,
    workDir,
    keyframeInterval,
    totalFrames,
    fades: transition === 'crossfade' ? crossfadeFrames(timeline, totalFrames, options.fps) : [],
  };
  const encodeWithBackground = async (encode: (job: PictureJob) => Promise<EncodedPicture>): Promise<EncodedPicture> => {
    if (!options.background && timeline.length === 1) return encode(job);
    // Each scene's layer is made for its own frames (a move spans its scene), and those of the cross-fade that ends it;
    // a clip in several scenes decoded once for all of them.
    const shared = { budget: options.budget, decodedClips: new Map() };
    const layers = await Promise.all(
      timeline.map(async (scene, index) => {
        const frames = (timeline[index + 1]?.startFrame ?? totalFrames) - scene.startFrame + (job.fades[index] ?? 0);
        const layer = await prepareBackground(ffmpeg, scene.background, options.size, workDir, limits, { frames, fps: options.fps }, `background-${index}`, shared);
        return { layer, start: scene.startFrame, frames };
      }),
    );
    job.picture = { ...PICTURE, ...layers[0]?.layer };
    if (layers.length > 1) job.layers = layers;
    return encode(job);
  };
  const plainInstead = (error: unknown): Promise<EncodedPicture> => {
    if (controller.signal.aborted || (error instanceof ProcessError && error.timedOut)) throw error;
    options.onWarning?.('The H.264 splicer failed; this video is rendered the plain way', error);
    return encodePlainPicture(ffmpeg, job);
  };
  try {
    const audio = path.join(workDir, 'audio.aac');
    const soundtrack: SoundtrackOptions = {
      speech: options.speech,
      seconds: job.totalFrames / options.fps,
      loudness: options.loudness === null ? undefined : (options.loudness ?? VIDEO_LOUDNESS),
      music: options.music,
      channels: options.channels,
      output: audio,
      ...limits,
    };
    // The picture first: its processes start while the soundtrack's samples are brought to their loudness here.
    const pictured = encodeWithBackground((pictureJob) =>
      moving ? encodeMovingPicture(ffmpeg, pictureJob) : options.splice === false ? encodePlainPicture(ffmpeg, pictureJob) : encodeSplicedPicture(ffmpeg, pictureJob).catch(plainInstead),
    ).catch(cancelOthersOnFailure);
    // Its true peak is heard as it is encoded: one over the ceiling is written again beside the picture, before the mux.
    const [, picture] = await Promise.all([encodeUnderCeiling(ffmpeg, soundtrack).catch(cancelOthersOnFailure), pictured]);
    const muxAndProbe = async (encoded: EncodedPicture): Promise<RenderedVideo> => {
      const info = await mux(job, encoded, audio);
      return { ...info, renderPath: encoded.spliced ? 'spliced' : moving ? 'moving' : 'plain', frameRate: job.frameRate };
    };
    if (!picture.spliced) return await muxAndProbe(picture);
    return await checkSpliced(job, muxAndProbe(picture)).catch(async (error: unknown) => muxAndProbe(await plainInstead(error)));
  } finally {
    options.signal?.removeEventListener('abort', stop);
    await folder.remove();
  }
}

async function encodeSplicedPicture(ffmpeg: Ffmpeg, job: PictureJob): Promise<EncodedPicture> {
  const { stream, frames } = await splicePicture(ffmpeg, { ...job, captions: job.captions && captionDrawing(job.captions), scenes: job.layers, splice: job.splice || undefined });
  return { stream, frames, spliced: true };
}

/**
 * The same picture without the splicer: one x264 run over the whole frame, the ASS captions drawn on all of it, and
 * the progress bar over them (a bar of its colour slid in from the left, its right end at the share of frames shown).
 */
async function encodePlainPicture(ffmpeg: Ffmpeg, job: PictureJob, part: PicturePart = { start: 0, end: job.totalFrames, name: 'plain' }): Promise<EncodedPicture> {
  const { start, end } = part;
  const idr = idrFrames(job.totalFrames, job.keyframeInterval).filter((frame) => frame >= start && frame < end);
  const frames =
    job.frameRate === 'variable'
      ? [...new Set([...pictureFrames(job.captions ? captionDrawing(job.captions) : blankTimeline(job.totalFrames), job.keyframeInterval), ...(job.layers ?? []).map((scene) => scene.start)])].sort((a, b) => a - b)
      : Array.from({ length: end - start }, (_, frame) => start + frame);
  const { picture } = job;
  const select = job.frameRate === 'variable' ? [picture.select(frames)] : [];
  const inputs = job.layers ? job.layers.map((scene) => scene.layer.input(job.fps)) : [picture.input(job.fps)];
  // One background: its frames cut to length and thinned before they are scaled (a part's frames timed from its first,
  // so that the captions are those of their time). Scenes: each one's frames, then joined.
  const clock = start === 0 ? picture.clock : picture.clockFrom?.(start);
  const chain = job.layers
    ? [`${sceneGraph(job, job.layers)}settb=1/${job.fps},setpts=N`, ...select]
    : [`[0:v]${clock ? `${clock},` : ''}trim=end_frame=${end - start}${start > 0 ? `,setpts=N+${start}` : ''}`, ...select, picture.region(job.size.width, 0, job.size.height)];
  if (job.captions) {
    const script = path.join(job.workDir, 'captions-plain.ass');
    await writeFile(script, assScript(job.captions));
    chain.push(picture.captions(script));
  }
  let graph = chain.join(',');
  if (job.progressBar) {
    const area = progressBarArea(job.size, job.progressBar.platform);
    // The colour source converts with BT.601 (see colour.ts). The bar slides in from the left of its area, its right
    // end at the share of frames shown: drawn on the area's rows cut out, put back in place.
    inputs.push({ source: `color=c=0x${forBt601Drawing(job.progressBar.colour)}:s=${area.width}x${area.height}:r=${job.fps}`, options: ['-f', 'lavfi'] });
    graph +=
      `,split[base][lane];[lane]crop=${area.width}:${area.height}:${area.left}:${area.top}[slot];[${inputs.length - 1}:v]format=yuv420p[bar];` +
      `[slot][bar]overlay=x='-w+w*(n+${start + 1})/${job.totalFrames}':y=0:eof_action=pass:shortest=1[filled];[base][filled]overlay=x=${area.left}:y=${area.top}:shortest=1`;
  }
  graph += `,${picture.output}[picture]`;
  const file = path.join(job.workDir, `${part.name}.h264`);
  await ffmpeg.run({
    inputs,
    complexFilter: graph,
    output: file,
    outputOptions: ['-map', '[picture]', '-frames:v', String(frames.length), ...job.x264, ...forceIdrOptions(idr, job.fps), '-fps_mode', 'passthrough', '-f', 'h264'],
    signal: job.signal,
    timeoutMs: job.timeoutMs,
    killGraceMs: job.killGraceMs,
  });
  return { stream: await readFile(file), frames, spliced: false };
}

/** Frames `start` to `end` of a picture encoded on their own, into `<name>.h264`. */
interface PicturePart {
  start: number;
  end: number;
  name: string;
}

/** A moving picture at least this long is encoded in two parts side by side (encodeMovingPicture). */
const SPLIT_SECONDS = 20;

/**
 * A moving picture, encoded whole: for a long one with a single background that can start at any frame (a still,
 * a zoom, a pan or a clip decoded once; not scenes, not a clip decoded as it plays), as two halves encoded at once, split at a keyframe, their streams one
 * after the other (each starts with its parameter sets and an IDR picture, and x264 writes the same ones for both).
 * The filters before x264 (the move, the captions) run on one thread per ffmpeg: in two processes both cores share
 * them. Measured on a 60 s zoom at 1080×1920: 11.2 s in two halves against 13.9 s in one run.
 */
async function encodeMovingPicture(ffmpeg: Ffmpeg, job: PictureJob): Promise<EncodedPicture> {
  const { picture, totalFrames, keyframeInterval } = job;
  const middle = Math.round(totalFrames / 2 / keyframeInterval) * keyframeInterval;
  const startsAnywhere = !picture.clock || picture.clockFrom !== undefined;
  if (job.layers || !startsAnywhere || totalFrames < SPLIT_SECONDS * job.fps || middle <= 0 || middle >= totalFrames) return encodePlainPicture(ffmpeg, job);
  const halves = await Promise.all([
    encodePlainPicture(ffmpeg, job, { start: 0, end: middle, name: 'moving-0' }),
    encodePlainPicture(ffmpeg, job, { start: middle, end: totalFrames, name: 'moving-1' }),
  ]);
  return { stream: Buffer.concat(halves.map((half) => half.stream)), frames: halves.flatMap((half) => half.frames), spliced: false };
}

/**
 * The scenes' backgrounds as one stream of full frames, up to the filter that joins them (the caller goes on from
 * there): each scene's layer cut to its frames (and those of the cross-fade into the next), timed from 0, then one
 * after the other (`concat`), or each faded into the next from its first frame (`xfade`, offset in the joined stream).
 */
function sceneGraph(job: PictureJob, layers: readonly SceneLayer[]): string {
  const { width, height } = job.size;
  const rate = `settb=1/${job.fps},setpts=N`;
  const segments = layers.map((scene, index) => {
    const layer = { ...job.picture, ...scene.layer };
    return `[${index}:v]${layer.clock ? `${layer.clock},` : ''}trim=end_frame=${scene.frames},${layer.region(width, 0, height)},${rate}[scene${index}]`;
  });
  if (job.fades.length === 0) return `${segments.join(';')};${layers.map((_, index) => `[scene${index}]`).join('')}concat=n=${layers.length}:v=1:a=0,`;
  const seconds = (frames: number) => (frames / job.fps).toFixed(6);
  const fades = layers.slice(1).map((scene, index) => {
    const from = index === 0 ? '[scene0]' : `[faded${index}]`;
    const to = index === layers.length - 2 ? ',' : `[faded${index + 1}];`;
    return `${from}[scene${index + 1}]xfade=transition=fade:duration=${seconds(job.fades[index] as number)}:offset=${seconds(scene.start)}${to}`;
  });
  return `${segments.join(';')};${fades.join('')}`;
}

/** Checks what the muxed spliced picture came out as: H.264 at the size, as long as the narration in whole frames. */
async function checkSpliced<T extends MediaInfo>(job: PictureJob, muxed: Promise<T>): Promise<T> {
  const info = await muxed;
  const video = info.streams.find((stream) => stream.codecType === 'video');
  const seconds = job.totalFrames / job.fps;
  if (video?.codecName !== 'h264' || video.width !== job.size.width || video.height !== job.size.height || !(Math.abs((video.duration ?? 0) - seconds) < 0.5 / job.fps)) {
    throw new H264Error(`The spliced video came out as ${video?.codecName ?? 'nothing'} ${video?.width}×${video?.height}, ${video?.duration} s; expected ${seconds} s`);
  }
  return info;
}

/**
 * The picture and the soundtrack in one MP4 (media/mp4-writer.ts), the moov box first (so that playback starts before
 * the whole file is there), each picture at its frame's time: every frame's at a constant rate, where the picture
 * changes at a variable one. Answers the file as ffprobe would read it.
 */
async function mux(job: PictureJob, picture: EncodedPicture, audio: string): Promise<MediaInfo> {
  const { samples, sync, avcC } = mp4Samples(picture.stream);
  if (samples.length !== picture.frames.length) throw new H264Error(`The picture has ${samples.length} pictures for ${picture.frames.length} frames`);
  const sound = parseAdts(await readFile(audio));
  // Units of 1/fps made finer, as ffmpeg's muxer makes them, to at least 10000 a second.
  let timescale = job.fps;
  while (timescale < 10_000) timescale *= 2;
  const tick = timescale / job.fps;
  await writeMp4(
    job.output,
    { ...job.size, avcC, colour: BT709_COLOUR, samples, sync, starts: picture.frames.map((frame) => frame * tick), end: job.totalFrames * tick, timescale },
    // The sound's length as the narration gives it, within what the frames hold (the resampler's own count can be a
    // few samples short of the rounded one).
    { ...sound, priming: AAC_PRIMING, length: Math.min(soundtrackLength(job.speech), sound.frames.length * AAC_FRAME - AAC_PRIMING) },
  );
  // Read from the file's own moov box: what ffprobe would say, without its process.
  return mp4Info(job.output);
}

function sumOf(terms: readonly string[]): string {
  const groups: string[] = [];
  for (let i = 0; i < terms.length; i += EXPRESSION_GROUP) groups.push(`(${terms.slice(i, i + EXPRESSION_GROUP).join('+')})`);
  return groups.join('+');
}

/**
 * A filter option value, escaped for both levels ffmpeg parses (the option, then the graph), so a path
 * with `:`, `'`, `,`, `;`, `[`, `]` or `\` stays one value.
 */
export function filterValue(value: string): string {
  const option = value.replace(/[\\':]/g, '\\$&');
  return option.replace(/[\\'[\],;]/g, '\\$&');
}
