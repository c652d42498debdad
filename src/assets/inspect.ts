import type { Config } from '../config.js';
import { AppError, processFailure } from '../errors.js';
import type { Ffmpeg } from '../media/ffmpeg.js';
import { ProcessError, runProcess } from '../media/process.js';
import { FORMATS, type AssetFormat, type ImageHeader } from './formats.js';

/**
 * Each run's own time limit. ffprobe reads headers (an image's first frame at most, never one above the pixel
 * limit); a whole decode of ten minutes of FLAC or of a 40-megapixel JPEG takes a second or two.
 */
const TIMEOUT_MS = { probe: 10_000, decode: 60_000 };
/** An image is decoded once, into a frame this small, to prove every byte of it decodes (its shape not kept: a 3000×1 picture kept to scale is 64×0, which no filter takes). */
const CHECK_FRAME = 'scale=64:64';
/**
 * The least a clip's side may be: under a frame of 16:9 or 9:16 "cover" keeps about half of its shorter side, and a
 * clip of 2 pixels leaves a strip of one that no yuv420p filter takes (renders of 2×2, 16×2 and 2×64 failed, 502).
 */
export const MIN_CLIP_SIDE = 16;
/** ffmpeg's words when a decoder meets a frame over `-max_pixels` (libavutil imgutils). */
const OVER_MAX_PIXELS = /Picture size (\d+)x(\d+) exceeds specified max pixel count/;

/**
 * The upload limits (ASSET_MAX_BYTES, ASSET_MAX_PIXELS, ASSET_MAX_AUDIO_SECONDS, ASSET_MAX_VIDEO_*, and
 * ASSET_CHECK_CPU_SECONDS: the CPU time the decode may take, since a small file can be costly to decode).
 */
export type AssetLimits = Pick<Config['assets'], 'maxBytes' | 'maxPixels' | 'maxAudioSeconds' | 'maxVideoSeconds' | 'maxVideoPixels' | 'cpuSeconds'>;

/** What ffmpeg writes last when its CPU-time limit (`-timelimit`, RLIMIT_CPU) stops it: SIGXCPU is 24 on Linux. */
const CPU_LIMIT_REACHED = /received signal 24\b/;

/** What a file was found to be; `format` where its streams told more than its first bytes (an MP4 of sound alone is m4a). */
export type AssetFacts =
  | { kind: 'image'; width: number; height: number }
  | { kind: 'audio'; duration: number; loudness?: number; format?: AssetFormat }
  | { kind: 'video'; width: number; height: number; duration: number; bt709?: true }
  | { kind: 'book'; title?: string; chapters: number; characters: number };

interface ProbedStream {
  codec_type?: string;
  codec_name?: string;
  width?: number;
  height?: number;
  pix_fmt?: string;
  color_space?: string;
  color_range?: string;
  disposition?: { attached_pic?: number };
}

interface Probed {
  streams?: ProbedStream[];
  format?: { duration?: string };
}

/** `field: 'file'` on every refusal: the upload's one field. */
export function refuse(code: 'UNSUPPORTED_ASSET' | 'ASSET_TOO_LARGE' | 'INVALID_ASSET', message?: string): AppError {
  return new AppError(code, { field: 'file', ...(message ? { message } : {}) });
}

/**
 * Checks a file whose format its bytes announced: ffprobe first (streams, codec, dimensions or duration, within
 * the limits), then one full decode, so that nothing truncated, corrupt or oversized is ever stored. Both runs are
 * forced to the format's demuxer and to local files, with their own time limits; an image's decoder refuses more
 * pixels than the limit before it allocates them. Throws the API's error for whatever is wrong.
 */
export async function inspectAsset(
  ffmpeg: Ffmpeg,
  file: string,
  format: AssetFormat,
  header: ImageHeader | undefined,
  limits: AssetLimits,
  signal?: AbortSignal,
): Promise<AssetFacts> {
  if (!(await ffmpeg.available())) throw new AppError('MEDIA_FAILED', { message: 'ffmpeg or ffprobe cannot be run.' });
  const source = ['-protocol_whitelist', 'file', '-f', FORMATS[format].demuxer, '-i', `file:${file}`];
  const input = ['-max_pixels', String(decoderPixels(header, limits.maxPixels)), ...source];
  const probed = await runProcess(ffmpeg.tools.ffprobe, ['-v', 'warning', '-print_format', 'json', '-show_format', '-show_streams', ...input], {
    timeoutMs: TIMEOUT_MS.probe,
    signal,
  }).catch(failed);
  const run: Run = {
    format,
    probed: parseProbe(probed.stdout),
    // ffmpeg's own words (libavformat) when a length is a guess from the bitrate: only a length the header states counts.
    lengthGuessed: /Estimating duration from bitrate/.test(probed.stderr),
    decode: (args) =>
      runProcess(ffmpeg.tools.ffmpeg, ['-nostdin', '-hide_banner', '-v', 'error', '-xerror', '-timelimit', String(limits.cpuSeconds), ...args.input, ...(args.maxPixels === undefined ? input : ['-max_pixels', String(args.maxPixels), ...source]), ...args.output], {
        timeoutMs: TIMEOUT_MS.decode,
        signal,
      }).catch((error: unknown) => {
        if (error instanceof ProcessError && CPU_LIMIT_REACHED.test(error.stderrTail)) {
          throw refuse('ASSET_TOO_LARGE', `The file takes more than ${limits.cpuSeconds} s of CPU time to check; upload a shorter or smaller one (fewer channels, a lower sample rate).`);
        }
        const over = error instanceof ProcessError ? OVER_MAX_PIXELS.exec(error.stderrTail) : null;
        if (over) throw refuse('ASSET_TOO_LARGE', `A frame of the clip is ${over[1]}×${over[2]}; the limit is ${limits.maxVideoPixels} pixels a frame.`);
        return failed(error);
      }),
  };
  const { kind } = FORMATS[format];
  if (kind === 'image') return checkImage(run, header);
  if (kind === 'audio') return checkAudio(run, limits.maxAudioSeconds);
  // An MP4 of sound alone (a general brand, as ffmpeg writes .m4a files) is music.
  if (format === 'mp4' && streamsOf(run.probed).pictures.length === 0) return { ...(await checkAudio({ ...run, format: 'm4a' }, limits.maxAudioSeconds)), format: 'm4a' };
  return checkVideo(run, limits);
}

/** Decoders allocate rows padded to this many pixels (ffmpeg checks the padded size against -max_pixels: 321 wide counts as 384). */
const DECODER_ALIGN = 128;

/**
 * The decoder's pixel limit: the header's dimensions passed ASSET_MAX_PIXELS already, so the decoder is held to
 * them as it pads them (an image whose data is larger than its header says is still stopped before it is allocated).
 */
function decoderPixels(header: Pick<ImageHeader, 'width' | 'height'> | undefined, maxPixels: number): number {
  if (!header) return maxPixels;
  const padded = (side: number) => Math.ceil(side / DECODER_ALIGN) * DECODER_ALIGN + DECODER_ALIGN;
  return Math.max(maxPixels, padded(header.width) * padded(header.height));
}

/** One file's checks: what ffprobe found, and ffmpeg on the same input. */
interface Run {
  format: AssetFormat;
  probed: Probed;
  lengthGuessed: boolean;
  /** ffmpeg on the file, with decoder options before it and output options after it. */
  decode(args: { input: string[]; output: string[]; maxPixels?: number }): Promise<{ stdout: Buffer; stderr: string }>;
}

function streamsOf(probed: Probed): { pictures: ProbedStream[]; sounds: ProbedStream[] } {
  const streams = probed.streams ?? [];
  return {
    pictures: streams.filter((stream) => stream.codec_type === 'video' && stream.disposition?.attached_pic !== 1),
    sounds: streams.filter((stream) => stream.codec_type === 'audio'),
  };
}

async function checkImage(run: Run, header: ImageHeader | undefined): Promise<AssetFacts> {
  const { pictures, sounds } = streamsOf(run.probed);
  const [picture] = pictures;
  if (!picture || pictures.length > 1 || sounds.length > 0 || !FORMATS[run.format].codecs.includes(picture.codec_name ?? '')) throw refuse('INVALID_ASSET');
  const { width = 0, height = 0 } = picture;
  if (width <= 0 || height <= 0 || (header && (header.width !== width || header.height !== height))) throw refuse('INVALID_ASSET');
  // Without `-err_detect explode` a truncated JPEG decodes (grey to the end) and ffmpeg exits 0.
  await run.decode({ input: ['-err_detect', 'explode'], output: ['-map', '0:v:0', '-frames:v', '1', '-vf', CHECK_FRAME, '-f', 'null', '-'] });
  return { kind: 'image', width, height };
}

async function checkAudio(run: Run, maxSeconds: number): Promise<Extract<AssetFacts, { kind: 'audio' }>> {
  const { pictures, sounds } = streamsOf(run.probed);
  if (pictures.length > 0) throw refuse('UNSUPPORTED_ASSET', 'An audio file with a picture track is not supported: upload the sound alone, or the video as a clip (MP4, MOV, WebM).');
  const [sound] = sounds;
  if (!sound) throw refuse('INVALID_ASSET', 'The file has no audio in it.');
  const { codecs } = FORMATS[run.format];
  if (!codecs.includes(sound.codec_name ?? '')) {
    throw refuse('UNSUPPORTED_ASSET', `Audio coded as ${String(sound.codec_name).slice(0, 40)} in ${run.format} is not supported (${codecs.join(', ')} are).`);
  }
  const stated = statedSeconds(run);
  if (stated > maxSeconds + 1) throw tooLong('audio', stated, maxSeconds);
  // Decoding stops a second past the limit, so a file whose header hides its length cannot make the check long.
  // The same decode meters the loudness (ebur128 prints its summary at the info level, at the end of stderr).
  const { stdout, stderr } = await run.decode({
    input: ['-v', 'info'],
    output: ['-map', '0:a:0', '-t', String(maxSeconds + 1), '-af', 'ebur128=framelog=verbose', '-f', 'null', '-progress', 'pipe:1', '-nostats', '-'],
  });
  const loudness = Number(/I:\s+(-?[\d.]+) LUFS/.exec(stderr)?.[1]);
  const duration = wholeLength('audio', decodedSeconds(stdout), stated, maxSeconds, AUDIO_SLACK);
  return { kind: 'audio', duration, ...(Number.isFinite(loudness) ? { loudness } : {}) };
}

/**
 * A clip: one picture stream of a codec taken (its sound is never used), at least MIN_CLIP_SIDE on each side, at
 * most ASSET_MAX_VIDEO_PIXELS a frame and ASSET_MAX_VIDEO_SECONDS long, every frame decoded once (errors fatal) as
 * far as a second past that limit. ffprobe reads the first frame's size only: the decoder holds every frame to the
 * limit (a clip whose resolution changes mid-stream, 320×240 then 5760×5760, is refused at its first large frame).
 */
async function checkVideo(run: Run, limits: AssetLimits): Promise<AssetFacts> {
  const [picture] = streamsOf(run.probed).pictures;
  if (!picture) throw refuse('INVALID_ASSET', 'The file has no picture in it.');
  const { codecs } = FORMATS[run.format];
  if (!codecs.includes(picture.codec_name ?? '')) {
    throw refuse('UNSUPPORTED_ASSET', `Video coded as ${String(picture.codec_name).slice(0, 40)} in ${run.format} is not supported (${codecs.join(', ')} are).`);
  }
  const { width = 0, height = 0 } = picture;
  if (width <= 0 || height <= 0) throw refuse('INVALID_ASSET');
  if (width * height > limits.maxVideoPixels) throw refuse('ASSET_TOO_LARGE', `The clip is ${width}×${height}; the limit is ${limits.maxVideoPixels} pixels a frame.`);
  if (Math.min(width, height) < MIN_CLIP_SIDE) {
    throw refuse('INVALID_ASSET', `The clip is ${width}×${height}: too small to fill any frame; each side must be at least ${MIN_CLIP_SIDE} pixels.`);
  }
  const stated = statedSeconds(run);
  if (stated > limits.maxVideoSeconds + 1) throw tooLong('clip', stated, limits.maxVideoSeconds);
  const { stdout } = await run.decode({
    input: ['-err_detect', 'explode'],
    maxPixels: decoderPixels({ width, height }, limits.maxVideoPixels),
    output: ['-map', '0:v:0', '-t', String(limits.maxVideoSeconds + 1), '-f', 'null', '-progress', 'pipe:1', '-nostats', '-'],
  });
  const duration = wholeLength('clip', decodedSeconds(stdout), stated, limits.maxVideoSeconds, CLIP_SLACK);
  // Already what videos are made of (tagged so, as phones tag theirs): at the frame's size it needs no conversion.
  const bt709 = picture.pix_fmt === 'yuv420p' && picture.color_space === 'bt709' && (picture.color_range ?? 'tv') === 'tv';
  return { kind: 'video', width, height, duration, ...(bt709 ? { bt709 } : {}) };
}

/** The length the file's header states, NaN where ffmpeg only guessed it from the bitrate. */
function statedSeconds(run: Run): number {
  return run.lengthGuessed ? Number.NaN : Number(run.probed.format?.duration);
}

/**
 * Seconds a file may decode shorter than its header says and still be whole: audio encoders pad and trim (priming,
 * the last frame), a clip's header and its last frame's end agree within a frame or two.
 */
const AUDIO_SLACK = 0.5;
const CLIP_SLACK = 0.1;

/** The decoded length in seconds (to the millisecond), once it is known to be there, within the limit and as long as the header said. */
function wholeLength(what: 'audio' | 'clip', decoded: number, stated: number, maxSeconds: number, slack: number): number {
  if (!(decoded > 0)) throw refuse('INVALID_ASSET', `The file has no ${what === 'audio' ? 'audio' : 'picture'} in it.`);
  if (decoded > maxSeconds) throw tooLong(what, decoded, maxSeconds);
  if (stated - decoded > Math.max(slack, stated * 0.02)) {
    throw refuse('INVALID_ASSET', `The file is truncated: its header says ${stated.toFixed(3)} s, it decodes to ${decoded.toFixed(3)} s.`);
  }
  return Math.round(decoded * 1000) / 1000;
}

function tooLong(what: 'audio' | 'clip', seconds: number, limit: number): AppError {
  return refuse('ASSET_TOO_LARGE', `The ${what} lasts ${Math.round(seconds)} s; the limit is ${limit} s.`);
}

function parseProbe(stdout: Buffer): Probed {
  try {
    return JSON.parse(stdout.toString('utf8')) as Probed;
  } catch {
    throw refuse('INVALID_ASSET');
  }
}

/** The last `out_time_us` of ffmpeg's `-progress` report: how far the decode got, in seconds. */
function decodedSeconds(progress: Buffer): number {
  const times = [...progress.toString('utf8').matchAll(/^out_time_us=(\d+)$/gm)];
  return Number(times.at(-1)?.[1] ?? Number.NaN) / 1e6;
}

/** ffprobe or ffmpeg refusing the file means the file is bad; stopped or timed out, the job is; anything else, ffmpeg. */
function failed(error: unknown): never {
  if (error instanceof ProcessError) {
    if (error.isCanceled || error.timedOut) throw processFailure(error, 'MEDIA_FAILED', error);
    if (error.exitCode !== null || error.signal !== null) throw new AppError('INVALID_ASSET', { field: 'file', cause: error });
  }
  throw new AppError('MEDIA_FAILED', { cause: error });
}
