import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { Ffmpeg } from '../../media/ffmpeg.js';
import { ProcessError } from '../../media/process.js';
import { osTempScratch, type Scratch } from '../../storage/scratch.js';
import type { FrameRate, FrameSize } from '../frame-shapes.js';
import { composeStream } from './compose.js';
import type { CaptionDrawing } from './drawing.js';
import { encodePictureParts, idrFrames, pictureFrames, type PictureFilters, type Splice } from './parts.js';

export interface SpliceCheck {
  ok: boolean;
  /** Why not, when not. */
  reason?: string;
  cause?: unknown;
}

export interface SpliceCheckOptions {
  signal?: AbortSignal;
  /** Per ffmpeg run. */
  timeoutMs?: number;
  /** The real splicer unless a test puts a broken one in its place. */
  splice?: Splice;
  /** Where the check's parts are made; default the OS temp dir. */
  scratch?: Scratch;
}

/** The tiny video the check splices, made by the caller (video/splice-sample.ts): the splicer draws nothing itself. */
export interface SpliceSample {
  size: FrameSize;
  fps: number;
  /** Frames from one IDR picture to the next. */
  keyframeInterval: number;
  captions: CaptionDrawing;
  /** Frames where a caption begins or ends: the picture must change there, and elsewhere only at an IDR picture. */
  captionEdges: readonly number[];
}

/**
 * Whether this machine's ffmpeg and x264 still make parts the splicer can put together: a tiny real render through
 * the splicer at both frame rates, decoded by ffmpeg with every error fatal (`-err_detect explode -xerror`), that
 * must give the right number of frames at the right size, a picture that changes exactly where the captions do, and
 * at variable rate the same pictures as at constant rate. Never throws; about a third of a second on one core.
 */
export async function checkSplicing(ffmpeg: Ffmpeg, picture: PictureFilters, sample: () => SpliceSample, options: SpliceCheckOptions = {}): Promise<SpliceCheck> {
  try {
    const problem = await renderAndDecode(ffmpeg, picture, sample(), options);
    return problem ? { ok: false, reason: problem } : { ok: true };
  } catch (cause) {
    return { ok: false, reason: cause instanceof Error ? cause.message : String(cause), cause };
  }
}

/** What is wrong with the spliced check picture, if anything. */
async function renderAndDecode(ffmpeg: Ffmpeg, picture: PictureFilters, sample: SpliceSample, options: SpliceCheckOptions): Promise<string | undefined> {
  const folder = await (options.scratch ?? osTempScratch).folder('splice-check');
  const workDir = folder.path;
  const limits = { signal: options.signal, timeoutMs: options.timeoutMs ?? 15_000 };
  try {
    const { captions, size, fps, keyframeInterval } = sample;
    const parts = await encodePictureParts(ffmpeg, { size, fps, captions, picture, workDir, keyframeInterval, ...limits });
    const decode = async (rate: FrameRate) => {
      const { stream, frames } = (options.splice ?? composeStream)({ ...parts, totalFrames: captions.frames, rate, keyframeInterval });
      const file = path.join(workDir, `${rate}.h264`);
      await writeFile(file, stream);
      return { frames, decoded: await decodeStrictly(ffmpeg, file, limits) };
    };
    const constant = await decode('constant');
    const variable = await decode('variable');
    return constantProblem(constant.decoded, sample) ?? variableProblem(variable, constant.decoded.hashes, sample);
  } finally {
    await folder.remove();
  }
}

interface Decoded {
  size: string;
  hashes: string[];
}

/** Decodes a raw H.264 file to one MD5 per frame; any decoding error fails the run. */
async function decodeStrictly(ffmpeg: Ffmpeg, file: string, limits: { signal?: AbortSignal; timeoutMs: number }): Promise<Decoded> {
  const output = `${file}.framemd5`;
  await ffmpeg
    .run({
      inputs: [{ source: file, options: ['-err_detect', 'explode', '-f', 'h264'] }],
      output,
      outputOptions: ['-xerror', '-map', '0:v:0', '-f', 'framemd5'],
      ...limits,
    })
    .catch((cause: unknown) => {
      if (!(cause instanceof ProcessError) || cause.isCanceled || cause.timedOut) throw cause;
      const errors = cause.stderrTail.split('\n').filter((line) => /^\[h264 @/.test(line));
      throw new Error(`The spliced stream does not decode: ${errors.slice(0, 3).join('; ') || cause.message}`, { cause });
    });
  const lines = (await readFile(output, 'utf8')).split('\n');
  return {
    size: /^#dimensions 0: (\d+x\d+)/m.exec(lines.join('\n'))?.[1] ?? '',
    hashes: lines.filter((line) => line && !line.startsWith('#')).map((line) => line.split(',').at(-1)?.trim() ?? ''),
  };
}

function constantProblem(decoded: Decoded, { size, captions, captionEdges: expected, keyframeInterval }: SpliceSample): string | undefined {
  if (decoded.size !== `${size.width}x${size.height}`) return `The spliced stream decodes at ${decoded.size || 'no size'}, expected ${size.width}x${size.height}`;
  if (decoded.hashes.length !== captions.frames) return `The spliced stream decodes to ${decoded.hashes.length} frames, expected ${captions.frames}`;
  const changes = decoded.hashes.flatMap((hash, frame) => (frame > 0 && hash !== decoded.hashes[frame - 1] ? [frame] : []));
  // An IDR picture encodes the band afresh, so its pixels may differ a little from the predicted ones before it.
  const idr = new Set(idrFrames(captions.frames, keyframeInterval));
  if (expected.some((frame) => !changes.includes(frame)) || changes.some((frame) => !expected.includes(frame) && !idr.has(frame))) {
    return `The spliced picture changes at frames [${changes.join(', ')}], the captions at [${expected.join(', ')}]`;
  }
  return undefined;
}

function variableProblem(variable: { frames: number[]; decoded: Decoded }, constant: readonly string[], { captions, keyframeInterval }: SpliceSample): string | undefined {
  const expected = pictureFrames(captions, keyframeInterval);
  if (variable.frames.join() !== expected.join()) return `The variable-rate stream has pictures at [${variable.frames.join(', ')}], expected [${expected.join(', ')}]`;
  const held = expected.map((frame) => constant[frame]);
  if (variable.decoded.hashes.join() !== held.join()) return 'The variable-rate stream decodes to other pictures than the constant-rate one';
  return undefined;
}

/** checkSplicing once, on the first ask (start-up); every later ask gets the same answer. */
export class SplicerCheck {
  private result: Promise<SpliceCheck> | undefined;
  private answer: SpliceCheck | undefined;
  private readonly controller = new AbortController();

  constructor(
    private readonly ffmpeg: Ffmpeg,
    private readonly picture: PictureFilters,
    /** Made when the check runs, not before: laying it out loads the fonts, which a start need not wait for. */
    private readonly sample: () => SpliceSample,
    private readonly options: Omit<SpliceCheckOptions, 'signal'> = {},
  ) {}

  run(): Promise<SpliceCheck> {
    this.result ??= checkSplicing(this.ffmpeg, this.picture, this.sample, { ...this.options, signal: this.controller.signal }).then((answer) => (this.answer = answer));
    return this.result;
  }

  /** The answer without waiting: undefined until the check has run. */
  get passed(): boolean | undefined {
    return this.answer?.ok;
  }

  async works(): Promise<boolean> {
    return (await this.run()).ok;
  }

  /** Stops a check still running (its answer is then a failure). */
  close(): void {
    this.controller.abort();
  }
}
