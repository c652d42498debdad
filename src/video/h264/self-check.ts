import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { Ffmpeg } from '../../media/ffmpeg.js';
import { ProcessError } from '../../media/process.js';
import type { Speech } from '../../speech/speech.js';
import { osTempScratch, type Scratch } from '../../storage/scratch.js';
import type { Captions } from '../captions.js';
import type { FrameSize } from '../frame.js';
import { keyFrames, layoutCaptions } from '../layout.js';
import type { FrameRate } from '../frame-shapes.js';
import { composeStream } from './compose.js';
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

// 180×200 in 9:16 puts the band in the middle (rows above and below it) and crops the last macroblock column
// and row, as 1080-pixel sides do; two words lit in turn, then the cue gone: the picture changes at 2, 5 and 13.
const SIZE: FrameSize = { width: 180, height: 200 };
const FPS = 10;
const TEXT = 'Splice check';
const SAMPLE_RATE = 8000;
const WORDS = [
  { word: 'Splice', start: 0.2, end: 0.45, textOffset: 0, textLength: 6 },
  { word: 'check', start: 0.5, end: 0.75, textOffset: 7, textLength: 5 },
];
const SECONDS = 1.4;
/** An IDR picture every 4 frames: at 0, 4, 8 and 12, one of them (12) in the middle of a caption. */
const KEYFRAME_INTERVAL = 4;

/**
 * Whether this machine's ffmpeg and x264 still make parts the splicer can put together: a tiny real render through
 * the splicer at both frame rates, decoded by ffmpeg with every error fatal (`-err_detect explode -xerror`), that
 * must give the right number of frames at the right size, a picture that changes exactly where the captions do, and
 * at variable rate the same pictures as at constant rate. Never throws; about a third of a second on one core.
 */
export async function checkSplicing(ffmpeg: Ffmpeg, picture: PictureFilters, options: SpliceCheckOptions = {}): Promise<SpliceCheck> {
  try {
    const problem = await renderAndDecode(ffmpeg, picture, options);
    return problem ? { ok: false, reason: problem } : { ok: true };
  } catch (cause) {
    return { ok: false, reason: cause instanceof Error ? cause.message : String(cause), cause };
  }
}

/** What is wrong with the spliced check picture, if anything. */
async function renderAndDecode(ffmpeg: Ffmpeg, picture: PictureFilters, options: SpliceCheckOptions): Promise<string | undefined> {
  const folder = await (options.scratch ?? osTempScratch).folder('splice-check');
  const workDir = folder.path;
  const limits = { signal: options.signal, timeoutMs: options.timeoutMs ?? 15_000 };
  try {
    const captions = checkCaptions();
    const parts = await encodePictureParts(ffmpeg, { size: SIZE, fps: FPS, captions, picture, workDir, keyframeInterval: KEYFRAME_INTERVAL, ...limits });
    const decode = async (rate: FrameRate) => {
      const { stream, frames } = (options.splice ?? composeStream)({ ...parts, totalFrames: captions.frames, rate, keyframeInterval: KEYFRAME_INTERVAL });
      const file = path.join(workDir, `${rate}.h264`);
      await writeFile(file, stream);
      return { frames, decoded: await decodeStrictly(ffmpeg, file, limits) };
    };
    const constant = await decode('constant');
    const variable = await decode('variable');
    return constantProblem(constant.decoded, captions) ?? variableProblem(variable, constant.decoded.hashes, captions);
  } finally {
    await folder.remove();
  }
}

function checkCaptions(): Captions {
  const samples = new Int16Array(Math.round(SECONDS * SAMPLE_RATE));
  const speech: Speech = { samples, sampleRate: SAMPLE_RATE, duration: SECONDS, sentences: [{ start: 0.2, end: 0.75, textOffset: 0, textLength: TEXT.length }], words: WORDS };
  return layoutCaptions({ text: TEXT, speech, size: SIZE, aspectRatio: '9:16', fps: FPS });
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

function constantProblem(decoded: Decoded, captions: Captions): string | undefined {
  if (decoded.size !== `${SIZE.width}x${SIZE.height}`) return `The spliced stream decodes at ${decoded.size || 'no size'}, expected ${SIZE.width}x${SIZE.height}`;
  if (decoded.hashes.length !== captions.frames) return `The spliced stream decodes to ${decoded.hashes.length} frames, expected ${captions.frames}`;
  const expected = keyFrames(captions).filter((frame) => captions.states.some((state) => state.startFrame === frame || state.endFrame === frame));
  const changes = decoded.hashes.flatMap((hash, frame) => (frame > 0 && hash !== decoded.hashes[frame - 1] ? [frame] : []));
  // An IDR picture encodes the band afresh, so its pixels may differ a little from the predicted ones before it.
  const idr = new Set(idrFrames(captions.frames, KEYFRAME_INTERVAL));
  if (expected.some((frame) => !changes.includes(frame)) || changes.some((frame) => !expected.includes(frame) && !idr.has(frame))) {
    return `The spliced picture changes at frames [${changes.join(', ')}], the captions at [${expected.join(', ')}]`;
  }
  return undefined;
}

function variableProblem(variable: { frames: number[]; decoded: Decoded }, constant: readonly string[], captions: Captions): string | undefined {
  const expected = pictureFrames(captions, KEYFRAME_INTERVAL);
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
    private readonly options: Omit<SpliceCheckOptions, 'signal'> = {},
  ) {}

  run(): Promise<SpliceCheck> {
    this.result ??= checkSplicing(this.ffmpeg, this.picture, { ...this.options, signal: this.controller.signal }).then((answer) => (this.answer = answer));
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
