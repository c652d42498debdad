import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { encodeSpeech } from '../speech/audio-encoding.js';
import type { Ffmpeg } from '../media/ffmpeg.js';
import type { Speech } from '../speech/pcm.js';
import type { ProcessLimits } from '../media/process.js';
import type { FrameRate } from './options.js';
import { assScript } from './ass.js';
import { FONTS_DIR } from './font.js';
import { composeStream } from './h264.js';
import { captionBand, frameCount, keyFrames, type CaptionBand, type Captions, type FrameSize } from './layout.js';

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
}

/** Every x264 encode uses these, so their slices can share one picture (see h264.ts): CAVLC, no B-frames, no deblocking, one fixed quantizer. */
export const X264_OPTIONS = ['-c:v', 'libx264', '-preset', 'ultrafast', '-qp', '20', '-bf', '0', '-x264-params', 'keyint=infinite:scenecut=0:no-deblock=1'];
/** More than about 150 `eq` terms in one sum exhaust ffmpeg's expression evaluator; sums of sums are fine. */
const EXPRESSION_GROUP = 20;

/**
 * Speech + captions → MP4 in three ffmpeg runs: the AAC soundtrack and the picture encodes side by side on
 * both cores, then a stream-copy mux. The picture run encodes the background once and the caption band only
 * where the captions change (a tiny colour source, `select`, nearest-neighbour upscale, `ass`); h264.ts then
 * puts the full pictures together from those slices and skip slices, so no duplicate frame is ever encoded.
 */
export async function renderVideo(ffmpeg: Ffmpeg, options: RenderOptions): Promise<void> {
  const workDir = await mkdtemp(path.join(os.tmpdir(), 'voxreel-video-'));
  const controller = new AbortController();
  const stop = () => controller.abort();
  if (options.signal?.aborted) stop();
  options.signal?.addEventListener('abort', stop, { once: true });
  const limits: ProcessLimits = { signal: controller.signal, timeoutMs: options.timeoutMs, killGraceMs: options.killGraceMs };
  // The first failure is the one to report; the sibling it cancels fails after it.
  const cancelOthersOnFailure = (error: unknown): never => {
    stop();
    throw error;
  };
  try {
    const audio = path.join(workDir, 'audio.m4a');
    const totalFrames = options.captions?.frames ?? frameCount(options.speech, options.fps);
    const [, parts] = await Promise.all([
      encodeSpeech(ffmpeg, options.speech, { encoding: 'aac', speed: 1, output: audio, ...limits }).catch(cancelOthersOnFailure),
      encodePictureParts(ffmpeg, { ...options, ...limits, workDir }).catch(cancelOthersOnFailure),
    ]);
    const { stream, frames } = composeStream({ ...parts, totalFrames, rate: options.frameRate });
    const video = path.join(workDir, 'video.h264');
    await writeFile(video, stream);
    await ffmpeg.run({
      inputs: [
        // A file, not stdin: ffmpeg 5.1 stalls on a piped input whose thread queue fills up.
        { source: video, options: ['-f', 'h264', '-r', String(options.fps)] },
        { source: audio },
      ],
      output: options.output,
      outputOptions: [
        '-map',
        '0:v:0',
        '-map',
        '1:a:0',
        '-c',
        'copy',
        ...(options.frameRate === 'variable' ? variableTimestamps(frames, totalFrames, options.fps) : []),
        '-movflags',
        '+faststart',
        '-f',
        'mp4',
      ],
      ...limits,
    });
  } finally {
    options.signal?.removeEventListener('abort', stop);
    await rm(workDir, { recursive: true, force: true });
  }
}

interface PictureJob extends RenderOptions {
  workDir: string;
}

interface PictureParts {
  background: Buffer;
  band?: { stream: Buffer; row: number; frames: number[]; above?: Buffer; below?: Buffer };
}

/** One ffmpeg run, one encode per part: the background frame, and with captions the band and the rows around it. */
async function encodePictureParts(ffmpeg: Ffmpeg, job: PictureJob): Promise<PictureParts> {
  const { width, height } = job.size;
  const still = (name: string, rows: number) => ({ name, chain: `trim=end_frame=1,${upscale(width, rows)}`, frames: 1 });
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
      chain: [
        `trim=end_frame=${job.captions.frames}`,
        `select='${sumOf(frames.map((frame) => `eq(n,${frame})`))}'`,
        upscale(width, area.height),
        `ass=filename=${filterValue(script)}:fontsdir=${filterValue(FONTS_DIR)}:shaping=complex`,
      ].join(','),
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
    inputs: [{ source: `color=c=0x${BACKGROUND_COLOUR}:s=16x16:r=${job.fps}`, options: ['-f', 'lavfi'] }],
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
  return { background, band: { stream, row: band.area.top / 16, frames: band.frames, above, below } };
}

function upscale(width: number, height: number): string {
  return `scale=${width}:${height}:flags=neighbor,setsar=1,format=yuv420p`;
}

/** Sets each picture's time and duration, in frames, for a variable-rate MP4 (the raw stream carries none). */
function variableTimestamps(frames: readonly number[], totalFrames: number, fps: number): string[] {
  const byPicture = (values: readonly number[]) => sumOf(values.flatMap((value, index) => (value ? [`eq(N,${index})*${value}`] : [])));
  const durations = frames.map((frame, index) => (frames[index + 1] ?? totalFrames) - frame);
  return ['-bsf:v', `setts=ts='${byPicture(frames) || '0'}':duration='${byPicture(durations)}'`, '-video_track_timescale', String(fps)];
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
